"""Whether a group of flagged papers holds together as a subject: a candidate new topic's papers share at least as
much as those of the atlas's least cohesive topic.

The flagged papers of an add are the ones no topic takes (pipeline.topics.candidates). Strays of many subjects are
flagged too, and over several adds of real papers they accumulate (pipeline.topics.candidates.waiting_rows) until
HDBSCAN finds a group among them: 400 ICLR 2026 papers added to a 999-paper atlas in four adds of 100 gave a
40-paper candidate, "Sparse autoencoders and space", of speculative decoding, time series, chemistry, conformal
prediction and unlearning papers (docs/decisions/candidate-topics.md).

A group's *cohesion* is the median, over its papers, of each paper's cosine to the mean of the other papers
(pipeline.geometry.centroids.leave_one_out_similarities: a paper is not compared with a centroid it is part of,
which would flatter small groups). The floor is the lowest cohesion of the atlas's topics over the papers its build
fitted, in the same space: the loosest group the build kept as a topic. On that add the four groups that were
subjects (cooking, "GRPO and reasoning", "AI research" of agent benchmarks) had 0.63-0.70 and the atlas's topics
0.53-0.68; the grab bag had 0.46.
"""

from __future__ import annotations

import numpy as np

from pipeline.geometry.centroids import leave_one_out_similarities
from pipeline.schema import OUTLIER_TOPIC as OUTLIER


def cohesion(vectors: np.ndarray, rows: np.ndarray) -> float:
    """The median leave-one-out cosine of the papers ``rows`` of ``vectors`` (N x dim, unit rows); nan for fewer
    than two papers."""
    if len(rows) < 2:
        return float("nan")
    return float(np.median(leave_one_out_similarities(vectors, np.asarray(rows, dtype=np.int64))))


def cohesion_floor(vectors: np.ndarray, topics: np.ndarray, fitted: np.ndarray | None = None) -> float:
    """The lowest :func:`cohesion` of a topic of ``topics`` (int, n; -1 outlier) over its papers among ``fitted``
    (bool, n: the papers the build fitted; None: all) in ``vectors`` (n x dim); -inf when no topic has two papers."""
    labels = np.asarray(topics, dtype=np.int64)
    counted = np.ones(len(labels), dtype=bool) if fitted is None else np.asarray(fitted, dtype=bool)
    values = [
        cohesion(vectors, rows)
        for topic in sorted(set(labels[counted].tolist()) - {OUTLIER})
        if len(rows := np.flatnonzero((labels == topic) & counted)) >= 2
    ]
    return min(values) if values else float("-inf")


def loose_groups(vectors: np.ndarray, labels: np.ndarray, floor: float) -> dict[int, float]:
    """{group: its cohesion} of the groups of ``labels`` (int, m; -1 none) over ``vectors`` (m x dim) whose
    cohesion is below ``floor``."""
    found = {}
    for group in sorted(set(np.asarray(labels).tolist()) - {OUTLIER}):
        value = cohesion(vectors, np.flatnonzero(labels == group))
        if value < floor:
            found[int(group)] = round(value, 4)
    return found


def without_groups(labels: np.ndarray, dropped: set[int] | dict[int, float]) -> np.ndarray:
    """``labels`` (int, m; groups 0..k-1 by decreasing size, -1 none) with the groups ``dropped`` set to -1 and the
    rest numbered 0.. again in their order."""
    kept = [group for group in sorted(set(np.asarray(labels).tolist()) - {OUTLIER}) if group not in dropped]
    renumber = {group: rank for rank, group in enumerate(kept)}
    return np.array([renumber.get(int(group), OUTLIER) for group in labels], dtype=np.int64)
