"""The WebGL map component's settings read on the server (dashboard/components/scatter)."""

from __future__ import annotations

import pytest

from dashboard.components import scatter


@pytest.mark.parametrize(
    ("value", "expected"),
    [("", 300), ("1500", 1500), ("100", 100), ("5000", 5000), ("99", 300), ("5001", 300), ("fast", 300), ("-5", 300)],
)
def test_the_click_wait_is_a_bounded_whole_number_else_300(monkeypatch, value: str, expected: int) -> None:
    monkeypatch.setenv("ATLAS_MAP_CLICK_WAIT_MS", value)
    assert scatter.click_wait_ms() == expected
