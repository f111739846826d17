"""The build's fit check: papers that fit no topic leave it for the outlier topic, with the reason.

HDBSCAN puts papers into topics by density in a UMAP layout, and UMAP pulls even an unrelated paper into some
dense region: of 24 unrelated abstracts (``../shared/cases/02-all-outliers``) mixed into the whole ICLR 2025
conference, 13 ended in topics, and 2 of 6 mixed into 24 ICLR papers. The check is the centroid rule of
``topic-atlas place`` (pipeline.geometry.centroids.topic_fit) applied to the atlas's own papers after clustering,
coherence and outlier reduction: a paper whose cosine similarity to its nearest topic centroid (its own topic's
centroid taken without it, pipeline.geometry.centroids.member_fit) is below FIT_SHARE of the median of the topic
papers' own leave-one-out centroid similarities (median_fit_threshold) fits no topic and moves to -1. Topic terms,
sizes and names are computed after the move.

FIT_SHARE is 0.5, chosen on ICLR 2025 only (``python -m bench.topic_membership --fit-check``; the tables and the
alternatives are in docs/decisions/fit-check.md): on the whole conference it takes 10 of the 13 absorbed unrelated
abstracts out for 4 of 11,660 real papers, on the 951-paper sample 13 of 19 for none, in the 30-paper case 2 of 2;
on ICML 2025, not tuned on, 15 of 17 for none. ``place``'s own threshold, a low quantile of the same similarities,
is pulled down by the unrelated papers it must find once they are more than its share of a topic's papers (2 of 19
taken out at 0.003 on the 951-paper sample); a median is not. The 3 left on the whole conference share the
vocabulary of their topics (similarity 0.25-0.38, as typical real papers): no centroid rule can tell them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from pipeline.geometry.centroids import median_fit_threshold, member_fit, topic_fit
from pipeline.schema import CLUSTER_DISSOLVED, FITS_NO_TOPIC, NO_DENSE_CLUSTER
from pipeline.topics.membership import OUTLIER_TOPIC, dissolve

if TYPE_CHECKING:
    from pipeline.cache.manifest import FitCheckEntry

FIT_SHARE = 0.5


@dataclass
class FitCheck:
    """The outcome of :func:`eject_misfits`.

    Attributes
    ----------
    topics : int64, n; topics after the move (-1 = outlier), renumbered 0..k-1 when a topic was emptied.
    ejected : bool, n; the papers moved to -1 by the check.
    similarity : float64, n; each paper's cosine similarity to its nearest topic centroid before the move (its own
        topic's centroid without it; an outlier's nearest centroid); -1.0 without topics.
    threshold : the similarity a paper needed (pipeline.geometry.centroids.median_fit_threshold), or None without
        topics.
    share : the share of the median the threshold is (FIT_SHARE unless asked otherwise).
    seconds : wall seconds of the check and of the refit of the topics' terms it caused (set by the caller that
        timed them, pipeline.topics.model.fit_topic_model; 0 otherwise).
    """

    topics: np.ndarray
    ejected: np.ndarray
    similarity: np.ndarray
    threshold: float | None
    share: float
    seconds: float = 0.0


def eject_misfits(embeddings: np.ndarray, topics: np.ndarray, share: float = FIT_SHARE) -> FitCheck:
    """Move to -1 the papers that fit no topic (module docstring); ``share`` 0 moves none.

    Parameters
    ----------
    embeddings : float32, n x dim, unit rows.
    topics : int, n; -1 = outlier.
    share : 0-1; the threshold is this share of the median leave-one-out similarity of the topics' papers to their
        own topic's centroid.

    Returns a FitCheck. A topic left without papers is dropped and the others renumbered in their order
    (pipeline.topics.membership.dissolve), as BERTopic expects consecutive ids.
    """
    topics = np.asarray(topics, dtype=np.int64)
    similarity, own = member_fit(embeddings, topics)
    outliers = topics == OUTLIER_TOPIC
    if outliers.all():
        return FitCheck(topics.copy(), np.zeros(len(topics), dtype=bool), np.full(len(topics), -1.0), None, share)
    if outliers.any():
        similarity[outliers] = topic_fit(embeddings, topics, embeddings[outliers], 0.0)[0]
    threshold = median_fit_threshold(own[~outliers], share)
    ejected = ~outliers & (similarity < threshold) if share > 0 else np.zeros(len(topics), dtype=bool)
    moved = np.where(ejected, OUTLIER_TOPIC, topics)
    emptied = sorted(set(topics.tolist()) - set(moved.tolist()))
    return FitCheck(dissolve(moved, emptied) if emptied else moved, ejected, similarity, threshold, share)


def fit_note(check: FitCheck) -> str | None:
    """One sentence for the manifest's notes on what the check moved, or None when it moved nothing."""
    n = int(check.ejected.sum())
    if not n or check.threshold is None:
        return None
    subject = "1 paper fits no topic and was" if n == 1 else f"{n} papers fit no topic and were"
    whose = "its" if n == 1 else "their"
    return (
        f"{subject} moved to the outliers: {whose} similarity to the nearest topic centroid is below "
        f"{check.threshold:.3f}, {check.share:.0%} of what the topics' papers typically reach (the median)"
    )


def outlier_reasons(topics: np.ndarray, cluster_labels: np.ndarray, ejected: np.ndarray) -> list[str]:
    """Why each paper is an outlier, n strings: "" in a topic; FITS_NO_TOPIC when the fit check moved it;
    NO_DENSE_CLUSTER when HDBSCAN left it out of every cluster (and outlier reduction found it no topic);
    CLUSTER_DISSOLVED when its cluster's papers shared no words (pipeline.topics.membership)."""
    reasons = []
    for topic, label, moved in zip(np.asarray(topics), np.asarray(cluster_labels), np.asarray(ejected)):
        if topic != OUTLIER_TOPIC:
            reasons.append("")
        elif moved:
            reasons.append(FITS_NO_TOPIC)
        else:
            reasons.append(NO_DENSE_CLUSTER if label == OUTLIER_TOPIC else CLUSTER_DISSOLVED)
    return reasons


def outlier_reason_counts(reasons: list[str]) -> dict[str, int]:
    """The manifest's ``outlier_reasons``: {reason: papers}, sorted by reason, of :func:`outlier_reasons`'s strings
    (one per paper; "" for a paper in a topic, not counted)."""
    counts: dict[str, int] = {}
    for reason in reasons:
        if reason:
            counts[reason] = counts.get(reason, 0) + 1
    return dict(sorted(counts.items()))


def fit_check_entry(check: FitCheck | None, doc_ids: list[str]) -> FitCheckEntry | None:
    """The manifest's ``fit_check``: {share_of_median, threshold (4 decimals, None without topics), n_moved,
    moved_ids (sorted), seconds (wall, the check and the refit it caused)}; None when the check did not run."""
    if check is None:
        return None
    return {
        "share_of_median": check.share,
        "threshold": None if check.threshold is None else round(check.threshold, 4),
        "n_moved": int(check.ejected.sum()),
        "moved_ids": sorted(str(doc_ids[row]) for row in np.flatnonzero(check.ejected)),
        "seconds": round(check.seconds, 3),
    }
