"""Find and place: semantic search over a cache, and new documents placed on an existing map without refitting.

Everything is computed in the embedding space of the encoder the cache was built with (named in the manifest),
because distance on the 2D map misleads: most of a paper's true nearest neighbours are not its neighbours on
the map.

Placement of a new document:

- neighbours: the ``k`` most cosine-similar cached documents;
- topic: a cached document with the same abstract (or, in a titles-only cache, the same title), compared by
  :func:`pipeline.ingest.clean.duplicate_key` as the build compares duplicates, is the same paper, and the new one takes
  its topic and position. Otherwise the topic is the similarity-weighted vote of the ``k`` neighbours' topics
  (outliers do not vote), and ``probability`` is the winning topic's share of the vote;
- fits no topic: when the new document's similarity to the nearest topic centroid is below what 99% of the topics'
  own papers have to their own centroid (:func:`topic_fit`), it is unrelated to the collection: topic -1, ``fits``
  False, and ``topic_similarity`` says how close it came (a clinical abstract placed on ICLR). The nearest
  paper's similarity does not tell: against 300 ICLR 2025 papers (tfidf-svd) a clinical trial's nearest paper
  (0.24) is as close as a real ICLR abstract's (0.24), while on the whole conference its nearest topic centroid
  (0.11) is far below the 0.27 that 99% of the topics' papers reach (tests/test_place.py exercises both);
- 2D position: the similarity-weighted mean of the neighbours' map positions. This is how UMAP's own
  ``transform`` initialises new points (umap-learn, ``UMAP.transform``: weighted average of neighbour
  embeddings). UMAP's optimisation step is not replayed, since a fitted UMAP can only be stored by pickle,
  which the cache never loads.

Nothing in the cache is modified.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from pipeline.cache import OUTLIER_TOPIC, TopicCache, read_cache
from pipeline.geometry.neighbors import top_k

if TYPE_CHECKING:
    from pipeline.represent.encoder_backends import EncoderLike
    from pipeline.represent.representation import Representation

log = logging.getLogger(__name__)

FIT_QUANTILE = 0.01
FITS_NO_TOPIC = "fits no topic"


def topic_fit(
    embeddings: np.ndarray, topics: np.ndarray, new_embeddings: np.ndarray
) -> tuple[np.ndarray, float | None]:
    """(per new document the cosine similarity to its nearest topic centroid, m floats; the threshold: the
    FIT_QUANTILE quantile of the atlas's topic papers' similarity to their own topic's centroid, or None without
    topics). A new document below the threshold is further from every topic than 99% of the topics' own papers are
    from theirs: it fits no topic. ``embeddings`` n x dim and ``new_embeddings`` m x dim have unit rows. The one
    rule, shared with the build's fit check, is pipeline.geometry.centroids.topic_fit."""
    from pipeline.geometry import centroids

    return centroids.topic_fit(embeddings, topics, new_embeddings, FIT_QUANTILE)


def same_paper_index(topic_cache: TopicCache, new: pd.DataFrame) -> list[int | None]:
    """For each new document (columns title, abstract), the row of a cached document with the same text, or None.

    The text compared is the abstract, or the title when the cache was built on titles only; it is reduced to
    lower-case letters and digits (pipeline.ingest.clean.duplicate_key), so spacing, case and punctuation do not matter.
    """
    from pipeline.ingest.clean import duplicate_key

    column = "title" if topic_cache.manifest.get("text_column") == "title" else "abstract"
    row_of: dict[str, int] = {}
    for row, text in enumerate(topic_cache.documents[column]):
        if isinstance(text, str) and text.strip():
            row_of.setdefault(duplicate_key(text), row)
    return [row_of.get(duplicate_key(text)) if isinstance(text, str) and text.strip() else None for text in new[column]]


def query_representation(topic_cache: TopicCache) -> Representation:
    """How the cache turns a text into a vector: its stored :class:`pipeline.represent.representation.Representation`,
    or, for a cache written before representations were stored, the encoder its manifest names
    (``embedding_model_name``).

    Raises FileNotFoundError/ValueError for a damaged representation folder.
    """
    from pipeline.cache import REPRESENTATION_DIR
    from pipeline.represent.representation import Representation, load_representation

    folder = Path(topic_cache.path) / REPRESENTATION_DIR
    if folder.is_dir():
        return load_representation(folder)
    name = topic_cache.manifest["embedding_model_name"]
    return Representation(name, block_dims={name: int(topic_cache.manifest.get("embedding_dim", 0))})


def embed_queries(
    texts: list[str],
    topic_cache: TopicCache,
    encoder: EncoderLike | None = None,
    representation: Representation | None = None,
) -> np.ndarray:
    """Embed texts as the cache's corpus was embedded (its stored representation; see query_representation);
    float32, m x dim, unit rows. Texts are cleaned like the corpus (pipeline.ingest.clean.model_text) first.

    ``encoder``: an already loaded encoder for an encoder block; ``representation``: the loaded representation, to
    skip reading it again. Raises ModuleNotFoundError/OSError when an encoder cannot be loaded offline.
    """
    from pipeline.ingest.clean import model_text

    cleaned = [model_text(text) or text for text in texts]
    return (representation or query_representation(topic_cache)).transform(cleaned, encoder=encoder)


def semantic_search(
    topic_cache: TopicCache, query_embedding: np.ndarray, k: int = 20, embeddings: np.ndarray | None = None
) -> pd.DataFrame:
    """The ``k`` cached documents most cosine-similar to one query embedding (dim,): the page's search by meaning
    (dashboard.state.resources.semantic_hits ranks every paper, k = n) and the library's.

    Returns the matching rows of ``topic_cache.documents`` (index 0..k-1) with a leading ``score`` column (cosine
    similarity, float), best first, ties in document order (pipeline.geometry.neighbors.top_k).
    ``embeddings`` (n x dim, unit rows) may pass the cache's embedding matrix when the caller holds it already.
    Raises CacheError when the embeddings must be read and cannot be.
    """
    indices, scores = semantic_ranking(topic_cache, query_embedding, k, embeddings)
    result = topic_cache.documents.iloc[indices].copy()
    result.insert(0, "score", scores.astype(float))
    return result.reset_index(drop=True)


def semantic_ranking(
    topic_cache: TopicCache, query_embedding: np.ndarray, k: int, embeddings: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(row positions in ``topic_cache.documents``, int64; cosine similarities, float32) of the ``k`` documents
    most similar to one query embedding (dim,), best first, ties in document order: what :func:`semantic_search`
    returns the rows of, for a caller that keeps a ranking of every paper (the page's search by meaning keeps one
    per query and takes rows only for the best few). ``embeddings`` as for semantic_search; raises CacheError when
    they must be read and cannot be."""
    matrix = topic_cache.embeddings() if embeddings is None else embeddings
    indices, scores = top_k((matrix @ query_embedding.astype(np.float32))[None, :], k)
    return indices[0], scores[0]


def top_k_blocked(
    queries: np.ndarray, matrix: np.ndarray, k: int, block_rows: int = 1024
) -> tuple[np.ndarray, np.ndarray]:
    """pipeline.geometry.neighbors.top_k of ``queries @ matrix.T`` (m x dim and n x dim, unit rows), computed
    ``block_rows`` queries at a time so memory stays at block_rows x n similarities (17,000 queries against 19,000
    papers at once took 4.6 GB). Returns (int64, float32), m x min(k, n)."""
    queries = queries.astype(np.float32)
    width = min(k, len(matrix))
    if not len(queries):
        return np.zeros((0, width), np.int64), np.zeros((0, width), np.float32)
    parts = [top_k(queries[start : start + block_rows] @ matrix.T, k) for start in range(0, len(queries), block_rows)]
    return np.vstack([part[0] for part in parts]), np.vstack([part[1] for part in parts])


def place_embeddings(
    topic_cache: TopicCache,
    new_embeddings: np.ndarray,
    k: int = 10,
    embeddings: np.ndarray | None = None,
    same_rows: list[int | None] | None = None,
    reject_misfits: bool = False,
    nearest: tuple[np.ndarray, np.ndarray] | None = None,
) -> pd.DataFrame:
    """Place new documents (embeddings m x dim, unit rows) on the cache's map.

    With ``reject_misfits`` a document that fits no topic (``fits`` False) gets topic -1 and probability 0
    (``topic-atlas place`` and the page's find view); without it, the neighbours' vote stands (``add``, which judges
    fit against topic centroids itself) and ``fits`` is still reported.

    ``same_rows`` gives, per new document, the cached row of the same paper (see same_paper_index) or None.
    ``nearest``: the ``k`` most similar cached rows of each new document and their similarities (int64 and float,
    m x k, best first, as pipeline.geometry.neighbors.top_k gives them), when the caller found them already (``add``
    finds them in its own pass); None searches here, in blocks of rows.
    Returns m rows: topic, topic_label, probability, x, y, same_as (doc id of an identical cached paper or None),
    fits (False when the document fits no topic, see :func:`topic_fit`), topic_similarity (cosine similarity to the
    nearest topic centroid), fit_threshold (the similarity a fit needs), neighbor_ids (k cached doc ids, best
    first), neighbor_scores (their cosine
    similarities).
    """
    documents = topic_cache.documents
    matrix = topic_cache.embeddings() if embeddings is None else embeddings
    indices, scores = nearest if nearest is not None else top_k_blocked(new_embeddings, matrix, k)
    nearest_topic, threshold = topic_fit(matrix, documents["topic"].to_numpy(), new_embeddings)
    topics = documents["topic"].to_numpy()
    positions = documents[["x", "y"]].to_numpy(dtype=float)
    label_of = dict(zip(topic_cache.topics["topic"], topic_cache.topics["label"]))
    doc_ids = documents["doc_id"].to_numpy(dtype=object)
    same_rows = same_rows or [None] * len(indices)
    rows = []
    for neighbours, similarities, same_row, fit in zip(indices, scores, same_rows, nearest_topic):
        weights = np.clip(similarities.astype(float), 1e-6, None)
        if same_row is not None:
            topic, probability, (x, y), same_as = int(topics[same_row]), 1.0, positions[same_row], doc_ids[same_row]
        else:
            votes: dict[int, float] = {}
            for topic_id, weight in zip(topics[neighbours], weights):
                if topic_id != OUTLIER_TOPIC:
                    votes[int(topic_id)] = votes.get(int(topic_id), 0.0) + weight
            topic = max(votes, key=lambda candidate: votes[candidate]) if votes else OUTLIER_TOPIC
            probability = votes.get(topic, 0.0) / weights.sum() if votes else 0.0
            x, y = (weights[:, None] * positions[neighbours]).sum(axis=0) / weights.sum()
            same_as = None
        fits = same_row is not None or (threshold is not None and float(fit) >= threshold)
        if not fits and reject_misfits:
            topic, probability = OUTLIER_TOPIC, 0.0
        rows.append(
            {
                "topic": topic,
                "topic_label": FITS_NO_TOPIC if not fits and reject_misfits else label_of.get(topic, "Outliers"),
                "fits": fits,
                "topic_similarity": round(float(fit), 4),
                "fit_threshold": None if threshold is None else round(threshold, 4),
                "probability": round(float(probability), 4),
                "x": float(x),
                "y": float(y),
                "same_as": same_as,
                "neighbor_ids": doc_ids[neighbours].tolist(),
                "neighbor_scores": [round(float(value), 4) for value in similarities],
            }
        )
    return pd.DataFrame(rows)


def prepare_new_documents(input_path: Path | str, encoding: str | None = None) -> pd.DataFrame:
    """Read and clean new documents exactly as the build does: doc_id, title, abstract, text (the model text).

    Raises InputError for a bad file and CorpusTooSmallError when no row is usable.
    """
    from pipeline.ingest.clean import prepare_documents
    from pipeline.ingest.corpus import load_corpus
    from pipeline.runtime.errors import CorpusTooSmallError

    prepared = prepare_documents(load_corpus(input_path, encoding=encoding))
    for warning in prepared.warnings:
        log.warning(warning)
    if prepared.documents.empty:
        raise CorpusTooSmallError(f"{input_path}: no usable documents to place")
    return prepared.documents[["doc_id", "title", "abstract", "text"]].reset_index(drop=True)


def place_documents(
    topic_cache: TopicCache,
    new: pd.DataFrame,
    encoder: EncoderLike | None = None,
    k: int = 10,
    embeddings: np.ndarray | None = None,
    representation: Representation | None = None,
) -> pd.DataFrame:
    """Embed prepared new documents (from :func:`prepare_new_documents`) with the cache's representation (see
    :func:`embed_queries`; ``representation`` when already loaded) and place them.

    Returns doc_id, title, abstract, then the columns of :func:`place_embeddings`, one row per new document.
    """
    new_embeddings = embed_queries(new["text"].tolist(), topic_cache, encoder=encoder, representation=representation)
    placed = place_embeddings(
        topic_cache,
        new_embeddings,
        k,
        embeddings=embeddings,
        same_rows=same_paper_index(topic_cache, new),
        reject_misfits=True,
    )
    return pd.concat([new[["doc_id", "title", "abstract"]].reset_index(drop=True), placed], axis=1)


def place_file(
    cache_dir: Path | str,
    input_path: Path | str,
    encoding: str | None = None,
    k: int = 10,
    encoder: EncoderLike | None = None,
) -> pd.DataFrame:
    """Read a corpus file (any format the build accepts), clean it like the build, and place its documents.

    Returns the table of :func:`place_documents`. Raises InputError for a bad file and CacheError for a bad cache.
    """
    topic_cache = read_cache(cache_dir)
    return place_documents(topic_cache, prepare_new_documents(input_path, encoding), encoder=encoder, k=k)
