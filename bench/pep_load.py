"""Load benchmark of the real-time PEP: N concurrent real Linux downloads through one ``pep``
hop in front of a GEO satellite hop (``tcplab emu``, needs root and TUN).

Every file is checked byte for byte (sha256); the PEP's held bytes must return to 0 and the
run must report no violations. Prints one JSON object: connections, bytes, wall time,
the PEP's peak held bytes, pseudo-ACKs, local retransmissions, emulator lateness, and the
machine load beside them.

    python bench/pep_load.py --conns 200 --size 100000 --rate 20Mbps
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import tempfile
import time
from pathlib import Path

from tcplab.real.transfer import client_command, run


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--conns", type=int, default=200)
    ap.add_argument("--size", type=int, default=100_000, help="bytes per connection")
    ap.add_argument("--rate", default="20Mbps", help="satellite hop rate")
    ap.add_argument("--buffer", default="1MiB", help="PEP buffer per connection")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        work = Path(d)
        clients = " ".join(
            client_command(work, f"got{i}", args.size, linger=3.0) + " &" for i in range(args.conns)
        )
        toml = (
            f'[[path]]\nkind = "pep"\nbuffer = "{args.buffer}"\n'
            f'[[path]]\nkind = "satellite"\nrate = "{args.rate}"\n'
        )
        t0 = time.monotonic()
        data, s = run(work, toml, args.size, f"{clients} wait", timeout=900)
        wall = time.monotonic() - t0
        want = hashlib.sha256(data).hexdigest()
        bad = [
            i
            for i in range(args.conns)
            if hashlib.sha256((work / f"got{i}").read_bytes()).hexdigest() != want
        ]
    pep = s["links"][0]
    out = {
        "connections": args.conns,
        "bytes_each": args.size,
        "byte_exact": args.conns - len(bad),
        "pep_connections": pep["connections"],
        "held_bytes_end": pep["held_bytes_end"],
        "max_held_bytes": pep["max_held_bytes"],
        "pseudo_acks": pep["pseudo_acks"],
        "local_retransmits": pep["local_retransmits"],
        "violations": s["violations"],
        "wall_s": round(wall, 2),
        "lateness_us": s["emulator"]["lateness_us"],
        "loadavg": os.getloadavg(),
    }
    print(json.dumps(out))
    ok = not bad and pep["held_bytes_end"] == 0 and not s["violations"]
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
