"""The Trends and Venues tabs read by people (issue 40, items 3 and 4) on a real three-collection build (ICLR 2024,
ICLR 2025, ICML 2025: tests/test_journeys.py's ``journeys_cache``): every share axis has distinct tick labels, and
the tables have human headers, percentages, readable p-values, names before ids and no repository path nearby."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dashboard.figures import trend_charts
from dashboard.tables import trends
from pipeline.cache import read_cache
from tests import test_journeys

journeys_cache = test_journeys.journeys_cache  # the same module-scoped build, made once for this file


def test_share_ticks_are_distinct_round_and_cover_the_largest_share() -> None:
    """Plotly's ".0%" ticks printed "2%, 2%, 1%, 1%, 0%" for a panel up to 2.4% and "0%, 0%, 0%" up to 0.4%."""
    for top in [*np.geomspace(1e-4, 1.0, 200), 0.0, 0.024, 0.004, 0.0167]:
        values, texts = trend_charts.share_ticks(float(top))
        assert len(set(texts)) == len(texts) >= 3, (top, texts)
        assert values[0] == 0 and values[-1] >= top and len(values) <= trend_charts.SHARE_TICK_STEPS + 1
        assert all(float(text.rstrip("%")) == pytest.approx(value * 100) for value, text in zip(values, texts))
    assert trend_charts.share_ticks(0.024)[1] == ["0%", "1%", "2%", "3%"]
    assert trend_charts.share_ticks(0.004)[1] == ["0.0%", "0.1%", "0.2%", "0.3%", "0.4%"]


def check_share_axis(axis, top: float) -> None:
    """The tick labels plotly shows on ``axis`` (set explicitly: tickvals and ticktext) are distinct, inside the
    axis's range, and the range holds every share and interval up to ``top``."""
    assert axis.tickmode == "array"
    texts, values = list(axis.ticktext), list(axis.tickvals)
    assert len(texts) == len(values) >= 3 and len(set(texts)) == len(texts), texts
    low, high = axis.range
    assert low <= 0 and all(low <= value <= high for value in values) and high >= top


def test_every_small_multiple_and_the_venue_bars_have_distinct_readable_ticks(journeys_cache: Path) -> None:
    from dashboard.views.trends import grouped

    class Atlas:  # what views.trends.grouped reads of a Page
        atlas = read_cache(journeys_cache)

    panels = 0
    for level in ("theme", "topic"):
        documents, labels, group = grouped(Atlas(), level)  # type: ignore[arg-type]
        iclr = documents["collection"].str.startswith("ICLR")
        shares = trends.collection_shares(documents, group, iclr)
        figure = trend_charts.small_multiples(shares, labels, group, "all papers of each ICLR collection")
        groups = list(dict.fromkeys(shares[group]))
        for number, value in enumerate(groups):
            axis = figure.layout[f"yaxis{number + 1 if number else ''}"]
            check_share_axis(axis, float(shares.loc[shares[group] == value, "share_high"].max()))
            panels += 1
        venue_shares, _ = trends.venue_shares(documents, 2025, group)
        bars = trend_charts.venue_bars(venue_shares, labels, group, "Venues 2025")
        check_share_axis(bars.layout.xaxis, float(venue_shares["share_high"].max()))
    assert panels >= 4


def table_of(app, marker: str) -> tuple[pd.DataFrame, list[str], dict]:
    """The one dataframe on the page with a column ``marker``: its data, the columns shown in order, and their
    column_config (a read-only dataframe's key is not on its element)."""
    found = [frame for frame in app.dataframe if marker in frame.value.columns]
    assert len(found) == 1, [list(frame.value.columns) for frame in app.dataframe]
    proto = found[0].proto
    return found[0].value, list(proto.column_order), json.loads(proto.columns)


def headers(order: list[str], config: dict) -> list[str]:
    return [config.get(column, {}).get("label", column) for column in order]


def check_readable(app, marker: str, expected: list[str], shares: list[str]) -> pd.DataFrame:
    """The table with a column ``marker`` shows the ``expected`` headers in order (a name first, an id last),
    ``shares`` as percentages of values in [0, 1], and no raw column name as a header."""
    data, order, config = table_of(app, marker)
    shown = headers(order, config)
    assert shown == expected, shown
    assert not any("_" in header for header in shown)
    for column in shares:
        assert config[column]["type_config"]["format"] == "percent", config[column]
        assert data[column].dropna().between(0, 1).all()
    return data


def test_trends_and_venues_tables_have_human_headers_and_no_repository_paths(
    journeys_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from streamlit.testing.v1 import AppTest

    from tests.test_app import APP, no_failure

    monkeypatch.setenv("ATLAS_CACHE", str(journeys_cache))
    monkeypatch.setenv("ATLAS_MAP_RENDERER", "plotly")
    app = AppTest.from_file(str(APP), default_timeout=120).run()
    no_failure(app)
    app.session_state["tab"] = "Trends"
    app.run()
    no_failure(app)
    changes = check_readable(
        app,
        "p_value",
        [
            "Theme",
            "Change",
            "Papers ICLR 2024",
            "Papers ICLR 2025",
            "Share ICLR 2024",
            "Share ICLR 2025",
            "Share ratio",
            "Ratio (95% low)",
            "Ratio (95% high)",
            "p-value",
            "Of its papers, in ICLR 2025",
            "Theme id",
        ],
        ["share_earlier", "share_later", "later_fraction"],
    )
    assert changes["p_text"].map(lambda text: bool(re.fullmatch(r"< 0\.001|0\.0*[1-9]\d?|1", text))).all()
    assert (changes["p_text"] == changes["p_value"].map(trends.p_value_text)).all()
    check_readable(
        app,
        "submissions",
        [
            "Theme",
            "Collection",
            "Submissions",
            "Accepted",
            "No decision",
            "Acceptance",
            "Acceptance (95% low)",
            "Acceptance (95% high)",
            "Theme id",
        ],
        ["rate", "rate_low", "rate_high"],
    )
    check_no_paths(app)
    app.session_state["tab"] = "Venues"
    app.run()
    no_failure(app)
    check_readable(
        app,
        "lift",
        [
            "Theme",
            "Venue",
            "Papers",
            "Share",
            "Share (95% low)",
            "Share (95% high)",
            "Share at the other venues",
            "Lift",
            "Theme id",
        ],
        ["share", "share_low", "share_high", "share_elsewhere"],
    )
    check_readable(
        app,
        "found_again",
        ["Theme", "Rejects", "Found in ICML 2025", "Found again", "Share found again", "Theme id"],
        ["share"],
    )
    assert any("rejects are found again" in caption.value for caption in app.caption)
    check_no_paths(app)


def check_no_paths(app) -> None:
    """No caption, text or markdown on the page names a file of the repository."""
    shown = [element.value for kind in (app.caption, app.markdown, app.info) for element in kind]
    assert shown and not [text for text in shown if "docs/" in text or ".md" in text]


def test_p_values_are_written_with_two_significant_digits_or_as_a_bound() -> None:
    assert [trends.p_value_text(p) for p in (1e-12, 0.000999, 0.001, 0.01234, 0.3456, 1.0)] == [
        "< 0.001",
        "< 0.001",
        "0.001",
        "0.012",
        "0.35",
        "1",
    ]
