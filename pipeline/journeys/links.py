"""The same work in several collections of one atlas, found from titles and abstracts (issue 22, "a paper's journey").

A paper rejected at ICLR 2025 is often published at ICML or NeurIPS 2025 under another title with an edited abstract.
Two papers of different collections are linked when

- their abstracts are near duplicates: the cosine similarity of their stored representation vectors
  (``embeddings.npy``, unit rows) is at least ``threshold``, and each is among the other's nearest neighbours found by
  the build (pipeline.geometry.neighbors: the 15 nearest papers of every paper, exact up to 20,000 papers); of the
  neighbours in one other collection only the most similar is a candidate; or
- their titles are the same once normalised (:func:`title_key`), whatever their abstracts; or
- their abstracts are the same (``same_text_ids``, pipeline.ingest.collections.same_text_links: a copy across
  collections, as the build finds copies within one), whatever their titles and the vectors' dimensions
  (:func:`copy_pairs`).

The threshold was chosen on a hand-checked sample of pairs (bench/journeys.py, docs/decisions/journeys.md), on
tfidf-svd vectors of 512 dimensions; vectors of fewer dimensions (a small atlas) make different papers of one topic
look alike, so the build then links by titles only (BuildConfig.journey_min_dims). Each link
is one row, ``doc_id`` being the earlier appearance (:func:`collection_order`: by year, then by the month the venue
meets), with the pair's cosine similarity, whether the titles are the same and how the pair was found
(``found_by``: "title and abstract", "abstract" or "title").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from pipeline.schema import JOURNEY_COLUMNS

if TYPE_CHECKING:
    from pipeline.cache.manifest import JourneySummary

FOUND_BOTH, FOUND_ABSTRACT, FOUND_TITLE = "title and abstract", "abstract", "title"
# A normalised title shorter than this matches nothing: "Introduction", "Abstract" or "Untitled" are no evidence.
MIN_TITLE_KEY_CHARS = 20
# The month each venue meets (ICLR late April or early May, ICML July, NeurIPS December; the venues' own pages for
# 2024-2026), so that within one year a paper's journey runs ICLR -> ICML -> NeurIPS. A venue not listed sorts after
# the known ones of its year, in the order of the collections.
VENUE_MONTHS = {"ICLR": 4, "ICML": 7, "NeurIPS": 12}
_NOT_ALNUM = re.compile(r"[^0-9a-z]+")


def title_key(title: Any) -> str:
    """A title as compared across collections: Unicode NFKC, case-folded, letters and digits only (so "Graph
    Transformers: A Survey" and "graph transformers - a survey" agree); "" for a missing title or one whose key is
    shorter than MIN_TITLE_KEY_CHARS."""
    if not isinstance(title, str):
        return ""
    key = _NOT_ALNUM.sub("", unicodedata.normalize("NFKC", title).casefold())
    return key if len(key) >= MIN_TITLE_KEY_CHARS else ""


def collection_order(collections: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """{collection name: rank} in time order: by year (unknown last), then VENUE_MONTHS (unknown venues after the
    known ones), then the order given. ``collections``: the manifest's entries (name, venue, year)."""
    keyed = [
        (
            entry.get("year") if isinstance(entry.get("year"), int) else 10_000,
            VENUE_MONTHS.get(str(entry.get("venue")), 13),
            position,
            str(entry["name"]),
        )
        for position, entry in enumerate(collections)
    ]
    return {name: rank for rank, (*_, name) in enumerate(sorted(keyed))}


def best_in_each_collection(
    indices: np.ndarray,
    similarities: np.ndarray,
    collection_codes: np.ndarray,
    list_rows: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row and per other collection, its most similar neighbour of that collection in the neighbour lists.

    Parameters
    ----------
    indices, similarities : int64 and float32, l x k, as pipeline.geometry.neighbors.cosine_knn gives them (the row
        itself first, most similar first).
    collection_codes : int, n: each row's collection.
    list_rows : int64, l: the row whose list each line is (``add`` passes the lists of some rows only); None: line i
        is row i's (l = n).

    Returns
    -------
    rows, others, scores : int64, int64, float64, one entry per (row, other collection) found in the row's list.
    """
    n, k = indices.shape
    owners = np.arange(n, dtype=np.int64) if list_rows is None else np.asarray(list_rows, dtype=np.int64)
    rows = np.repeat(owners, k)
    others = indices.reshape(-1).astype(np.int64)
    scores = similarities.reshape(-1).astype(np.float64)
    keep = collection_codes[others] != collection_codes[rows]
    rows, others, scores = rows[keep], others[keep], scores[keep]
    # The lists are sorted by similarity, so the first entry of each (row, other collection) is its best.
    first = ~pd.DataFrame({"row": rows, "collection": collection_codes[others]}).duplicated().to_numpy()
    return rows[first], others[first], scores[first]


def cross_collection_best(
    embeddings: np.ndarray, collection_codes: np.ndarray, block_rows: int = 2048
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact search: per row and per other collection, the most cosine-similar row of that collection.

    ``embeddings``: float32, n x dim, unit rows; ``collection_codes``: int, n. Returns (rows, others, scores) as
    :func:`best_in_each_collection` does, one entry per row and other collection. O(n^2 dim): what bench/journeys.py
    checks the build's neighbour lists against (pipeline.geometry.neighbors.top_k picks the best).
    """
    from pipeline.geometry.neighbors import top_k

    rows, others, scores = [], [], []
    for code in np.unique(collection_codes):
        members = np.flatnonzero(collection_codes == code)
        outside = np.flatnonzero(collection_codes != code)
        for other in np.unique(collection_codes[outside]):
            targets = np.flatnonzero(collection_codes == other)
            for start in range(0, len(members), block_rows):
                block = members[start : start + block_rows]
                best, values = top_k(embeddings[block] @ embeddings[targets].T, 1)
                rows.append(block)
                others.append(targets[best[:, 0]])
                scores.append(values[:, 0].astype(np.float64))
    if not rows:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
    return np.concatenate(rows), np.concatenate(others), np.concatenate(scores)


def title_pairs(titles: Sequence[Any], collection_codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row pairs (first, second), first < second, of different collections whose titles have the same
    :func:`title_key`; int64 arrays."""
    by_key: dict[str, list[int]] = {}
    for row, title in enumerate(titles):
        key = title_key(title)
        if key:
            by_key.setdefault(key, []).append(row)
    firsts, seconds = [], []
    for members in by_key.values():
        for position, first in enumerate(members):
            for second in members[position + 1 :]:
                if collection_codes[first] != collection_codes[second]:
                    firsts.append(first)
                    seconds.append(second)
    return np.asarray(firsts, dtype=np.int64), np.asarray(seconds, dtype=np.int64)


def copy_pairs(documents: pd.DataFrame) -> set[tuple[int, int]]:
    """Row pairs (first, second), first < second, that ``documents``' ``same_text_ids`` links (each row's list of
    the ids of its copies in other collections); empty without the column. A copy's vectors are its original's, so
    such a pair is found by its abstract at any dimension; in a small atlas, which links by titles only (module
    docstring), a copy under a new title was not linked before 2026-12-07."""
    from pipeline.ingest.collections import LINK_COLUMN

    if LINK_COLUMN not in documents.columns:
        return set()
    row_of = {doc_id: row for row, doc_id in enumerate(documents["doc_id"].astype(str))}
    pairs = set()
    for row, others in enumerate(documents[LINK_COLUMN]):
        for other in others if others is not None else ():
            found = row_of.get(str(other))
            if found is not None and found != row:
                pairs.add((min(row, found), max(row, found)))
    return pairs


def journey_links(
    documents: pd.DataFrame,
    embeddings: np.ndarray,
    candidates: tuple[np.ndarray, np.ndarray, np.ndarray],
    threshold: float,
    order: dict[str, int],
) -> pd.DataFrame:
    """The links between papers of different collections (JOURNEY_COLUMNS), one row per pair.

    Parameters
    ----------
    documents : n rows with doc_id, title and collection (and same_text_ids, when known: :func:`copy_pairs`), in the
        rows of ``embeddings``.
    embeddings : float32, n x dim, unit rows: a pair's similarity is the dot product of its rows.
    candidates : (rows, others, scores) of near neighbours in other collections (:func:`best_in_each_collection`
        on the build's lists); those with a score of at least ``threshold`` are linked.
    threshold : cosine similarity from which two abstracts are the same work (docs/decisions/journeys.md).
    order : {collection: rank in time} (:func:`collection_order`): ``doc_id`` is the earlier appearance.

    Returns a DataFrame of JOURNEY_COLUMNS: similarity float64 (4 decimals), same_title bool, found_by str; sorted by
    the collections' order, then doc_id. Raises KeyError when a collection is missing from ``order``.
    """
    codes, names = pd.factorize(documents["collection"].astype(str))
    rows, others, scores = candidates
    near = scores >= threshold
    pairs = {(min(a, b), max(a, b)) for a, b in zip(rows[near].tolist(), others[near].tolist())}
    same_first, same_second = title_pairs(documents["title"].tolist(), codes)
    titled = set(zip(same_first.tolist(), same_second.tolist()))
    pairs |= titled | copy_pairs(documents)
    if not pairs:
        return pd.DataFrame({column: pd.Series(dtype=_DTYPES[column]) for column in JOURNEY_COLUMNS})
    first = np.asarray([pair[0] for pair in sorted(pairs)], dtype=np.int64)
    second = np.asarray([pair[1] for pair in sorted(pairs)], dtype=np.int64)
    similarity = np.einsum("ij,ij->i", embeddings[first], embeddings[second]).astype(np.float64)
    rank = np.asarray([order[str(name)] for name in names])
    swap = rank[codes[second]] < rank[codes[first]]
    first, second = np.where(swap, second, first), np.where(swap, first, second)
    same_title = np.asarray([(min(a, b), max(a, b)) in titled for a, b in zip(first.tolist(), second.tolist())])
    near_pair = similarity >= threshold
    ids, collections = documents["doc_id"].astype(str).to_numpy(), names[codes]
    links = pd.DataFrame(
        {
            "doc_id": ids[first],
            "other_id": ids[second],
            "collection": collections[first],
            "other_collection": collections[second],
            "similarity": np.round(similarity, 4),
            "same_title": same_title,
            "found_by": np.where(same_title & near_pair, FOUND_BOTH, np.where(same_title, FOUND_TITLE, FOUND_ABSTRACT)),
        }
    )
    links["_rank"] = [order[name] for name in links["collection"]]
    links["_other_rank"] = [order[name] for name in links["other_collection"]]
    links = links.sort_values(["_rank", "_other_rank", "doc_id", "other_id"], kind="stable")
    return links.drop(columns=["_rank", "_other_rank"]).reset_index(drop=True)


_DTYPES = {
    "doc_id": object,
    "other_id": object,
    "collection": object,
    "other_collection": object,
    "similarity": "float64",
    "same_title": bool,
    "found_by": object,
}


def journey_summary(links: pd.DataFrame, threshold: float, candidates: str) -> JourneySummary:
    """The manifest's ``journeys``: the threshold, how candidates were found, the number of links, per ``found_by``
    and per pair of collections ("ICLR 2025 -> ICML 2025")."""
    between = links.groupby(["collection", "other_collection"], sort=False).size()
    return {
        "threshold": threshold,
        "candidates": candidates,
        "n_links": len(links),
        "found_by": {str(key): int(value) for key, value in links["found_by"].value_counts().items()},
        "between": {f"{first} -> {second}": int(count) for (first, second), count in between.items()},
    }


def linked_rows(links: pd.DataFrame, doc_ids: Iterable[str]) -> pd.DataFrame:
    """The links that name any of ``doc_ids`` on either side."""
    wanted = set(doc_ids)
    return links[links["doc_id"].isin(wanted) | links["other_id"].isin(wanted)]
