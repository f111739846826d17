"""Holes in a corpus's years: the years a venue would have met in, at its own cadence, but has no paper in (the ML
Anthology has no CVPR 2018-2020 and no ICCV 2019; the ACL Anthology copy lacks the ACL, EMNLP and Findings volumes
of 2025 and Findings 2023-2024: their SOURCES.md). A share of that venue's topics falls there for want of papers, not
of interest; the build warns (log and manifest) and the Trends view says so, and shades those years.

A venue's cadence is read locally (the lower median of the gaps between its years within CADENCE_WINDOW gaps either
side), so a venue that met every other year and then every year (AISTATS until 2009, then yearly) has no hole in its
biennial years. A venue that stops a few meetings (at most TRAILING_MEETINGS) before the corpus's last full year (the
latest year with at least FULL_YEAR_SHARE of the year before's papers: a year just begun is not full) is named too:
its last volumes are missing, or it ended; a venue that stopped earlier than that ended. A paper of venues joined by
";" (the ACL Anthology's "acl;ijcnlp": ACL 2021 held with IJCNLP) counts for each of them.

A missing meeting is named only when it matters to a year's shares: the papers it would have had (the smaller of the
venue's meetings either side of it, or its last one: one stray 2004 paper before 408 in 2016 is no series) are at
least MIN_HOLE_PAPERS and at least MIN_HOLE_SHARE of that year's papers with them (CVPR 2018-2020: some 800 of
5,400, named; a workshop of 15 papers: not; the ACL Anthology names some 200 venues, most of them small workshops
that skip years)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

# A venue needs this many papers before its holes are named: two papers in 2010 and 2014 are no series.
MIN_VENUE_PAPERS = 20
# Gaps either side of a gap that set its cadence.
CADENCE_WINDOW = 3
# At most this many missing meetings at a venue's end are named (Findings 2023-2025); more, and the venue ended.
TRAILING_MEETINGS = 3
# A year is full when it has at least this share of the year before's papers (ML Anthology 2026: 294 of 25,899).
FULL_YEAR_SHARE = 0.5
JOINT_VENUES = ";"
# A missing meeting is named when the papers it would have had are at least this many ...
MIN_HOLE_PAPERS = 20
# ... and at least this share of its year's papers with them (0 names every one: a venue's own series).
MIN_HOLE_SHARE = 0.02


def _lower_median(values: list[int]) -> int:
    """The lower median of ``values`` (two gaps, 1 and 4, make a yearly venue), at least 1."""
    ordered = sorted(values)
    return max(ordered[(len(ordered) - 1) // 2], 1)


def local_cadences(years: list[int], window: int = CADENCE_WINDOW) -> list[int]:
    """For each gap between the sorted, distinct ``years``, the venue's cadence there: the lower median of the gaps
    within ``window`` gaps either side, itself included (AISTATS 1995, 1997, ..., 2009, 2010, 2011: 2 until 2009)."""
    gaps = [later - earlier for earlier, later in zip(years, years[1:])]
    return [_lower_median(gaps[max(0, index - window) : index + window + 1]) for index in range(len(gaps))]


def missed_meetings(years: list[int]) -> list[int]:
    """The years a venue meeting at its local cadence (:func:`local_cadences`: 1 for CVPR, 2 for ICCV and ECCV)
    would have met in between its sorted, distinct ``years`` but has no paper: ICCV 2013, 2015, 2017, 2021 -> [2019];
    CVPR 2016, 2017, 2021 -> [2018, 2019, 2020]. [] for fewer than two years."""
    if len(years) < 2:
        return []
    return [
        year
        for earlier, later, cadence in zip(years, years[1:], local_cadences(years))
        if later - earlier > cadence
        for year in range(earlier + cadence, later, cadence)
    ]


def trailing_meetings(years: list[int], last_year: int, limit: int = TRAILING_MEETINGS) -> list[int]:
    """The meetings a venue (sorted, distinct ``years``, at least two) would have held after its last year up to
    ``last_year`` at its latest cadence, when there are 1 to ``limit`` of them (Findings 2020-2022, corpus to 2025 ->
    [2023, 2024, 2025]); [] when it is up to date or stopped longer ago (it ended)."""
    if len(years) < 2:
        return []
    missing = list(range(years[-1] + local_cadences(years)[-1], last_year + 1, local_cadences(years)[-1]))
    return missing if len(missing) <= limit else []


def last_full_year(totals: Mapping[int, int], share: float = FULL_YEAR_SHARE) -> int | None:
    """The latest year of ``totals`` ({year: papers}) with at least ``share`` of the year before's papers (a year
    just begun is not full); None without years."""
    years = sorted(totals)
    for earlier, year in zip(reversed(years[:-1]), reversed(years[1:])):
        if totals[year] >= share * totals[earlier]:
            return year
    return years[0] if years else None


def expected_papers(years: Mapping[int, int], missing: int) -> float:
    """The papers a venue's meeting in year ``missing`` would have had, at least: the fewer of its papers in its
    nearest years before and after it (``years``: {year: papers}), or the one of them there is."""
    before = [year for year in years if year < missing]
    after = [year for year in years if year > missing]
    near = ([years[max(before)]] if before else []) + ([years[min(after)]] if after else [])
    return float(min(near)) if near else 0.0


def _by_venue(papers: Mapping[tuple[str, int], int], split_joint: bool) -> tuple[dict[str, dict[int, int]], dict]:
    """({venue: {year: papers}}, {year: all papers}) from ``papers``; joint venues split when ``split_joint``."""
    by_venue: dict[str, dict[int, int]] = {}
    totals: dict[int, int] = {}
    for (venue, year), count in papers.items():
        totals[int(year)] = totals.get(int(year), 0) + int(count)
        names = str(venue).split(JOINT_VENUES) if split_joint else [str(venue)]
        for name in filter(None, (name.strip() for name in names)):
            by_venue.setdefault(name, {})[int(year)] = by_venue.get(name, {}).get(int(year), 0) + int(count)
    return by_venue, totals


def venue_year_holes(
    papers: Mapping[tuple[str, int], int],
    min_papers: int = MIN_VENUE_PAPERS,
    split_joint: bool = True,
    min_share: float = MIN_HOLE_SHARE,
) -> dict[str, list[int]]:
    """{venue: its missed meetings that matter, inside its years and after its last one (module docstring)} from
    ``papers`` ({(venue, year): papers}), for the venues with at least ``min_papers`` papers and such a hole; venues
    in name order. ``split_joint``: a venue name joined by ";" counts for each of its venues (else it is a venue of
    its own); ``min_share``: the share of its year's papers a missing meeting must weigh (0: every one of at least
    MIN_HOLE_PAPERS papers, for one venue's own series)."""
    by_venue, totals = _by_venue(papers, split_joint)
    last = last_full_year(totals)
    holes = {}
    for venue, years in by_venue.items():
        if sum(years.values()) < min_papers:
            continue
        ordered = sorted(years)
        missing = missed_meetings(ordered) + (trailing_meetings(ordered, last) if last is not None else [])
        weighty = [
            year
            for year in missing
            if (expected := expected_papers(years, year)) >= MIN_HOLE_PAPERS
            and expected >= min_share * (totals.get(year, 0) + expected)
        ]
        if weighty:
            holes[venue] = weighty
    return dict(sorted(holes.items()))


# A venue that meets every other year (LREC and COLING in even years) makes every venue's pooled series swing between
# even and odd years when it holds this share of the papers of the years it meets in, on average (the ACL
# Anthology's "Corpus and word" theme: about 15% in even years, 3% in odd ones).
ALTERNATE_SHARE = 0.05
MIN_ALTERNATE_MEETINGS = 3


def alternate_year_venues(papers: Mapping[tuple[str, int], int], min_share: float = ALTERNATE_SHARE) -> dict[str, str]:
    """{venue: "even" or "odd"} of the venues of ``papers`` ({(venue, year): papers}; joint venues split) that meet
    every other year (at least MIN_ALTERNATE_MEETINGS meetings, all of one parity, most two years apart) and hold at
    least ``min_share`` of their years' papers on average; venues in name order."""
    by_venue, totals = _by_venue(papers, split_joint=True)
    alternating = {}
    for venue, years in by_venue.items():
        ordered = sorted(years)
        gaps = np.diff(ordered)
        if len(ordered) < MIN_ALTERNATE_MEETINGS or len({year % 2 for year in ordered}) > 1 or np.median(gaps) != 2:
            continue
        share = float(np.mean([years[year] / totals[year] for year in ordered]))
        if share >= min_share:
            alternating[venue] = "even" if ordered[0] % 2 == 0 else "odd"
    return dict(sorted(alternating.items()))


def year_ranges(years: Iterable[int], dash: str = "-") -> str:
    """Years written short, runs of consecutive years as ranges joined by ``dash``: [1990, 2018, 2019, 2020] ->
    "1990, 2018-2020"."""
    runs: list[list[int]] = []
    for year in sorted(set(years)):
        if runs and year == runs[-1][-1] + 1:
            runs[-1].append(year)
        else:
            runs.append([year])
    return ", ".join(str(run[0]) if len(run) == 1 else f"{run[0]}{dash}{run[-1]}" for run in runs)


def holes_sentence(holes: Mapping[str, Iterable[int]]) -> str:
    """ "Years a venue has no papers in although its cadence says it met (missing from the data, or a year it did
    not meet): cvpr: 2018-2020; iccv: 2019. A share there moves for want of those papers, not a trend." """
    listed = "; ".join(f"{venue}: {year_ranges(years)}" for venue, years in holes.items())
    return (
        "Years a venue has no papers in although its cadence says it met (missing from the data, or a year it did "
        f"not meet): {listed}. A share there moves for want of those papers: not a trend."
    )
