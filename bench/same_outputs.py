"""Check that a change to the simulator leaves every result byte-identical.

Runs `tcplab run SCENARIO --out DIR` for each scenario in scenarios/ (plus one
run with a pcap tap) and records a SHA-256 of every file written (the Parquet
tables, summary.json, the pcap). Save the digests on the commit before a
change, then check them after it:

    python bench/same_outputs.py --save /tmp/ref.json     # before
    python bench/same_outputs.py --check /tmp/ref.json    # after

It also checks the p2p-bulk reference numbers (goodput 9,644,916 bit/s, 131
retransmissions). Exit status 0 only if everything matches.

With --reproduce it covers the paper reproductions instead: `tcplab reproduce PAPER
--quick --out DIR` for every paper (or those named with --papers), digesting what the
reproduction computed: results.json (every number, verdict and table, with wall-time
fields removed), report.md (wall times masked), any Parquet/CSV table and the PNG
figures. report.html is left out (it records the Python version and the time it was
written; its numbers are report.md's). Keep these digests in their own file:

    python bench/same_outputs.py --reproduce --save /tmp/ref_reproduce.json
    python bench/same_outputs.py --reproduce --check /tmp/ref_reproduce.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# (label, extra tcplab-run arguments); scenario paths are relative to the repo root.
RUNS: list[tuple[str, list[str]]] = [
    (str(p.relative_to(ROOT)), [str(p)]) for p in sorted((ROOT / "scenarios").rglob("*.toml"))
] + [
    # The pcap writer sits on the hot path too: a short capture of both directions.
    (
        "p2p-bulk pcap",
        [str(ROOT / "scenarios/p2p-bulk.toml"), "--set", "duration=20s", "--pcap", "0:both"],
    ),
]

P2P_GOODPUT_BPS = 9_644_916
P2P_RETRANSMISSIONS = 131


#: report.html's provenance section (versions, commit, command line: not results).
PROVENANCE_HTML = re.compile(rb'\n<h2 id="provenance">.*?</dl>', re.S)


def _without_provenance(name: str, data: bytes) -> bytes:
    """summary.json and report.html without the run's provenance (the build's commit and the
    command line change between checkouts; the results do not)."""
    if name == "summary.json":
        doc = json.loads(data)
        doc.pop("provenance", None)
        return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode()
    if name == "report.html":
        return PROVENANCE_HTML.sub(b"", data)
    return data


def digests(args: list[str], tcplab: list[str]) -> dict[str, str]:
    """Run one scenario into a fresh directory; SHA-256 of each file in it (the directory's
    own name masked, and the provenance left out of summary.json and report.html)."""
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([*tcplab, "run", *args, "--out", d, "--quiet"], check=True, cwd=d)
        return {
            p.name: hashlib.sha256(
                _without_provenance(p.name, p.read_bytes()).replace(d.encode(), b"OUT")
            ).hexdigest()
            for p in sorted(Path(d).iterdir())
            if p.is_file()
        }


#: results.json keys that hold wall-clock or host facts, not results (dropped at any depth).
VOLATILE_KEY = re.compile(r"wall|elapsed|written|hostname|machine|platform", re.I)
#: Wall times in report.md prose ("Wall time: 12.3 s.").
VOLATILE_TEXT = re.compile(rb"([Ww]all[- ]time[^0-9\n]{0,40})[0-9][0-9.,]*( ?(?:ms|s|min))")


def _strip_volatile(o: object) -> object:
    if isinstance(o, dict):
        return {k: _strip_volatile(v) for k, v in o.items() if not VOLATILE_KEY.search(k)}
    if isinstance(o, list):
        return [_strip_volatile(v) for v in o]
    return o


def _sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def reproduce_digests(paper: str, tcplab: list[str], jobs: int | None) -> dict[str, str]:
    """Run one quick reproduction into a fresh directory; a SHA-256 of each output that
    carries its numbers. results.json gets one digest per top-level key as well, so a
    mismatch says whether the comparisons, the figures' data or the counts moved."""
    with tempfile.TemporaryDirectory() as d:
        cmd = [*tcplab, "reproduce", paper, "--quick", "--out", d]
        if jobs:
            cmd += ["--jobs", str(jobs)]
        subprocess.run(cmd, check=True, cwd=d, stdout=subprocess.DEVNULL)
        out: dict[str, str] = {}
        for p in sorted(Path(d, paper).rglob("*")):
            name = str(p.relative_to(Path(d, paper)))
            if not p.is_file():
                continue
            data = p.read_bytes().replace(d.encode(), b"OUT")
            if p.name == "results.json":
                res = _strip_volatile(json.loads(data))
                assert isinstance(res, dict)
                for key, value in res.items():
                    out[f"{name}:{key}"] = _sha(json.dumps(value, sort_keys=True).encode())
            elif p.suffix == ".md":
                out[name] = _sha(VOLATILE_TEXT.sub(rb"\1T\2", data))
            elif p.suffix in (".parquet", ".csv", ".png", ".json"):
                out[name] = _sha(data)
        return out


def check_p2p(tcplab: list[str]) -> list[str]:
    out = subprocess.run(
        [*tcplab, "run", str(ROOT / "scenarios/p2p-bulk.toml"), "--json", "--quiet"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    res = json.loads(out.strip().splitlines()[-1])
    flow = res["flows"][0]
    goodput = round(flow["goodput_bps"])
    rtx = flow["retransmitted_segments"]
    errors = []
    if goodput != P2P_GOODPUT_BPS:
        errors.append(f"p2p-bulk goodput {goodput} != {P2P_GOODPUT_BPS}")
    if rtx != P2P_RETRANSMISSIONS:
        errors.append(f"p2p-bulk retransmissions {rtx} != {P2P_RETRANSMISSIONS}")
    print(f"p2p-bulk: goodput {goodput} bit/s, {rtx} retransmissions")
    return errors


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--save", metavar="FILE", help="write the digests to FILE")
    g.add_argument("--check", metavar="FILE", help="compare the digests with FILE")
    ap.add_argument("--tcplab", default=f"{sys.executable} -m tcplab", help="tcplab command")
    ap.add_argument(
        "--reproduce",
        action="store_true",
        help="digest the quick paper reproductions instead of the bundled scenarios",
    )
    ap.add_argument(
        "--papers", metavar="P1,P2", help="with --reproduce: only these papers (default: all)"
    )
    ap.add_argument("--jobs", type=int, help="with --reproduce: worker processes per paper")
    a = ap.parse_args()
    tcplab = a.tcplab.split()

    errors: list[str] = []
    got = {}
    if a.reproduce:
        from tcplab.papers import PAPERS

        papers = a.papers.split(",") if a.papers else sorted(PAPERS)
        for paper in papers:
            label = f"reproduce {paper} --quick"
            got[label] = reproduce_digests(paper, tcplab, a.jobs)
            print(f"{label}: {len(got[label])} digests")
    else:
        errors = check_p2p(tcplab)
        for label, args in RUNS:
            got[label] = digests(args, tcplab)
            print(f"{label}: {len(got[label])} files")
    if a.save:
        Path(a.save).write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
        print(f"saved digests of {len(got)} runs to {a.save}")
    else:
        ref = json.loads(Path(a.check).read_text())
        if a.papers:  # a subset: compare only the papers that ran
            ref = {k: v for k, v in ref.items() if k in got}
        for label in sorted(set(ref) | set(got)):
            want, have = ref.get(label), got.get(label)
            if want is None or have is None:
                errors.append(f"{label}: only in {'reference' if have is None else 'this run'}")
                continue
            for name in sorted(set(want) | set(have)):
                if want.get(name) != have.get(name):
                    errors.append(f"{label}: {name} differs")
        n_files = sum(len(v) for v in got.values())
        print(f"compared {n_files} files of {len(got)} runs with {a.check}")
    for e in errors:
        print("MISMATCH:", e)
    print("identical" if not errors else f"{len(errors)} mismatches")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
