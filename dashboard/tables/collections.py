"""The collections of an atlas of several (venue and year per paper): sidebar choices and the filter; pure pandas."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd


def collection_options(documents: pd.DataFrame) -> list[str]:
    """The collection names in the atlas's order (its rows are the collections' rows, one after the other); empty
    unless there are at least two."""
    if "collection" not in documents.columns:
        return []
    names = [str(name) for name in dict.fromkeys(documents["collection"].dropna())]
    return names if len(names) > 1 else []


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
