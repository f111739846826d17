"""Metrics of neighbourhoods, each a function on plain arrays: how faithful a 2D map is to the embedding space it was
drawn from, and how well the neighbours in either predict a categorical reference column.

- ``trustworthiness``: Venna & Kaski (2001) trustworthiness of the 2D map at k=10, as
  ``sklearn.manifold.trustworthiness(embeddings, map, n_neighbors=10, metric="cosine")`` computes it (cosine in the
  embedding space, Euclidean on the map), evaluated in row blocks so that memory stays O(block x n). Range
  [0, 1]; it penalises map neighbours that are far apart in the embedding space.
- ``knn_recall``: mean over documents of |N_k(embedding) ∩ N_k(map)| / k with k=10, the cosine neighbours in
  the embedding space against the Euclidean neighbours on the map (the "neighbourhood preservation" or kNN
  recall of Lee & Verleysen 2009; Kobak & Berens 2019). 1 means the map keeps every neighbourhood.
- ``knn_accuracy``: the accuracy of a k=10 nearest-neighbour classifier of a reference column under 10-fold
  stratified cross-validation, on the embeddings (cosine) or on the map (Euclidean).

pipeline.quality.map_metrics computes them as the build and ``topic-atlas evaluate`` report them.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np

from pipeline.quality.fold_knn import FoldVotes, fold_knn_accuracy
from pipeline.represent.unit_rows import normalise_rows
from pipeline.runtime.tasks import run_tasks

NEIGHBOURS = 10
CV_FOLDS = 10
# scikit-learn's StratifiedKFold warns when a class has fewer members than folds; the kNN accuracies keep such classes.
LEAST_POPULATED_CLASS = ".*least populated class.*"


def map_neighbours(coordinates: np.ndarray, k: int) -> np.ndarray:
    """Indices (int64, n x k) of each point's k nearest other points on the map (Euclidean)."""
    from sklearn.neighbors import NearestNeighbors

    return (
        NearestNeighbors(n_neighbors=k).fit(np.asarray(coordinates, dtype=np.float64)).kneighbors(return_distance=False)
    )


def embedding_neighbours(embeddings: np.ndarray, k: int) -> np.ndarray:
    """Indices (int64, n x k) of each row's k most cosine-similar other rows (exact, via
    pipeline.geometry.neighbors)."""
    from pipeline.geometry.neighbors import cosine_knn

    indices, _ = cosine_knn(normalise_rows(embeddings), k + 1)
    return drop_self(indices, k)


def drop_self(indices: np.ndarray, k: int) -> np.ndarray:
    """From neighbour lists that include each row itself (n x m, m > k), the first k other rows (n x k).

    The row usually comes first, but among exact duplicates it may sit anywhere, so it is removed by value.
    """
    indices = np.asarray(indices, dtype=np.int64)
    others = indices != np.arange(len(indices))[:, None]
    # Stable sort puts the kept entries first, in their original order.
    order = np.argsort(~others, axis=1, kind="stable")
    return np.take_along_axis(indices, order, axis=1)[:, :k]


def trustworthiness(
    embeddings: np.ndarray,
    coordinates: np.ndarray,
    k: int = NEIGHBOURS,
    map_knn: np.ndarray | None = None,
    block_rows: int = 512,
    rows: np.ndarray | None = None,
) -> float:
    """Trustworthiness of a low-dimensional map (Venna & Kaski 2001), cosine in the embedding space.

    T(k) = 1 - 2 / (n k (2n - 3k - 1)) * sum_i sum_{j in U_k(i)} (r(i, j) - k), where U_k(i) are the map's k
    nearest neighbours of i (Euclidean) that are not among its k nearest in the embedding space, and r(i, j) is
    the rank of j among i's embedding-space neighbours by cosine distance. Same value as
    ``sklearn.manifold.trustworthiness(embeddings, coordinates, n_neighbors=k, metric="cosine")``, computed in
    blocks of ``block_rows`` rows instead of three n x n arrays (3.3 GB at n = 11,672).

    Parameters
    ----------
    embeddings : float, n x dim.
    coordinates : float, n x 2 (any dimension).
    map_knn : the map's k nearest neighbours (n x k, from :func:`map_neighbours`), if already computed.
    rows : evaluate only these points (int array), each ranked against all n: an unbiased estimate of the same
        figure for large corpora (see pipeline.quality.map_metrics.TRUSTWORTHINESS_SAMPLE); None = every point.

    Returns a float in [0, 1]. Raises ValueError when k >= n / 2 (as scikit-learn does).
    """
    n = len(embeddings)
    if k >= n / 2:
        raise ValueError(f"k ({k}) must be less than n / 2 ({n / 2})")
    low = map_knn if map_knn is not None else map_neighbours(coordinates, k)
    return penalties_trustworthiness(trustworthiness_penalties(embeddings, low, rows, block_rows), n, k)


def penalties_trustworthiness(penalties: np.ndarray, n: int, k: int) -> float:
    """T(k) of :func:`trustworthiness` from the penalties of the evaluated rows (:func:`trustworthiness_penalties`)
    of an n-point map: 1 - 2 / (m k (2n - 3k - 1)) * sum(penalties), m the evaluated rows (m = n: Venna & Kaski's
    normalisation)."""
    return 1.0 - int(penalties.sum()) * 2.0 / (len(penalties) * k * (2.0 * n - 3.0 * k - 1.0))


def trustworthiness_penalties(
    embeddings: np.ndarray, map_knn: np.ndarray, rows: np.ndarray | None = None, block_rows: int = 512
) -> np.ndarray:
    """Per evaluated point i (``rows``, or every point), sum_{j in U_k(i)} (r(i, j) - k) of :func:`trustworthiness`,
    k being ``map_knn``'s width (the map's k nearest neighbours, n x k, from :func:`map_neighbours`): int64, one per
    row, 0 where the map's k neighbours are the embedding's. Their spread gives a sampled figure's standard error
    (bench/trust_sample.py)."""
    blocks = PenaltyBlocks(embeddings, map_knn, rows, block_rows)
    run_tasks(blocks.tasks(), 1)
    return blocks.penalties


class PenaltyBlocks:
    """The row blocks of :func:`trustworthiness_penalties` as separate tasks (:meth:`tasks`), so that several threads
    can share one trustworthiness (pipeline.runtime.tasks.run_tasks): each block is one ``block_rows x n`` matrix
    product (numpy releases the GIL in it) and writes only its own rows of ``penalties``, so the counts do not depend
    on which thread ran which block. ``votes`` (pipeline.quality.fold_knn.FoldVotes over the same n rows, every row
    evaluated) predict their columns from the same cosine distances, so the embedding-space kNN accuracies cost no
    second matrix product. Raises ValueError for ``votes`` with ``rows``.

    Attributes
    ----------
    penalties : int64, one per evaluated row; complete once every task has run.
    """

    def __init__(
        self,
        embeddings: np.ndarray,
        map_knn: np.ndarray,
        rows: np.ndarray | None = None,
        block_rows: int = 512,
        votes: FoldVotes | None = None,
    ) -> None:
        if votes is not None and rows is not None:
            raise ValueError("votes share the blocks only when every row is evaluated (rows=None)")
        self.unit = normalise_rows(embeddings)
        self.map_knn = map_knn
        self.votes = votes
        self.evaluated = np.arange(len(embeddings)) if rows is None else np.asarray(rows, dtype=np.int64)
        self.penalties = np.zeros(len(self.evaluated), dtype=np.int64)
        self._block_rows = block_rows

    def tasks(self) -> list[Callable[[], None]]:
        """One task per block of rows, in row order; each fills that block's ``penalties``."""
        return [
            partial(self._count, slice(start, start + self._block_rows))
            for start in range(0, len(self.evaluated), self._block_rows)
        ]

    def _count(self, part: slice) -> None:
        block, k = self.evaluated[part], self.map_knn.shape[1]
        distances = 1.0 - self.unit[block] @ self.unit.T
        distances[np.arange(len(block)), block] = np.inf  # a point is not its own neighbour
        if self.votes is not None:
            self.votes.record_distances(block, distances)
        chosen = np.take_along_axis(distances, self.map_knn[block], axis=1)
        # rank of j = 1 + how many points are strictly closer to i than j is; one map neighbour at a time, not as
        # one block x k x n comparison array (256 MB per block at n = 49,805)
        ranks = np.empty(chosen.shape, dtype=np.int64)
        for column in range(chosen.shape[1]):
            ranks[:, column] = 1 + np.count_nonzero(distances < chosen[:, column : column + 1], axis=1)
        self.penalties[part] = np.clip(ranks - k, 0, None).sum(axis=1)


def knn_recall(
    embeddings: np.ndarray,
    coordinates: np.ndarray,
    k: int = NEIGHBOURS,
    embedding_knn: np.ndarray | None = None,
    map_knn: np.ndarray | None = None,
) -> float:
    """Mean share of each document's k cosine neighbours in the embedding space that are also among its k
    Euclidean neighbours on the map (neighbourhood preservation; Lee & Verleysen 2009).

    Parameters
    ----------
    embeddings : float, n x dim.
    coordinates : float, n x 2.
    embedding_knn, map_knn : the two n x k neighbour lists (self excluded), if already computed.

    Returns a float in [0, 1] (1 = every neighbourhood kept). Raises ValueError when k >= n.
    """
    n = len(embeddings)
    if k >= n:
        raise ValueError(f"k ({k}) must be less than the number of documents ({n})")
    high = embedding_knn if embedding_knn is not None else embedding_neighbours(embeddings, k)
    low = map_knn if map_knn is not None else map_neighbours(coordinates, k)
    shared = (high[:, :k, None] == low[:, None, :k]).any(axis=2).sum(axis=1)
    return float(shared.mean() / k)


def knn_accuracy(
    features: np.ndarray,
    reference: Sequence[Any],
    metric: str,
    k: int = NEIGHBOURS,
    folds: int = CV_FOLDS,
    seed: int = 0,
) -> float:
    """Accuracy of a k-nearest-neighbour classifier of ``reference`` from ``features``, by stratified k-fold CV: the
    figure of scikit-learn's ``cross_val_score(KNeighborsClassifier(k), ..., cv=StratifiedKFold(folds, shuffle=True,
    random_state=seed))``, computed from one ranking of the rows (pipeline.quality.fold_knn).

    Parameters
    ----------
    features : float, n x d (embeddings with ``metric="cosine"``, map coordinates with ``"euclidean"``).
    reference : n categorical values; missing ones are left out.
    k, folds, seed : neighbours, folds of ``StratifiedKFold(shuffle=True, random_state=seed)``.

    Returns the mean fold accuracy, or NaN when there are fewer than ``folds`` usable documents or only one class.
    Classes rarer than ``folds`` are kept (scikit-learn warns; the warning is silenced). Raises ValueError for a
    metric other than "cosine" or "euclidean".
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=LEAST_POPULATED_CLASS)
        return fold_knn_accuracy(features, reference, metric, k, folds, seed)
