"""dashboard.state.shared_cache: Streamlit's resource cache called with keywords (issue 21): the same entries
whichever way the page passes the arguments, arguments that do not fit refused, options passed through."""

from __future__ import annotations

import pandas as pd
import pytest

from dashboard.state.shared_cache import shared

calls: list[tuple] = []


@shared(max_entries=8, show_spinner=False)
def summed(cache_key: tuple[str, int], scale: int, _table: pd.DataFrame, *, offset: int = 0) -> int:
    calls.append((cache_key, scale, offset))
    return int(_table["x"].sum()) * scale + offset


def test_positional_and_keyword_calls_share_one_entry_and_underscore_arguments_are_not_hashed() -> None:
    calls.clear()
    table = pd.DataFrame({"x": [1, 2, 3]})
    key = ("/some/cache", 17)
    assert summed(key, 2, table) == 12
    assert summed(key, 2, pd.DataFrame({"x": [100]})) == 12  # _table is not part of the key: the entry is reused
    assert summed(cache_key=key, scale=2, _table=table) == 12
    assert summed(key, scale=2, _table=table) == 12
    assert calls == [(key, 2, 0)]  # made once
    assert summed(key, 3, table) == 18 and summed(key, 2, table, offset=1) == 13
    assert calls == [(key, 2, 0), (key, 3, 0), (key, 2, 1)]


def test_arguments_that_do_not_fit_are_refused_as_by_the_function() -> None:
    table = pd.DataFrame({"x": [1]})
    with pytest.raises(TypeError):
        summed(("/c", 1), 2, table, 5)  # offset is keyword-only
    with pytest.raises(TypeError):
        summed(("/c", 1), 2, table, scale=3)  # scale given twice
    with pytest.raises(TypeError):
        summed(("/c", 1), 2)  # _table missing


def test_the_decorated_function_keeps_its_name_and_docstring() -> None:
    assert summed.__name__ == "summed"
