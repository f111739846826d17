"""BERTopic in and out of an atlas: what :func:`pipeline.operations.from_bertopic.write_bertopic_atlas` reads from a
user's fitted BERTopic model, and how ``Atlas.to_bertopic`` gives one back. An adapter over bertopic (and, for the
reduced embeddings, umap-learn).

Read through public API: ``get_topic_info`` (each topic's ``Count``, ``Name``, ``CustomName`` when custom labels are
set, ``Representative_Docs``) and ``get_topics`` (each topic's ``[(term, weight), ...]``). What this relies on beyond
it (bertopic 0.17.4, the pinned version; :data:`CHECKED_VERSIONS`), each checked before use:

- ``topics_`` and ``probabilities_``: the fitted topic of each document (and its probability: n floats, or an n x
  topics matrix with ``calculate_probabilities=True``), documented attributes of a fitted model. Without ``topics_``
  the model is refused (ValueError): nothing else says which document is in which topic.
- ``umap_model.embedding_``: umap-learn's fitted coordinates of the training documents (n x n_components), the
  model's reduced embeddings; used for the map when present with one row per document. Absent (another reducer, a
  model loaded from disk): the map is computed from the embeddings instead.
- ``topic_embeddings_``: one row per topic in sorted topic order (-1 first when the model has outliers), which
  ``transform`` compares documents with by cosine similarity once the model is loaded from disk (no UMAP or HDBSCAN
  saved). :func:`save_with_topic_embeddings` swaps in the atlas's topic centroids for the save and restores the
  model's own after it, so the saved model's ``transform`` works with the atlas's own representation, offline.
- the topic tables of a model, which :func:`write_topic_tables` rewrites from an edited atlas's current topics:
  ``topics_`` (n ints), ``topic_sizes_`` ({topic: count}, which ``_outliers`` reads: -1 among its keys),
  ``topic_representations_`` ({topic: [(term, weight), ...]}; ``topic_labels_``, the ``Name`` column, is worked out
  from it: "<id>_" and its first four terms joined by "_"), ``topic_embeddings_`` and ``c_tf_idf_`` (one row per
  topic in sorted order, -1 first), ``representative_docs_`` and ``topic_aspects_`` (emptied: they described the
  old topics) and ``topic_mapper_`` (a fresh ``bertopic._bertopic.TopicMapper`` of the new topics, so a later
  ``merge_topics`` or ``reduce_topics`` starts from them). The rows stand for the topics by position: bertopic
  numbers its topics -1 (outliers), 0, 1, ... without gaps, and a loaded model's ``transform`` gives the row of
  the most cosine-similar topic embedding minus ``_outliers``. Custom labels go through the public
  ``set_topic_labels``; the c-TF-IDF rows through the model's own fitted ``ctfidf_model.transform`` (its IDF).
- ``bertopic._bertopic.plotting``: bertopic's plotting module, replaced by a placeholder when bertopic was imported
  without plotly (pipeline.adapters.bertopic_import hides it from a build). :func:`with_plotting` puts the real
  module back once plotly can be imported, so ``visualize_topics`` of a model from ``to_bertopic`` works in a process
  that built an atlas first. Fallback: the placeholder stays, and ``visualize_*`` raise bertopic's own message.

tests/test_bertopic_roundtrip.py checks each of these against the installed bertopic.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from pipeline.adapters.checks import check_version, warn_once

log = logging.getLogger(__name__)

# bertopic versions this adapter was checked with (low inclusive, high exclusive).
CHECKED_VERSIONS = ("0.17.4", "0.18")


@dataclass
class ModelTopics:
    """What an atlas keeps of a fitted BERTopic model.

    Attributes
    ----------
    topics : int64, n: each document's topic as the model assigned it (-1 = outlier).
    probabilities : float64, n, in [0, 1]: the model's probability of that topic per document (the row maximum of a
        probability matrix), or None when the model kept none.
    names : {topic: BERTopic's name, e.g. "0_graph_molecular_protein_molecules"} (``get_topic_info``'s Name).
    custom_labels : {topic: the user's label} (``CustomName``), empty when none were set.
    terms : {topic: [(term, weight), ...]}, best first (``get_topics``).
    representative_docs : {topic: [document text, ...]} (``Representative_Docs``), empty lists when absent.
    reduced : float32, n x d: the model's reduced embeddings (``umap_model.embedding_``), or None.
    """

    topics: np.ndarray
    probabilities: np.ndarray | None
    names: dict[int, str]
    custom_labels: dict[int, str]
    terms: dict[int, list[tuple[str, float]]]
    representative_docs: dict[int, list[str]] = field(default_factory=dict)
    reduced: np.ndarray | None = None


def _checked() -> None:
    check_version(log, "bertopic", *CHECKED_VERSIONS, __name__)


def _probabilities(topic_model: Any, n_documents: int) -> np.ndarray | None:
    """``probabilities_`` as one float per document (the maximum of a probability matrix), or None."""
    values = getattr(topic_model, "probabilities_", None)
    if values is None:
        return None
    matrix = np.asarray(values, dtype=np.float64)
    if matrix.ndim == 2 and matrix.shape[0] == n_documents:
        matrix = matrix.max(axis=1) if matrix.shape[1] else np.zeros(n_documents)
    if matrix.shape != (n_documents,) or not np.isfinite(matrix).all():
        return None
    return np.clip(matrix, 0.0, 1.0)


def reduced_embeddings(topic_model: Any, n_documents: int) -> np.ndarray | None:
    """The model's reduced embeddings (``umap_model.embedding_``, float32 n x d) when they have one row per fitted
    document, else None (another reducer, a model loaded from disk, or a fit on other documents)."""
    coordinates = getattr(getattr(topic_model, "umap_model", None), "embedding_", None)
    if coordinates is None:
        return None
    matrix = np.asarray(coordinates, dtype=np.float32)
    if matrix.ndim != 2 or matrix.shape[0] != n_documents or matrix.shape[1] < 2 or not np.isfinite(matrix).all():
        return None
    return matrix


def model_topics(topic_model: Any, n_documents: int) -> ModelTopics:
    """Read a fitted BERTopic model's topics, names, terms and representative documents (module docstring).

    ``n_documents``: the number of documents the caller gives with the model; they must be the model's fitted
    documents, in order. Raises ValueError when the model is not fitted (no ``topics_``) or was fitted on another
    number of documents.
    """
    _checked()
    fitted = getattr(topic_model, "topics_", None)
    if fitted is None:
        raise ValueError("the BERTopic model is not fitted (it has no topics_): fit it on the documents first")
    topics = np.asarray(fitted, dtype=np.int64)
    if topics.shape != (n_documents,):
        raise ValueError(
            f"the BERTopic model was fitted on {len(topics)} documents but {n_documents} were given: pass the "
            "documents it was fitted on, in the same order"
        )
    info = topic_model.get_topic_info()
    ids = [int(topic) for topic in info["Topic"]]
    names = dict(zip(ids, info["Name"].astype(str)))
    custom = dict(zip(ids, info["CustomName"].astype(str))) if "CustomName" in info.columns else {}
    documents = info["Representative_Docs"] if "Representative_Docs" in info.columns else [None] * len(ids)
    representative = {
        topic: [str(text) for text in docs] if isinstance(docs, (list, tuple, np.ndarray)) else []
        for topic, docs in zip(ids, documents)
    }
    terms = {
        int(topic): [(str(term), float(weight)) for term, weight in pairs if str(term)]
        for topic, pairs in (topic_model.get_topics() or {}).items()
    }
    return ModelTopics(
        topics,
        _probabilities(topic_model, n_documents),
        names,
        custom,
        terms,
        representative,
        reduced_embeddings(topic_model, n_documents),
    )


@contextmanager
def _swapped_topic_embeddings(topic_model: Any, topic_embeddings: np.ndarray) -> Iterator[None]:
    saved = getattr(topic_model, "topic_embeddings_", None)
    topic_model.topic_embeddings_ = topic_embeddings
    try:
        yield
    finally:
        topic_model.topic_embeddings_ = saved


def save_with_topic_embeddings(
    topic_model: Any, folder: Path, embedding_model: str, topic_embeddings: np.ndarray
) -> None:
    """Save ``topic_model`` as the build saves its own (safetensors, c-TF-IDF, the embedding model by name) with
    ``topic_embeddings`` (float32, one row per topic id in sorted order, -1 first when present) in place of its own
    for the save; the model is left as it was. Raises ValueError when the row count is not the model's topic
    count."""
    _checked()
    expected = len(topic_model.get_topics())
    if topic_embeddings.shape[0] != expected:
        raise ValueError(f"{topic_embeddings.shape[0]} topic embeddings for a model of {expected} topics")
    with _swapped_topic_embeddings(topic_model, topic_embeddings):
        topic_model.save(
            str(folder), serialization="safetensors", save_ctfidf=True, save_embedding_model=embedding_model
        )


@dataclass
class TopicTables:
    """A model's topics as :func:`write_topic_tables` writes them, numbered as bertopic numbers topics: -1 (the
    outliers, when there are any), then 0, 1, ... without gaps.

    Attributes
    ----------
    topics : int64, n: each fitted document's topic.
    terms : {topic: [(term, weight), ...]}, best first, for every topic of ``topics``.
    labels : {topic: its name} (the model's custom labels).
    embeddings : float32, topics x dim: each topic's embedding, rows in sorted topic order (-1 first).
    counts : CSR, topics x the model's vocabulary: each topic's summed term counts, rows in sorted topic order.
    """

    topics: np.ndarray
    terms: dict[int, list[tuple[str, float]]]
    labels: dict[int, str]
    embeddings: np.ndarray
    counts: sp.csr_matrix


def write_topic_tables(topic_model: Any, tables: TopicTables) -> None:
    """Make ``topic_model``'s topics, sizes, terms, names, custom labels, topic embeddings and c-TF-IDF those of
    ``tables`` (module docstring), in place. Raises ValueError when the topics are not numbered -1, 0, 1, ...
    without gaps, or a table's rows or columns do not match them or the model's vocabulary."""
    _checked()
    from bertopic._bertopic import TopicMapper

    ids = sorted({int(topic) for topic in tables.topics})
    expected = ([-1] if -1 in ids else []) + list(range(len(ids) - (-1 in ids)))
    if ids != expected:
        raise ValueError(f"topics must be numbered -1, 0, 1, ... without gaps; got {ids[:20]}")
    vocabulary = len(topic_model.vectorizer_model.vocabulary_)
    if tables.embeddings.shape[0] != len(ids) or tables.counts.shape != (len(ids), vocabulary):
        raise ValueError(
            f"{tables.embeddings.shape[0]} topic embeddings and {tables.counts.shape} term counts for {len(ids)} "
            f"topics and a vocabulary of {vocabulary} terms"
        )
    if set(tables.terms) != set(ids):
        raise ValueError(f"terms for topics {sorted(tables.terms)[:20]} but the documents are in {ids[:20]}")
    topic_model.topics_ = [int(topic) for topic in tables.topics]
    counted = np.unique(tables.topics, return_counts=True)
    topic_model.topic_sizes_ = {int(topic): int(size) for topic, size in zip(*counted)}
    topic_model.topic_representations_ = {topic: list(tables.terms[topic]) for topic in ids}
    topic_model.topic_embeddings_ = np.asarray(tables.embeddings, dtype=np.float32)
    counts = sp.csr_matrix(tables.counts, dtype=np.float64, copy=True)  # transform normalises its input in place
    c_tf_idf = sp.csr_matrix(topic_model.ctfidf_model.transform(counts))
    c_tf_idf.sum_duplicates()  # canonical, as bertopic's own: hierarchical_topics needs an exactly symmetric distance
    c_tf_idf.eliminate_zeros()
    topic_model.c_tf_idf_ = c_tf_idf
    topic_model.representative_docs_ = {}
    topic_model.topic_aspects_ = {}
    topic_model.topic_mapper_ = TopicMapper(ids)
    topic_model.set_topic_labels({topic: tables.labels[topic] for topic in ids if topic in tables.labels})


def text_embedder(embed: Callable[[list[str]], np.ndarray]) -> Any:
    """A BERTopic embedding backend (``bertopic.backend.BaseEmbedder``, BERTopic's documented way to bring one's own
    embedder) whose ``embed(documents)`` is ``embed(list of str)`` -> float32, n x dim.

    It pickles as a call of this function with ``embed`` (``__reduce__``), so a model holding it saves with
    ``save(..., serialization="pickle")`` when ``embed`` pickles: a module-level function, or an instance of a
    module-level class (pipeline.operations.to_bertopic.AtlasTextEmbedding)."""
    return _embedder_class()(embed)


@functools.cache
def _embedder_class() -> type:
    """The class of :func:`text_embedder`'s backends, made once: bertopic is imported when first needed, as
    everywhere in this module (pipeline.adapters.bertopic_import imports it lean for a build)."""
    from bertopic.backend import BaseEmbedder

    class TextEmbedder(BaseEmbedder):
        """A function of texts as a BERTopic embedding model."""

        def __init__(self, embed: Callable[[list[str]], np.ndarray]) -> None:
            super().__init__()
            self.texts_to_vectors = embed

        def embed(self, documents: Any, verbose: bool = False) -> np.ndarray:
            return np.asarray(self.texts_to_vectors([str(document) for document in documents]), dtype=np.float32)

        def __reduce__(self) -> tuple[Any, ...]:
            return text_embedder, (self.texts_to_vectors,)

    return TextEmbedder


def with_plotting() -> bool:
    """Make bertopic's ``visualize_*`` draw when bertopic was imported without plotly and plotly can be imported
    now (module docstring). Returns True when the plotting module is bertopic's own."""
    import bertopic._bertopic as core

    if not hasattr(core, "plotting"):
        warn_once(log, "bertopic-plotting", "bertopic._bertopic has no plotting module: visualize_* left as they are")
        return False
    if importlib.util.find_spec("plotly") is None:
        return False
    if type(core.plotting).__name__ == "MockPlotlyModule":
        core.plotting = importlib.import_module("bertopic.plotting")
    return True


def load_saved_model(model_dir: Path, embed: Callable[[list[str]], np.ndarray]) -> Any:
    """``BERTopic.load`` of a model saved by :func:`save_with_topic_embeddings` (or by the build), with ``embed`` as
    its embedding model (:func:`text_embedder`) and its plotting module whole (:func:`with_plotting`). Raises
    FileNotFoundError when ``model_dir`` is not a folder."""
    _checked()
    if not Path(model_dir).is_dir():
        raise FileNotFoundError(f"{model_dir}: no saved BERTopic model here")
    from bertopic import BERTopic

    with_plotting()
    return BERTopic.load(str(model_dir), embedding_model=text_embedder(embed))
