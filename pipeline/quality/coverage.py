"""Coverage of an atlas of several collections: is a collection as complete as the others of its venue?

A collection with a hole (ICLR 2026's copy lacks the primary area "applications to computer vision, audio,
language, and other modalities") would show that area's topics collapsing in every trend. This module compares
each collection's composition with the others of its venue, by primary area under one naming (the crosswalk
``data/collections/iclr_primary_areas.csv``, shipped in the package as ``pipeline/resources/iclr_primary_areas.csv``:
each year's official areas and their 2025 names), and says so:

- an **official area without a paper** (the crosswalk lists it for that venue and year): the collection is
  incomplete;
- an area **absent between two years that have it** (no crosswalk needed): the same;
  (both only where the area's smallest share elsewhere would give at least MIN_EXPECTED_PAPERS papers);
- an area **far thinner** than in every other year of the venue (under a quarter of its smallest share elsewhere,
  where that share is at least 2%): it may be incomplete.

Pure functions over the documents table (pandas), so the build, a test and the page compute the same thing.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from pipeline.runtime.paths import CROSSWALK, package_file

if TYPE_CHECKING:
    from pipeline.cache.manifest import Coverage

# Shipped as package data (pipeline/resources/, in the checkout a link to data/collections/iclr_primary_areas.csv).
CROSSWALK_PATH = package_file(*CROSSWALK)
CROSSWALK_COLUMNS = ("venue", "year", "area", "canonical_area", "relation", "reason")
# An area whose share is under THIN_FACTOR times its smallest share in the venue's other years (and that smallest
# share at least THIN_MIN_SHARE) is reported as thin.
THIN_FACTOR = 0.25
THIN_MIN_SHARE = 0.02
# An area is missed only where its smallest share elsewhere would give at least this many papers in the collection:
# then no paper at all has a chance under e^-10 (Poisson), while a 250-paper sample misses a 1% area by chance.
MIN_EXPECTED_PAPERS = 10


def load_crosswalk(path: Path | str = CROSSWALK_PATH) -> pd.DataFrame:
    """The primary-area crosswalk: one row per (venue, year, official area) with its ``canonical_area`` (the 2025
    name), ``relation`` (same, renamed, new, retired) and ``reason``. Lines starting with # are comments.

    Raises ValueError naming the file when a column is missing or a (venue, year, area) is listed twice."""
    table = pd.read_csv(path, comment="#")
    missing = [column for column in CROSSWALK_COLUMNS if column not in table.columns]
    if missing:
        raise ValueError(f"{path}: the crosswalk lacks the columns {', '.join(missing)}")
    repeated = table.duplicated(["venue", "year", "area"])
    if repeated.any():
        raise ValueError(f"{path}: row {int(repeated.idxmax()) + 2} repeats a (venue, year, area)")
    return table


def canonical_areas(documents: pd.DataFrame, crosswalk: pd.DataFrame) -> pd.Series:
    """Each document's primary area under its canonical (2025) name: by the crosswalk for its venue and year,
    else as written; null where the document has none. ``documents`` needs ``venue``, ``year``,
    ``primary_area``."""
    names = {(row.venue, int(row.year), row.area): row.canonical_area for row in crosswalk.itertuples(index=False)}
    return pd.Series(
        [
            None if area is None or area != area else names.get((venue, year, area), area)
            for venue, year, area in zip(documents["venue"], documents["year"], documents["primary_area"])
        ],
        index=documents.index,
        dtype=object,
    )


def area_shares(documents: pd.DataFrame, crosswalk: pd.DataFrame) -> pd.DataFrame:
    """Share of each collection's papers per canonical area: rows canonical areas, columns collections (those
    with primary areas only), values in [0, 1] (0 where absent); papers without an area left out."""
    areas = canonical_areas(documents, crosswalk)
    known = areas.notna()
    if not known.any():
        return pd.DataFrame()
    counts = pd.crosstab(areas[known], documents.loc[known, "collection"])
    return counts / counts.sum(axis=0)


def _collection_years(documents: pd.DataFrame) -> dict[str, tuple[str, int | None]]:
    first = documents.drop_duplicates("collection")
    return {
        name: (venue, None if pd.isna(year) else int(year))
        for name, venue, year in zip(first["collection"], first["venue"], first["year"])
    }


def coverage_report(documents: pd.DataFrame, crosswalk: pd.DataFrame) -> Coverage:
    """The manifest's ``coverage``: per collection its size and venue, and ``warnings``, one sentence per
    collection that looks incomplete (module docstring for the three rules). ``documents``: the build's documents
    with ``collection``, ``venue``, ``year`` and, for the area checks, ``primary_area``."""
    years = _collection_years(documents)
    sizes = documents["collection"].value_counts()
    report: Coverage = {
        "collections": {
            name: {"venue": venue, "year": year, "papers": int(sizes.get(name, 0))}
            for name, (venue, year) in years.items()
        },
        "warnings": [],
    }
    if "primary_area" not in documents.columns:
        return report
    shares = area_shares(documents, crosswalk)
    official = {
        (venue, int(year)): set(group)
        for (venue, year), group in crosswalk.groupby(["venue", "year"])["canonical_area"]
    }
    for name in shares.columns:
        venue, year = years[name]
        others = [other for other in shares.columns if other != name and years[other][0] == venue]
        if not others:
            continue
        present = set(shares.index[shares[name] > 0])
        expected = set(official.get((venue, year), set())) if year is not None else set()
        for area in shares.index:
            having = [other for other in others if shares.at[area, other] > 0]
            earlier = [other for other in having if (years[other][1] or 0) < (year or 0)]
            later = [other for other in having if (years[other][1] or 0) > (year or 0)]
            if earlier and later:
                expected.add(area)
        size = int(sizes.get(name, 0))
        for area in sorted(expected - present):
            having_shares = [float(shares.at[area, other]) for other in others if area in shares.index]
            if min((share for share in having_shares if share > 0), default=0.0) * size < MIN_EXPECTED_PAPERS:
                continue
            elsewhere = ", ".join(
                f"{float(shares.at[area, other]) if area in shares.index else 0.0:.1%} of {other}" for other in others
            )
            report["warnings"].append(
                f"{name} looks incomplete: no paper in the primary area '{area}' ({elsewhere}); its topics would show "
                "a drop that is a hole in the data, not a trend"
            )
        for area in sorted(present):
            smallest = min(float(shares.at[area, other]) for other in others)
            if smallest >= THIN_MIN_SHARE and float(shares.at[area, name]) < THIN_FACTOR * smallest:
                report["warnings"].append(
                    f"{name} may be incomplete: the primary area '{area}' holds {shares.at[area, name]:.1%} of its "
                    f"papers against at least {smallest:.1%} in {', '.join(others)}"
                )
    return report
