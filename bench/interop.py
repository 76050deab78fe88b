"""Interop campaign: tcplab's own TCP against Linux through ``tcplab emu``. Run as root.

    python bench/interop.py --out FILE [--set base|extended] [--part K/N]   # run, append JSON
    python bench/interop.py --report FILE        # the table of a finished campaign

Two sets of transfers, each transfer checked byte-exact by sha256. ``base`` (200 transfers):

- tcplab sends (100): the emulator's tcplab server endpoint (``--endpoint server=tcplab
  --serve DIR``) answers curl in the client namespace; one emulation per (path, setup) fetches
  the ten files one after the other, each on its own connection;
- Linux sends (100): the emulator's tcplab client endpoint (``--endpoint client=tcplab --get``)
  fetches each file from ``python -m http.server`` in the server namespace, one emulation
  per transfer.

Five paths (lossless; 1 % random loss both ways; reordering; bursty Gilbert-Elliott loss;
drop-tail overflow of a 15-packet queue), two setups (tcplab NewReno without SACK and
timestamps against Linux Reno; tcplab CUBIC with SACK, timestamps and F-RTO against Linux
BBR: a network namespace may only pick from ``net.ipv4.tcp_allowed_congestion_control``, here
reno and bbr), ten sizes from 1 byte to 5 MB. A transfer passes when its bytes are exact, the
emulation reports no invariant violation, and its connection ended (no curl time-out, the
tcplab client's transfer complete, every tcplab connection closed) within the time limit.

``extended`` (48 transfers), the same two directions and setups over the paths the papers use
and at 50 MB: the W-CDMA bearer (``kind = "rlc"``, its ``train`` preset: 384 kbit/s, delay
spikes, RLC retransmissions) at 1 kB, 100 kB and 500 kB; a GEO satellite hop (1 Mbit/s, RTT
540 ms, bursty loss) and the same hop behind tcplab's spoofing PEP at 1 kB, 100 kB and 1 MB;
and 50 MB over the lossless, 1 %-loss and reordering paths. A slow path's largest size is what
its rate carries in well under a minute (50 MB at 384 kbit/s would take 18 minutes).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shlex
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tcplab.real import emu
from tcplab.scenario.parse import parse_scenario

SIZES = (1, 100, 1448, 1449, 9000, 65536, 262144, 1_000_000, 2_500_000, 5_000_000)

#: name -> the [[path]] entries (the server side is their "down" end).
_GE_SAT = {"kind": "gilbert_elliott", "p_gb": 0.002, "p_bg": 0.2}
PATHS: dict[str, list[dict[str, Any]]] = {
    "clean": [{"rate": "50Mbps", "delay": "5ms", "queue": 300}],
    "loss1": [
        {
            "rate": "30Mbps",
            "delay": "5ms",
            "queue": 300,
            "down": {"loss": 0.01},
            "up": {"loss": 0.01},
        }
    ],
    "reorder": [
        {
            "rate": "30Mbps",
            "delay": "5ms",
            "queue": 300,
            "down": {"reorder": {"p": 0.03, "extra": "3ms"}},
            "up": {"reorder": {"p": 0.03, "extra": "3ms"}},
        }
    ],
    "ge-burst": [
        {
            "rate": "10Mbps",
            "delay": "20ms",
            "queue": 200,
            "down": {
                "loss_model": {
                    "kind": "gilbert_elliott",
                    "p_gb": 0.002,
                    "p_bg": 0.2,
                    "loss_good": 0.0,
                    "loss_bad": 0.5,
                }
            },
        }
    ],
    "overflow": [{"rate": "10Mbps", "delay": "15ms", "queue": 15}],
    # The extended set's paths: the papers' W-CDMA bearer, GEO hop, and GEO hop behind a PEP.
    "rlc": [{"kind": "rlc", "name": "radio", "preset": "train"}],
    "satellite": [{"kind": "satellite", "name": "sat", "down": {"loss_model": _GE_SAT}}],
    "pep": [
        {"kind": "pep", "name": "pep"},
        {"kind": "satellite", "name": "sat", "down": {"loss_model": _GE_SAT}},
    ],
}

#: The bottleneck rate of each path in bit/s (for its time limit).
RATE_BPS = {
    "clean": 50e6,
    "loss1": 30e6,
    "reorder": 30e6,
    "ge-burst": 10e6,
    "overflow": 10e6,
    "rlc": 384e3,
    "satellite": 1e6,
    "pep": 1e6,
}

#: How long the client namespace waits after the last curl before the emulation ends, so the
#: tcplab server's FIN is acknowledged: a few round trips (the train bearer's radio stalls last
#: up to 9 s, the GEO hop's RTT is 540 ms).
LINGER_S = {"rlc": 10.0, "satellite": 3.0, "pep": 3.0}

#: set -> path -> the sizes it carries.
SETS: dict[str, dict[str, tuple[int, ...]]] = {
    "base": {p: SIZES for p in ("clean", "loss1", "reorder", "ge-burst", "overflow")},
    "extended": {
        "rlc": (1_000, 100_000, 500_000),
        "satellite": (1_000, 100_000, 1_000_000),
        "pep": (1_000, 100_000, 1_000_000),
        "clean": (50_000_000,),
        "loss1": (50_000_000,),
        "reorder": (50_000_000,),
    },
}

#: name -> (tcplab's [[flows]] entry, Linux's congestion control in both namespaces).
SETUPS: dict[str, tuple[dict[str, Any], str]] = {
    "newreno-nosack/reno": ({"cc": "newreno", "sack": False, "timestamps": False}, "reno"),
    "cubic-sack-frto/bbr": (
        {"cc": "cubic", "sack": True, "timestamps": True, "spurious_detection": "frto"},
        "bbr",
    ),
}

TIME_LIMIT_S = 60.0


def time_limit(path: str, size: int) -> float:
    """How long a transfer may take before it counts as stuck: 60 s, or four times its bytes
    at the path's rate plus a minute when that is longer (50 MB, the slow paths)."""
    return max(TIME_LIMIT_S, 60.0 + 4 * size * 8 / RATE_BPS[path])


_DONE_STATES = ("TimeWait", "Closed")


def _config(path: str, setup: str) -> dict[str, Any]:
    data = {
        "name": f"interop-{path}",
        "duration": "1200s",
        "seed": 1,
        "path": [dict(h) for h in PATHS[path]],
        "flows": [dict(SETUPS[setup][0])],
    }
    return parse_scenario(data, "<interop>").to_config()


def _sysctls(setup: str) -> dict[str, str]:
    return {"net.ipv4.tcp_congestion_control": SETUPS[setup][1]}


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest() if p.exists() else ""


def _files(www: Path, seed: int, sizes: tuple[int, ...]) -> dict[int, Path]:
    """One file of each size, random bytes (seeded: a rerun fetches the same files)."""
    import random

    rng = random.Random(seed)
    www.mkdir(parents=True, exist_ok=True)
    out = {}
    for n in sizes:
        p = www / f"f{n}.bin"
        p.write_bytes(rng.randbytes(n))
        out[n] = p
    return out


def runs(which: str = "base") -> list[tuple[str, str, str, int | None]]:
    """Every emulation of a set: (direction, path, setup, size or None for all the path's)."""
    out: list[tuple[str, str, str, int | None]] = []
    for path, sizes in SETS[which].items():
        for setup in SETUPS:
            out.append(("tcplab-sends", path, setup, None))
            out.extend(("linux-sends", path, setup, n) for n in sizes)
    return out


def _tcplab_sends(
    path: str, setup: str, sizes: tuple[int, ...], work: Path
) -> Iterator[dict[str, Any]]:
    """One emulation: curl fetches every file from the tcplab server, one connection each."""
    files = _files(work / "www", 1, sizes)
    got = work / "got"
    got.mkdir()
    lines = [
        f"curl -sS --max-time {time_limit(path, n):.0f} -o {got}/{p.name} "
        f'"http://$TCPLAB_SERVER:8000/{p.name}"; echo "{n} $?" >> {got}/status'
        for n, p in files.items()
    ]
    cmd = "; ".join(lines) + f"; sleep {LINGER_S.get(path, 0.3)}"
    t0 = time.monotonic()
    status, s = emu.run_command(
        _config(path, setup),
        ["sh", "-c", cmd],
        sysctls=_sysctls(setup),
        endpoint=emu.endpoint_options("server", serve=str(work / "www")),
    )
    wall = time.monotonic() - t0
    curl_rc = {}
    for line in (got / "status").read_text().splitlines():
        n, rc = line.split()
        curl_rc[int(n)] = int(rc)
    conns = {c.get("request"): c for c in s["endpoint"]["connections"]}
    for n, p in files.items():
        c = conns.get(f"GET /{p.name} HTTP/1.1") or {}
        exact = _sha(got / p.name) == _sha(p)
        ended = curl_rc.get(n) == 0 and c.get("state") in _DONE_STATES
        yield {
            "direction": "tcplab-sends",
            "path": path,
            "setup": setup,
            "bytes": n,
            "exact": exact,
            "ended": ended,
            "violations": s["violations"],
            "curl_rc": curl_rc.get(n),
            "state": c.get("state"),
            "seconds": (c["done_s"] - c["opened_s"]) if c.get("done_s") else None,
            "retransmitted": c.get("retransmitted_segments"),
            "timeouts": c.get("timeouts"),
            "emulation_wall_s": wall,
            "emulation_status": status,
        }


def _linux_sends(path: str, setup: str, size: int, work: Path) -> dict[str, Any]:
    """One emulation: the tcplab client fetches one file from Linux's http.server."""
    files = _files(work / "www", 1, (size,))
    src = files[size]
    save = work / "saved"
    server = (
        f"{shlex.quote(sys.executable)} -m http.server 8000 --bind {emu.SERVER_ADDR} "
        f"--directory {shlex.quote(str(work / 'www'))} >/dev/null 2>&1"
    )
    status, s = emu.run_command(
        _config(path, setup),
        None,
        server=server,
        sysctls=_sysctls(setup),
        endpoint=emu.endpoint_options(
            "client", get=f"http://{emu.SERVER_ADDR}:8000/{src.name}", save=str(save)
        ),
        time_limit_s=time_limit(path, size),
    )
    c = (s["endpoint"]["connections"] or [{}])[0]
    fwd = [x for x in s["connections"] if x["dir"] == "fwd"]
    return {
        "direction": "linux-sends",
        "path": path,
        "setup": setup,
        "bytes": size,
        "exact": _sha(save) == _sha(src),
        "ended": status == 0 and not s["endpoint"]["timed_out"],
        "violations": s["violations"],
        "error": emu.endpoint_failure(s),
        "state": c.get("state"),
        "seconds": (c["done_s"] - c["opened_s"]) if c.get("done_s") else None,
        "retransmitted": sum(x["retransmitted_segments"] for x in fwd),
        "emulation_wall_s": s["wall_s"],
        "emulation_status": status,
    }


def run_part(which: str, part: int, parts: int, out: Path) -> int:
    todo = runs(which)[part - 1 :: parts]
    failed = 0
    for direction, path, setup, size in todo:
        load = os.getloadavg()[0]
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            if direction == "tcplab-sends":
                rows = list(_tcplab_sends(path, setup, SETS[which][path], work))
            else:
                assert size is not None
                rows = [_linux_sends(path, setup, size, work)]
        with out.open("a") as f:
            for r in rows:
                r["load"] = load
                r["ok"] = r["exact"] and r["ended"] and not r["violations"]
                failed += not r["ok"]
                f.write(json.dumps(r) + "\n")
                print(
                    f"{'ok  ' if r['ok'] else 'FAIL'} {r['direction']:12} {r['path']:8} "
                    f"{r['setup']:21} {r['bytes']:>8} B  rtx {r['retransmitted']}",
                    flush=True,
                )
    return 1 if failed else 0


def report(path: Path) -> int:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    bad = [r for r in rows if not r["ok"]]
    print(
        f"{len(rows)} transfers, {len(rows) - len(bad)} passed (byte-exact, no violation, "
        f"ended), {len(bad)} failed; load average {min(r['load'] for r in rows):.1f}-"
        f"{max(r['load'] for r in rows):.1f}"
    )
    print("| direction | path | setup | transfers | passed | bytes | retransmitted segments |")
    print("|---|---|---|---|---|---|---|")
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["direction"], r["path"], r["setup"]), []).append(r)
    for (d, p, s), rs in sorted(groups.items()):
        print(
            f"| {d} | {p} | {s} | {len(rs)} | {sum(r['ok'] for r in rs)} | "
            f"{sum(r['bytes'] for r in rs):,} | {sum(r['retransmitted'] or 0 for r in rs)} |"
        )
    for r in bad:
        print("FAILED:", json.dumps(r))
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, help="append one JSON line per transfer to FILE")
    ap.add_argument("--set", dest="which", choices=sorted(SETS), default="base",
                    help="which transfers: base (200, five paths, 1 B-5 MB) or extended (the "
                    "rlc, satellite and pep paths, and 50 MB)")  # fmt: skip
    ap.add_argument("--part", default="1/1", help="run part K of N (K/N, default 1/1)")
    ap.add_argument("--report", type=Path, metavar="FILE", help="summarize a finished campaign")
    args = ap.parse_args()
    if args.report:
        return report(args.report)
    if not args.out:
        ap.error("--out FILE or --report FILE")
    reason = emu.available()
    if reason:
        print(reason, file=sys.stderr)
        return 1
    k, n = (int(x) for x in args.part.split("/"))
    if not 1 <= k <= n:
        ap.error(f"--part: K must be between 1 and N (got {args.part})")
    return run_part(args.which, k, n, args.out)


if __name__ == "__main__":
    sys.exit(main())
