"""Unit rows: the one rule that scales embedding vectors to unit L2 length, shared by the encoders, the embedding
cache, the representations and the metrics (so that a dot product is a cosine similarity)."""

from __future__ import annotations

import numpy as np


def normalise_rows(matrix: np.ndarray) -> np.ndarray:
    """Scale each row to unit L2 norm (rows of zeros stay zero). Returns float32."""
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1, norms)
