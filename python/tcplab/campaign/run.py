"""Campaigns: many runs on a local process pool or a Dask cluster, kept in a result store.

:func:`execute` is the engine behind ``tcplab sweep --store/--cluster``, ``tcplab reproduce
--store/--cluster`` and :func:`tcplab.campaign.sweep.run_configs` with ``store=``/``cluster=``. It
takes the jobs lazily, keeps only a bounded window of runs in flight, writes each finished run to
the :class:`~tcplab.campaign.store.Store` as it arrives, and skips runs the store already holds, so
an interrupted campaign rerun computes only what is missing. Memory is bounded by the runs in
flight, not by the campaign.

Backends (the rows are the same whichever runs them; the simulation is deterministic):

- ``jobs=1``: in this process;
- a local :class:`~concurrent.futures.ProcessPoolExecutor` (the default);
- ``cluster=ADDRESS``: the workers of a ``dask.distributed`` scheduler (``pip install
  'tcplab[cluster]'``); ``"local"`` / ``"local:N"`` starts a ``LocalCluster`` of N single-threaded
  worker processes for the duration of the campaign. A worker lost mid-campaign costs only the
  runs it held: the scheduler reruns them elsewhere.

Runs are sent in small batches sized from the measured run time (about 0.1 s of work per batch
on the pool, 0.5 s on Dask), so thousands of millisecond-long runs are not dominated by
per-task overhead.
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import math
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

    from tcplab.campaign.store import Store, StoreWriter

__all__ = [
    "BuildMismatch",
    "CampaignError",
    "Job",
    "Stats",
    "connect",
    "execute",
    "local_cluster",
    "open_store",
    "sweep_table",
    "use",
]

#: Defaults :func:`tcplab.campaign.sweep.run_configs` uses when not given ``store``/``cluster``
#: (set by ``tcplab reproduce --store/--cluster`` through :func:`use`).
_STORE: contextvars.ContextVar[Store | None] = contextvars.ContextVar("tcplab_store", default=None)
_CLUSTER: contextvars.ContextVar[Any] = contextvars.ContextVar("tcplab_cluster", default=None)
_STATS: contextvars.ContextVar[Stats | None] = contextvars.ContextVar("tcplab_stats", default=None)


@contextlib.contextmanager
def use(
    store: Store | None = None, cluster: Any = None, stats: Stats | None = None
) -> Iterator[None]:
    """Within the block, :func:`tcplab.campaign.sweep.run_configs` calls that name no store/cluster
    use these (how ``tcplab reproduce --store`` reaches the papers' runs), and add their counts to
    ``stats``."""
    a, b, c = _STORE.set(store), _CLUSTER.set(cluster), _STATS.set(stats)
    try:
        yield
    finally:
        _STORE.reset(a)
        _CLUSTER.reset(b)
        _STATS.reset(c)


def defaults() -> tuple[Store | None, Any, Stats | None]:
    """The store, cluster and stats set by :func:`use` (None when none)."""
    return _STORE.get(), _CLUSTER.get(), _STATS.get()


@dataclass
class Job:
    """One run of a campaign: its normalised ``config`` (with its seed), a ``tag`` handed back
    with the result, and ``labels`` recorded beside the run in the store."""

    config: dict[str, Any]
    tag: Any = None
    labels: Mapping[str, Any] | None = None
    key: str | None = None


@dataclass
class Stats:
    """What a campaign did: runs ``computed``, runs found ``stored``."""

    computed: int = 0
    stored: int = 0
    started: float = field(default_factory=time.monotonic)

    @property
    def total(self) -> int:
        return self.computed + self.stored


# -- the work a worker does ----------------------------------------------------------------------


class CampaignError(OSError):
    """The campaign's workers failed it (a pool process died, a worker has another build): an
    environment problem (``tcplab`` exits with status 1, one line)."""


class BuildMismatch(CampaignError):
    """A worker's simulator is not the build the campaign stores runs for."""


_Result = tuple[dict[str, Any], float, tuple[str, str] | None]


def _run_batch(
    configs: list[dict[str, Any]], columns: bool, build: str | None, encode: bool = False
) -> list[_Result]:
    """Run ``configs`` one after the other; each summary with its wall time (seconds) and, when
    ``encode``, its store texts (:func:`tcplab.campaign.store.encode_run`, made here so that the
    workers, not the campaign process, pay for the JSON). ``build``: the build tag the caller
    expects this worker to have (checked on Dask workers, whose installs may differ from the
    client's)."""
    from tcplab.campaign.single import run_config
    from tcplab.campaign.store import encode_run

    if build is not None:
        from tcplab.campaign.store import build_tag

        here = build_tag()
        if here != build:
            import socket

            raise BuildMismatch(
                f"worker on {socket.gethostname()} has tcplab build {here}, the campaign "
                f"stores build {build}; install the same tcplab on every worker"
            )
    out = []
    for config in configs:
        t = time.perf_counter()
        summary = run_config(config, columns)
        texts = encode_run(config, summary) if encode else None
        out.append((summary, time.perf_counter() - t, texts))
    return out


# -- backends ------------------------------------------------------------------------------------


class _Backend:
    """Submit batches, collect finished ones. ``slots``: batches worth keeping in flight."""

    slots: int
    target_s: float

    def submit(self, configs: list[dict[str, Any]], columns: bool, encode: bool) -> Any:
        raise NotImplementedError

    def next_done(self, timeout: float | None) -> tuple[Any, list[_Result]] | None:
        """A finished batch, or None when none finished within ``timeout`` seconds."""
        raise NotImplementedError

    def close(self, cancel: bool) -> None:
        pass


class _Serial(_Backend):
    def __init__(self) -> None:
        self.slots, self.target_s = 1, 0.0
        self._done: deque[tuple[Any, Any]] = deque()
        self._n = 0

    def submit(self, configs: list[dict[str, Any]], columns: bool, encode: bool) -> Any:
        self._n += 1
        self._done.append((self._n, _run_batch(configs, columns, None, encode)))
        return self._n

    def next_done(self, timeout: float | None) -> tuple[Any, list[_Result]] | None:
        return self._done.popleft()


def _exit_with_parent(parent: int) -> None:
    """Pool worker initializer: end this worker when the campaign's process is gone (a SIGKILL
    leaves no one to shut the pool down, and an orphan would hold its pipes open forever);
    signals as :func:`~tcplab.campaign.single.quiet_worker` sets them."""
    from tcplab.campaign.single import quiet_worker

    quiet_worker()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="tcplab-parent-watch", daemon=True).start()


class _Pool(_Backend):
    def __init__(self, jobs: int) -> None:
        from concurrent.futures import ProcessPoolExecutor

        self._pool = ProcessPoolExecutor(
            max_workers=jobs, initializer=_exit_with_parent, initargs=(os.getpid(),)
        )
        self.slots, self.target_s = 2 * jobs, 0.1
        self._pending: set[Any] = set()
        self._done: deque[Any] = deque()

    def submit(self, configs: list[dict[str, Any]], columns: bool, encode: bool) -> Any:
        fut = self._pool.submit(_run_batch, configs, columns, None, encode)
        self._pending.add(fut)
        return fut

    def next_done(self, timeout: float | None) -> tuple[Any, list[_Result]] | None:
        from concurrent.futures import FIRST_COMPLETED, wait
        from concurrent.futures.process import BrokenProcessPool

        if not self._done:
            done, self._pending = wait(self._pending, timeout, return_when=FIRST_COMPLETED)
            self._done.extend(done)
            if not done:
                return None
        fut = self._done.popleft()
        try:
            return fut, fut.result()
        except BrokenProcessPool:
            raise CampaignError(
                "a worker process died (killed?); the runs finished so far are stored when "
                "--store is given: rerun the same command to compute the rest"
            ) from None

    def close(self, cancel: bool) -> None:
        if cancel:
            from tcplab.campaign.single import stop_pool

            stop_pool(self._pool)
        else:
            self._pool.shutdown()


#: Dask settings for clusters that only run campaigns: no statistical profiler on the workers,
#: slower event-loop and system monitors. An idle 2-worker LocalCluster then costs about a
#: quarter of the CPU it does by default, CPU that the runs would otherwise lose. ``local:N``
#: clusters use them; for a standing cluster, set them on the scheduler and workers through
#: the environment (docs/campaigns.md).
DASK_CONFIG: dict[str, Any] = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
}


def local_cluster(n_workers: int = 2) -> Any:
    """A ``distributed.LocalCluster`` of ``n_workers`` single-threaded worker processes with
    :data:`DASK_CONFIG`."""
    import dask
    from distributed import LocalCluster

    with dask.config.set(DASK_CONFIG):
        return LocalCluster(
            n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=None
        )


def connect(cluster: Any) -> tuple[Any, list[Any]]:
    """A ``distributed.Client`` for ``cluster`` (an address, ``"local[:N]"``, a client or a
    Dask cluster object) and the objects to close when done (empty for a client given)."""
    try:
        from distributed import Client
    except ImportError:
        raise ImportError(
            "--cluster needs dask.distributed: pip install 'tcplab[cluster]'"
        ) from None
    if isinstance(cluster, Client):
        return cluster, []
    if isinstance(cluster, str) and (cluster == "local" or cluster.startswith("local:")):
        n = cluster.partition(":")[2]
        if n and not (n.isdigit() and int(n) >= 1):
            raise ValueError(f"--cluster {cluster}: local:N needs a whole N ≥ 1")
        lc = local_cluster(int(n) if n else 2)
        client = Client(lc)
        return client, [client, lc]
    if isinstance(cluster, str):
        try:
            client = Client(cluster, timeout=15)
        except OSError as err:
            raise OSError(f"--cluster {cluster}: cannot reach the scheduler ({err})") from None
        return client, [client]
    client = Client(cluster)  # a dask cluster object (LocalCluster, SLURMCluster, ...)
    return client, [client]


class _Dask(_Backend):
    def __init__(self, cluster: Any, build: str | None) -> None:
        client, self._own = connect(cluster)
        self._client = client
        self._build = build
        threads = sum(client.nthreads().values()) or 1
        self.slots, self.target_s = 2 * threads + 2, 0.5
        self._pending: set[Any] = set()
        self._done: deque[Any] = deque()

    def submit(self, configs: list[dict[str, Any]], columns: bool, encode: bool) -> Any:
        fut = self._client.submit(_run_batch, configs, columns, self._build, encode, pure=False)
        self._pending.add(fut)
        return fut

    def next_done(self, timeout: float | None) -> tuple[Any, list[_Result]] | None:
        from distributed import wait

        if not self._done:
            try:
                done, pending = wait(list(self._pending), timeout, return_when="FIRST_COMPLETED")
            except TimeoutError:
                return None
            self._done.extend(done)
            self._pending = set(pending)
        fut = self._done.popleft()
        result = fut.result()
        fut.release()
        return fut, result

    def close(self, cancel: bool) -> None:
        if cancel:
            with contextlib.suppress(Exception):
                self._client.cancel([*self._pending, *self._done])
        for obj in self._own:
            with contextlib.suppress(Exception):
                obj.close()


def _backend(jobs: int | None, cluster: Any, build: str | None) -> _Backend:
    from tcplab.campaign.single import default_jobs

    if cluster is not None:
        return _Dask(cluster, build)
    jobs = default_jobs() if jobs is None else jobs
    return _Serial() if jobs <= 1 else _Pool(jobs)


# -- progress and signals ------------------------------------------------------------------------


class _Progress:
    """A tqdm bar over the campaign's runs: done (stored + computed) of total, with an ETA from
    the computed runs' rate only (stored ones are counted, not timed)."""

    def __init__(self, enabled: bool, total: int | None) -> None:
        self._bar: Any = None
        if enabled:
            from tqdm import tqdm

            self._bar = tqdm(total=total, unit="run", dynamic_ncols=True, smoothing=0.1)

    def stored(self, n: int = 1) -> None:
        bar = self._bar
        if bar is not None:
            bar.n += n
            bar.initial += n
            bar.last_print_n += n
            bar.set_postfix_str(f"{bar.initial} stored", refresh=False)

    def computed(self, n: int) -> None:
        if self._bar is not None:
            self._bar.update(n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


class Terminated(SystemExit):
    """SIGTERM arrived during a campaign (exit status 143, after the store is flushed)."""


@contextlib.contextmanager
def _sigterm_unwinds() -> Iterator[None]:
    """Turn SIGTERM into an exception while the campaign runs (unless someone else handles it),
    so the buffered runs are flushed on the way out."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGTERM)
    if previous is not signal.SIG_DFL:
        yield
        return

    def handler(signum: int, frame: object) -> None:
        raise Terminated(128 + signum)

    signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


# -- the engine ----------------------------------------------------------------------------------


def execute(
    jobs_in: Iterable[Job],
    *,
    jobs: int | None = None,
    cluster: Any = None,
    store: Store | None = None,
    columns: bool = False,
    progress: bool = False,
    total: int | None = None,
    yield_stored: bool = True,
    stats: Stats | None = None,
) -> Iterator[tuple[Job, dict[str, Any]]]:
    """Run every job (read lazily) and yield ``(job, summary)`` as results arrive (completion
    order, not input order). With a ``store``, runs it already holds are not run again (their
    stored summary is yielded when ``yield_stored``) and every computed run is written to it.

    ``jobs``: pool processes (default: :func:`tcplab.campaign.sweep.default_jobs`; 1 runs here);
    ``cluster``: a Dask scheduler address, ``"local[:N]"``, a ``distributed.Client`` or a
    Dask cluster object; ``columns``: also return/store the event and time-series columns;
    ``progress``: a bar on stderr over ``total`` runs; ``stats``: filled with the counts."""
    from tcplab.campaign.store import build_tag, run_key

    stats = stats if stats is not None else Stats()
    build = build_tag() if (store is not None or cluster is not None) else None
    done: dict[str, bool] = store.done() if store is not None else {}
    bar = _Progress(progress, total)
    it = iter(jobs_in)
    writer: StoreWriter | None = None
    backend: _Backend | None = None
    ok = False
    with _sigterm_unwinds():
        try:
            if store is not None:
                writer = store.writer()
            backend = _backend(jobs, cluster, build)
            inflight: dict[Any, list[Job]] = {}
            held: list[Job] = []  # stored runs whose summaries are still to be read
            per_run = 0.0  # mean wall time of a run, seconds (0: not measured yet)
            exhausted = False
            while True:
                # fill the window
                while not exhausted and len(inflight) < backend.slots:
                    size = 1
                    if per_run > 0 and backend.target_s > 0:
                        size = max(1, min(256, int(backend.target_s / per_run)))
                    batch: list[Job] = []
                    for job in it:
                        if store is not None:
                            job.key = job.key or run_key(job.config, build)
                            if job.key in done and (done[job.key] or not columns):
                                stats.stored += 1
                                bar.stored()
                                if yield_stored:
                                    held.append(job)
                                    if len(held) >= 256:
                                        yield from _read_stored(store, held, columns)
                                        held = []
                                continue
                        batch.append(job)
                        if len(batch) >= size:
                            break
                    else:
                        exhausted = True
                    if batch:
                        if (
                            isinstance(backend, _Serial)
                            and writer is not None
                            and writer.buffered
                            and per_run * len(batch) >= writer.flush_seconds
                        ):  # this batch runs here and now: don't keep finished runs waiting
                            writer.flush()
                        fut = backend.submit([j.config for j in batch], columns, writer is not None)
                        inflight[fut] = batch
                if not inflight:
                    break
                # a finished run waits in the writer's buffer at most its flush interval
                due = writer.due_in() if writer is not None and writer.buffered else None
                got = backend.next_done(due)
                if got is None:
                    assert writer is not None
                    writer.flush()
                    continue
                fut, results = got
                batch = inflight.pop(fut)
                took = sum(r[1] for r in results) / len(results)
                per_run = took if per_run == 0 else 0.8 * per_run + 0.2 * took
                for job, (summary, _, texts) in zip(batch, results, strict=True):
                    if writer is not None:
                        assert job.key is not None
                        writer.add(job.key, job.config, summary, job.labels, texts)
                    stats.computed += 1
                    yield job, summary
                bar.computed(len(batch))
            if held:
                yield from _read_stored(store, held, columns)
            ok = True
        finally:
            bar.close()
            if writer is not None:
                writer.close()
            if backend is not None:
                backend.close(cancel=not ok)


def _read_stored(
    store: Store | None, held: list[Job], columns: bool
) -> Iterator[tuple[Job, dict[str, Any]]]:
    assert store is not None
    summaries = store.summaries(j.key for j in held if j.key)
    for job in held:
        assert job.key is not None
        summary = dict(summaries[job.key])
        if columns:
            tables = store.tables_of(job.key)
            assert tables is not None, f"run {job.key}: stored without its tables"
            summary.update(tables)
        yield job, summary


# -- sweeps into a store -------------------------------------------------------------------------


def _grid(vary: Sequence[tuple[str, Sequence[str]]]) -> Iterator[tuple[str, ...]]:
    return itertools.product(*[list(v) for _, v in vary])


def sweep_table(
    data: dict[str, Any],
    vary: Sequence[tuple[str, Sequence[str]]],
    seeds: Sequence[int],
    store: Store,
    source: str = "<dict>",
    jobs: int | None = None,
    cluster: Any = None,
    progress: bool = False,
    stats: Stats | None = None,
) -> pa.Table:
    """:func:`tcplab.campaign.sweep.sweep` through a store: the grid is walked lazily, missing runs
    are computed and streamed to ``store``, and the rows (same columns, order and values as
    :func:`tcplab.campaign.sweep.sweep`'s) come back as one Arrow table read from the store."""
    import array

    import pyarrow as pa
    import pyarrow.compute as pc

    from tcplab.campaign.single import FLOW_METRICS, column_values
    from tcplab.campaign.store import build_tag, key_maker
    from tcplab.errors import ScenarioError
    from tcplab.scenario.fields import as_int
    from tcplab.scenario.parse import apply_overrides, parse_scenario
    from tcplab.scenario.units import U64_MAX

    if not seeds:
        raise ScenarioError("--seeds: must be ≥ 1 (got 0)")
    keys = [k for k, _ in vary]

    def scenario_at(point: tuple[str, ...]) -> Any:
        sets = [f"{k}={v}" for k, v in zip(keys, point, strict=True)]
        try:
            return parse_scenario(apply_overrides(data, sets), source)
        except ScenarioError as err:
            if sets:
                err.message = f"{err.message} (at {', '.join(sets)})"
            raise

    for point in _grid(vary):  # every point is valid before anything runs
        scenario_at(point)
    n_points = math.prod(len(v) for _, v in vary)
    build = build_tag()
    digests = bytearray()  # the campaign's run keys, 16 bytes each, in grid order
    point_of = array.array("q")
    seed_of = array.array("q")

    checked = [as_int(seed, "seed", 0, U64_MAX) for seed in seeds]

    def jobs_in() -> Iterator[Job]:
        for p, point in enumerate(_grid(vary)):
            scenario = scenario_at(point)
            labels = dict(zip(keys, point, strict=True))
            # one deep copy and one hash of the configuration per point, not per seed
            base = scenario.to_config(seed=checked[0])
            key_of = key_maker(base, build)
            for seed in checked:
                config = {**base, "seed": seed}  # shares the point's (never mutated) tables
                key = key_of(seed)
                digests.extend(bytes.fromhex(key))
                point_of.append(p)
                seed_of.append(seed)
                yield Job(config, labels=labels, key=key)

    for _ in execute(
        jobs_in(),
        jobs=jobs,
        cluster=cluster,
        store=store,
        progress=progress,
        total=n_points * len(seeds),
        yield_stored=False,
        stats=stats,
    ):
        pass
    n = len(point_of)
    # the keys as a string array straight from their hex text (no Python object per run)
    offsets = array.array("i", range(0, 32 * n + 1, 32))
    hex_text = digests.hex().encode()
    digests.clear()
    run_keys = pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(hex_text))
    del offsets, hex_text
    campaign = pa.table(
        {
            "run_key": run_keys,
            "__order": pa.array(range(n), pa.int64()),
            "__point": pa.array(point_of, pa.int64()),
            "seed": pa.array(seed_of, pa.int64()),
        }
    )
    stored = store.table(
        columns=["run_key", "flow", "flow_name", *FLOW_METRICS], keys=campaign["run_key"]
    )
    stored = stored.filter(pc.is_valid(stored["flow"]))
    joined = campaign.join(stored, "run_key", join_type="inner", use_threads=False)
    joined = joined.sort_by([("__order", "ascending"), ("flow", "ascending")])
    out: dict[str, Any] = {}
    stride = n_points
    for k, values in vary:
        stride //= len(values)
        typed = column_values(list(values))
        # the point's index along this key: (point // stride) mod len(values), the modulo as
        # q - (q // n) * n (pyarrow.compute.remainder is newer than the pyarrow>=14 we allow)
        q = pc.divide(joined["__point"], stride)
        index = pc.subtract(q, pc.multiply(pc.divide(q, len(values)), len(values)))
        out[k] = pc.take(pa.array([typed[v] for v in values]), index)
    for c in ("seed", "flow", "flow_name", *FLOW_METRICS):
        out[c] = joined[c]
    return pa.table(out)


# -- command-line hooks (tcplab sweep/reproduce --store/--cluster, tcplab results) ---------------


def open_store(path: str, build: str | None = None) -> Store:
    from tcplab.campaign.store import Store

    try:
        return Store(path, build)
    except NotADirectoryError as err:
        raise OSError(str(err)) from None


@contextlib.contextmanager
def using_options(args: Any) -> Iterator[None]:
    """``tcplab reproduce --store/--cluster``: every ``run_configs`` of the papers uses them
    (one Dask client for the whole command)."""
    store = open_store(args.store) if getattr(args, "store", None) else None
    cluster = getattr(args, "cluster", None)
    owned: list[Any] = []
    if cluster is not None:
        cluster, owned = connect(cluster)
    stats = Stats()
    try:
        with use(store, cluster, stats):
            yield
        if store is not None:
            import sys

            print(
                f"store {store.path}: {stats.total} runs, {stats.computed} computed, "
                f"{stats.stored} already stored",
                file=sys.stderr,
            )
    finally:
        for obj in owned:
            with contextlib.suppress(Exception):
                obj.close()
