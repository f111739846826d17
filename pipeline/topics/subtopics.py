"""Subtopics: the third level of the atlas, each large topic's papers cut into 3-10 named parts.

A topic of at least MIN_TOPIC_PAPERS papers is cut into :func:`subtopic_count` parts by k-means (Lloyd 1982,
scikit-learn's ``KMeans``, seeded, a fixed number of restarts) on its papers' rows of two blocks side by side, each
centred and scaled to a total variance of 1 (:func:`pipeline.topics.themes.standardised`): their vectors in the
document representation and their map positions. So a subtopic's papers say alike things *and* lie together on the
map, where its label sits when the map is zoomed in (the themes are cut from the same two blocks, one row per
topic). k-means rather than Ward: its cost grows linearly with a topic's papers (a topic of the field's 290,000
papers can hold tens of thousands; Ward's needs their square in memory).

Each subtopic is named against its siblings (:func:`name_subtopics`): the topic's papers alone are the corpus
(``pipeline.topics.naming.names`` on the phrase counts of its rows), so a phrase's precision is its share *within
the topic*, and the topic's own name, written by most of its papers, scores low everywhere; a subtopic is never
named as its topic. Subtopic ids are unique in the atlas: 0, 1, ... by topic id, then by papers (most first).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from functools import partial

import numpy as np
import pandas as pd

from pipeline.runtime.tasks import run_tasks
from pipeline.schema import OUTLIER_TOPIC as OUTLIER
from pipeline.schema import SUBTOPIC_COLUMN, SUBTOPIC_COLUMNS
from pipeline.topics.naming.names import choose_names, common_phrases, name_phrases, with_key_tables
from pipeline.topics.naming.phrase_counts import PhraseCounts
from pipeline.topics.naming.phrase_tokens import phrase_key
from pipeline.topics.themes import standardised

# A subtopic's name is ranked as a topic's (count x precision above chance, within the topic), but never a phrase that
# more than COMMON_WORD_SHARE (one word) or COMMON_PHRASE_SHARE (longer) of the corpus writes: "Models",
# "Generation", "Large language models" named the general rest of a topic, too broad for readers
# (docs/decisions/theme-measures.md, section 6). Precision counted twice (a first try) named parts by rare techniques
# readers found too narrow ("Theory of mind", "ReLU").
COMMON_WORD_SHARE = 0.08
# One word written by more than this share of the corpus is too vague to name a part alone or first, and may end a
# paired name (round 3's readers on "Sampling" 6.9%, "Noise" 5.5%, "Prompt" 7.8%, "Object" 6.5%, "Memory" 6.2%;
# docs/decisions/theme-measures.md, section 8).
VAGUE_WORD_SHARE = 0.03
# 0.15 until round 30: "Large language models (LLMs)" (written by 14.8% of ICLR 2024) still named a part of RLHF papers,
# "Neural networks (NN)" (14.5% of ICLR 2025) one of neuroscience papers; at 0.12 the 8 subtopics it renames on the two
# conferences read FIT 3.50 against 2.75 (round 31, docs/decisions/theme-measures.md section 18).
COMMON_PHRASE_SHARE = 0.12
# A subtopic's name is written by at least this share of its papers (a topic's by 3%): a reader judges a name by a few
# of its titles, and a phrase of a handful of a part's papers fits none of them.
MIN_NAME_COVERAGE = 0.15
# A subtopic's phrase is ranked by its count x (precision above chance) ** PRECISION_POWER (a topic's: to the power 1).
# At 1, readers found parts named by a narrower subject than their papers share: "Segment anything model (SAM)" over
# image segmentation generally, "Markov decision processes" over reinforcement learning broadly (round 45). At 0.5,
# 45 of 267 subtopics of ICLR 2025 and 2026 and 57 of 267 of the six collections are renamed; read blind, the 102
# renamed fit better by +0.32 [0.14, 0.50] (rounds 46 and 48, docs/decisions/theme-measures.md section 28).
PRECISION_POWER = 0.5
# A topic needs this many papers to have subtopics: 3 of about 20 papers at least, a page of titles each.
MIN_TOPIC_PAPERS = 60
MIN_SUBTOPICS = 3
MAX_SUBTOPICS = 10
# Papers per subtopic grow with the topic: k = sqrt(n / PAPERS_SCALE) (60 papers -> 3, 200 -> 5, 500 -> 8, 800+ -> 10),
# so a large topic is not cut into crumbs nor a small one into halves.
PAPERS_SCALE = 8.0
KMEANS_RESTARTS = 4
# Threads that cut the topics: k-means releases the GIL; the 290k atlas's 59 topics took 22.9 s in one. (The map
# thread may still be measuring the map beside them: pipeline.operations.build.fit_topics_and_map.)
CUT_THREADS = 2
# A subtopic holds at least this share of its topic's papers, and this many papers.
MIN_PART_SHARE = 0.06
MIN_PART_PAPERS = 20


def subtopic_count(papers: int) -> int:
    """How many subtopics a topic of ``papers`` papers gets: 0 under MIN_TOPIC_PAPERS, else sqrt(papers /
    PAPERS_SCALE) rounded, within [MIN_SUBTOPICS, MAX_SUBTOPICS]."""
    if papers < MIN_TOPIC_PAPERS:
        return 0
    return int(min(max(round(math.sqrt(papers / PAPERS_SCALE)), MIN_SUBTOPICS), MAX_SUBTOPICS))


def cut_topic(vectors: np.ndarray, points: np.ndarray, parts: int, seed: int) -> np.ndarray:
    """A part 0..p-1 per paper of one topic (m): k-means into ``parts`` of its ``vectors`` (m x d) and map
    ``points`` (m x 2), each block standardised; a part of fewer than :func:`smallest_part` papers (a few papers
    the map put far from the rest, which k-means gives a part of their own) is dissolved into the nearest other part.
    Parts are numbered by papers, most first (ties: first paper); p <= ``parts``, 1 when nothing else is left."""
    from sklearn.cluster import KMeans

    features = np.hstack([standardised(vectors), standardised(points)])
    model = KMeans(n_clusters=parts, n_init=KMEANS_RESTARTS, random_state=seed).fit(features)
    found = model.labels_.copy()
    counts = np.bincount(found, minlength=parts)
    kept = np.flatnonzero(counts >= smallest_part(len(found)))
    if not len(kept):
        return np.zeros(len(found), dtype=np.int64)
    stray = ~np.isin(found, kept)
    if stray.any():
        distances = ((features[stray, None, :] - model.cluster_centers_[None, kept, :]) ** 2).sum(axis=2)
        found[stray] = kept[np.argmin(distances, axis=1)]
    order = sorted(kept, key=lambda part: (-int((found == part).sum()), int(np.argmax(found == part))))
    renumber = np.full(parts, -1, dtype=np.int64)
    renumber[order] = np.arange(len(order))
    return renumber[found]


def smallest_part(papers: int) -> int:
    """The fewest papers a subtopic of a topic of ``papers`` papers may hold: MIN_PART_SHARE of them, at least
    MIN_PART_PAPERS (a page of titles to read)."""
    return max(MIN_PART_PAPERS, math.ceil(MIN_PART_SHARE * papers))


def cut_subtopics(
    topics: np.ndarray, vectors: np.ndarray, points: np.ndarray, seed: int, threads: int = CUT_THREADS
) -> np.ndarray:
    """A subtopic id per paper (n, int64; -1 for outliers and papers of topics without subtopics) from the papers'
    ``topics`` (n), ``vectors`` (n x d) and map ``points`` (n x 2); ids as the module docstring says. The topics are
    cut by ``threads`` threads (pipeline.runtime.tasks.run_tasks), each k-means with one BLAS/OpenMP thread: a
    topic's parts depend on its rows alone, so the ids are the same for any count."""
    labels = np.asarray(topics, dtype=np.int64)
    result = np.full(len(labels), OUTLIER, dtype=np.int64)
    cuts = []
    for topic in np.unique(labels[labels != OUTLIER]):
        rows = np.flatnonzero(labels == topic)
        parts = subtopic_count(len(rows))
        if parts:
            cuts.append((rows, partial(_cut_rows, vectors, points, rows, parts, seed)))
    found_parts = run_tasks([cut for _, cut in cuts], threads)
    next_id = 0
    for (rows, _), found in zip(cuts, found_parts):
        if found.max() < 1:  # one part left: no subtopics
            continue
        result[rows] = next_id + found
        next_id += int(found.max()) + 1
    return result


def _cut_rows(vectors: np.ndarray, points: np.ndarray, rows: np.ndarray, parts: int, seed: int) -> np.ndarray:
    """:func:`cut_topic` of the papers ``rows``, with one BLAS/OpenMP thread (so k-means' floats do not depend on
    the thread it runs in)."""
    from pipeline.runtime.threads import single_threaded

    with single_threaded():
        return cut_topic(vectors[rows], points[rows], parts, seed)


def rows_of(counts: PhraseCounts, rows: np.ndarray) -> PhraseCounts:
    """The phrase counts of some documents only (``rows``, positions in ``counts``): the same phrases, fewer rows,
    and the whole corpus's tables (names.with_key_tables: the phrases cut before their head noun judged on the
    corpus, not a topic's few papers)."""
    part = PhraseCounts(
        counts.matrix[rows],
        counts.keys,
        counts.written,
        counts.abbreviations,
        counts.in_title[rows] if counts.in_title is not None else None,
        counts.short_share,
    )
    return with_key_tables(part, counts)


def name_subtopics(
    counts: PhraseCounts, topics: np.ndarray, subtopics: np.ndarray, topic_names: Mapping[int, str]
) -> dict[int, tuple[str, list[str]]]:
    """{subtopic: (name, subtitle)} for every subtopic of ``subtopics`` (n, -1 none), named within its topic
    (``topics``, n) as the module docstring says, never as ``topic_names[topic]``. ``counts``: the phrase counts
    of the same n documents. A subtopic without a candidate phrase is called "<topic name> (part i)"."""
    labels, parts = np.asarray(topics, dtype=np.int64), np.asarray(subtopics, dtype=np.int64)
    common = common_phrases(counts, COMMON_WORD_SHARE, COMMON_PHRASE_SHARE)
    vague = common_phrases(counts, VAGUE_WORD_SHARE)
    names: dict[int, tuple[str, list[str]]] = {}
    for topic in np.unique(labels[parts != OUTLIER]):
        rows = np.flatnonzero((labels == topic) & (parts != OUTLIER))
        own = parts[rows]
        ids = sorted(set(own.tolist()))
        parent = topic_names.get(int(topic), f"Topic {int(topic)}")
        fallback = {int(part): f"{parent} (part {number + 1})" for number, part in enumerate(ids)}
        chosen = choose_names(
            rows_of(counts, rows),
            own.tolist(),
            taken=[parent],
            fallback=fallback,
            avoid=part_of_name(parent, common),
            vague=vague,
            min_coverage=MIN_NAME_COVERAGE,
            precision_power=PRECISION_POWER,
        )
        names.update({int(part): (name.name, list(name.subtitle)) for part, name in chosen.items()})
    return names


def part_of_name(parent: str, common: set[str]) -> Callable[[int, str, float], bool]:
    """avoid(subtopic, key, coverage) for choose_names: True for a phrase inside the topic's name ``parent`` (as
    whole words: "augmented generation" of "Retrieval-augmented generation (RAG)"), which says nothing that the
    topic's name does not say already, and for the ``common`` phrases."""
    parts = [phrase_key(part) for part in name_phrases(parent)]

    def avoid(subtopic: int, key: str, coverage: float) -> bool:
        return key in common or any(f" {key} " in f" {part} " for part in parts)

    return avoid


def subtopic_table(
    subtopics: np.ndarray, topics: np.ndarray, points: np.ndarray, names: Mapping[int, tuple[str, list[str]]]
) -> pd.DataFrame:
    """subtopics.parquet's rows (pipeline.schema.SUBTOPIC_COLUMNS), one per subtopic id of ``subtopics`` (n): its
    topic, name, subtitle, papers and the median map position of its papers (``points``, n x 2)."""
    parts, labels = np.asarray(subtopics, dtype=np.int64), np.asarray(topics, dtype=np.int64)
    rows = []
    for part in np.unique(parts[parts != OUTLIER]):
        members = parts == part
        name, subtitle = names.get(int(part), (f"Subtopic {int(part)}", []))
        x, y = np.median(np.asarray(points, dtype=np.float64)[members], axis=0)
        rows.append((int(part), int(labels[members][0]), name, subtitle, int(members.sum()), float(x), float(y)))
    return pd.DataFrame(rows, columns=SUBTOPIC_COLUMNS).astype({"subtopic": "int64", "topic": "int64", "size": "int64"})


def with_subtopics(
    documents: pd.DataFrame,
    topics: pd.DataFrame,
    embeddings: np.ndarray,
    coordinates: np.ndarray,
    phrases: PhraseCounts | None,
    seed: int,
) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """The build's subtopics stage (pipeline.operations.build): (``documents`` with its ``subtopic`` column,
    subtopics.parquet's table), the large topics cut (:func:`cut_subtopics`) and named (:func:`name_subtopics`).
    ``documents``: the aligned document table in canonical order (its ``topic`` the written ids); ``topics``: the
    aligned topics table (topic, label); ``embeddings`` (n x dim) and ``coordinates`` (the map, n x 2) in the same
    order; ``phrases``: the corpus's phrase counts. Without phrase counts (a corpus of a few documents) the
    subtopics are left out (every paper's ``subtopic`` -1, no table)."""
    topic_ids = documents["topic"].to_numpy(dtype=np.int64)
    parts = cut_subtopics(topic_ids, embeddings, coordinates, seed)
    if phrases is None or not (parts >= 0).any():
        return documents.assign(**{SUBTOPIC_COLUMN: np.full(len(documents), -1, dtype=np.int64)}), None
    labels = dict(zip(topics["topic"].astype(int), topics["label"].astype(str)))
    names = name_subtopics(phrases, topic_ids, parts, labels)
    table = subtopic_table(parts, topic_ids, coordinates, names)
    return documents.assign(**{SUBTOPIC_COLUMN: parts}), table
