"""The per-document embedding cache of the encoders: one SQLite file, and :func:`embed_texts`, which embeds only the
texts it has not seen with that encoder.

The cache is one SQLite file (``.cache/embeddings.sqlite``; env ``ATLAS_EMBEDDING_CACHE``): key = SHA-256 of (encoder
identity, text), value = the float32 vector and the text's length in word pieces. The identity
(pipeline.represent.encoder_registry.model_id) names the encoder and the versions it was made with, so caches of
different encoders never mix. A rebuild embeds only texts it has not seen with that encoder.

The build's default representation is lexical (``tfidf-svd``, pipeline.represent.representation); the encoders
(pipeline.represent.encoder_backends) are the alternatives it was measured against and the blocks a combined
representation may hold (bench/representations.py).
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.represent.encoder_backends import get_encoder
from pipeline.represent.encoder_registry import DEFAULT_MODEL, encoder_spec, model_id
from pipeline.represent.unit_rows import normalise_rows
from pipeline.runtime.settings import settings as runtime_settings

log = logging.getLogger(__name__)

# The default ``store_path`` of embed_texts and ``embedding_store`` of run_build: "the configured embedding cache",
# found when the function runs (resolve_store; $ATLAS_EMBEDDING_CACHE, else .cache/embeddings.sqlite), so that
# nothing reads the environment at import time.
DEFAULT_STORE = Path("$ATLAS_EMBEDDING_CACHE")


def default_store() -> Path:
    """The configured SQLite embedding cache: $ATLAS_EMBEDDING_CACHE, else .cache/embeddings.sqlite of the project
    root (pipeline.runtime.settings)."""
    return runtime_settings().embedding_cache


def resolve_store(store_path: Path | str | None) -> Path | None:
    """The embedding cache ``store_path`` names: None (no cache) as None, :data:`DEFAULT_STORE` as
    :func:`default_store`, any other path as itself."""
    if store_path is None:
        return None
    return default_store() if Path(store_path) == DEFAULT_STORE else Path(store_path)


class EmbeddingStore:
    """Per-document embedding cache in one SQLite file (safe for several processes; no pickle)."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._connection = sqlite3.connect(self.path, timeout=60)
        self._connection.execute(
            "CREATE TABLE IF NOT EXISTS embeddings (key TEXT PRIMARY "
            "KEY, vector BLOB NOT NULL, n_tokens INTEGER NOT NULL)"
        )

    @staticmethod
    def key(model: str, text: str) -> str:
        """SHA-256 hex of the model id and the text."""
        return hashlib.sha256(f"{model}\0{text}".encode()).hexdigest()

    def get_many(self, keys: list[str]) -> dict[str, tuple[np.ndarray, int]]:
        """{key: (float32 vector, n_tokens)} for the keys present."""
        found: dict[str, tuple[np.ndarray, int]] = {}
        for start in range(0, len(keys), 900):  # SQLite's default limit on bound parameters is 999
            chunk = keys[start : start + 900]
            marks = ",".join("?" * len(chunk))
            for key, blob, n_tokens in self._connection.execute(
                f"SELECT key, vector, n_tokens FROM embeddings WHERE key IN ({marks})", chunk
            ):
                found[key] = (np.frombuffer(blob, dtype=np.float32), int(n_tokens))
        return found

    def put_many(self, rows: list[tuple[str, np.ndarray, int]]) -> None:
        """Store (key, vector, n_tokens) rows in one transaction."""
        with self._connection:
            self._connection.executemany(
                "INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?)",
                [
                    (key, np.asarray(vector, dtype=np.float32).tobytes(), int(n_tokens))
                    for key, vector, n_tokens in rows
                ],
            )

    def close(self) -> None:
        """Close the database connection."""
        self._connection.close()


@dataclass
class EmbeddingResult:
    """Embeddings of a list of texts.

    Attributes
    ----------
    embeddings : float32, n_texts x dim, L2-normalised rows.
    n_cached : texts found in the cache.
    n_embedded : texts run through the encoder.
    n_truncated : texts longer than the encoder's window (their tail was not embedded).
    max_seq_length : the encoder's window in word pieces.
    token_counts : per text, its length in word pieces before truncation (empty when not known).
    """

    embeddings: np.ndarray
    n_cached: int
    n_embedded: int
    n_truncated: int
    max_seq_length: int
    token_counts: list[int] = field(default_factory=list)


def embed_texts(
    texts: list[str],
    model_name: str = DEFAULT_MODEL,
    store_path: Path | str | None = DEFAULT_STORE,
    batch_size: int = 1,
    encoder: Any = None,
    progress: bool = True,
) -> EmbeddingResult:
    """Embed texts, reusing cached vectors and caching new ones.

    Parameters
    ----------
    texts : the documents' model texts.
    model_name : encoder name (see ENCODER_NAMES and encoder_spec); default the published transformer.
    store_path : SQLite cache file, or None for no cache (default: the configured one, resolve_store).
    batch_size : texts per forward pass of a transformer encoder; 1 (the default) makes each vector a function of
        its text alone, so a corpus gets the same vectors whatever its cache held before (see model_id).
    encoder : an already loaded encoder for ``model_name`` (see get_encoder; one of another kind is ignored);
        loaded on demand otherwise, and only when some text is new.
    progress : show a tqdm bar while encoding.

    Returns an EmbeddingResult. Raises ModuleNotFoundError when the model package or an encoder's runtime is missing.
    """
    spec = encoder_spec(model_name)
    identity = model_id(spec.name, batch_size)
    resolved = resolve_store(store_path)
    store = EmbeddingStore(resolved) if resolved is not None else None
    keys = [EmbeddingStore.key(identity, text) for text in texts]
    cached = store.get_many(list(dict.fromkeys(keys))) if store else {}
    missing = [i for i, key in enumerate(keys) if key not in cached]
    unique_missing = list(dict.fromkeys(keys[i] for i in missing))
    text_of = {keys[i]: texts[i] for i in missing}
    max_seq_length = spec.max_seq_length
    if unique_missing:
        active = get_encoder(spec.name, encoder)
        max_seq_length = int(active.max_seq_length or max_seq_length)
        new_texts = [text_of[key] for key in unique_missing]
        log.info(
            "embedding %d new texts with %s (%d found in the cache)",
            len(new_texts),
            identity,
            len(texts) - len(missing),
        )
        if hasattr(active, "encode_and_count"):  # tokenises once
            vectors, lengths = active.encode_and_count(new_texts)
        else:
            vectors = active.encode(new_texts, batch_size=batch_size, progress=progress)
            lengths = active.count_tokens(new_texts)
        rows = list(zip(unique_missing, vectors.astype(np.float32), lengths))
        if store:
            store.put_many(rows)
        cached.update({key: (vector, n_tokens) for key, vector, n_tokens in rows})
    elif encoder is not None and spec.name == spec.base and getattr(encoder, "max_seq_length", None):
        max_seq_length = int(encoder.max_seq_length)
    if store:
        store.close()
    embeddings = normalise_rows(np.vstack([cached[key][0] for key in keys])) if keys else np.zeros((0, 384), np.float32)
    n_truncated = sum(1 for key in keys if cached[key][1] > max_seq_length)
    return EmbeddingResult(
        embeddings,
        len(texts) - len(missing),
        len(unique_missing),
        n_truncated,
        max_seq_length,
        [int(cached[key][1]) for key in keys],
    )
