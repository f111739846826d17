"""The stages of a command as they run: :class:`StageTimer` times and logs each (wall and CPU seconds, the stage's
name carried by an exception leaving it) for the manifest's ``timings_s`` and ``cpu_s``; :func:`peak_rss_mb` is the
process's peak memory. Used by build, add and from_bertopic (pipeline.operations)."""

from __future__ import annotations

import logging
import resource
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from pipeline.runtime.allocator import return_free_pages
from pipeline.runtime.errors import mark_stage

log = logging.getLogger(__name__)

Result = TypeVar("Result")


class StageTimer:
    """Records wall-clock seconds and the CPU seconds of the thread that ran it, per stage, and logs each as it ends.

    CPU seconds tell a slow stage from a starved one on a busy machine (wall >> CPU: it waited for a core).
    """

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.cpu_seconds: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time the enclosed block as stage ``name``; an exception leaving it carries the stage's name
        (errors.mark_stage)."""
        log.info("stage %s ...", name)
        start, start_cpu = time.perf_counter(), time.thread_time()
        try:
            yield
        except BaseException as error:
            mark_stage(error, name)
            raise
        return_free_pages()  # a large build's heap gives back what the stage freed (pipeline.runtime.allocator)
        # A stage run more than once (load and clean, once per collection) adds up.
        self.seconds[name] = round(self.seconds.get(name, 0.0) + time.perf_counter() - start, 3)
        self.cpu_seconds[name] = round(self.cpu_seconds.get(name, 0.0) + time.thread_time() - start_cpu, 3)
        log.info(
            "stage %s done in %.2f s (%.2f s CPU; peak memory so far %.0f MiB)",
            name,
            self.seconds[name],
            self.cpu_seconds[name],
            peak_rss_mb(),
        )

    def timed(self, name: str, function: Callable[[], Result]) -> Callable[[], Result]:
        """``function`` run as stage ``name`` when called: for a stage another thread runs."""

        def run() -> Result:
            with self.stage(name):
                return function()

        return run


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far, in MiB (Linux reports ru_maxrss in KiB)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
