"""The representation stage over row partitions: each partition's texts transformed with the build's fitted
representation (pipeline.represent.representation.Representation: by default the ``tfidf-svd`` block, TF-IDF with the
fitted vocabulary and IDF, then the stored SVD components).

The fitted representation is sent to every worker once (``client.scatter(..., broadcast=True)``: 512 components x
the vocabulary's terms in float16, 16 MB for 15,700 terms) and each task transforms its partition's texts; a text's
vector depends on that text and the fitted model alone, so the rows equal ``representation.transform(texts)``
(the same sparse rows times the same components). An encoder block is loaded by each worker on its first task
(it must be installed there; pipeline.represent.encoder_backends).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from pipeline.partitions.cluster import DEFAULT_PARTITION_ROWS, partition_bounds, send

if TYPE_CHECKING:
    from pipeline.represent.representation import Representation


def transform_partition(representation: Representation, texts: list[str]) -> np.ndarray:
    """One task: float32, len(texts) x representation.dims, unit rows (zeros for a text without a known word)."""
    return representation.transform(list(texts))


def transform_partitioned(
    client: Any, representation: Representation, texts: list[str], partition_rows: int = DEFAULT_PARTITION_ROWS
) -> np.ndarray:
    """``representation.transform(texts)`` as one Dask task per ``partition_rows`` texts on ``client``'s workers.

    ``texts``: model texts (pipeline.ingest.clean.model_text) in the build's order. Returns float32, len(texts) x
    dims, in that order (an empty list gives 0 x dims). Raises what a task raised (distributed re-raises it here),
    e.g. ValueError for a lexical block without a fitted model."""
    bounds = partition_bounds(len(texts), partition_rows)
    if not bounds:
        return np.zeros((0, representation.dims), dtype=np.float32)
    model = send(client, representation, broadcast=True)
    parts = send(client, [texts[start:stop] for start, stop in bounds])
    futures = client.map(transform_partition, [model] * len(parts), parts, pure=False)
    return np.concatenate(client.gather(futures)).astype(np.float32, copy=False)
