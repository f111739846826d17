"""A paper's journey across the collections of an atlas: pure pandas, DataFrames in, DataFrames out.

The links come from the cache's ``journeys.parquet`` (pipeline.journeys.links, cache.JOURNEY_COLUMNS): one row per
pair of papers of different collections that are the same work, the earlier appearance first. A journey is every
paper reachable through links from the chosen one (a paper at ICLR 2025, ICML 2025 and NeurIPS 2025 is one journey
even when only two of its pairs were linked), in time order (pipeline.journeys.links.collection_order).

Only accepted papers of NeurIPS and ICML are in the data: a reject "found again" there was accepted there, and one
not found may have been rejected again, withdrawn or renamed past recognition; the tables say counts, never rates
of eventual acceptance.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from pipeline.journeys.links import collection_order

ARROW = " → "
REJECT = "Reject"
EXPORT_COLUMNS = [
    "doc_id",
    "collection",
    "decision",
    "title",
    "other_id",
    "other_collection",
    "other_decision",
    "other_title",
    "similarity",
    "same_title",
    "found_by",
]


def order_of(manifest: Mapping[str, Any], documents: pd.DataFrame) -> dict[str, int]:
    """{collection: rank in time} from the manifest's collections, else from the documents' collection, venue and
    year columns in row order."""
    entries = manifest.get("collections") or (
        documents[["collection", "venue", "year"]]
        .drop_duplicates("collection")
        .rename(columns={"collection": "name"})
        .to_dict("records")
        if {"collection", "venue", "year"} <= set(documents.columns)
        else []
    )
    return collection_order([{**entry, "year": _year(entry.get("year"))} for entry in entries])


def _year(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def journey_of(doc_id: str, links: pd.DataFrame) -> list[str]:
    """The doc_ids of ``doc_id``'s journey: every paper reachable from it through ``links`` (itself first, then in
    the order they are found); just ``[doc_id]`` without a link."""
    neighbours: dict[str, list[str]] = {}
    for first, second in zip(links["doc_id"].astype(str), links["other_id"].astype(str)):
        neighbours.setdefault(first, []).append(second)
        neighbours.setdefault(second, []).append(first)
    found, frontier = [doc_id], [doc_id]
    while frontier:
        current = frontier.pop()
        for other in neighbours.get(current, []):
            if other not in found:
                found.append(other)
                frontier.append(other)
    return found


def journey_steps(doc_id: str, links: pd.DataFrame, documents: pd.DataFrame, order: Mapping[str, int]) -> pd.DataFrame:
    """The appearances of ``doc_id``'s work in time order: doc_id, collection, decision (None where unknown), title,
    similarity (cosine of the two papers' vectors, to the chosen paper where they are linked directly, else None),
    found_by (how that link was found; "" for the chosen paper), chosen (bool). Empty when it has no link."""
    members = journey_of(doc_id, links)
    if len(members) < 2:
        return pd.DataFrame(columns=["doc_id", "collection", "decision", "title", "similarity", "found_by", "chosen"])
    rows = documents.drop_duplicates("doc_id").set_index(documents["doc_id"].drop_duplicates().astype(str))
    direct = links[(links["doc_id"].astype(str) == doc_id) | (links["other_id"].astype(str) == doc_id)]
    to_chosen = {
        (str(row.other_id) if str(row.doc_id) == doc_id else str(row.doc_id)): (float(row.similarity), row.found_by)
        for row in direct.itertuples()
    }
    steps = pd.DataFrame(
        {
            "doc_id": members,
            "collection": [rows.at[member, "collection"] if member in rows.index else None for member in members],
            "decision": [_decision(rows, member) for member in members],
            "title": [rows.at[member, "title"] if member in rows.index else None for member in members],
            "similarity": [to_chosen.get(member, (None, ""))[0] for member in members],
            "found_by": [to_chosen.get(member, (None, ""))[1] for member in members],
            "chosen": [member == doc_id for member in members],
        }
    )
    steps["_rank"] = steps["collection"].map(lambda name: order.get(str(name), len(order)))
    return steps.sort_values(["_rank", "doc_id"], kind="stable").drop(columns="_rank").reset_index(drop=True)


def _decision(rows: pd.DataFrame, doc_id: str) -> str | None:
    if "decision" not in rows.columns or doc_id not in rows.index:
        return None
    value = rows.at[doc_id, "decision"]
    return str(value) if isinstance(value, str) and value else None


def journey_line(steps: pd.DataFrame) -> str:
    """One line for people: "ICLR 2025: Reject → ICML 2025" (a decision is named where it is known)."""
    return ARROW.join(
        f"{collection}: {decision}" if decision else str(collection)
        for collection, decision in zip(steps["collection"], steps["decision"])
    )


def rejects_found_again(
    documents: pd.DataFrame, links: pd.DataFrame, group: str, source: str, targets: Sequence[str]
) -> pd.DataFrame:
    """Per ``group`` value (topic or theme) of the rejects of collection ``source``: ``rejects`` (decision Reject),
    per collection of ``targets`` how many of them are linked to a paper there, ``found_again`` (in any of them) and
    ``share`` (found_again / rejects). Sorted by found_again, most first; only groups with a reject.
    ``documents`` needs doc_id, collection, decision and ``group``."""
    rejects = documents[(documents["collection"] == source) & (documents["decision"] == REJECT)]
    reject_ids = set(rejects["doc_id"].astype(str))
    linked = links[links["doc_id"].astype(str).isin(reject_ids) & links["other_collection"].isin(targets)]
    table = rejects.groupby(group).size().rename("rejects").to_frame()
    found_any: set[str] = set()
    for target in targets:
        ids = set(linked.loc[linked["other_collection"] == target, "doc_id"].astype(str))
        found_any |= ids
        table[target] = rejects.assign(hit=rejects["doc_id"].astype(str).isin(ids)).groupby(group)["hit"].sum()
    table["found_again"] = rejects.assign(hit=rejects["doc_id"].astype(str).isin(found_any)).groupby(group)["hit"].sum()
    table["share"] = table["found_again"] / table["rejects"]
    table = table.reset_index().sort_values(["found_again", "rejects"], ascending=False, kind="stable")
    return table.astype({target: int for target in [*targets, "found_again"]}).reset_index(drop=True)


def links_export(links: pd.DataFrame, documents: pd.DataFrame) -> pd.DataFrame:
    """The links as a CSV table (EXPORT_COLUMNS): both papers' ids, collections, decisions and titles, the
    similarity, same_title and found_by."""
    rows = documents.drop_duplicates("doc_id").set_index(documents["doc_id"].drop_duplicates().astype(str))
    decision = rows["decision"] if "decision" in rows.columns else pd.Series(None, index=rows.index, dtype=object)
    table = links.copy()
    for side, column in (("", "doc_id"), ("other_", "other_id")):
        ids = table[column].astype(str)
        table[f"{side}title"] = ids.map(rows["title"])
        table[f"{side}decision"] = ids.map(decision)
    return table[EXPORT_COLUMNS].reset_index(drop=True)
