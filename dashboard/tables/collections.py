"""The collections of an atlas of several (venue and year per paper): sidebar choices and the filter; pure pandas.

An atlas built from one file whose rows carry a year (and a venue) gets its collections from them
(:func:`with_derived_collections`): "neurips 2019", "cvpr 2020", ..., so the year filter, colour by year or venue,
and the Trends and Venues views serve it as they serve an atlas of several collections (issue 42).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from pipeline.ingest.years import venue_year_holes

# A file's venues beyond its DERIVED_VENUES largest join one venue, OTHER_VENUE: the ACL Anthology names hundreds.
DERIVED_VENUES = 20
OTHER_VENUE = "other"
# The venue of a file's rows that name none.
NO_VENUE = "all"


def with_derived_collections(documents: pd.DataFrame) -> pd.DataFrame:
    """``documents`` with a ``collection`` column "<venue> <year>" made from its ``venue`` and ``year`` columns, when
    it has no collection column of its own and its years hold at least two values (else ``documents`` unchanged).
    A venue is written without spaces (its spaces become "-"; the Trends view reads the venue as the name's first
    word); venues outside the DERIVED_VENUES largest become OTHER_VENUE; a row without a venue is NO_VENUE, without a
    readable year no collection (missing). The rows keep their order."""
    if "collection" in documents.columns or "year" not in documents.columns:
        return documents
    years = pd.to_numeric(documents["year"], errors="coerce").round().astype("Int64")
    if years.dropna().nunique() < 2:
        return documents
    if "venue" in documents.columns:
        venues = documents["venue"].astype("string").str.strip().str.replace(r"\s+", "-", regex=True)
        venues = venues.where(venues.notna() & (venues != ""), NO_VENUE)
        largest = venues[venues != NO_VENUE].value_counts().index[:DERIVED_VENUES]
        venues = venues.where(venues.isin(largest) | (venues == NO_VENUE), OTHER_VENUE)
    else:
        venues = pd.Series(NO_VENUE, index=documents.index, dtype="string")
    names = (venues + " " + years.astype("string")).astype(object)
    return documents.assign(collection=names.where(years.notna(), None))


def year_holes(documents: pd.DataFrame) -> dict[str, list[int]]:
    """{venue: the years it would have met in, at its own cadence, but has no paper in} for the venues of an atlas's
    collections ("venue year" names; pipeline.ingest.years.venue_year_holes). Empty without collections."""
    if "collection" not in documents.columns:
        return {}
    papers: dict[tuple[str, int], int] = {}
    for name, count in documents["collection"].dropna().astype(str).value_counts().items():
        if _year_of(name):
            papers[(name.split(" ")[0], _year_of(name))] = int(count)
    return venue_year_holes(papers)


def collection_options(documents: pd.DataFrame) -> list[str]:
    """The collection names, venue by venue in the order the atlas's rows first name them, each venue's years in
    time order (a toml's collections keep their order; a file's derived ones read "icml 1990, icml 1991, ...");
    empty unless there are at least two."""
    if "collection" not in documents.columns:
        return []
    names = [str(name) for name in dict.fromkeys(documents["collection"].dropna())]
    venues = {venue: rank for rank, venue in enumerate(dict.fromkeys(name.split(" ")[0] for name in names))}
    names.sort(key=lambda name: (venues[name.split(" ")[0]], _year_of(name)))
    return names if len(names) > 1 else []


def _year_of(name: str) -> int:
    """The year a collection's name ends with ("ICLR 2025" -> 2025), 0 when it ends with none."""
    last = name.rsplit(" ", 1)[-1]
    return int(last) if last.isdigit() else 0


def year_options(documents: pd.DataFrame) -> list[int]:
    """The years of an atlas of several collections, earliest first; empty unless it has two collections and two
    years."""
    if not collection_options(documents) or "year" not in documents.columns:
        return []
    years = sorted(int(year) for year in documents["year"].dropna().unique())
    return years if len(years) > 1 else []


def in_collections(papers: pd.DataFrame, collections: Sequence[str]) -> pd.DataFrame:
    """The papers of ``collections`` (all papers when it is empty or the atlas has no collections)."""
    if not collections or "collection" not in papers.columns:
        return papers
    return papers[papers["collection"].isin(list(collections))]


def has_collections(documents: pd.DataFrame) -> bool:
    """True when the atlas holds at least two collections (then the page has its Trends and Venues tabs)."""
    return "collection" in documents.columns and documents["collection"].nunique() > 1
