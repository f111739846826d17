"""Candidates of earlier adds that grow: a paper an add flags joins a candidate an earlier add found, when it lies
within that candidate as its own papers do.

A candidate new topic (pipeline.topics.candidates) is found by the add whose papers formed it. Later papers of its
subject used to form a candidate of their own, or join another group (10 + 10 + 10 cooking abstracts in three adds:
the second add formed a cooking candidate, the third add's cooking papers joined nothing, and two adds later they
were grouped with sports papers into "Football"; docs/decisions/candidate-topics.md). Now, before the flagged papers
of an add are grouped, each is set beside the earlier candidates, in the add's candidate space
(pipeline.topics.candidate_space). It joins the candidate whose centroid is nearest when

- its cosine to that centroid is at least what JOIN_QUANTILE of the candidate's own papers have to the mean of the
  others (leave-one-out, pipeline.geometry.centroids.leave_one_out_similarities: a small candidate's papers would
  otherwise count themselves in their own centroid), as the add's fit check measures a paper against the topics
  with the 5% quantile of their papers (pipeline.operations.add.fit_check);
- and at least half of its nearest papers of the grown atlas are the candidate's (JOIN_NEIGHBOURS, JOIN_SHARE): a
  flagged paper whose neighbours are a topic's papers, or other flagged papers, is not of the candidate's subject.

The papers that join are taken out of the add's grouping, and the candidate's row of candidates.parquet is updated
(its size, papers, representative papers, nearest topic and map position) with its name, terms and batch kept: the
name is the one the earlier add printed and the page shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from pipeline.geometry.centroids import leave_one_out_similarities, topic_centroids
from pipeline.schema import OUTLIER_TOPIC as OUTLIER

# The share of a candidate's own papers that may lie further from the centroid of the others than a paper that
# joins it: the add's fit check's 5% (pipeline.operations.add.FIT_QUANTILE).
JOIN_QUANTILE = 0.05
# A candidate needs this many papers still in the atlas to be joined: the leave-one-out similarity of one is undefined.
MIN_MEMBERS = 2
# A paper joins a candidate only when at least JOIN_SHARE of its JOIN_NEIGHBOURS nearest papers of the grown atlas
# (or of as many as the candidate has papers) are the candidate's: the centroid alone let one of 18 sports abstracts
# join a cooking candidate of 28 (both far from every ICLR topic, so near each other's centroids).
JOIN_NEIGHBOURS = 10
JOIN_SHARE = 0.5
# A grown candidate's columns of candidates.parquet that its papers give (pipeline.schema.CANDIDATE_COLUMNS); the
# others (candidate, batch, label, subtitle, top_terms) are the earlier add's.
REMADE_COLUMNS = ("size", "doc_ids", "representative_doc_ids", "nearest_topic", "nearest_similarity", "x", "y")


@dataclass
class EarlierCandidates:
    """The candidates of earlier adds, in an add's candidate space.

    Attributes
    ----------
    ids : candidate ids (candidates.parquet's ``candidate``), k.
    members : per candidate, int64 rows of its papers among the atlas's documents (those still there).
    centroids : k x dim, unit rows: each candidate's centroid.
    thresholds : float64, k: the JOIN_QUANTILE of each candidate's papers' leave-one-out cosines.
    """

    ids: list[int]
    members: list[np.ndarray]
    centroids: np.ndarray
    thresholds: np.ndarray


def earlier_candidates(vectors: np.ndarray, doc_ids: Sequence[str], candidates: pd.DataFrame) -> EarlierCandidates:
    """The earlier candidates of ``candidates`` (candidates.parquet) that hold at least MIN_MEMBERS of the atlas's
    papers: ``doc_ids`` (n) the atlas's document ids, ``vectors`` (n x dim, unit rows) their rows of the candidate
    space. An id the atlas no longer holds is passed over."""
    row_of = {str(doc_id): row for row, doc_id in enumerate(doc_ids)}
    ids, members, centroids, thresholds = [], [], [], []
    for entry in candidates.itertuples():
        rows = np.array([row_of[str(doc_id)] for doc_id in entry.doc_ids if str(doc_id) in row_of], dtype=np.int64)
        if len(rows) < MIN_MEMBERS:
            continue
        own = leave_one_out_similarities(vectors, rows)
        ids.append(int(entry.candidate))
        members.append(rows)
        centroids.append(topic_centroids(vectors[rows], np.zeros(len(rows), dtype=np.int64), [0])[0])
        thresholds.append(float(np.quantile(own, JOIN_QUANTILE)))
    dim = vectors.shape[1] if vectors.ndim == 2 else 0
    stacked = np.vstack(centroids) if centroids else np.zeros((0, dim), dtype=vectors.dtype)
    return EarlierCandidates(ids, members, stacked, np.asarray(thresholds, dtype=np.float64))


def joined_candidates(
    vectors: np.ndarray, nearest: np.ndarray, flagged: np.ndarray, earlier: EarlierCandidates
) -> np.ndarray:
    """The earlier candidate each flagged paper joins (module docstring), or -1: int64, m.

    ``vectors`` (m x dim, unit rows) are the papers an add judges, in its candidate space; ``nearest`` (int64, m x k,
    best first) their nearest papers of the grown atlas as rows of that space (the lists new territory reads,
    pipeline.operations.add._flags; the earlier candidates' papers, ``earlier.members``, are among those rows);
    ``flagged`` (bool, m) the papers the add flagged."""
    joins = np.full(len(vectors), OUTLIER, dtype=np.int64)
    chosen = np.flatnonzero(np.asarray(flagged, dtype=bool))
    if not len(earlier.ids) or not len(chosen):
        return joins
    to_centroids = vectors[chosen] @ earlier.centroids.T
    best = to_centroids.argmax(axis=1)
    within = to_centroids[np.arange(len(chosen)), best] >= earlier.thresholds[best]
    member_of = np.full(int(nearest.max(initial=0)) + 1, OUTLIER, dtype=np.int64)
    for number, rows in enumerate(earlier.members):
        member_of[rows[rows < len(member_of)]] = number
    lists = nearest[chosen, :JOIN_NEIGHBOURS]
    sizes = np.array([len(rows) for rows in earlier.members])
    looked = np.minimum(lists.shape[1], sizes[best])  # a candidate of 4 papers can be 4 of 10 neighbours at most
    among = np.array([(member_of[row[:count]] == group).sum() for row, count, group in zip(lists, looked, best)])
    joining = within & (among >= JOIN_SHARE * looked)
    joins[chosen[joining]] = np.asarray(earlier.ids, dtype=np.int64)[best[joining]]
    return joins


def grown_candidates(
    candidates: pd.DataFrame,
    earlier: EarlierCandidates,
    joins: np.ndarray,
    pool: np.ndarray,
    vectors: np.ndarray,
    documents: pd.DataFrame,
    topics: np.ndarray,
) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """(``candidates`` with the joined papers in their candidates' rows, one entry per candidate that grew for the
    add's report: {candidate, label, joined, size}).

    ``joins`` (int64, m: :func:`joined_candidates`) is over the judged papers, whose rows of the grown atlas are
    ``pool`` (m); ``vectors`` (N x dim) and ``documents`` (N rows: doc_id, x, y) are the grown atlas's, its first n
    rows the atlas's own with ``topics`` (n). A grown row's papers, representatives, nearest topic and map position
    are made again over all its papers by pipeline.topics.candidates.candidate_table, as for a new candidate; its
    name, subtitle, terms and batch are kept."""
    from pipeline.topics.candidates import CandidateGroups, candidate_table, nearest_topics

    table = candidates.copy()
    grown: list[dict[str, Any]] = []
    n = len(topics)
    for candidate, rows in zip(earlier.ids, earlier.members):
        joined = pool[joins == candidate]
        if not len(joined):
            continue
        members = np.concatenate([rows, joined])
        whole = CandidateGroups(np.zeros(len(members), dtype=np.int64), 0, len(members), "")
        nearest = nearest_topics(vectors[members], whole.labels, vectors[:n], topics)
        remade = candidate_table(whole, documents.iloc[members], vectors[members], {}, {}, nearest, batch=0).iloc[0]
        at = table.index[table["candidate"] == candidate][0]
        for column in REMADE_COLUMNS:
            table.at[at, column] = remade[column]
        grown.append(
            {"candidate": candidate, "label": str(table.at[at, "label"]), "joined": len(joined), "size": len(members)}
        )
    return table, grown
