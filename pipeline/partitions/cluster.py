"""Where the partitions run: a dask.distributed ``Client`` from a scheduler string, and the row partitions.

A scheduler string is one of

- ``"local:N"``: a ``LocalCluster`` of N worker processes on this machine, one thread each (the processes, not
  threads, give the parallelism: tokenising and the HNSW search hold the GIL or their own OpenMP pool);
- a scheduler's address, ``"tcp://host:8786"`` (or ``"tls://..."``, ``"ws://..."``): a running cluster
  (``dask scheduler`` on one machine, ``dask worker tcp://host:8786 --nworkers N --nthreads 1`` on each other one;
  docs/scale.md), whose workers have this project installed at the same version.

Nothing here schedules: dask.distributed places the tasks, moves their inputs and retries them on a lost worker.
dask and distributed are imported when a client is made, so the rest of the pipeline never pays for them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

# Rows per partition by default: 20,000 rows of 512 float32 dimensions are 41 MB per task's input, small next to a
# worker's memory and large enough that the scheduler's overhead per task (about 1 ms) does not count.
DEFAULT_PARTITION_ROWS = 20_000
LOCAL_PREFIX = "local:"


def partition_bounds(n_rows: int, partition_rows: int = DEFAULT_PARTITION_ROWS) -> list[tuple[int, int]]:
    """Row ranges ``[(start, stop), ...]`` covering ``0..n_rows`` in order, each at most ``partition_rows`` long (the
    last may be shorter); [] for no rows. Raises ValueError when ``partition_rows`` < 1 or ``n_rows`` < 0."""
    if partition_rows < 1:
        raise ValueError(f"partition_rows must be at least 1, not {partition_rows}")
    if n_rows < 0:
        raise ValueError(f"n_rows must be at least 0, not {n_rows}")
    return [(start, min(start + partition_rows, n_rows)) for start in range(0, n_rows, partition_rows)]


def parse_scheduler(scheduler: str) -> tuple[str, int | str]:
    """("local", worker count) for ``"local:N"`` (N >= 1), ("address", the string) for a scheduler's address.
    Raises ValueError for anything else (an empty string, ``"local:0"``, ``"local:x"``, a bare host)."""
    text = scheduler.strip()
    if text.startswith(LOCAL_PREFIX):
        count = text[len(LOCAL_PREFIX) :]
        if not count.isdigit() or int(count) < 1:
            raise ValueError(f"bad scheduler {scheduler!r}: 'local:N' takes a worker count N of at least 1")
        return "local", int(count)
    if "://" in text and text.split("://", 1)[1]:
        return "address", text
    raise ValueError(
        f"bad scheduler {scheduler!r}: 'local:N' (N worker processes here) or a scheduler address 'tcp://host:8786'"
    )


@contextmanager
def connect(scheduler: str) -> Iterator[Any]:
    """A ``distributed.Client`` for ``scheduler`` (see the module docstring), closed on exit; for ``"local:N"`` the
    local cluster is started here (a few seconds: each worker process imports numpy and this package when its first
    task needs them) and shut down on exit. Raises ValueError for a bad string (:func:`parse_scheduler`), OSError
    (distributed's TimeoutError) when no scheduler answers at the address, ValueError when a real cluster's workers
    run other versions of dask, distributed or Python than this process (``Client.get_versions(check=True)``),
    ImportError without dask.distributed."""
    kind, value = parse_scheduler(scheduler)
    from distributed import Client, LocalCluster

    if kind == "address":
        client = Client(str(value))
        try:
            client.get_versions(check=True)  # dask, distributed, Python, msgpack... alike on driver and workers
            yield client
        finally:
            client.close()
        return
    cluster = LocalCluster(
        n_workers=int(value), threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
    )
    try:
        client = Client(cluster)
        try:
            yield client
        finally:
            client.close()
    finally:
        cluster.close()


def worker_peak_rss_mb() -> dict[str, float]:
    """Not a task: run by ``client.run`` on every worker (:func:`workers_peak_rss_mb`). The calling process's peak
    resident memory in MiB (``ru_maxrss``, KiB on Linux)."""
    import resource

    return {"peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def workers_peak_rss_mb(client: Any) -> dict[str, float]:
    """Each worker's peak resident memory so far, MiB, by worker address (``client.run``: a call on every worker
    outside the task graph)."""
    found = client.run(worker_peak_rss_mb)
    return {address: float(value["peak_rss_mb"]) for address, value in found.items()}


def send(client: Any, data: Any, broadcast: bool = False) -> Any:
    """``client.scatter(data, broadcast=broadcast, hash=False)``: the future (or, for a list, the futures) of
    ``data`` on the cluster; with ``broadcast`` a copy on every worker. Under a fresh key each time: with the
    content's hash as the key, a second call with equal data (two stages sending the same labels) can meet the
    scheduler's release of the first, and the tasks that read it fail with "lost dependencies"."""
    return client.scatter(data, broadcast=broadcast, hash=False)
