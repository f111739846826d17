"""Themes over the years (issue 42: forty years of the ML Anthology): shares per year with Wilson intervals, thin
years left out and named, rising and fading between two periods with the share ratio's interval, the year each
theme appears, the years a venue has no papers in named and shaded (dashboard/tables/trends_years.py,
dashboard/figures/trend_charts.year_multiples, the Trends view)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from dashboard.figures.trend_charts import HOLE_COLOUR, year_multiples
from dashboard.tables import trends_years
from dashboard.tables.trends_years import (
    MIN_YEAR_PAPERS,
    default_periods,
    first_appearance,
    period_changes,
    series_holes,
    series_years,
    thin_years,
    year_shares,
)
from pipeline.runtime.parquet import read_frame
from tests.conftest import needs_shared

ANTHOLOGY = Path("/work/shared/data/mlanthology/mlanthology_abstracts.parquet")


def papers_per_year(counts: dict[int, dict[int, int]]) -> pd.DataFrame:
    """A documents table: for each year, ``counts[year][theme]`` papers of each theme."""
    rows = [(year, theme) for year, themes in counts.items() for theme, n in themes.items() for _ in range(n)]
    return pd.DataFrame(rows, columns=["year", "theme"])


def test_shares_per_year_have_wilson_intervals_and_thin_years_are_left_out() -> None:
    counts = {1985: {0: 30, 1: 7}, 1990: {0: 150, 1: 50}, 1991: {0: 200, 1: 200}, 1992: {0: 100, 1: 20}}
    shares = year_shares(papers_per_year(counts), "theme")
    row = shares[(shares["year"] == 1990) & (shares["theme"] == 1)].iloc[0]
    assert (row["papers"], row["denominator"], row["share"]) == (50, 200, 0.25)
    assert row["share_low"] < 0.25 < row["share_high"] and row["share_high"] - row["share_low"] < 0.13
    assert thin_years(shares) == {1985: 37}  # 37 papers: under MIN_YEAR_PAPERS, named with its count
    # 120 papers after 400: a year just begun (the ML Anthology's 2026: 294 after 25,778), left out too
    assert thin_years(shares, partial=True) == {1992: 120}
    assert set(shares.loc[shares["shown"], "year"]) == {1990, 1991}


def test_rising_fading_and_new_between_two_periods_with_intervals() -> None:
    early = {year: {0: 120, 1: 60, 2: 20} for year in range(1990, 2000)}  # theme 3 has no paper yet
    late = {year: {0: 40, 1: 60, 2: 80, 3: 20} for year in range(2010, 2020)}
    shares = year_shares(papers_per_year({**early, **late}), "theme")
    assert default_periods(sorted(set(shares["year"]))) == ((1990, 1999), (2010, 2019))
    changes = period_changes(shares, "theme", (1990, 1999), (2010, 2019)).set_index("theme")
    assert changes.loc[0, "status"] == "fading" and changes.loc[0, "ratio_high"] < 1
    assert changes.loc[2, "status"] == "rising" and changes.loc[2, "ratio_low"] > 1
    assert changes.loc[3, "status"] == "new"  # no paper at all in the earlier period
    assert changes.loc[1, "status"] == "steady"  # 60 of 200 a year, then 60 of 200
    assert changes.loc[2, "share_earlier"] == pytest.approx(0.1) and changes.loc[2, "share_later"] == 0.4
    with pytest.raises(ValueError, match="overlap"):
        period_changes(shares, "theme", (1990, 2010), (2005, 2019))
    assert default_periods([2019, 2020, 2021, 2022]) == ((2019, 2020), (2021, 2022))  # halves under two decades


def test_a_theme_appears_when_its_share_is_more_than_a_thin_years_noise() -> None:
    counts = {year: {0: 200} for year in range(2000, 2010)}
    counts[2001][1] = 1  # one stray early paper: its first paper, not its appearance
    counts[2004][1] = 3  # 3 of 203: fewer than APPEAR_PAPERS
    for year, papers in ((2006, 12), (2007, 30), (2008, 60), (2009, 50)):
        counts[year][1] = papers
    counts[1990] = {1: 40}  # a thin year (40 papers, all theme 1) is no appearance either
    table = first_appearance(year_shares(papers_per_year(counts), "theme"), "theme").set_index("theme")
    assert table.loc[1, "first_paper"] == 2001
    assert table.loc[1, "appears"] == 2006
    assert table.loc[1, "peak_year"] == 2008 and table.loc[1, "peak_share"] == pytest.approx(60 / 260)
    assert table.loc[1, "half_peak"] == 2008  # the first year whose lower end reaches half the peak share
    assert table.loc[0, "appears"] == 2000


def test_series_and_their_holes() -> None:
    assert series_years(["2019", "2020"]) is None  # too few years for periods
    assert series_years([f"cvpr {year}" for year in range(2010, 2016)]) == {
        f"cvpr {year}": year for year in range(2010, 2016)
    }
    assert series_years(["ICLR 2024", "NeurIPS"]) is None
    rows = [("cvpr", year) for year in (2015, 2016, 2017, 2021, 2022) for _ in range(300)]
    rows += [("icml", year) for year in range(2015, 2023) for _ in range(300)]
    documents = pd.DataFrame(rows, columns=["venue", "year"])
    documents["collection"] = documents["venue"] + " " + documents["year"].astype(str)
    assert series_holes(documents) == {"cvpr": [2018, 2019, 2020]}
    assert series_holes(documents.drop(columns="venue"), "cvpr") == {"cvpr": [2018, 2019, 2020]}
    assert series_holes(documents, "icml") == {}


def test_the_year_chart_leaves_thin_years_out_shades_holes_and_puts_outliers_last() -> None:
    counts = {year: {-1: 10, 0: 100, 1: 40} for year in range(2010, 2022)}
    counts[2009] = {0: 20}
    shares = year_shares(papers_per_year(counts), "theme")
    figure = year_multiples(shares, {-1: "Outliers", 0: "Big", 1: "Small"}, "theme", "all papers", [2018, 2019])
    assert [trace.x.min() for trace in figure.data] == [2010] * 3  # 2009: 20 papers, not drawn
    assert [annotation.text for annotation in figure.layout.annotations] == ["Big", "Small", "Outliers"]
    bands = [shape for shape in figure.layout.shapes if shape.fillcolor == HOLE_COLOUR]
    assert len(bands) == 3 and (bands[0].x0, bands[0].x1) == (2017.5, 2019.5)  # one band per panel
    assert "grey: a venue's missing years" in figure.layout.title.text.replace("<br>", " ")
    assert MIN_YEAR_PAPERS == trends_years.MIN_YEAR_PAPERS


@pytest.fixture(scope="module")
def decades_cache(build_cache, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An atlas of ML Anthology papers over nine years with a hole: ICML 2014-2022 (110 a year), CVPR 2014-2017
    and 2021-2022 (40 a year: no CVPR 2018-2020, the Anthology's own hole), and a thin year (ICML 2013, 30)."""
    needs_shared(ANTHOLOGY)
    papers = read_frame(ANTHOLOGY, columns=["id", "title", "abstract", "year", "venue"])
    papers = papers[papers["abstract"].str.len() > 400]
    parts = [
        papers[(papers["venue"] == "icml") & (papers["year"] == year)].sample(110, random_state=1)
        for year in range(2014, 2023)
    ]
    parts += [
        papers[(papers["venue"] == "cvpr") & (papers["year"] == year)].sample(40, random_state=1)
        for year in (2014, 2015, 2016, 2017, 2021, 2022)
    ]
    parts.append(papers[(papers["venue"] == "icml") & (papers["year"] == 2013)].sample(30, random_state=1))
    path = tmp_path_factory.mktemp("decades") / "decades.parquet"
    pd.concat(parts).to_parquet(path, index=False)
    return build_cache(path, "decades")


def test_the_trends_view_of_years_shows_rising_fading_appearance_and_the_hole(
    decades_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    from streamlit.testing.v1 import AppTest

    from dashboard.views.trends import ALL_VENUES
    from tests.test_app import APP, no_failure

    warnings = json.loads((decades_cache / "manifest.json").read_text())["warnings"]
    assert any("cvpr: 2018-2020" in warning for warning in warnings)  # the manifest names the hole
    monkeypatch.setenv("ATLAS_CACHE", str(decades_cache))
    monkeypatch.setenv("ATLAS_MAP_RENDERER", "plotly")
    app = AppTest.from_file(str(APP), default_timeout=180).run()
    app.session_state["tab"] = "Trends"
    app.run()
    app.selectbox(key="trend_venue").set_value(ALL_VENUES).run()
    no_failure(app)
    assert any("cvpr: 2018-2020" in warning.value.replace("\\", "") for warning in app.warning)  # named near the charts
    captions = " ".join(caption.value for caption in app.caption)
    assert "2013 (30 papers)" in captions  # the thin year, left out and named
    assert "Grey bands" in captions and "cvpr 2018-2020" in captions
    assert (
        "Every other year" not in captions
    )  # ICML and CVPR meet every year (tests/test_years.py for those that do not)
    markdown = " ".join(block.value for block in app.markdown)
    assert "Rising and fading" in markdown and "When each appeared" in markdown
    periods = next(frame.value for frame in app.dataframe if {"ratio_low", "status"} <= set(frame.value.columns))
    assert set(periods["status"]) <= {"rising", "fading", "new", "steady"} and len(periods) > 0
    appearance = next(frame.value for frame in app.dataframe if "appears" in frame.value.columns)
    assert appearance["first_paper"].min() >= 2014  # 2013 is thin: left out of the measures
    assert [slider.value for slider in app.select_slider] == [(2014, 2017), (2019, 2022)]
    app.selectbox(key="trend_venue").set_value("cvpr").run()  # one venue's own series: its hole named too
    no_failure(app)
    assert any("cvpr: 2018-2020" in warning.value.replace("\\", "") for warning in app.warning)
