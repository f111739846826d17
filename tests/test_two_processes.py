"""Work shared by the build's process and one worker process (pipeline.runtime.two_processes): results in order,
whoever computed them, and a part that fails is computed again where its error can be raised."""

from __future__ import annotations

import pytest

from pipeline.runtime.two_processes import map_in_two_processes


def test_every_part_is_computed_once_and_the_results_keep_the_parts_order():
    parts = [str(number) for number in range(40)]
    assert map_in_two_processes(int, parts) == list(range(40))
    assert map_in_two_processes(int, ["7"]) == [7] and map_in_two_processes(int, []) == []


def test_a_part_that_fails_raises_its_own_error_in_the_calling_process():
    with pytest.raises(ValueError, match="'x'"):
        map_in_two_processes(int, ["1", "2", "x", "4"])
