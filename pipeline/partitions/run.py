"""The partitioned path of a large build's per-document work, as the build would call it: the landmarks and their
hanging documents found on a Dask cluster (:func:`partitioned_landmarks`, the same Landmarks as
pipeline.geometry.landmarks.cached_landmarks computes), then the other documents placed and voted there
(:func:`place_rest_partitioned`, :func:`vote_rest_partitioned`, the same arrays as place_rest and vote_rest).

What stays on the driver (one process, whatever the cluster): the landmarks' graph and their own neighbour lists,
UMAP and HDBSCAN on the landmarks (a fixed-size sample), the c-TF-IDF over topics. docs/scale.md has the plan and the
measured figures per partition.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from pipeline.geometry.landmarks import Landmarks
from pipeline.geometry.neighbors import Neighbours
from pipeline.partitions.cluster import DEFAULT_PARTITION_ROWS
from pipeline.partitions.place import place_rest_partitioned, vote_rest_partitioned
from pipeline.partitions.search import gather_rest, search_rest_partitioned

__all__ = [
    "PartitionedLandmarks",
    "partitioned_landmarks",
    "place_rest_partitioned",
    "search_landmarks_partitioned",
    "vote_rest_partitioned",
]


class PartitionedLandmarks(NamedTuple):
    """``landmarks``: as pipeline.geometry.landmarks.cached_landmarks gives them (its ``rest_*`` rows gathered on the
    driver); ``parts``: the same rows' searches still on the cluster, one future per partition in order, which
    place_rest_partitioned and vote_rest_partitioned take instead of ``landmarks`` so nothing is sent again."""

    landmarks: Landmarks
    parts: list[Any]


def partitioned_landmarks(
    client: Any,
    embeddings: np.ndarray,
    size: int,
    k: int,
    key: Any = None,
    partition_rows: int = DEFAULT_PARTITION_ROWS,
    rows_path: str | None = None,
) -> PartitionedLandmarks:
    """The landmarks of ``embeddings`` (float32, n x dim, unit rows, canonical order; the first ``size`` < n rows)
    with each other row's ``k`` nearest landmarks and weights, the other rows searched as Dask tasks on ``client``
    (pipeline.partitions.search). ``key``: the StageKey to give the landmarks' own Neighbours (the build's
    pipeline.geometry.landmarks.landmark_key). ``rows_path``: an ``.npy`` file of ``embeddings`` the workers can
    read (search_rest_partitioned). Raises ValueError when size is not in 1..n-1."""
    serialised, indices, similarities, futures, _ = search_rest_partitioned(
        client, embeddings, size, k, partition_rows, rows_path
    )
    rest = gather_rest(client, futures, serialised.k)
    own = Neighbours(indices, similarities, key)
    return PartitionedLandmarks(Landmarks(size, own, rest.indices, rest.weights), futures)


def search_landmarks_partitioned(
    client: Any, embeddings: np.ndarray, size: int, k: int, partition_rows: int = DEFAULT_PARTITION_ROWS
) -> dict[str, np.ndarray]:
    """pipeline.geometry.landmarks.search_landmarks with the other rows searched as Dask tasks on ``client``: the same
    dict, {"indices", "similarities"} of the landmarks (size x k, the row itself first) and {"rest_indices",
    "rest_similarities"} ((n - size) x k), equal array for array; so a build can keep it in its layout store under
    the same key (``store.cached(landmark_key(...), lambda: search_landmarks_partitioned(client, ...))``). Raises
    ValueError when size is not in 1..n-1."""
    serialised, indices, similarities, futures, _ = search_rest_partitioned(client, embeddings, size, k, partition_rows)
    rest = gather_rest(client, futures, serialised.k)
    return {
        "indices": indices,
        "similarities": similarities,
        "rest_indices": rest.indices,
        "rest_similarities": rest.similarities,
    }
