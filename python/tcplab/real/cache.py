"""Stored real Linux transfers of the ``--linux`` sections (``tcplab reproduce --linux
--linux-cache DIR``): one JSON file per transfer, keyed by the kernel release and every
setting of the transfer. A transfer already stored is read instead of run again, so an
interrupted ``--linux`` run resumes and tcplab's simulated side can be re-run against the same
real transfers (as ``tcplab validate linux --linux-cache`` does for the validation matrix)."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

_dir: Path | None = None
_lock = threading.Lock()
#: Transfers read from the cache and run in this process (for the report's method line).
counts = {"read": 0, "run": 0}


def use(path: str | os.PathLike[str] | None) -> None:
    """Store transfers in ``path`` from now on (None: run every transfer, store nothing)."""
    global _dir
    _dir = Path(path) if path is not None else None
    if _dir is not None:
        _dir.mkdir(parents=True, exist_ok=True)
    counts.update(read=0, run=0)


def cached(kind: str, key: dict[str, Any], run: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """The row of the transfer ``kind`` with settings ``key``: read from the cache when it is
    there (same kernel release and settings), else ``run()``, stored, returned."""
    if _dir is None:
        row = run()
        with _lock:
            counts["run"] += 1
        return row
    full = {"kind": kind, "kernel": os.uname().release, **key}
    text = json.dumps(full, sort_keys=True)
    path = _dir / f"{kind}-{hashlib.sha256(text.encode()).hexdigest()[:16]}.json"
    if path.exists():
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError) as err:
            raise ValueError(f"{path}: not a stored transfer ({err})") from None
        if data.get("key") == full:
            with _lock:
                counts["read"] += 1
            return data["row"]
    row = run()
    tmp = path.with_suffix(f".tmp{os.getpid()}.{threading.get_ident()}")
    tmp.write_text(json.dumps({"key": full, "row": row}))
    tmp.replace(path)
    with _lock:
        counts["run"] += 1
    return row
