"""Work shared by the build's process and one worker process (pipeline.runtime.two_processes): results in order,
whoever computed them, and a part that fails is computed again where its error can be raised."""

from __future__ import annotations

import pytest

from pipeline.runtime.two_processes import WorkerProcess, map_in_two_processes


def test_every_part_is_computed_once_and_the_results_keep_the_parts_order():
    parts = [str(number) for number in range(40)]
    assert map_in_two_processes(int, parts) == list(range(40))
    assert map_in_two_processes(int, ["7"]) == [7] and map_in_two_processes(int, []) == []


def test_a_part_that_fails_raises_its_own_error_in_the_calling_process():
    with pytest.raises(ValueError, match="'x'"):
        map_in_two_processes(int, ["1", "2", "x", "4"])


def test_a_worker_started_ahead_serves_several_maps_and_is_shut_down_on_leaving():
    """The build starts its cleaning worker before it reads the input (pipeline.store.prepared.cleaning_worker): the
    same results through it, in two maps; leaving the context shuts it down."""
    with WorkerProcess(warm=dict) as worker:
        parts = [str(number) for number in range(30)]
        assert map_in_two_processes(int, parts, worker) == list(range(30))
        assert map_in_two_processes(int, ["3", "4"], worker) == [3, 4]
    with pytest.raises(RuntimeError, match="shutdown"):
        worker.executor.submit(int, "5")
