"""Fingerprints of what a stage reads: embedding matrices and corpus texts."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

import numpy as np


def fingerprint(embeddings: np.ndarray) -> str:
    """SHA-256 hex of an embedding matrix's shape, dtype and bytes (about 0.2 s for 50,000 x 384 float32)."""
    matrix = np.ascontiguousarray(embeddings)
    digest = hashlib.sha256(f"{matrix.shape}|{matrix.dtype}|".encode())
    digest.update(memoryview(matrix).cast("B"))
    return digest.hexdigest()


def texts_fingerprint(texts: Iterable[str], header: str = "") -> str:
    """SHA-256 hex of ``header`` then every text in order, each ended by a NUL byte: the key of what a layout store
    keeps for a corpus's texts (its tokens, its lexical fit)."""
    digest = hashlib.sha256(header.encode("utf-8"))
    for text in texts:
        digest.update(text.encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()


