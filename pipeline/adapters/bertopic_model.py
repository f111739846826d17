"""How the atlas drives a BERTopic model: its one constructor, refits of topic terms, and the four places where it
touches BERTopic's fitted state or saved files. An adapter over bertopic.

The constructor (:func:`manual_bertopic`) and the refit (:func:`refit_topic_terms`) are public API: BERTopic in its
documented "manual topic modeling" mode (``BaseDimensionalityReduction`` and ``BaseCluster``, the clusters passed
as ``y``; BERTopic docs, "Manual Topic Modeling"), and ``update_topics``. They live here so that build, add and the
contract tests construct BERTopic the same way, with the same keyword arguments.

What this relies on beyond the public API (bertopic 0.17.4, the pinned version; :data:`CHECKED_VERSIONS`), each
checked before use, with a warning in the build log (once) and a safe fallback when a check fails:

- ``representation_model``, the constructor's argument kept as an attribute and read by every topic extraction:
  :func:`plain_ctfidf_terms` sets it to None for a block (hierarchy and topics per class name their nodes by plain
  c-TF-IDF). Fallback: the representation model runs there too (slower; merged hierarchy nodes get its terms).
- ``topics_``, the fitted topic per document, which ``topics_per_class`` reads as the topics of the documents it is
  given: :func:`topics_per_class_of` swaps in the topics of a subset of documents. Fallback: the public call over
  every document, the documents without a class put in a class of their own whose rows are dropped (the same rows;
  one more class to compute).
- ``representative_docs_``, the few documents per topic BERTopic keeps and saves: a build gives BERTopic short keys
  for its texts (pipeline.text.vocabulary.FixedVocabularyVectorizer.bertopic_documents), and
  :func:`keep_document_texts` puts the texts back there. No fallback needed: the attribute is only replaced.
- ``ctfidf_config.json``, written by ``save(serialization="safetensors", save_ctfidf=True)``: the vectorizer's
  ``vocab`` (term -> column) and ``params`` (``stop_words``, ``ngram_range``), read by :func:`saved_vocabulary`.
  Fallback: ``BERTopic.load`` (public; imports torch, tens of seconds) and its vectorizer's ``vocabulary_`` and
  ``get_params()``.

- the reduced embeddings, which ``fit_transform`` hands only to the clustering model (``BaseCluster`` in manual mode,
  which reads ``y``): :class:`NoReduction` gives zero columns, so BERTopic's copy of them is empty. No fallback
  needed: a BERTopic that read them would find no column to cluster on and fail the contract test.

tests/test_adapters.py checks each of these against the installed bertopic.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.adapters.checks import check_version, installed_version, warn_once

log = logging.getLogger(__name__)

# bertopic versions this adapter was checked with (low inclusive, high exclusive).
CHECKED_VERSIONS = ("0.17.4", "0.18")

# The file of a saved model that holds its vectorizer's vocabulary and parameters (bertopic's _save_utils).
CTFIDF_CONFIG = "ctfidf_config.json"

# The keyword arguments of BERTopic's constructor that manual_bertopic passes.
CONSTRUCTOR_ARGUMENTS = (
    "embedding_model",
    "umap_model",
    "hdbscan_model",
    "vectorizer_model",
    "ctfidf_model",
    "representation_model",
    "top_n_words",
    "nr_topics",
    "calculate_probabilities",
    "language",
    "verbose",
)


def _checked() -> None:
    """Import bertopic (lean when nothing has yet: pipeline.adapters.bertopic_import) and log once when its version
    is outside CHECKED_VERSIONS."""
    from pipeline.adapters.bertopic_import import import_bertopic_lean

    import_bertopic_lean()
    check_version(log, "bertopic", *CHECKED_VERSIONS, __name__)


class NoReduction:
    """BERTopic's dimensionality-reduction step in manual mode, reduced to nothing: ``fit`` learns nothing and
    ``transform`` returns zero columns (float32, n x 0).

    BERTopic passes the embeddings through its ``umap_model`` and then through ``np.nan_to_num``, which copies what it
    is given: with ``BaseDimensionalityReduction`` (``transform`` returns X) that is a second copy of every embedding,
    held until ``fit_transform`` returns (558 MiB at 285,717 papers, 2 GB at a million). In manual mode nothing reads
    the reduced embeddings but ``BaseCluster.fit``, which takes the clusters from ``y``; the topics' embeddings are
    made from the embeddings themselves. A saved and loaded model gets BERTopic's own ``BaseDimensionalityReduction``
    (the safetensors files hold no ``umap_model``). tests/test_adapters.py checks that a fit with it equals one with
    ``BaseDimensionalityReduction``.
    """

    def fit(self, X: Any = None, y: Any = None) -> NoReduction:  # noqa: N803 (scikit-learn's argument names)
        """Nothing to learn; returns self."""
        return self

    def transform(self, X: Any) -> Any:  # noqa: N803
        """Zero columns for the rows of ``X`` (float32, len(X) x 0)."""
        return np.zeros((X.shape[0], 0), dtype=np.float32)


def manual_bertopic(
    vectorizer_model: Any,
    ctfidf_model: Any,
    representation_model: Any,
    top_n_words: int,
    nr_topics: int | None = None,
    embedding_model: Any = None,
) -> Any:
    """An unfitted BERTopic in manual mode: :class:`NoReduction` (BERTopic's ``BaseDimensionalityReduction`` without its
    copy of the embeddings) and ``BaseCluster`` (the clusters come in as ``y`` of ``fit_transform``), the given
    vectorizer, c-TF-IDF and representation models, ``top_n_words`` terms per topic, topic reduction to ``nr_topics``
    (None: none), no probabilities, and ``language=None``: BERTopic's "english" preprocessing deletes every character
    outside [A-Za-z0-9 ] before c-TF-IDF ("vision-language" -> "visionlanguage", CJK text -> nothing); the atlas's
    vectorizer tokenises instead. ``embedding_model``: a BERTopic embedding backend, needed only by representations that
    embed (KeyBERTInspired); None otherwise."""
    _checked()
    from bertopic import BERTopic
    from bertopic.cluster import BaseCluster

    return BERTopic(
        embedding_model=embedding_model,
        umap_model=NoReduction(),
        hdbscan_model=BaseCluster(),
        vectorizer_model=vectorizer_model,  # one instance throughout: it remembers the corpus's counts
        ctfidf_model=ctfidf_model,
        representation_model=representation_model,
        top_n_words=top_n_words,
        nr_topics=nr_topics,
        calculate_probabilities=False,
        language=None,
        verbose=False,
    )


def refit_topic_terms(topic_model: Any, documents: Sequence[str], topics: Sequence[int]) -> None:
    """BERTopic's ``update_topics`` for the topic per document ``topics`` (int, len(documents); -1 = outlier), with the
    model's own vectorizer, c-TF-IDF and representation models and ``top_n_words``: ``update_topics`` replaces each one
    it is not given by a default (a new CountVectorizer, ``ClassTfidfTransformer()``, no representation, 10 terms)."""
    topic_model.update_topics(
        list(documents),
        topics=[int(topic) for topic in topics],
        vectorizer_model=topic_model.vectorizer_model,
        ctfidf_model=topic_model.ctfidf_model,
        representation_model=topic_model.representation_model,
        top_n_words=topic_model.top_n_words,
    )


def keep_document_texts(topic_model: Any, documents: Sequence[str], texts: Sequence[str]) -> None:
    """After a fit on ``documents`` that stand for ``texts`` (the same length and order: keys of
    pipeline.text.vocabulary.FixedVocabularyVectorizer.bertopic_documents), put the texts in the model's
    ``representative_docs_`` (BERTopic keeps 3 per topic, and saves them with the model) in place of the keys. Nothing
    to do when ``documents`` are the texts."""
    if documents is texts or list(documents[:1]) == list(texts[:1]):
        return
    text_of = dict(zip(documents, texts))
    topic_model.representative_docs_ = {
        topic: [text_of.get(document, document) for document in kept]
        for topic, kept in getattr(topic_model, "representative_docs_", {}).items()
    }


@contextmanager
def plain_ctfidf_terms(topic_model: Any) -> Iterator[None]:
    """Within the block, ``topic_model`` names topics by plain c-TF-IDF (no representation model).

    BERTopic runs its representation model for every merged node of ``hierarchical_topics`` and every (topic,
    class) of ``topics_per_class``; pipeline.topics.model.CoherentTerms there cost 20 s of 30 on the whole
    conference and only name nodes that the atlas labels from its own topics. The model's own topics and terms are
    not touched. Without a ``representation_model`` attribute (another bertopic) the block runs with the model as
    it is, after one warning.
    """
    if not hasattr(topic_model, "representation_model"):
        warn_once(
            log,
            "representation_model",
            "BERTopic has no representation_model attribute (bertopic %s): the hierarchy and topics per class run "
            "the representation model too (slower; merged nodes are named by it)",
            installed_version("bertopic"),
        )
        yield
        return
    saved = topic_model.representation_model
    topic_model.representation_model = None
    try:
        yield
    finally:
        topic_model.representation_model = saved


def document_topics_problem(topic_model: Any) -> str | None:
    """Why :func:`topics_per_class_of` cannot swap ``topic_model.topics_`` for the topics of a subset of the fitted
    documents, else None: the attribute is missing or ``topics_per_class`` no longer reads it."""
    if getattr(topic_model, "topics_", None) is None:
        return "BERTopic has no topics_ attribute"
    method = getattr(type(topic_model), "topics_per_class", None)
    if "topics_" not in getattr(getattr(method, "__code__", None), "co_names", ()):
        return "BERTopic.topics_per_class no longer reads topics_"
    return None


def topics_per_class_of(topic_model: Any, documents: Sequence[str], classes: Sequence[str | None]) -> Any:
    """BERTopic's ``topics_per_class`` table (columns Topic, Words, Frequency, Class) over the documents that have a
    class: ``documents`` are the model's fitted documents, in order; ``classes`` is aligned with them (None or "" =
    no class, left out). The model's ``topics_`` is swapped for the topics of those documents during the call and
    restored after it; see the module docstring for the fallback. Raises ValueError when ``documents`` and
    ``classes`` differ in length, or from the number of the model's fitted documents."""
    fitted = getattr(topic_model, "topics_", None)
    if len(classes) != len(documents) or (fitted is not None and len(fitted) != len(documents)):
        raise ValueError(
            f"topics per class need the model's fitted documents and one class each: {len(documents)} documents, "
            f"{len(classes)} classes, {'?' if fitted is None else len(fitted)} fitted"
        )
    known = [row for row, value in enumerate(classes) if value]
    problem = document_topics_problem(topic_model)
    if problem is None:
        saved = topic_model.topics_
        topics = list(saved)
        try:
            topic_model.topics_ = [topics[row] for row in known]
            return topic_model.topics_per_class([documents[row] for row in known], [classes[row] for row in known])
        finally:
            topic_model.topics_ = saved
    warn_once(
        log,
        "topics_",
        "cannot give BERTopic.topics_per_class a subset of the documents (%s); computing it over every document "
        "with the unclassified ones in a class of their own, dropped afterwards (the same rows, slower)",
        problem,
    )
    unclassified = "\x00unclassified"
    while unclassified in set(classes):
        unclassified += "\x00"
    table = topic_model.topics_per_class(list(documents), [value if value else unclassified for value in classes])
    return table[table["Class"] != unclassified].reset_index(drop=True)


@dataclass(frozen=True)
class SavedVocabulary:
    """A saved BERTopic model's c-TF-IDF vocabulary.

    Attributes
    ----------
    terms : the vocabulary's terms in column order.
    stop_words : the vectorizer's whole stop list (English plus the build's boilerplate words).
    ngram_max : the vectorizer's largest n-gram length.
    """

    terms: list[str]
    stop_words: list[str]
    ngram_max: int


def _vocabulary_of(vocab: Any, params: Any, source: str) -> SavedVocabulary:
    """SavedVocabulary from a vocabulary mapping (term -> column) and CountVectorizer parameters.
    Raises ValueError naming ``source`` when they are not of that shape."""
    if not isinstance(vocab, dict) or not isinstance(params, dict):
        raise ValueError(f"{source}: expected a vocabulary mapping and vectorizer parameters")
    stop_words = params.get("stop_words") or []
    if stop_words == "english":  # scikit-learn's named list, as CountVectorizer(stop_words="english") saves it
        from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

        stop_words = sorted(ENGLISH_STOP_WORDS)
    ngram_range = params.get("ngram_range")
    if isinstance(stop_words, str) or not isinstance(ngram_range, (list, tuple)) or len(ngram_range) != 2:
        raise ValueError(f"{source}: stop_words {stop_words!r:.40} or ngram_range {ngram_range!r} is not a list")
    return SavedVocabulary(
        sorted(vocab, key=lambda term: vocab[term]), [str(word) for word in stop_words], int(ngram_range[1])
    )


def saved_vocabulary(model_dir: Path | str) -> SavedVocabulary:
    """The c-TF-IDF vocabulary of a model saved by pipeline.topics.model.save_topic_model, from
    ``model_dir/ctfidf_config.json`` (``vectorizer_model.vocab`` and ``vectorizer_model.params``).

    When the file is there but not of that shape (another bertopic), logs one warning and asks ``BERTopic.load``
    instead. Raises FileNotFoundError when the file is missing, ValueError when neither way reads a vocabulary.
    """
    path = Path(model_dir) / CTFIDF_CONFIG
    config = json.loads(path.read_text(encoding="utf-8"))
    try:
        return _vocabulary_of(config["vectorizer_model"]["vocab"], config["vectorizer_model"]["params"], str(path))
    except (KeyError, TypeError, ValueError) as error:
        problem = f"{type(error).__name__}: {error}"
    warn_once(
        log,
        "ctfidf_config",
        "%s is not the c-TF-IDF config this atlas reads (%s); loading the model with BERTopic.load instead (slower)",
        path,
        problem,
    )
    try:
        _checked()
        from bertopic import BERTopic

        vectorizer = BERTopic.load(str(model_dir)).vectorizer_model
        return _vocabulary_of(dict(vectorizer.vocabulary_), vectorizer.get_params(), f"BERTopic.load({model_dir})")
    except Exception as error:
        raise ValueError(
            f"{path} is not a BERTopic c-TF-IDF config ({problem}), and BERTopic.load could not read the model "
            f"({type(error).__name__}: {error}); rebuild the atlas"
        ) from error
