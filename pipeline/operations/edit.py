"""``topic-atlas edit``: a person's fixes to an atlas's topics, made on the cache without a refit.

Each edit changes which topic some papers are in, then describes again what changed
(pipeline.operations.edit_describe): the changed topics' sizes, c-TF-IDF terms, names, subtitles, representative
papers and label positions, the hierarchy, their subtopics and their rows of the topics per decision class; the
other topics keep everything. Edits:

- :func:`merge_topics`: two or more topics become one; it keeps the id (and theme) of the largest.
- :func:`split_topic`: a topic's papers cut into k by k-means of their stored vectors (``embeddings.npy``); the
  largest part keeps the id, the others get new ids (never used before: ``manifest["topic_ids_ever_used"]``), all
  in the topic's theme.
- :func:`delete_topic`: its papers become outliers (-1, ``outlier_reason`` "removed by an edit"), or each goes to
  the remaining topic whose centroid is most cosine-similar to it (``to_nearest``).
- :func:`move_papers`: papers (doc ids) into a topic (or -1); a topic left without papers is gone.
- :func:`rename`: a theme's, topic's or subtopic's label (a topic's as ``topic-atlas rename`` records it, in
  ``manifest["label_overrides"]``, which an edit's recomputed names never overwrite).
- :func:`undo`: the atlas as it was before the last edit not undone yet.

Every edit takes the cache's writer lock (pipeline.operations.locking: a second writer waits, then gets one line
naming the holder), reads the atlas, writes the new version into a staging folder and swaps it in
(pipeline.cache.staged_cache), so readers see the old atlas or the new one. The edit log ``edits.jsonl`` (one JSON
object per line: id, op, params, at, by, summary, ...) and the previous versions of the files an edit rewrote
(``edits/<id>-<file>``, hard links, so an unchanged file costs nothing; the last edit_log.UNDO_DEPTH edits) are
written in the same staging folder (pipeline.operations.edit_log). The page's sessions are threads of one process,
for which the writer lock is re-entrant, so an edit also holds a lock per folder among threads (:func:`editing`).
A rebuild does not keep the log yet; pipeline.operations.edit_replay makes a saved log's edits again. Metrics that
need a pass over every paper (NPMI, diversity, agreement with the reference columns) are marked stale in
``manifest["metrics_stale"]``; the sizes, outlier share and topic count are recomputed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from pipeline import cache
from pipeline.cache import OUTLIER_TOPIC, TopicCache
from pipeline.operations import edit_log, locking
from pipeline.operations import rename as rename_rules
from pipeline.runtime.errors import InputError, TargetError

REMOVED_BY_EDIT = "removed by an edit"  # outlier_reason of a paper an edit moved to -1
# Metrics that read every paper's topic and terms: an edit marks them stale (``topic-atlas evaluate`` recomputes).
STALE_METRICS = (
    "npmi",
    "npmi_by_topic",
    "npmi_topics_skipped",
    "npmi_terms_scored_mean",
    "topic_diversity",
    "nmi_reference",
    "ari_reference",
    "references",
)
LEVELS = ("theme", "topic", "subtopic")


@dataclass
class Change:
    """What an edit does to the assignment: the papers' new ``topics`` (n int64), the topics whose papers changed
    and still exist (``changed``), where a new topic's theme comes from (``theme_from``: {new id: old topic}), the
    papers moved to -1 by the edit (``ejected``, bool n), the log's ``params`` and a one-line ``summary``."""

    topics: np.ndarray
    changed: set[int]
    params: dict[str, Any]
    summary: str
    theme_from: dict[int, int] = field(default_factory=dict)
    ejected: np.ndarray | None = None


# ------------------------------------------------------------------------------------------------ checks


def topic_ids(atlas: TopicCache) -> list[int]:
    """The atlas's real topic ids (without -1), ascending."""
    return sorted(int(topic) for topic in atlas.topics["topic"] if int(topic) != OUTLIER_TOPIC)


def check_topic(atlas: TopicCache, topic: int, what: str = "topic") -> int:
    """``topic`` when the atlas has it and it is not -1; else InputError naming the atlas's topics."""
    present = topic_ids(atlas)
    if int(topic) == OUTLIER_TOPIC:
        raise InputError(f"the outlier topic -1 cannot be the {what}; choose one of {_listed(present)}")
    if int(topic) not in present:
        raise InputError(f"{atlas.path} has no topic {topic}; its topics are {_listed(present)}")
    return int(topic)


def _listed(values: Sequence[Any], most: int = 30) -> str:
    shown = ", ".join(str(value) for value in list(values)[:most])
    return shown + (f" and {len(values) - most} more" if len(values) > most else "")


def papers_of(atlas: TopicCache, topics: Sequence[int]) -> dict[str, list[str]]:
    """{topic id (str): its papers' doc ids} for ``topics``: what the log keeps so that a replay on a rebuilt atlas
    can find each topic again by its papers (:func:`successor`)."""
    documents = atlas.documents
    return {
        str(int(topic)): documents.loc[documents["topic"] == int(topic), "doc_id"].astype(str).tolist()
        for topic in topics
    }


def next_topic_id(atlas: TopicCache) -> int:
    """The first topic id the atlas has never used (manifest ``topic_ids_ever_used`` and its topics)."""
    used = set(int(topic) for topic in atlas.manifest.get("topic_ids_ever_used") or []) | set(topic_ids(atlas))
    return max(used | {OUTLIER_TOPIC}) + 1


# ------------------------------------------------------------------------------------------------ the edits


def merge_change(atlas: TopicCache, topics: Sequence[int]) -> Change:
    """:class:`Change` of merging ``topics`` (two or more distinct ids) into the largest of them (ties: lowest id).
    Raises InputError for fewer than two distinct topics or one the atlas lacks."""
    wanted = sorted({check_topic(atlas, topic, "topic of a merge") for topic in topics})
    if len(wanted) < 2:
        raise InputError(f"a merge needs two or more different topics; got {_listed(list(topics)) or 'none'}")
    current = atlas.documents["topic"].to_numpy(dtype=np.int64)
    sizes = {topic: int((current == topic).sum()) for topic in wanted}
    target = min(wanted, key=lambda topic: (-sizes[topic], topic))
    new = np.where(np.isin(current, wanted), target, current).astype(np.int64)
    summary = f"merged topics {_listed(wanted)} into topic {target} ({sum(sizes.values())} papers)"
    return Change(new, {target}, {"topics": wanted, "into": target, "papers": papers_of(atlas, wanted)}, summary)


def split_change(atlas: TopicCache, topic: int, k: int, embeddings: np.ndarray) -> Change:
    """:class:`Change` of cutting ``topic`` into ``k`` parts by k-means (scikit-learn, seeded with the build's
    ``random_state``, 4 restarts) of its papers' unit vectors; parts by papers, most first: the first keeps the id.
    Raises InputError for k < 2, k above the topic's papers, or a bad topic."""
    from sklearn.cluster import KMeans

    topic = check_topic(atlas, topic, "topic to split")
    current = atlas.documents["topic"].to_numpy(dtype=np.int64)
    rows = np.flatnonzero(current == topic)
    if int(k) < 2:
        raise InputError(f"a split needs k of 2 or more; got {k}")
    if int(k) > len(rows):
        raise InputError(f"topic {topic} has {len(rows)} papers; it cannot be split into {k}")
    seed = int(atlas.manifest.get("params", {}).get("random_state", 42))
    found = KMeans(n_clusters=int(k), n_init=4, random_state=seed).fit(embeddings[rows]).labels_
    parts = sorted(set(found.tolist()), key=lambda part: (-int((found == part).sum()), int(np.argmax(found == part))))
    if len(parts) < 2:
        raise InputError(f"topic {topic}'s papers have identical vectors; k-means found one part, nothing to split")
    first_new = next_topic_id(atlas)
    ids = [topic] + list(range(first_new, first_new + len(parts) - 1))
    new = current.copy()
    for part, new_id in zip(parts, ids):
        new[rows[found == part]] = new_id
    sizes = ", ".join(f"{new_id}: {int((new == new_id).sum())}" for new_id in ids)
    return Change(
        new,
        set(ids),
        {"topic": topic, "k": int(k), "into": ids, "papers": papers_of(atlas, [topic])},
        f"split topic {topic} into {len(ids)} topics ({sizes} papers)",
        theme_from={new_id: topic for new_id in ids[1:]},
    )


def delete_change(atlas: TopicCache, topic: int, to_nearest: bool, embeddings: np.ndarray) -> Change:
    """:class:`Change` of deleting ``topic``: its papers to -1, or (``to_nearest``) each to the remaining topic whose
    centroid (pipeline.geometry.centroids) is most cosine-similar to its vector. Raises InputError for a bad topic,
    or ``to_nearest`` when no other topic is left."""
    from pipeline.geometry.centroids import topic_centroids

    topic = check_topic(atlas, topic, "topic to delete")
    current = atlas.documents["topic"].to_numpy(dtype=np.int64)
    rows = np.flatnonzero(current == topic)
    new = current.copy()
    params: dict[str, Any] = {"topic": topic, "to_nearest": bool(to_nearest), "papers": papers_of(atlas, [topic])}
    if not to_nearest:
        new[rows] = OUTLIER_TOPIC
        ejected = np.zeros(len(new), dtype=bool)
        ejected[rows] = True
        return Change(
            new, set(), params, f"deleted topic {topic}: its {len(rows)} papers are outliers now", {}, ejected
        )
    others = [other for other in topic_ids(atlas) if other != topic]
    if not others:
        raise InputError(f"topic {topic} is the atlas's only topic; there is no other topic to move its papers to")
    similarity = embeddings[rows] @ topic_centroids(embeddings, current, others).T
    new[rows] = np.asarray(others, dtype=np.int64)[similarity.argmax(axis=1)]
    receivers = sorted(set(new[rows].tolist()))
    params["to"] = {str(other): int((new[rows] == other).sum()) for other in receivers}
    return Change(
        new,
        set(receivers),
        params,
        f"deleted topic {topic}: its {len(rows)} papers went to topics {_listed(receivers)}",
    )


def move_change(atlas: TopicCache, doc_ids: Sequence[str], to_topic: int) -> Change:
    """:class:`Change` of moving the papers ``doc_ids`` into ``to_topic`` (-1: make them outliers). Raises
    InputError for no ids, ids the atlas lacks (the first few named), a bad topic, or papers all there already."""
    wanted = list(dict.fromkeys(str(doc_id).strip() for doc_id in doc_ids if str(doc_id).strip()))
    if not wanted:
        raise InputError("no paper ids to move; give them as --ids a,b,c")
    if int(to_topic) != OUTLIER_TOPIC:
        check_topic(atlas, to_topic, "topic to move papers to")
    position = {doc_id: row for row, doc_id in enumerate(atlas.documents["doc_id"].astype(str))}
    unknown = [doc_id for doc_id in wanted if doc_id not in position]
    if unknown:
        raise InputError(f"{atlas.path} has no paper {_listed(unknown, 5)} ({len(unknown)} unknown id(s))")
    current = atlas.documents["topic"].to_numpy(dtype=np.int64)
    rows = np.asarray([position[doc_id] for doc_id in wanted], dtype=np.int64)
    rows = rows[current[rows] != int(to_topic)]
    if not len(rows):
        raise InputError(f"the {len(wanted)} paper(s) are in topic {to_topic} already; nothing to move")
    new = current.copy()
    new[rows] = int(to_topic)
    sources = sorted(set(current[rows].tolist()))
    changed = {int(topic) for topic in [*sources, int(to_topic)] if topic != OUTLIER_TOPIC and (new == topic).any()}
    ejected = np.zeros(len(new), dtype=bool)
    if int(to_topic) == OUTLIER_TOPIC:
        ejected[rows] = True
    params = {"ids": [str(atlas.documents["doc_id"].iloc[row]) for row in rows], "to": int(to_topic)}
    params["papers"] = papers_of(atlas, [int(to_topic)]) if int(to_topic) != OUTLIER_TOPIC else {}
    summary = f"moved {len(rows)} paper(s) from topics {_listed(sources)} to topic {int(to_topic)}"
    return Change(new, changed, params, summary, {}, ejected)


# ------------------------------------------------------------------------------------------------ writing

_THREAD_LOCKS: dict[str, threading.Lock] = {}
_THREAD_LOCKS_GUARD = threading.Lock()


@contextmanager
def editing(cache_dir: Path | str) -> Iterator[None]:
    """Hold the right to edit ``cache_dir``: a lock per folder among this process's threads (the page's sessions
    are threads of one server, and pipeline.cache.writer_lock is re-entrant within a process), then the folder's
    writer lock among processes (pipeline.operations.locking). A second editor waits up to
    pipeline.cache.lock_wait_s(), then gets TargetError in one line; its edit is then not made, and an edit that
    waited is made on the atlas the first one wrote (it reads the atlas only once it holds both)."""
    key = str(Path(cache_dir).expanduser().resolve())
    with _THREAD_LOCKS_GUARD:
        lock = _THREAD_LOCKS.setdefault(key, threading.Lock())
    wait_s = cache.lock_wait_s()
    if not lock.acquire(timeout=wait_s):
        raise TargetError(
            f"{cache_dir} is being edited by another session of this server; waited {wait_s:g} s for it "
            "to finish. Try again when that edit has ended"
        )
    try:
        with locking.held(cache_dir):
            yield
    finally:
        lock.release()


def read_atlas(cache_dir: Path | str) -> TopicCache:
    """The atlas in ``cache_dir``; TargetError (one line) when the folder holds none or holds a symbolic link (an edit
    copies what it does not rewrite: a link would copy a file from anywhere into the atlas, issue 40 item 16)."""
    try:
        cache.check_no_links(cache_dir)
        return cache.read_cache(cache_dir)
    except cache.CacheError as error:
        raise TargetError(str(error)) from error


def publish(
    atlas: TopicCache, log: list[dict[str, Any]], entry: dict[str, Any], tables: Any, embeddings: np.ndarray
) -> dict[str, Any]:
    """Write the edited atlas (``tables``: pipeline.operations.edit_tables.EditedTables), the files it replaces and
    the log with ``entry`` into a staging folder and swap it in. Returns the entry as logged."""
    with cache.staged_cache(atlas.path) as staging:
        cache.write_tables(
            staging,
            tables.manifest,
            tables.documents,
            tables.topics,
            tables.hierarchy,
            embeddings,
            tables.topics_per_class,
            atlas.lineage,
            tables.copies,
            atlas.journeys,
            atlas.candidates,
            tables.subtopics,
        )
        skip = (cache.METRICS_FILE, cache.SUBTOPICS_FILE, edit_log.EDITS_FILE, edit_log.EDITS_DIR)
        cache.carry_over(atlas.path, staging, skip=skip)
        logged = edit_log.record_edit(atlas.path, staging, log, entry)
    return logged


def run_edit(
    cache_dir: Path | str, op: str, make: Callable[[TopicCache, np.ndarray], Change], by: str | None
) -> dict[str, Any]:
    """Hold the atlas's writer lock, read it, make the :class:`Change` (``make(atlas, embeddings)``), rewrite the
    tables (pipeline.operations.edit_tables) and publish them with the log entry. Returns the entry.

    Raises TargetError when the folder holds no atlas or another writer keeps it past the lock's wait, InputError
    for a bad edit (nothing is written then)."""
    from pipeline.operations.edit_tables import edited_tables

    with editing(cache_dir):
        atlas = read_atlas(cache_dir)
        embeddings = atlas.embeddings()
        change = make(atlas, embeddings)
        log = edit_log.read_log(atlas.path)
        entry = edit_log.new_entry(log, op, change.params, change.summary, by)
        tables = edited_tables(
            atlas,
            change.topics,
            change.changed,
            change.theme_from,
            change.ejected,
            embeddings,
            STALE_METRICS,
            int(entry["id"]),
            REMOVED_BY_EDIT,
        )
        return publish(atlas, log, entry, tables, embeddings)


def merge_topics(cache_dir: Path | str, topics: Sequence[int], by: str | None = None) -> dict[str, Any]:
    """Merge ``topics`` (two or more) into the largest of them; see :func:`run_edit` for what is written and raised.
    Returns the log entry."""
    return run_edit(cache_dir, "merge", lambda atlas, _: merge_change(atlas, topics), by)


def split_topic(cache_dir: Path | str, topic: int, k: int | None = None, by: str | None = None) -> dict[str, Any]:
    """Split ``topic`` into ``k`` by k-means of its papers' vectors (:func:`split_change`); ``k`` None: as many as
    the build would cut it into subtopics (pipeline.topics.subtopics.subtopic_count of its papers: 3 for 60-120
    papers, up to 10; 2 for a topic too small for subtopics), the topic clustered again. Returns the log entry."""

    def change(atlas: TopicCache, vectors: np.ndarray) -> Change:
        from pipeline.topics.subtopics import subtopic_count

        papers = int((atlas.documents["topic"] == int(topic)).sum())
        parts = k if k is not None else max(subtopic_count(papers), 2)  # a small topic (no subtopics) in two
        return split_change(atlas, topic, parts, vectors)

    return run_edit(cache_dir, "split", change, by)


def delete_topic(cache_dir: Path | str, topic: int, to_nearest: bool = False, by: str | None = None) -> dict[str, Any]:
    """Delete ``topic``: its papers to -1, or each to the nearest remaining topic (:func:`delete_change`). Returns
    the log entry."""
    return run_edit(cache_dir, "delete", lambda atlas, vectors: delete_change(atlas, topic, to_nearest, vectors), by)


def move_papers(cache_dir: Path | str, doc_ids: Sequence[str], to_topic: int, by: str | None = None) -> dict[str, Any]:
    """Move the papers ``doc_ids`` into ``to_topic`` (-1: outliers) (:func:`move_change`). Returns the log entry."""
    return run_edit(cache_dir, "move", lambda atlas, _: move_change(atlas, doc_ids, to_topic), by)


def checked_label(label: str, what: str, others: Sequence[str]) -> str:
    """``label`` with its whitespace collapsed; InputError when it is empty, longer than the rename's limit, or one
    of ``others`` (ignoring case)."""
    label = " ".join(str(label).split())
    if not label:
        raise InputError(f"the new label of the {what} is empty")
    if len(label) > rename_rules.MAX_LABEL_CHARS:
        raise InputError(f"the new label has {len(label)} characters; at most {rename_rules.MAX_LABEL_CHARS}")
    if label.casefold() in {str(other).casefold() for other in others}:
        raise InputError(f"another {what} is already labelled {label!r}; labels must be unique")
    return label


def relabelled_tables(atlas: TopicCache, level: str, ident: int, label: str) -> tuple[Any, dict[str, Any]]:
    """(EditedTables of ``atlas`` with the ``level`` (theme, topic, subtopic) ``ident`` labelled ``label``, the log's
    params). Raises InputError for an unknown level or id, or a bad label."""
    from pipeline.operations.edit_tables import EditedTables, copies_table, single_topic_themes

    documents, topics, hierarchy = atlas.documents, atlas.topics.copy(), atlas.hierarchy
    subtopics, manifest = atlas.subtopics.copy(), atlas.manifest.copy()
    if level == "topic":
        label = rename_rules.check_label(atlas, int(ident), label)
        documents, topics, hierarchy = rename_rules.relabelled(atlas, int(ident), label)
        overrides = dict(manifest.get("label_overrides") or {})
        previous = overrides.get(str(ident))
        fitted = dict(zip(atlas.topics["topic"].astype(int), atlas.topics["label"]))[int(ident)]  # checked: present
        automatic = previous.get("automatic", fitted) if previous else fitted
        overrides[str(ident)] = {"label": label, "automatic": automatic}
        manifest["label_overrides"] = overrides
        if "theme" in topics.columns:
            topics = single_topic_themes(topics)
    elif level == "theme":
        if "theme" not in topics.columns:
            raise InputError(f"{atlas.path} has no themes; rebuild it to get them")
        themes = sorted({int(theme) for theme in topics["theme"] if int(theme) != OUTLIER_TOPIC})
        if int(ident) not in themes:
            raise InputError(f"{atlas.path} has no theme {ident}; its themes are {_listed(themes)}")
        mine = topics["theme"].astype(int) == int(ident)
        label = checked_label(label, "theme", topics.loc[~mine, "theme_label"].astype(str).tolist())
        topics.loc[mine, "theme_label"] = label
        manifest["theme_label_overrides"] = {**(manifest.get("theme_label_overrides") or {}), str(int(ident)): label}
    elif level == "subtopic":
        known = sorted(int(part) for part in subtopics["subtopic"])
        if int(ident) not in known:
            raise InputError(f"{atlas.path} has no subtopic {ident}; its subtopics are {_listed(known) or 'none'}")
        mine = subtopics["subtopic"].astype(int) == int(ident)
        label = checked_label(label, "subtopic", subtopics.loc[~mine, "label"].astype(str).tolist())
        subtopics.loc[mine, "label"] = label
    else:
        raise InputError(f"cannot rename a {level!r}; choose one of {', '.join(LEVELS)}")
    tables = EditedTables(
        manifest, documents, topics, hierarchy, atlas.topics_per_class, subtopics, copies_table(atlas.copies, documents)
    )
    params: dict[str, Any] = {"level": level, "id": int(ident), "label": label}
    if level == "topic":
        params["papers"] = papers_of(atlas, [int(ident)])
    return tables, params


def rename(cache_dir: Path | str, level: str, ident: int, label: str, by: str | None = None) -> dict[str, Any]:
    """Label the theme, topic or subtopic (``level``) ``ident`` ``label``, as an edit (logged, undoable; a topic's
    label also in ``manifest["label_overrides"]`` as ``topic-atlas rename`` records it). Returns the log entry.
    Raises InputError for a bad level, id or label, TargetError as :func:`run_edit`."""
    with editing(cache_dir):
        atlas = read_atlas(cache_dir)
        tables, params = relabelled_tables(atlas, level, ident, label)
        log = edit_log.read_log(atlas.path)
        summary = f"renamed {level} {int(ident)} to {params['label']!r}"
        entry = edit_log.new_entry(log, "rename", params, summary, by)
        embeddings = np.load(atlas.path / cache.EMBEDDINGS_FILE, allow_pickle=False)
        return publish(atlas, log, entry, tables, embeddings)


def undo(cache_dir: Path | str, by: str | None = None) -> dict[str, Any]:
    """Put back the atlas as it was before its latest edit not undone yet, and log the undo. Returns the undo's
    entry (``undoes``: the edit's id). Raises InputError when there is nothing to undo or the edit is older than
    the files kept (edit_log.UNDO_DEPTH), TargetError when a build, add or rename changed the atlas after it."""
    with editing(cache_dir):
        atlas_path = read_atlas(cache_dir).path
        log = edit_log.read_log(atlas_path)
        target = edit_log.last_undoable(log)
        entry = edit_log.new_entry(
            log, "undo", {"undoes": int(target["id"])}, f"undid edit {target['id']}: {target.get('summary', '')}", by
        )
        entry["undoes"] = int(target["id"])
        with cache.staged_cache(atlas_path) as staging:
            absent = edit_log.restore(atlas_path, staging, target)
            skip = (*absent, edit_log.EDITS_FILE, edit_log.EDITS_DIR)
            cache.carry_over(atlas_path, staging, skip=skip)
            kept = {int(item["id"]) for item in log if item.get("op") != "undo"} - {int(target["id"])}
            edit_log.write_log(atlas_path, staging, log, entry, kept)
        return entry


def edits(cache_dir: Path | str) -> pd.DataFrame:
    """The atlas's edit log as a table: id, op, at, by, summary, params, undone (bool: a later undo undid it), in
    order; empty (with those columns) before the first edit. Raises TargetError when the folder holds no atlas."""
    atlas_path = read_atlas(cache_dir).path
    log = edit_log.read_log(atlas_path)
    undone = {int(entry["undoes"]) for entry in log if entry.get("op") == "undo" and "undoes" in entry}
    columns = ["id", "op", "at", "by", "summary", "params", "undone"]
    rows = [
        [entry.get("id"), entry.get("op"), entry.get("at"), entry.get("by"), entry.get("summary"), entry.get("params")]
        + [int(entry.get("id", 0)) in undone]
        for entry in log
    ]
    return pd.DataFrame(rows, columns=columns)
