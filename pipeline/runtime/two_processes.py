"""A list of independent parts of work shared by this process and one worker process, each taking parts from its own
end: the row-local cleaning of a large file (pipeline.store.prepared), where the second core is otherwise idle.

The worker is a ``spawn`` process (a fresh interpreter: safe whatever threads this process has started) of the
standard library's ProcessPoolExecutor; every part is submitted to it in order, and this process meanwhile computes
parts from the last one backwards, each one the worker has not started (``Future.cancel`` succeeds only for those).
So the split follows how fast each side really is (the worker's start, about 1.5 s, included), and neither waits
for the other by more than one part. A part the worker failed (its process died, or the function raised there) is
computed again here, so an error is raised here as in one process.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

log = logging.getLogger(__name__)

Part = TypeVar("Part")
Result = TypeVar("Result")


class WorkerProcess:
    """One ``spawn`` worker process started before its work is known, so that its start (a fresh interpreter importing
    what ``warm`` imports, about 1 s) overlaps this process's own imports and reading; :func:`map_in_two_processes`
    then shares parts with it. Use it as a context manager: leaving it shuts the worker down without waiting for a
    part it is still running (a build whose cleaning came from the store never gives it one)."""

    def __init__(self, warm: Callable[[], Any] | None = None) -> None:
        from concurrent.futures import ProcessPoolExecutor
        from multiprocessing import get_context

        self.executor = ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn"))
        if warm is not None:
            self.executor.submit(warm)

    def __enter__(self) -> WorkerProcess:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)


def map_in_two_processes(
    function: Callable[[Part], Result], parts: Sequence[Part], worker: WorkerProcess | None = None
) -> list[Result]:
    """``[function(part) for part in parts]``, computed by this process and one worker process (see the module
    docstring): ``worker``'s when given (it stays up for its owner to shut down), else one started here and shut
    down at the end. ``function`` and the parts must pickle (a module-level function, or functools.partial of one).
    Raises what ``function`` raises in this process."""
    if len(parts) < 2:
        return [function(part) for part in parts]
    if worker is not None:
        return _shared_parts(function, parts, worker.executor)
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as executor:
        return _shared_parts(function, parts, executor)


def _shared_parts(function: Callable[[Part], Result], parts: Sequence[Part], executor: Any) -> list[Result]:
    """Every part submitted to ``executor`` (one worker process) in order while this process computes parts from the
    last one backwards, each one the worker has not started; the results in the parts' order."""
    results: dict[int, Result] = {}
    futures = [executor.submit(function, part) for part in parts]
    for index in reversed(range(len(parts))):
        if not futures[index].cancel():  # the worker has this part and every earlier one
            break
        results[index] = function(parts[index])
    for index, future in enumerate(futures):
        if index not in results:
            results[index] = _worker_result(future, function, parts[index])
    return [results[index] for index in range(len(parts))]


def _worker_result(future: Any, function: Callable[[Part], Result], part: Part) -> Result:
    """The worker's result of ``part``, or ``function(part)`` computed here when the worker failed it (logged)."""
    try:
        return future.result()
    except Exception as error:  # the worker died or raised: compute it here, where an error is raised as usual
        log.info("a part the worker process failed (%s) is computed in the build's process", type(error).__name__)
        return function(part)
