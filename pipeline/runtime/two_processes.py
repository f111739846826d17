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


def map_in_two_processes(function: Callable[[Part], Result], parts: Sequence[Part]) -> list[Result]:
    """``[function(part) for part in parts]``, computed by this process and one worker process (see the module
    docstring). ``function`` and the parts must pickle (a module-level function, or functools.partial of one).
    Raises what ``function`` raises in this process."""
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    if len(parts) < 2:
        return [function(part) for part in parts]
    results: dict[int, Result] = {}
    with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as worker:
        futures = [worker.submit(function, part) for part in parts]
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
