"""Themes over the years (issue 42: forty years of the ML Anthology, sixty of the ACL Anthology): each group's share
of every year's papers with its Wilson interval, the years too thin to show, which groups rose and faded between an
earlier and a later period, and when each appeared; pure pandas/numpy.

- **Thin years**: a year with fewer than MIN_YEAR_PAPERS papers (the ML Anthology's 1985 and 1986: 37 and 49) is
  left out of the chart and the measures and named in a note: its interval spans half the axis and says nothing.
  So is a **year just begun** after the last full year (pipeline.ingest.years.last_full_year: the ML Anthology's
  2026, 294 papers against 25,778 in 2025): its few venues so far are not the year's mix.
- **Rising and fading** (:func:`period_changes`): the share of each group over all the papers of an earlier period
  (its years pooled) against a later one, with the share ratio's Katz 95% interval and the pooled z-test's p-value
  (:func:`dashboard.tables.trends.share_changes`); **rising** when the interval's lower end is above 1, **fading**
  when its upper end is below 1, **new** when it rose from no paper at all in the earlier period (over forty years
  most themes more than doubled: "new" is kept for what was not there).
  By default the periods are the first and the last PERIOD_YEARS shown years (:func:`default_periods`).
- **First appearance** (:func:`first_appearance`): per group, its first year with a paper, the first year it
  **appears** (at least APPEAR_PAPERS papers and a share whose interval's lower end reaches APPEAR_SHARE: a share
  the year's size cannot explain away), the first year it reached half its peak share (lower end at least half the
  peak), and its peak year and share, over the shown years only.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from dashboard.tables.trends import OUTLIER_GROUP, collection_shares, share_changes
from pipeline.ingest.years import MIN_HOLE_SHARE, alternate_year_venues, last_full_year, venue_year_holes

# A year needs this many papers to be drawn and measured (a Wilson interval at 37 papers spans +-15 points).
MIN_YEAR_PAPERS = 100
# A group appears in the first year it has this many papers ...
APPEAR_PAPERS = 10
# ... and a share whose 95% interval's lower end is at least this.
APPEAR_SHARE = 0.01
# The periods rising and fading compare, by default: the first and the last this many shown years.
PERIOD_YEARS = 10
# Every venue pooled, the chart shades a year whose missing meetings would have held at least this share of its
# papers (CVPR 2018-2020: about a fifth; the note names every hole of MIN_HOLE_SHARE, a fiftieth, or more).
SHADE_SHARE = 0.10
# A series needs this many shown years before its years are compared as periods.
MIN_SERIES_YEARS = 6


def year_shares(documents: pd.DataFrame, group: str, mask: pd.Series | None = None) -> pd.DataFrame:
    """collection_shares over the years: per ``group`` value and year (an int column ``year``), ``papers``,
    ``denominator`` (the year's papers under ``mask``), ``share`` and its Wilson ``share_low``/``share_high``,
    ``partial`` (a year just begun: after the last full year) and ``shown`` (the year has at least MIN_YEAR_PAPERS
    papers and is not partial). ``documents`` needs ``year`` and ``group``; rows without a readable year are left
    out."""
    years = pd.to_numeric(documents["year"], errors="coerce").round().astype("Int64")
    keep = years.notna() if mask is None else (years.notna() & mask)
    dated = documents.loc[keep, [group]].assign(collection=years[keep].astype(int))
    table = collection_shares(dated, group).rename(columns={"collection": "year"})
    table["year"] = table["year"].astype(int)
    totals = table.drop_duplicates("year").set_index("year")["denominator"]
    last = last_full_year({int(year): int(count) for year, count in totals.items()})
    table["partial"] = table["year"] > (last if last is not None else table["year"].max())
    table["shown"] = (table["denominator"] >= MIN_YEAR_PAPERS) & ~table["partial"]
    return table


def thin_years(shares: pd.DataFrame, partial: bool = False) -> dict[int, int]:
    """{year: its papers} of the years year_shares left out for want of papers (``partial``: the years just begun
    instead), earliest first."""
    left_out = ~shares["shown"] & (shares["partial"] if partial else ~shares["partial"])
    years = shares.loc[left_out].drop_duplicates("year").sort_values("year")
    return dict(zip(years["year"].astype(int), years["denominator"].astype(int)))


def default_periods(years: list[int], span: int = PERIOD_YEARS) -> tuple[tuple[int, int], tuple[int, int]]:
    """The earlier and later periods compared by default, each (first year, last year): the first and the last
    ``span`` of the sorted ``years`` (the shown years), or the two halves when there are fewer than 2 * ``span``.
    Raises ValueError for fewer than two years."""
    ordered = sorted(set(years))
    if len(ordered) < 2:
        raise ValueError(f"two years are needed to compare periods, got {ordered}")
    size = min(span, len(ordered) // 2)
    return (ordered[0], ordered[size - 1]), (ordered[-size], ordered[-1])


def period_name(period: tuple[int, int]) -> str:
    """ "1987-1996", or "2025" for a period of one year."""
    first, last = period
    return str(first) if first == last else f"{first}-{last}"


def period_changes(shares: pd.DataFrame, group: str, earlier: tuple[int, int], later: tuple[int, int]) -> pd.DataFrame:
    """The change of each group's share from the ``earlier`` period to the ``later`` one (each (first, last year),
    inclusive), over the shown years of ``shares`` (year_shares) pooled: share_changes's columns (``share_earlier``,
    ``share_later``, ``ratio`` with ``ratio_low``/``ratio_high``, ``p_value``, ...) with ``status`` rising, fading,
    new or steady; the outliers have no row. Raises ValueError when the periods overlap or one has no shown year."""
    if not (earlier[1] < later[0] or later[1] < earlier[0]):
        raise ValueError(f"the periods {period_name(earlier)} and {period_name(later)} overlap")
    shown = shares[shares["shown"]]
    pooled = []
    for period in (earlier, later):
        part = shown[shown["year"].between(*period)]
        if part.empty:
            raise ValueError(f"no year of {period_name(period)} has {MIN_YEAR_PAPERS} papers or more")
        counts = part.groupby(group)["papers"].sum().rename("papers").reset_index()
        total = int(part.drop_duplicates("year")["denominator"].sum())
        pooled.append(counts.assign(collection=period_name(period), denominator=total))
    table = share_changes(pd.concat(pooled, ignore_index=True), period_name(earlier), period_name(later), group)
    table["status"] = np.select(
        [
            (table["papers_earlier"] == 0) & (table["ratio_low"] > 1),
            table["ratio_low"] > 1,
            table["ratio_high"] < 1,
        ],
        ["new", "rising", "fading"],
        "steady",
    )
    return table


def first_appearance(shares: pd.DataFrame, group: str) -> pd.DataFrame:
    """Per group (outliers left out), over the shown years of ``shares`` (year_shares): ``first_paper`` (its first
    year with a paper), ``appears`` (module docstring; missing when it never does), ``half_peak`` (the first year
    its share's lower end reached half its peak share), ``peak_year``, ``peak_share`` with ``peak_low``/``peak_high``,
    and ``papers`` (all its papers in those years); sorted by ``appears``, then ``first_paper``."""
    shown = shares[shares["shown"] & (shares[group] != OUTLIER_GROUP)].sort_values("year")
    rows = []
    for value, part in shown.groupby(group, sort=False):
        having = part[part["papers"] > 0]
        appearing = part[(part["papers"] >= APPEAR_PAPERS) & (part["share_low"] >= APPEAR_SHARE)]
        peak = part.loc[part["share"].idxmax()]
        half = part[part["share_low"] >= peak["share"] / 2]
        rows.append(
            {
                group: value,
                "first_paper": _first(having),
                "appears": _first(appearing),
                "half_peak": _first(half),
                "peak_year": int(peak["year"]),
                "peak_share": float(peak["share"]),
                "peak_low": float(peak["share_low"]),
                "peak_high": float(peak["share_high"]),
                "papers": int(part["papers"].sum()),
            }
        )
    table = pd.DataFrame(
        rows,
        columns=[
            group,
            "first_paper",
            "appears",
            "half_peak",
            "peak_year",
            "peak_share",
            "peak_low",
            "peak_high",
            "papers",
        ],
    )
    for column in ("first_paper", "appears", "half_peak"):
        table[column] = table[column].astype("Int64")
    return table.sort_values(["appears", "first_paper"], na_position="last").reset_index(drop=True)


def _first(part: pd.DataFrame) -> int | None:
    """The first year of ``part`` (sorted by year), None when it is empty."""
    return int(part["year"].iloc[0]) if len(part) else None


def series_years(names: list[str]) -> dict[str, int] | None:
    """{collection name: its year} when every name ends with a year ("cvpr 2017", "2019") and they hold at least
    MIN_SERIES_YEARS distinct years (a series worth periods and first appearances), else None."""
    years = {}
    for name in names:
        last = str(name).rsplit(" ", 1)[-1]
        if not last.isdigit():
            return None
        years[name] = int(last)
    return years if len(set(years.values())) >= MIN_SERIES_YEARS else None


def series_holes(
    documents: pd.DataFrame,
    venue: str | None = None,
    min_share: float = MIN_HOLE_SHARE,
    papers: Mapping[tuple[str, int], int] | None = None,
) -> dict[str, list[int]]:
    """The holes a series of years has (pipeline.ingest.years.venue_year_holes), as {venue: years}. Every venue
    pooled (``venue`` None): each venue's missing meetings that matter to a year's shares, from the file's own
    ``venue`` and ``year`` columns when it has them (joint venues "acl;ijcnlp" split), else from the collections'
    names. One venue: that venue's own missing meetings of MIN_HOLE_PAPERS papers or more, from the collections'
    names (its series as drawn), after its last year too. ``min_share``: what a pooled hole must weigh (SHADE_SHARE
    for the chart's grey bands). ``papers``: :func:`venue_year_papers` of ``documents`` when already counted."""
    if venue is None and {"venue", "year"} <= set(documents.columns):
        return venue_year_holes(venue_year_papers(documents) if papers is None else papers, min_share=min_share)
    if "collection" not in documents.columns:
        return {}
    papers = {}
    for name, count in documents["collection"].dropna().astype(str).value_counts().items():
        first, _, last = name.rpartition(" ")
        if first and last.isdigit():
            papers[(first, int(last))] = int(count)
    if venue is None:
        return venue_year_holes(papers, min_share=min_share)
    own = venue_year_holes(papers, split_joint=False, min_share=0)
    return {venue: own[venue]} if venue in own else {}


def hole_years(holes: dict[str, list[int]]) -> list[int]:
    """The distinct years of ``holes`` ({venue: years}), sorted."""
    return sorted({int(year) for years in holes.values() for year in years})


def shown_years(shares: pd.DataFrame) -> list[int]:
    """The years year_shares shows, sorted."""
    return sorted(int(year) for year in np.unique(shares.loc[shares["shown"], "year"]))


def series_alternating(documents: pd.DataFrame, papers: Mapping[tuple[str, int], int] | None = None) -> dict[str, str]:
    """{venue: "even" or "odd"} of the venues that meet every other year and weigh enough to make every venue's
    pooled shares swing between even and odd years (pipeline.ingest.years.alternate_year_venues), from the file's own
    ``venue`` and ``year`` columns; {} without them. ``papers``: :func:`venue_year_papers` of ``documents`` when
    already counted."""
    if not {"venue", "year"} <= set(documents.columns):
        return {}
    return alternate_year_venues(venue_year_papers(documents) if papers is None else papers)


def venue_year_papers(documents: pd.DataFrame) -> dict[tuple[str, int], int]:
    """{(venue, year): papers} from the documents' own ``venue`` and ``year`` columns (rows lacking either left out)."""
    years = pd.to_numeric(documents["year"], errors="coerce")
    kept = documents.assign(year=years).dropna(subset=["venue", "year"])
    counts = kept.groupby([kept["venue"].astype(str), kept["year"].astype(int)]).size()
    return {(str(name), int(year)): int(count) for (name, year), count in counts.items()}
