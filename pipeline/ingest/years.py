"""Holes in a corpus's years: the years a venue would have met in, at its own cadence, but has no paper in (the ML
Anthology has no CVPR 2018-2020 and no ICCV 2019: its SOURCES.md). A share of that venue's topics falls there for
want of papers, not of interest; the build warns (log and manifest) and the Trends view says so."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

# A venue needs this many papers before its holes are named: two papers in 2010 and 2014 are no series.
MIN_VENUE_PAPERS = 20


def missed_meetings(years: list[int]) -> list[int]:
    """The years a venue meeting every ``cadence`` years (the median gap between its sorted, distinct ``years``: 1
    for CVPR, 2 for ICCV and ECCV) would have met in but has no paper: ICCV 2017, 2021 -> [2019]; CVPR 2017, 2021 ->
    [2018, 2019, 2020]. [] for fewer than two years."""
    if len(years) < 2:
        return []
    gaps = sorted(later - earlier for earlier, later in zip(years, years[1:]))
    cadence = max(gaps[(len(gaps) - 1) // 2], 1)  # the lower median: two gaps, 1 and 4, make a yearly venue
    return [
        year
        for earlier, later in zip(years, years[1:])
        if later - earlier > cadence
        for year in range(earlier + cadence, later, cadence)
    ]


def venue_year_holes(papers: Mapping[tuple[str, int], int], min_papers: int = MIN_VENUE_PAPERS) -> dict[str, list[int]]:
    """{venue: its missed meetings (:func:`missed_meetings`)} from ``papers`` ({(venue, year): papers}), for the
    venues with at least ``min_papers`` papers and a hole; venues in name order."""
    by_venue: dict[str, dict[int, int]] = {}
    for (venue, year), count in papers.items():
        by_venue.setdefault(venue, {})[int(year)] = by_venue.get(venue, {}).get(int(year), 0) + int(count)
    holes = {}
    for venue, years in by_venue.items():
        missing = missed_meetings(sorted(years)) if sum(years.values()) >= min_papers else []
        if missing:
            holes[venue] = missing
    return dict(sorted(holes.items()))


def holes_sentence(holes: Mapping[str, Iterable[int]]) -> str:
    """ "No papers in years a venue would have met in (a hole in the data, not a trend): cvpr: 2018, 2019, 2020;
    iccv: 2019." """
    listed = "; ".join(f"{venue}: {', '.join(map(str, years))}" for venue, years in holes.items())
    return f"No papers in years a venue would have met in (a hole in the data, not a trend): {listed}."
