"""A file whose rows carry a year and a venue (the ML Anthology's papers) gets the year filter, colour by year and
venue, and the Trends and Venues views, as an atlas of several collections does (issue 42)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from dashboard.tables.collections import (
    DERIVED_VENUES,
    NO_VENUE,
    OTHER_VENUE,
    collection_options,
    with_derived_collections,
    year_holes,
    year_options,
)
from dashboard.views.trends import ALL_VENUES
from pipeline.runtime.parquet import read_frame
from tests.conftest import needs_shared

ANTHOLOGY = Path("/work/shared/data/mlanthology/mlanthology_abstracts.parquet")


def test_collections_are_made_from_a_files_venue_and_year() -> None:
    documents = pd.DataFrame(
        {
            "venue": ["icml", "neurips", "icml", "neurips", None, "icml", "acl findings"],
            "year": [2021, 2020, 2020, 2021, 2021, None, 2020],
        }
    )
    derived = with_derived_collections(documents)
    assert derived["collection"].tolist() == [
        "icml 2021",
        "neurips 2020",
        "icml 2020",
        "neurips 2021",
        f"{NO_VENUE} 2021",
        None,  # no year: no collection, never a made-up one
        "acl-findings 2020",  # one word: the Trends view reads a venue as its name's first word
    ]
    assert derived.drop(columns="collection").equals(documents)  # the rows and their order kept
    # venue by venue in the order the rows first name them, years in time order
    assert collection_options(derived) == [
        "icml 2020",
        "icml 2021",
        "neurips 2020",
        "neurips 2021",
        f"{NO_VENUE} 2021",
        "acl-findings 2020",
    ]
    assert year_options(derived) == [2020, 2021]


def test_no_collections_without_two_years_and_an_atlas_of_collections_is_left_alone() -> None:
    one_year = pd.DataFrame({"venue": ["icml", "neurips"], "year": [2021, 2021]})
    assert "collection" not in with_derived_collections(one_year).columns
    assert "collection" not in with_derived_collections(pd.DataFrame({"venue": ["icml"]})).columns
    collections = pd.DataFrame({"collection": ["ICLR 2024", "ICLR 2025"], "venue": ["x", "y"], "year": [2024, 2025]})
    assert with_derived_collections(collections) is collections
    years_only = with_derived_collections(pd.DataFrame({"year": ["2019", "2020", "n/a"]}))
    assert years_only["collection"].tolist() == [f"{NO_VENUE} 2019", f"{NO_VENUE} 2020", None]


def test_a_venues_missing_meetings_are_named_at_its_own_cadence() -> None:
    rows = [("cvpr", year) for year in (2015, 2016, 2017, 2021, 2022, 2023) for _ in range(30)]  # the Anthology's
    rows += [("iccv", year) for year in (2013, 2015, 2017, 2021, 2023) for _ in range(30)]  # every other year
    rows += [("eccv", year) for year in (2018, 2020, 2022) for _ in range(30)]
    rows += [("tiny", year) for year in (2010, 2014)]  # too few papers to judge
    documents = with_derived_collections(pd.DataFrame(rows, columns=["venue", "year"]))
    assert year_holes(documents) == {"cvpr": [2018, 2019, 2020], "iccv": [2019]}
    assert year_holes(pd.DataFrame({"venue": ["x"]})) == {}


def test_venues_beyond_the_largest_join_one() -> None:
    venues = [f"v{index:02d}" for index in range(DERIVED_VENUES + 5) for _ in range(DERIVED_VENUES + 5 - index)]
    documents = pd.DataFrame({"venue": venues, "year": [2020 + index % 2 for index in range(len(venues))]})
    named = {name.split(" ")[0] for name in with_derived_collections(documents)["collection"]}
    assert len(named) == DERIVED_VENUES + 1 and OTHER_VENUE in named


@pytest.fixture(scope="module")
def anthology_cache(build_cache, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An atlas of 360 ML Anthology papers: ICML and NeurIPS, 2019-2021, 60 a venue and year, one file."""
    needs_shared(ANTHOLOGY)
    papers = read_frame(ANTHOLOGY)
    chosen = papers[papers["venue"].isin(["icml", "neurips"]) & papers["year"].between(2019, 2021)]
    chosen = chosen[chosen["abstract"].str.len() > 400]
    sample = chosen.groupby(["venue", "year"]).sample(60, random_state=42)
    path = tmp_path_factory.mktemp("anthology") / "anthology_360.parquet"
    sample.to_parquet(path, index=False)
    return build_cache(path, "anthology360")


def test_a_file_with_years_and_venues_gets_the_trends_and_venues_views(
    anthology_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from streamlit.testing.v1 import AppTest

    from tests.test_app import APP, no_failure

    monkeypatch.setenv("ATLAS_CACHE", str(anthology_cache))
    monkeypatch.setenv("ATLAS_MAP_RENDERER", "plotly")
    app = AppTest.from_file(str(APP), default_timeout=120).run()
    no_failure(app)
    colour = next(widget for widget in app.selectbox if widget.label == "Colour points by")
    assert {"Venue", "Year"} <= set(colour.options)
    assert {"Trends", "Venues"} <= {tab.label for tab in app.tabs}
    app.session_state["tab"] = "Trends"
    app.run()
    no_failure(app)
    venue = next(widget for widget in app.selectbox if widget.label == "Venue")
    assert venue.options == ["icml", "neurips", ALL_VENUES]
    assert [widget.value for widget in app.selectbox if widget.label in ("From", "To")] == ["icml 2019", "icml 2021"]
    app.selectbox(key="trend_venue").set_value(ALL_VENUES).run()  # every venue pooled, one collection a year
    no_failure(app)
    assert [widget.value for widget in app.selectbox if widget.label in ("From", "To")] == ["2019", "2021"]
    assert any("pooled per year" in caption.value for caption in app.caption)
    app.session_state["tab"] = "Venues"
    app.run()
    no_failure(app)
    assert not [info.value for info in app.info if "nothing to compare" in info.value]
    assert any("Accepted papers only" in caption.value for caption in app.caption)


def test_the_build_warns_of_a_files_year_holes() -> None:
    from pipeline.ingest.clean import year_hole_warnings

    rows = [("cvpr", year) for year in (2016, 2017, 2021) for _ in range(30)]
    warnings = year_hole_warnings(pd.DataFrame(rows, columns=["venue", "year"]))
    assert warnings == [
        "Years a venue has no papers in although its cadence says it met (missing from the data, or a year it did "
        "not meet): cvpr: 2018-2020. A share there moves for want of those papers: not a trend."
    ]
    assert year_hole_warnings(pd.DataFrame({"year": [2016, 2021]})) == []  # no venue: nothing to say
