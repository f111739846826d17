"""Placing and voting the documents outside the sample over row partitions: each partition's documents get their
map position and cluster from their nearest landmarks (pipeline.geometry.landmarks.place_rest and vote_rest, run
on the partition's rows alone).

Both rules are row-local: a document's position is the weighted mean of its landmarks' positions and its cluster
their weighted vote, so a partition needs only its rows' landmark indices and weights plus the landmarks' map
(size x d float32) or labels and strengths (size int64 and float32), which are sent to every worker once
(``client.scatter(..., broadcast=True)``: 0.4 MB for 50,000 landmarks in 2D). Each task runs the lead's own
functions on a :class:`~pipeline.geometry.landmarks.Landmarks` holding only its rows, so the results equal the
single-process ones row for row.

The rows' landmarks come either from a search still on the cluster (the futures of
pipeline.partitions.search.search_rest_partitioned: nothing travels back to the driver in between) or from a
:class:`Landmarks` on the driver (its rows sent partition by partition).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pipeline.geometry.landmarks import Landmarks, place_rest, vote_rest
from pipeline.geometry.neighbors import Neighbours
from pipeline.partitions.cluster import DEFAULT_PARTITION_ROWS, partition_bounds, send
from pipeline.partitions.search import RestSearch


def hanging(part: RestSearch, size: int) -> Landmarks:
    """A Landmarks of ``size`` landmarks whose other documents are exactly ``part``'s rows (its own neighbour lists
    empty: placing and voting never read them)."""
    own = Neighbours(np.zeros((0, 1), np.int64), np.zeros((0, 1), np.float32), None)  # type: ignore[arg-type]
    return Landmarks(size, own, part.indices, part.weights)


def place_partition(part: RestSearch, layout: np.ndarray) -> np.ndarray:
    """One task: float32, m x d, the positions of ``part``'s m rows from the landmarks' ``layout`` (size x d)."""
    return place_rest(hanging(part, len(layout)), layout)[len(layout) :]


def vote_partition(part: RestSearch, labels: np.ndarray, strengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One task: (int64 m, float32 m), the clusters and membership strengths of ``part``'s m rows from the
    landmarks' ``labels`` (int64 size, -1 an outlier) and ``strengths`` (float32 size)."""
    every_label, every_strength = vote_rest(hanging(part, len(labels)), labels, strengths)
    return every_label[len(labels) :], every_strength[len(labels) :]


def rest_parts(client: Any, rest: Landmarks | list[Any], partition_rows: int) -> list[Any]:
    """The partitions' rows as futures of RestSearch: ``rest`` as they are when already futures, else a Landmarks'
    rest rows cut into partitions of ``partition_rows`` and scattered (zero-width similarities: not needed)."""
    if not isinstance(rest, Landmarks):
        return list(rest)
    bounds = partition_bounds(len(rest.rest_indices), partition_rows)
    no_similarities = np.zeros((0, 0), np.float32)
    return send(
        client, [RestSearch(rest.rest_indices[a:b], no_similarities, rest.rest_weights[a:b]) for a, b in bounds]
    )


def place_rest_partitioned(
    client: Any, rest: Landmarks | list[Any], layout: np.ndarray, partition_rows: int = DEFAULT_PARTITION_ROWS
) -> np.ndarray:
    """pipeline.geometry.landmarks.place_rest as Dask tasks: the landmarks' ``layout`` (float32, size x d) followed
    by every other document's position, float32 n x d in the canonical order. ``rest``: a Landmarks, or the futures
    of search_rest_partitioned (their partitions, in order)."""
    layout = np.asarray(layout, dtype=np.float32)
    parts = rest_parts(client, rest, partition_rows)
    shared = send(client, layout, broadcast=True)
    placed = client.gather(client.map(place_partition, parts, [shared] * len(parts), pure=False))
    return np.concatenate([layout, *[part.astype(np.float32, copy=False) for part in placed]])


def vote_rest_partitioned(
    client: Any,
    rest: Landmarks | list[Any],
    labels: np.ndarray,
    strengths: np.ndarray,
    partition_rows: int = DEFAULT_PARTITION_ROWS,
) -> tuple[np.ndarray, np.ndarray]:
    """pipeline.geometry.landmarks.vote_rest as Dask tasks: (int64 n, float32 n), the landmarks' own ``labels`` and
    ``strengths`` followed by every other document's vote, in the canonical order."""
    labels, strengths = np.asarray(labels, dtype=np.int64), np.asarray(strengths, dtype=np.float32)
    parts = rest_parts(client, rest, partition_rows)
    shared_labels = send(client, labels, broadcast=True)
    shared_strengths = send(client, strengths, broadcast=True)
    voted = client.gather(
        client.map(vote_partition, parts, [shared_labels] * len(parts), [shared_strengths] * len(parts), pure=False)
    )
    return (
        np.concatenate([labels, *[part[0].astype(np.int64, copy=False) for part in voted]]),
        np.concatenate([strengths, *[part[1].astype(np.float32, copy=False) for part in voted]]),
    )
