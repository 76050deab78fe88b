"""Removes an emulation's network namespaces, and every process in them, once the process that
made them is gone, however it ended (SIGKILL included).

``tcplab emu`` starts this file as a separate process (``python -I -S reaper.py LOCK NS...``,
in a session of its own, so a closed terminal does not reach it) with a pipe on its stdin. The
emulation writes ``done`` to the pipe once it has removed everything itself; when the pipe closes
without it (the emulation was killed), this process kills what runs in the namespaces, deletes
them and the emulation's lock file. Standard library only: it must start in milliseconds, and
:mod:`tcplab.real.emu` uses :func:`remove_namespaces` from here too.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterable


def remove_namespaces(names: Iterable[str]) -> None:
    """Kill every process in each namespace (a command's grandchildren that left its process
    group too), then delete the namespace. Names that do not exist are skipped."""
    for ns in names:
        r = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True, check=False)
        for pid in r.stdout.split():
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid), signal.SIGKILL)
        subprocess.run(["ip", "netns", "del", ns], capture_output=True, check=False)


def main(argv: list[str]) -> int:
    """``LOCK NS...``: wait for the end of stdin, then clean up unless ``done`` was written."""
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM, signal.SIGQUIT):
        signal.signal(sig, signal.SIG_IGN)
    lock, *names = argv
    data = b""
    while chunk := os.read(0, 64):
        data += chunk
    if b"done" in data:
        return 0
    remove_namespaces(names)
    with contextlib.suppress(OSError):
        os.unlink(lock)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
