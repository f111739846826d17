"""The cross-validated kNN accuracy of reference columns (pipeline.quality.neighbour_metrics.knn_accuracy), computed
from each row's ranked neighbours instead of one classifier fit per fold and column.

The figure is scikit-learn's: ``cross_val_score(KNeighborsClassifier(n_neighbors=k), features, labels,
cv=StratifiedKFold(folds, shuffle=True, random_state=seed))`` averaged over the folds, whose folds this module takes
from ``StratifiedKFold`` itself. A row of test fold f is predicted by the majority label of its k nearest rows outside
fold f (uniform weights; a tie goes to the first label in sorted order, as scikit-learn's mode does). Those k rows are
the first k of the row's nearest candidates (one ranking of every row, shared by every column and fold) whose fold
differs; a row whose candidates hold too few (never seen with 10 folds and 4k candidates, but possible) is ranked
again over the rows it may use. So one pass over the rows serves every column, and in the embedding space the same
distance blocks also serve trustworthiness (pipeline.quality.map_metrics): on the 11,660 papers of ICLR 2025 the two
embedding-space accuracies were 8.8 CPU s through scikit-learn (0.9 n^2 d each) and are a share of the one pass now.

The figures equal scikit-learn's except where two neighbours are equally far at the k-th place, which the two
rankings may break differently.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

# Candidates ranked per row, as a multiple of k: with 10 folds a tenth of them share the row's fold.
CANDIDATE_FACTOR = 4


@dataclass(frozen=True)
class FoldLabels:
    """One reference column prepared for cross-validation over n rows.

    codes : int64, n; the label's index among the sorted distinct labels, -1 where the value is missing.
    folds : int64, n; the row's test fold (``StratifiedKFold``'s split order), -1 where the value is missing.
    n_classes : the number of distinct labels.
    """

    codes: np.ndarray
    folds: np.ndarray
    n_classes: int


def fold_labels(reference: Sequence[Any], folds: int, seed: int, k: int) -> FoldLabels | None:
    """``reference`` (n values; None/NaN missing) as :class:`FoldLabels` under ``StratifiedKFold(folds, shuffle=True,
    random_state=seed)`` of its present values (compared as ``str``), or None when the figure cannot be computed: fewer
    than ``max(folds, k + 1)`` present values or fewer than two distinct ones. Classes rarer than ``folds`` are kept
    (scikit-learn warns; the caller silences it)."""
    from sklearn.model_selection import StratifiedKFold

    labels = pd.Series(list(reference), dtype=object)
    usable = labels.notna().to_numpy()
    truth = labels[usable].astype(str).to_numpy()
    if len(truth) < max(folds, k + 1) or len(set(truth)) < 2:
        return None
    classes, present_codes = np.unique(truth, return_inverse=True)
    present_folds = np.empty(len(truth), dtype=np.int64)
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    for fold, (_, test) in enumerate(splitter.split(np.zeros((len(truth), 1)), truth)):
        present_folds[test] = fold
    codes = np.full(len(labels), -1, dtype=np.int64)
    codes[usable] = present_codes
    row_folds = np.full(len(labels), -1, dtype=np.int64)
    row_folds[usable] = present_folds
    return FoldLabels(codes, row_folds, len(classes))


class FoldVotes:
    """The predictions of several reference columns over the same n rows, filled block by block
    (:meth:`record_distances` or :meth:`record_candidates`); each call writes only its own rows, so threads may fill
    disjoint blocks at once.

    Attributes
    ----------
    columns : the :class:`FoldLabels` of each column.
    k : neighbours that vote.
    """

    def __init__(self, columns: Sequence[FoldLabels], k: int) -> None:
        self.columns = list(columns)
        self.k = k
        n = len(self.columns[0].codes) if self.columns else 0
        self._correct = [np.zeros(n, dtype=bool) for _ in self.columns]

    @property
    def candidates(self) -> int:
        """How many nearest rows :meth:`record_distances` ranks per row before it filters them by fold."""
        return CANDIDATE_FACTOR * self.k

    def record_distances(self, rows: np.ndarray, distances: np.ndarray) -> None:
        """Predict ``rows`` (int, r) from their distances to every row (float, r x n, smaller is nearer; a row's own
        entry should be ``inf``; not modified)."""
        m = min(self.candidates, distances.shape[1])
        nearest = np.argpartition(distances, m - 1, axis=1)[:, :m]
        order = np.argsort(np.take_along_axis(distances, nearest, axis=1), axis=1, kind="stable")
        self.record_candidates(rows, np.take_along_axis(nearest, order, axis=1), lambda chosen: distances[chosen])

    def record_candidates(
        self, rows: np.ndarray, candidates: np.ndarray, distances_of: Callable[[np.ndarray], np.ndarray]
    ) -> None:
        """Predict ``rows`` (int, r) from their nearest rows (int, r x m, nearest first; a row itself may be among
        them). ``distances_of(positions)`` gives the full distances (r' x n) of the rows at those positions of
        ``rows``, for a row whose candidates hold fewer than k usable ones."""
        rows = np.asarray(rows, dtype=np.int64)
        for column, correct in zip(self.columns, self._correct):
            own = column.folds[rows]
            usable = (column.folds[candidates] != own[:, None]) & (column.folds[candidates] >= 0)
            usable &= candidates != rows[:, None]
            neighbours = first_usable(candidates, usable, self.k)
            short = np.flatnonzero((usable.sum(axis=1) < self.k) & (own >= 0))
            if len(short):
                neighbours[short] = self._nearest_usable(rows[short], distances_of(short), column)
            predicted = majority(column.codes[neighbours], column.n_classes)
            correct[rows] = (predicted == column.codes[rows]) & (own >= 0)

    def _nearest_usable(self, rows: np.ndarray, distances: np.ndarray, column: FoldLabels) -> np.ndarray:
        """The k nearest rows outside each row's fold (int, r x k), ranked over every row's full distances."""
        masked = np.array(distances, dtype=np.float64, copy=True)
        barred = (column.folds[None, :] == column.folds[rows][:, None]) | (column.folds[None, :] < 0)
        masked[barred] = np.inf
        masked[np.arange(len(rows)), rows] = np.inf
        return np.argpartition(masked, self.k - 1, axis=1)[:, : self.k]

    def accuracies(self) -> list[float]:
        """Each column's accuracy: the mean over folds of the share of the fold's rows predicted right."""
        figures = []
        for column, correct in zip(self.columns, self._correct):
            present = column.folds >= 0
            per_fold = pd.Series(correct[present]).groupby(column.folds[present]).mean()
            figures.append(float(per_fold.mean()))
        return figures


def first_usable(candidates: np.ndarray, usable: np.ndarray, k: int) -> np.ndarray:
    """The first k candidates (int, r x k) of each row that are ``usable`` (bool, r x m), in the candidates' order;
    a row with fewer gets unusable ones after them (the caller replaces those rows)."""
    order = np.argsort(~usable, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(candidates, order, axis=1)


def majority(codes: np.ndarray, n_classes: int) -> np.ndarray:
    """The most frequent code of each row of ``codes`` (int, r x k, each in [0, n_classes)), the lowest on a tie."""
    r = len(codes)
    counts = np.zeros((r, n_classes), dtype=np.int64)
    np.add.at(counts, (np.repeat(np.arange(r), codes.shape[1]), codes.ravel()), 1)
    return counts.argmax(axis=1)


def fold_knn_accuracy(
    features: np.ndarray, reference: Sequence[Any], metric: str, k: int, folds: int, seed: int
) -> float:
    """The cross-validated kNN accuracy of one column (see the module docstring): ``features`` float n x d, ranked by
    cosine distance (``metric="cosine"``) or Euclidean (``"euclidean"``; a KD-tree up to 3 dimensions). NaN when
    :func:`fold_labels` gives None. Raises ValueError for another metric."""
    if metric not in ("cosine", "euclidean"):
        raise ValueError(f"metric must be 'cosine' or 'euclidean', not {metric!r}")
    column = fold_labels(reference, folds, seed, k)
    if column is None:
        return float("nan")
    votes = FoldVotes([column], k)
    record_all_rows(votes, np.asarray(features), metric)
    return votes.accuracies()[0]


def record_all_rows(votes: FoldVotes, features: np.ndarray, metric: str, block_rows: int = 512) -> None:
    """Fill ``votes`` for every row of ``features`` (n x d): low-dimensional Euclidean rows through a KD-tree's
    candidates, others in blocks of ``block_rows`` rows of exact distances."""
    n = len(features)
    if metric == "euclidean" and features.shape[1] <= 3:
        record_low_dimensional(votes, features, np.arange(n))
        return
    for task in distance_block_tasks(votes, features, metric, block_rows):
        task()


def distance_block_tasks(
    votes: FoldVotes, features: np.ndarray, metric: str, block_rows: int = 512
) -> list[Callable[[], None]]:
    """Tasks that fill ``votes`` over the rows of ``features`` (n x d), one block of ``block_rows`` rows of exact
    distances each (:func:`block_distances`); each writes only its own rows, so threads may share them
    (pipeline.runtime.tasks.run_tasks)."""
    space = features_space(features, metric)

    def record(rows: np.ndarray) -> None:
        votes.record_distances(rows, block_distances(space, rows, metric))

    n = len(space)
    return [partial(record, np.arange(start, min(start + block_rows, n))) for start in range(0, n, block_rows)]


def record_low_dimensional(votes: FoldVotes, points: np.ndarray, rows: np.ndarray) -> None:
    """Fill ``votes`` for ``rows`` of ``points`` (n x 2 or 3, Euclidean) from a KD-tree's nearest candidates."""
    from scipy.spatial import cKDTree

    points = np.asarray(points, dtype=np.float64)
    m = min(votes.candidates + 1, len(points))
    _, candidates = cKDTree(points).query(points[rows], k=m)
    candidates = np.asarray(candidates, dtype=np.int64).reshape(len(rows), m)

    def distances_of(positions: np.ndarray) -> np.ndarray:
        return np.linalg.norm(points[rows[positions]][:, None, :] - points[None, :, :], axis=2)

    votes.record_candidates(rows, candidates, distances_of)


def features_space(features: np.ndarray, metric: str) -> np.ndarray:
    """float32 rows to rank in: unit rows for cosine, the rows themselves for Euclidean."""
    from pipeline.represent.unit_rows import normalise_rows

    return normalise_rows(features) if metric == "cosine" else np.asarray(features, dtype=np.float32)


def block_distances(space: np.ndarray, rows: np.ndarray, metric: str) -> np.ndarray:
    """Distances (float32, r x n) of ``rows`` to every row of ``space`` (from :func:`features_space`), a row's own
    entry ``inf``: 1 - cosine, or squared Euclidean (same ranking as Euclidean)."""
    if metric == "cosine":
        distances = 1.0 - space[rows] @ space.T
    else:
        squared = np.einsum("ij,ij->i", space, space)
        distances = squared[rows][:, None] - 2.0 * (space[rows] @ space.T) + squared[None, :]
    distances[np.arange(len(rows)), rows] = np.inf
    return distances
