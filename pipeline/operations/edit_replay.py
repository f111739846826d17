"""Edits of an atlas's log made again on another version of it (a rebuilt atlas), through its papers.

A rebuild fits the topics anew; topic alignment (pipeline.topics.align) keeps the ids of the topics it matches, but
an edited atlas's topics are not the fitted ones (a merge's second topic is gone, a split's parts are new), so a
replay finds each topic an edit named by the papers the log kept for it (``params["papers"]``): its *successor*
is the topic now holding most of those papers, when it holds at least SUCCESSOR_SHARE of those still in the atlas.
Each edit is then made again (pipeline.operations.edit, so it is logged and undoable) or reported: ``applied``,
``already so`` (the new atlas already does what it did) or ``no longer applies`` with the reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from pipeline import cache
from pipeline.cache import OUTLIER_TOPIC, CacheError
from pipeline.operations import edit
from pipeline.runtime.errors import AtlasError, TargetError

SUCCESSOR_SHARE = 0.5
SPLIT_PART_SHARE = 0.1


def successor(documents: pd.DataFrame, doc_ids: Sequence[str]) -> int | None:
    """The real topic that holds most of the papers ``doc_ids`` in ``documents``, when it holds at least
    SUCCESSOR_SHARE of those still there; None otherwise (or when none is left)."""
    present = documents[documents["doc_id"].astype(str).isin(set(map(str, doc_ids)))]
    if present.empty:
        return None
    counts = present["topic"].astype(int).value_counts()
    counts = counts[counts.index != OUTLIER_TOPIC]
    if counts.empty or counts.iloc[0] < SUCCESSOR_SHARE * len(present):
        return None
    return int(counts.index[0])


def split_already(documents: pd.DataFrame, doc_ids: Sequence[str], k: int) -> bool:
    """Whether the papers ``doc_ids`` of a topic split into ``k`` are in ``k`` or more real topics now, each of the
    ``k`` largest holding at least SPLIT_PART_SHARE of them (so a replay does not split the parts again)."""
    present = documents[documents["doc_id"].astype(str).isin(set(map(str, doc_ids)))]
    counts = present.loc[present["topic"].astype(int) != OUTLIER_TOPIC, "topic"].value_counts()
    return len(counts) >= k and bool((counts.iloc[:k] >= SPLIT_PART_SHARE * max(len(present), 1)).all())


def successors(documents: pd.DataFrame, papers: dict[str, list[str]]) -> dict[int, int | None]:
    """{topic of the log: its successor now} for the log's ``papers`` ({topic id (str): doc ids})."""
    return {int(topic): successor(documents, ids) for topic, ids in papers.items()}


def replay_one(cache_dir: Path, entry: dict[str, Any], by: str | None) -> tuple[str, str]:
    """Make the logged edit ``entry`` again on the atlas in ``cache_dir``. Returns (status, what happened)."""
    documents = cache.read_cache(cache_dir).documents
    params, op = dict(entry.get("params") or {}), entry.get("op")
    found = successors(documents, params.get("papers") or {})
    gone = sorted(topic for topic, now in found.items() if now is None)
    if op == "rename" and params.get("level") != "topic":
        return "no longer applies", "a build cuts themes and subtopics anew; rename it again"
    if op == "move":
        to = int(params.get("to", OUTLIER_TOPIC))
        target = OUTLIER_TOPIC if to == OUTLIER_TOPIC else found.get(to)
        if target is None:
            return "no longer applies", f"the papers of topic {to} are in no one topic now"
        current = dict(zip(documents["doc_id"].astype(str), documents["topic"].astype(int)))
        ids = [doc_id for doc_id in params.get("ids", []) if doc_id in current and current[doc_id] != target]
        if not ids:
            return "already so", f"the papers are in topic {target} (or gone)"
        return "applied", edit.move_papers(cache_dir, ids, target, by=by)["summary"]
    if gone:
        return "no longer applies", f"the papers of topic {', '.join(map(str, gone))} are in no one topic now"
    now = sorted({topic for topic in found.values() if topic is not None})
    if op == "merge":
        if len(now) < 2:
            return "already so", f"their papers are in one topic, {now[0]}"
        return "applied", edit.merge_topics(cache_dir, now, by=by)["summary"]
    if op == "split":
        papers: list[str] = next(iter((params.get("papers") or {}).values()), [])
        if split_already(documents, papers, int(params["k"])):
            return "already so", f"its papers are in {int(params['k'])} or more topics"
        return "applied", edit.split_topic(cache_dir, now[0], int(params["k"]), by=by)["summary"]
    if op == "delete":
        return "applied", edit.delete_topic(cache_dir, now[0], bool(params.get("to_nearest")), by=by)["summary"]
    if op == "rename":
        labels = cache.read_cache(cache_dir).topics.set_index("topic")["label"]
        if " ".join(str(params["label"]).split()) == str(labels.get(now[0], "")):
            return "already so", f"topic {now[0]} is labelled so"
        return "applied", edit.rename(cache_dir, "topic", now[0], str(params["label"]), by=by)["summary"]
    return "no longer applies", f"unknown edit {op!r}"


def replay_edits(
    cache_dir: Path | str, entries: Sequence[dict[str, Any]], by: str | None = None
) -> list[dict[str, Any]]:
    """Make the edits of a log (``entries``, as pipeline.operations.edit_log.read_log gives them: the undone ones and
    the undos left out) again on the atlas in ``cache_dir``, in order. Returns one report per edit: ``id``, ``op``,
    ``summary`` (as logged), ``status`` (applied, already so, no longer applies) and ``note`` (what happened, or why
    not). An edit the atlas refuses (InputError, e.g. a split into more parts than its successor has papers) is
    reported as no longer applying; TargetError (no atlas, another writer) propagates."""
    folder = Path(cache_dir)
    undone = {int(entry["undoes"]) for entry in entries if entry.get("op") == "undo" and "undoes" in entry}
    reports = []
    for entry in entries:
        if entry.get("op") == "undo" or int(entry.get("id", 0)) in undone:
            continue
        try:
            status, note = replay_one(folder, entry, by)
        except (TargetError, CacheError):  # the folder itself, not the edit: the rebuild must hear of it
            raise
        except AtlasError as error:
            status, note = "no longer applies", str(error)
        reports.append(
            {"id": entry.get("id"), "op": entry.get("op"), "summary": entry.get("summary"), "status": status}
            | {"note": note}
        )
    return reports
