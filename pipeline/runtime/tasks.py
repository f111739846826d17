"""Independent tasks run in this thread or shared by a few worker threads, their results in the tasks' order
(the map metrics' kNN accuracies and trustworthiness blocks: pipeline.quality.map_metrics)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any


def run_tasks(tasks: Sequence[Callable[[], Any]], threads: int) -> list[Any]:
    """Each task's result, in the tasks' order: run in this thread when ``threads`` is 1, else by that many worker
    threads, each taking the next task as it finishes one (so long tasks listed first balance best). Raises what a
    task raised."""
    if threads <= 1:
        return [task() for task in tasks]
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="atlas-metrics") as workers:
        return list(workers.map(lambda task: task(), tasks))
