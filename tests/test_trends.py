"""Trends with honest denominators (dashboard/tables/trends.py) on the real ICLR 2024-2026 and NeurIPS/ICML 2025
files of ../shared/data, grouped by primary area (no fit needed: the builders take any group column)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dashboard.tables import trends
from pipeline.quality.coverage import canonical_areas, load_crosswalk
from pipeline.runtime.parquet import read_frame
from tests.conftest import SHARED, needs_shared

DATA = SHARED / "data"


@pytest.fixture(scope="module")
def papers() -> pd.DataFrame:
    """ICLR 2024 (decisions from its side table), 2025, 2026 and ICML 2025, NeurIPS 2025: collection, venue, year,
    decision, canonical primary area ``area``."""
    frames = []
    for venue, year in (("ICLR", 2024), ("ICLR", 2025), ("ICLR", 2026), ("ICML", 2025), ("NeurIPS", 2025)):
        path = DATA / f"{venue.lower()}{year}" / f"{venue.lower()}{year}_abstracts.parquet"
        needs_shared(path)
        frame = read_frame(path)
        side = path.with_name(f"{venue.lower()}{year}_decisions_partial.parquet")
        if side.is_file():
            frame = frame.drop(columns=["decision"], errors="ignore").merge(
                read_frame(side, columns=["openreview_id", "decision"]), on="openreview_id", how="left"
            )
        for column in ("primary_area", "decision"):
            if column not in frame.columns:
                frame[column] = None
        frames.append(frame[["primary_area", "decision"]].assign(collection=f"{venue} {year}", venue=venue, year=year))
    documents = pd.concat(frames, ignore_index=True)
    documents["area"] = canonical_areas(documents, load_crosswalk())
    return documents


def test_shares_have_the_collection_as_denominator_and_wilson_intervals(papers: pd.DataFrame) -> None:
    iclr = papers[papers["venue"] == "ICLR"]
    shares = trends.collection_shares(iclr, "area")
    assert set(shares.groupby("collection")["denominator"].first()) == {7404, 11672, 17106}
    row = shares[(shares["area"] == "reinforcement learning") & (shares["collection"] == "ICLR 2024")].iloc[0]
    from scipy.stats import binomtest

    interval = binomtest(int(row["papers"]), int(row["denominator"])).proportion_ci(method="wilson")
    assert (row["share_low"], row["share_high"]) == pytest.approx((interval.low, interval.high), abs=1e-9)
    assert shares.groupby("collection")["share"].sum().round(9).eq(1.0).all()


def test_share_ratio_finds_the_new_area_and_the_missing_one_fades(papers: pd.DataFrame) -> None:
    shares = trends.collection_shares(papers[papers["venue"] == "ICLR"], "area")
    changes = trends.share_changes(shares, "ICLR 2024", "ICLR 2026", "area").set_index("area")
    assert changes.at["foundation or frontier models, including LLMs", "status"] == "new"  # 0 in 2024
    vision = "applications to computer vision, audio, language, and other modalities"
    assert changes.at[vision, "status"] == "fading"  # the hole in ICLR 2026's copy, which coverage warns about
    steady = changes.loc["optimization"]
    x1, n1, x2, n2 = steady["papers_earlier"], 7404, steady["papers_later"], 17106
    spread = 1.959963984540054 * math.sqrt(1 / x1 - 1 / n1 + 1 / x2 - 1 / n2)  # Katz's log interval
    assert steady["ratio"] == pytest.approx((x2 / n2) / (x1 / n1))
    assert steady["ratio_low"] == pytest.approx(steady["ratio"] * math.exp(-spread))
    with pytest.raises(KeyError, match="ICLR 2099"):
        trends.share_changes(shares, "ICLR 2024", "ICLR 2099", "area")


def test_common_areas_leave_out_the_areas_missing_in_a_year(papers: pd.DataFrame) -> None:
    iclr = papers[papers["venue"] == "ICLR"]
    names = ["ICLR 2024", "ICLR 2025", "ICLR 2026"]
    mask = trends.common_area_mask(iclr, names, iclr["area"])
    kept = set(iclr.loc[mask, "area"])
    assert "applications to computer vision, audio, language, and other modalities" not in kept
    assert "foundation or frontier models, including LLMs" not in kept and "optimization" in kept
    shares = trends.collection_shares(iclr, "area", mask)
    assert shares.groupby("collection")["denominator"].first().lt(iclr["collection"].value_counts()).all()


def test_acceptance_counts_unknown_as_submission_never_as_reject(papers: pd.DataFrame) -> None:
    table = trends.acceptance_by_collection(papers, "venue")
    assert set(table["collection"]) == {"ICLR 2024", "ICLR 2025", "ICLR 2026"}  # ICML, NeurIPS: accepted only
    iclr2024 = table.set_index("collection").loc["ICLR 2024"]
    assert (iclr2024["submissions"], iclr2024["accepted"]) == (7404, 2260)  # every accepted paper of 2024
    assert iclr2024["unknown"] == 5093 and iclr2024["rate"] == pytest.approx(2260 / 7404)
    assert trends.accepted_only(papers) == {
        "ICLR 2024": False,
        "ICLR 2025": False,
        "ICLR 2026": False,
        "ICML 2025": True,
        "NeurIPS 2025": True,
    }


def test_venues_of_a_year_are_compared_accepted_with_accepted(papers: pd.DataFrame) -> None:
    shares, accepted_only = trends.venue_shares(papers, 2025, "venue")
    assert accepted_only
    totals = shares.groupby("collection")["denominator"].first()
    iclr2025 = papers[papers["collection"] == "ICLR 2025"]
    assert totals["ICLR 2025"] == int(iclr2025["decision"].isin(["Oral", "Spotlight", "Poster"]).sum())
    assert totals["ICML 2025"] == 3330 and totals["NeurIPS 2025"] == 5823
    own = shares[shares["papers"] > 0]
    assert len(own) == 3 and np.allclose(own["share"], 1.0)  # grouped by venue: each venue is all of its own papers
    lifted = trends.over_represented(trends.collection_shares(papers[papers["venue"] == "ICLR"], "area"), "area", 3)
    assert lifted.groupby("collection").size().eq(3).all() and lifted["lift"].gt(0).all()


def test_outliers_count_in_the_denominators_but_are_never_ranked(papers: pd.DataFrame) -> None:
    """Papers of no topic (group -1) are no theme that fades or that a venue favours: left out of both rankings,
    while every share keeps the whole collection as its denominator."""
    iclr = papers[papers["venue"] == "ICLR"].copy()
    codes = {area: code for code, area in enumerate(sorted(iclr["area"].dropna().unique()))}
    codes["optimization"] = -1  # its papers play the outliers
    iclr["group"] = iclr["area"].map(codes).fillna(-1).astype(int)
    shares = trends.collection_shares(iclr, "group")
    assert -1 in set(shares["group"])
    changes = trends.share_changes(shares, "ICLR 2024", "ICLR 2026", "group")
    assert -1 not in set(changes["group"]) and len(changes) == len(set(codes.values()) - {-1})
    whole = shares.drop_duplicates("collection").set_index("collection")["denominator"]
    assert changes["share_later"].to_numpy() == pytest.approx(changes["papers_later"] / whole["ICLR 2026"])
    favoured = trends.over_represented(shares, "group", n=50)
    assert not favoured.empty and -1 not in set(favoured["group"])


def synthetic_shares() -> pd.DataFrame:
    rows = []
    for collection in ("ICLR 2024", "ICLR 2025", "ICLR 2026"):
        for theme in range(7):
            rows.append({"collection": collection, "theme": theme, "share": 0.1, "share_low": 0.08, "share_high": 0.12})
    return pd.DataFrame(rows)


def test_trend_panels_keep_their_titles_and_ticks_apart_and_the_title_inside_the_chart() -> None:
    """At 900 px with the sidebar open, four panels a row printed their names over each other, "ICLR 2024" ticks
    over the next panel's, and the centred one-line title was cut at both edges."""
    from dashboard.figures import trend_charts

    labels = {theme: f"Multimodal large language models {theme}" for theme in range(7)}
    figure = trend_charts.small_multiples(synthetic_shares(), labels, "theme", "all papers of each ICLR collection")
    assert figure.layout.title.xanchor == "left" and figure.layout.title.x == 0
    assert max(len(line) for line in figure.layout.title.text.split("<br>")) <= trend_charts.TITLE_LINE_CHARS
    panel_titles = [annotation.text for annotation in figure.layout.annotations]
    assert all(max(len(line) for line in text.split("<br>")) <= 24 for text in panel_titles), panel_titles
    assert "Multimodal large language models 3" in [text.replace("<br>", " ") for text in panel_titles]  # never cut
    assert list(figure.data[0].x) == ["2024", "2025", "2026"]  # the venue they share is said once, by the chooser
    assert figure.layout.xaxis.type == "category"  # as numbers, ticks fell at 2024.5 too
    assert figure.layout.xaxis4.domain[0] < 0.1  # three panels a row: the fourth starts the second row


def test_the_venues_view_opens_on_the_latest_year_with_two_venues() -> None:
    from dashboard.views.venues import comparable_year

    documents = pd.DataFrame(
        {
            "year": [2024, 2024, 2025, 2025, 2026],
            "collection": ["ICLR 2024", "NeurIPS 2024", "ICLR 2025", "ICML 2025", "ICLR 2026"],
        }
    )
    assert comparable_year(documents, [2024, 2025, 2026]) == 1  # 2025, not 2026 (ICLR alone: nothing to compare)
    assert comparable_year(documents.iloc[[4]], [2026]) == 0
