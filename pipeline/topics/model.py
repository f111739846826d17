"""Assemble and fit BERTopic on precomputed clusters; derive the topic table, labels and hierarchy.

BERTopic is used in its documented "manual topic modeling" form: our UMAP + HDBSCAN labels are passed as
``y`` with an empty dimensionality reduction (pipeline.adapters.bertopic_model.NoReduction, in the place of
``BaseDimensionalityReduction``) and ``BaseCluster`` (BERTopic docs, "Manual Topic Modeling"). That
keeps BERTopic for what it is for (c-TF-IDF, representations, topic reduction, topic updates, hierarchy,
safetensors serialisation) while the build controls the layout stages: one neighbour search for both UMAP fits,
tiny corpora, and corpora in which every document is an outlier.

Topic quality (measured by bench/quality.py against stock BERTopic, its Best Practices set-up and LDA): topic
terms come from :class:`CoherentTerms` (exclusive, co-occurring terms), and outliers are reassigned by
:func:`reassign_outliers`, which leaves the least topical papers in -1.
"""

from __future__ import annotations

import logging
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from pipeline.config import BuildConfig
from pipeline.geometry.centroids import topic_centroids
from pipeline.runtime.errors import EmptyVocabularyError
from pipeline.schema import HIERARCHY_COLUMNS, OUTLIER_TOPIC
from pipeline.store.layouts import NULL_STORE, StageStore
from pipeline.text.vocabulary import bertopic_documents, make_vectorizer
from pipeline.topics.labels import DeferredLabels
from pipeline.topics.membership import eligibility, keep_coherent_topics
from pipeline.topics.misfits import FitCheck, eject_misfits, fit_note
from pipeline.topics.naming.assign import SUBTITLE_SEPARATOR, name_topics

if TYPE_CHECKING:
    from pipeline.represent.encoder_backends import EncoderLike
    from pipeline.represent.representation import Representation
    from pipeline.text.tokens import TokenizedCorpus
    from pipeline.topics.naming.stored import PhraseCountsJob

log = logging.getLogger(__name__)


@dataclass
class TopicFit:
    """The outcome of :func:`fit_topic_model`.

    Attributes
    ----------
    topic_model : the fitted BERTopic.
    topics : int64, n; topic per document after topic and outlier reduction (-1 = outlier).
    clustered_topics : int64, n; the topic per document before outlier reduction (same ids as ``topics``).
    topic_terms : {topic: [(term, c-TF-IDF weight), ...]}, best first, empty terms removed.
    labels : {topic: name} (pipeline.topics.naming; the term label of pipeline.topics.labels where no phrase fits).
    subtitles : {topic: its distinguishing phrases joined by ", "}.
    phrases : the corpus's pipeline.topics.naming.phrase_counts.PhraseCounts (themes are named from them), or None.
    notes : plain-language messages about the fit (outliers reassigned, topics merged, no topics found).
    n_reassigned : outliers moved into a topic by outlier reduction (and not moved out again by the fit check).
    fit_check : the fit check's outcome (pipeline.topics.misfits.FitCheck): which papers it moved to -1, the
        similarity each had to its nearest topic and the threshold; None when it did not run.
    """

    topic_model: Any
    topics: np.ndarray
    clustered_topics: np.ndarray
    topic_terms: dict[int, list[tuple[str, float]]]
    labels: dict[int, str]
    notes: list[str] = field(default_factory=list)
    n_reassigned: int = 0
    subtitles: dict[int, str] = field(default_factory=dict)
    phrases: Any = None
    fit_check: FitCheck | None = None


def _terms(topic_model: Any) -> dict[int, list[tuple[str, float]]]:
    topics = topic_model.get_topics() or {}
    return {
        int(topic): [(str(term), float(weight)) for term, weight in pairs if str(term).strip()]
        for topic, pairs in topics.items()
    }


class CoherentTerms:
    """BERTopic representation model: exclusive, co-occurring terms
    (:func:`pipeline.text.vocabulary.select_coherent_terms`).

    Called by BERTopic with the documents (columns "Document", "Topic"), the c-TF-IDF matrix (one row per topic
    in sorted topic order, as BERTopic builds it) and the plain c-TF-IDF terms; returns {topic: [(term, weight)]}
    with the c-TF-IDF weight of each chosen term. The outlier topic keeps its plain c-TF-IDF terms.

    Co-occurrence is counted per sentence of the documents (a title is one sentence): terms used in the same
    sentences describe one thing; in whole 200-word abstracts nearly every frequent term co-occurs with every
    other (on the 951 abstracts, NPMI about 0.07 counting whole documents, 0.11 counting sentences). Sentence-term
    presence is computed once per distinct text and reused (BERTopic calls this again for topic reduction,
    outlier updates, the hierarchy and per-class topics, on subsets of the same documents).
    """

    def __init__(
        self,
        n_terms: int = 25,
        n_candidates: int = 40,
        coherence_weight: float = 3.0,
        n_leading: int = 10,
        exclusive: bool = True,
    ):
        self.n_terms, self.n_candidates, self.coherence_weight = n_terms, n_candidates, coherence_weight
        self.n_leading, self.exclusive = n_leading, exclusive
        self._spans: dict[str, tuple[int, int]] = {}
        self._blocks: list[Any] = []
        self._presence: Any = None

    def _presence_of(self, vectorizer: Any, texts: list[str]) -> Any:
        """Binary sentences x terms matrix (float32; CSC when from the vectorizer's remembered tokens, which it has as
        pipeline.text.vocabulary.FixedVocabularyVectorizer, else CSR from transforming them) of the sentences of
        ``texts``."""
        import scipy.sparse as sp

        from pipeline.text.words import split_sentences

        remembered = getattr(vectorizer, "sentence_presence_of", None)
        presence = remembered(texts) if remembered is not None else None
        if presence is not None:
            return presence

        new = list(dict.fromkeys(text for text in texts if text not in self._spans))
        if new:
            sentences = [split_sentences(text) for text in new]
            start = self._presence.shape[0] if self._presence is not None else 0
            for text, parts in zip(new, sentences):
                self._spans[text] = (start, start + len(parts))
                start += len(parts)
            block = (
                (vectorizer.transform([part for parts in sentences for part in parts]) > 0).astype(np.float32).tocsr()
            )
            self._presence = block if self._presence is None else sp.vstack([self._presence, block]).tocsr()
        rows = (
            np.concatenate([np.arange(*self._spans[text]) for text in texts]) if texts else np.zeros(0, dtype=np.int64)
        )
        return self._presence[rows]

    def extract_topics(
        self, topic_model: Any, documents: pd.DataFrame, c_tf_idf: Any, topics: dict[int, list[tuple[str, float]]]
    ) -> dict[int, list[tuple[str, float]]]:
        """BERTopic's representation hook (see bertopic.representation.BaseRepresentation)."""
        import scipy.sparse as sp

        from pipeline.text.vocabulary import repeats_a_column, select_coherent_terms, term_owners

        words = topic_model.vectorizer_model.get_feature_names_out()
        labels = sorted(int(label) for label in documents["Topic"].unique())
        # Kept sparse: dense, the six collections' c-TF-IDF is 60 topics x 679,077 terms (326 MB per call).
        weights: np.ndarray | sp.csr_matrix
        if sp.issparse(c_tf_idf):  # read as it is (BERTopic keeps it), unless a row repeats a column
            weights = sp.csr_matrix(c_tf_idf, dtype=np.float64)
            if not weights.has_canonical_format and repeats_a_column(weights):  # sum_duplicates sorts in place
                weights = weights.copy()
                weights.sum_duplicates()
        else:
            weights = np.asarray(c_tf_idf)
        # By columns: each topic reads the sentences of its 40 candidate terms (one CSR column slice took 0.1 s there).
        presence = sp.csc_matrix(self._presence_of(topic_model.vectorizer_model, documents["Document"].tolist()))
        real_rows = [row for row, label in enumerate(labels) if label != OUTLIER_TOPIC]
        owner = term_owners(weights, real_rows) if self.exclusive and len(real_rows) > 1 else None
        result: dict[int, list[tuple[str, float]]] = {}
        for row, label in enumerate(labels):
            if label == OUTLIER_TOPIC:
                result[label] = list(topics.get(label, []))[: self.n_terms]
                continue
            chosen = select_coherent_terms(
                weights,
                presence,
                row,
                real_rows,
                self.n_terms,
                self.n_candidates,
                self.coherence_weight,
                self.n_leading,
                self.exclusive,
                owner,
            )
            # A topic without any positive weight (its papers hold only stop words) keeps BERTopic's placeholder list.
            result[label] = [(str(words[index]), float(weights[row, index])) for index in chosen] or list(
                topics.get(label, [])
            )[: self.n_terms]
        return result


def _bertopic_representation(config: BuildConfig) -> Any:
    """The representation model that config.representation names (see BuildConfig)."""
    if config.representation == "coherent":
        from bertopic.representation import BaseRepresentation

        # BERTopic dispatches on isinstance(BaseRepresentation); mix it in here so importing this module stays cheap.
        coherent = type("CoherentTermsRepresentation", (CoherentTerms, BaseRepresentation), {})
        return coherent(
            config.top_n_words, config.n_candidate_terms, config.coherence_weight, exclusive=config.exclusive_terms
        )
    if config.representation == "c-tf-idf":
        return None
    from bertopic.representation import KeyBERTInspired, MaximalMarginalRelevance

    keybert = KeyBERTInspired(top_n_words=config.top_n_words, random_state=config.random_state)
    if config.representation == "keybert":
        return keybert
    if config.representation == "keybert+mmr":
        return [keybert, MaximalMarginalRelevance(diversity=0.3, top_n_words=config.top_n_words)]
    raise ValueError(f"unknown representation {config.representation!r}: coherent, c-tf-idf, keybert or keybert+mmr")


def embedding_backend(encoder: Any) -> Any:
    """Wrap an encoder with ``encode(list[str]) -> n x dim`` as a BERTopic embedding backend (for
    KeyBERTInspired/MMR)."""
    from bertopic.backend import BaseEmbedder

    encode = getattr(encoder, "encode", None) or encoder.transform

    class EncoderBackend(BaseEmbedder):
        def embed(self, documents: list[str], verbose: bool = False) -> np.ndarray:
            return np.asarray(encode(list(documents)), dtype=np.float32)

    return EncoderBackend()


def reassign_outliers(
    embeddings: np.ndarray, topics: np.ndarray, threshold: float = 0.0, max_fraction: float = 0.05, eligible: Any = None
) -> np.ndarray:
    """Move outliers into the topic whose centroid they are most cosine-similar to, most similar first.

    An outlier is moved only if that similarity is at least ``threshold``, and moving stops once at most
    ``max_fraction`` of all documents remain outliers: the papers least like any topic stay in -1, so the map
    and the tables keep saying "this paper fits no topic" where that is true. (This is BERTopic's
    ``reduce_outliers(strategy="embeddings")`` with topic centroids, plus the ranking, which BERTopic does not
    expose.)

    ``eligible(rows, topics, similarities) -> bool array``, when given, is the floor an outlier must pass to join its
    most similar topic (pipeline.topics.membership.eligibility: it uses the topic's words and is as typical as its least
    typical 1% of papers); one that does not stays an outlier.

    Parameters: embeddings float32 n x dim (L2-normalised); topics int n (-1 = outlier). Returns the new topics.
    """
    topics = np.asarray(topics, dtype=np.int64).copy()
    outliers = np.flatnonzero(topics == OUTLIER_TOPIC)
    ids = sorted(set(topics.tolist()) - {OUTLIER_TOPIC})
    if not len(outliers) or not ids:
        return topics
    centroids = topic_centroids(embeddings, topics, ids)
    similarity = embeddings[outliers] @ centroids.T
    best, best_similarity = similarity.argmax(axis=1), similarity.max(axis=1)
    to_move = max(0, len(outliers) - int(np.floor(max_fraction * len(topics))))
    order = np.lexsort((outliers, -best_similarity))
    if eligible is not None and len(order):  # the floor first, so the most similar of those that pass are moved
        order = order[eligible(outliers[order], np.asarray(ids)[best[order]], best_similarity[order])]
    order = order[:to_move]
    order = order[best_similarity[order] >= threshold]
    topics[outliers[order]] = np.asarray(ids)[best[order]]
    return topics


def make_bertopic(
    config: BuildConfig,
    vectorizer: Any,
    nr_topics: int | None = None,
    encoder: Representation | EncoderLike | None = None,
) -> Any:
    """The one BERTopic of build and add: unfitted, in manual mode (pipeline.adapters.bertopic_model.manual_bertopic:
    the clusters come in as ``y``), with ``vectorizer``, ``ClassTfidfTransformer`` with the config's
    ``bm25_weighting`` and ``reduce_frequent_words``, the representation model of ``config.representation``,
    ``config.top_n_words`` terms per topic and topic reduction to ``nr_topics`` (None: none). ``encoder``: the
    corpus's representation or an encoder with ``encode(list[str])``, which the "keybert" representations embed
    with (:func:`embedding_backend`); None otherwise. bertopic is imported lean (pipeline.adapters.bertopic_import)."""
    from pipeline.adapters.bertopic_import import import_bertopic_lean
    from pipeline.adapters.bertopic_model import manual_bertopic

    import_bertopic_lean()
    from bertopic.vectorizers import ClassTfidfTransformer

    return manual_bertopic(
        vectorizer,
        ClassTfidfTransformer(bm25_weighting=config.bm25_weighting, reduce_frequent_words=config.reduce_frequent_words),
        _bertopic_representation(config),
        config.top_n_words,
        nr_topics=nr_topics,
        embedding_model=embedding_backend(encoder) if encoder is not None else None,
    )


def topic_vectorizer(
    texts: list[str],
    cluster_labels: np.ndarray,
    config: BuildConfig,
    tokens: TokenizedCorpus | None,
    notes: list[str],
    store: StageStore = NULL_STORE,
) -> Any:
    """The c-TF-IDF vectorizer (pipeline.text.vocabulary.make_vectorizer) with the corpus's boilerplate words learned
    from the clusters left out; ``tokens`` (pipeline.text.tokens, made here when None) spare tokenising again, ``store``
    (pipeline.store.layouts; the null store keeps nothing) keeps its counts for a rebuild. Appends a note naming the
    boilerplate words."""
    from pipeline.text.tokens import tokenize, word_counts
    from pipeline.text.vocabulary import boilerplate_terms

    tokens = tokenize(texts) if tokens is None else tokens
    boilerplate = (
        boilerplate_terms(
            word_counts(tokens), cluster_labels, config.boilerplate_min_share, config.boilerplate_max_lift
        )
        if config.learn_stop_words
        else []
    )
    if boilerplate:
        notes.append(
            f"{len(boilerplate)} boilerplate words learned and left out of topic terms: {', '.join(boilerplate[:30])}"
        )
    try:
        return make_vectorizer(texts, config.ngram_max, config.min_df or 1, config.max_df, boilerplate, tokens, store)
    except EmptyVocabularyError:
        return make_vectorizer(texts, config.ngram_max, config.min_df or 1, config.max_df, tokens=tokens, store=store)


def reduce_outliers(
    topic_model: Any,
    embeddings: np.ndarray,
    clustered: np.ndarray,
    presence: Any,
    refit: Any,
    config: BuildConfig,
    coherence_note: str | None,
    notes: list[str],
) -> tuple[np.ndarray, int]:
    """Outlier reduction after clustering: (topics int64 n, papers reassigned). Outliers eligible for a topic
    (pipeline.topics.membership.eligibility) move into it by :func:`reassign_outliers`, and the model's terms are
    refitted (``refit(topics)``). Appends a note saying what was done, or that no topic was found."""
    n_outliers = int((clustered == OUTLIER_TOPIC).sum())
    if not set(clustered.tolist()) - {OUTLIER_TOPIC}:
        if not (coherence_note or "").startswith("No topics"):
            notes.append(
                f"No topics found: all {len(clustered)} documents were labelled as outliers "
                f"(min_cluster_size={config.min_cluster_size}). Lower --min-cluster-size or add documents."
            )
        return clustered.copy(), 0
    if not (config.reduce_outliers and n_outliers):
        return clustered.copy(), 0
    eligible = eligibility(topic_model, embeddings, clustered, presence)
    reassigned = reassign_outliers(
        embeddings, clustered, config.outlier_threshold, config.max_outlier_fraction, eligible
    )
    n_reassigned = int(((clustered == OUTLIER_TOPIC) & (reassigned != OUTLIER_TOPIC)).sum())
    final = clustered.copy()
    if n_reassigned:
        refit(reassigned)
        final = reassigned
    notes.append(
        f"outlier reduction reassigned {n_reassigned} of {n_outliers} outlier documents to their most similar topic "
        f"(centroid similarity >= {config.outlier_threshold} and at least that of all but 1% of the topic's papers, "
        f"sharing at least one of its terms, leaving at most {config.max_outlier_fraction:.0%} of documents as "
        f"outliers); {int((final == OUTLIER_TOPIC).sum())} remain outliers"
    )
    return final, n_reassigned


def fit_topic_model(
    texts: list[str],
    embeddings: np.ndarray,
    cluster_labels: np.ndarray,
    config: BuildConfig,
    encoder: Representation | EncoderLike | None = None,
    tokens: TokenizedCorpus | None = None,
    store: StageStore = NULL_STORE,
    titles: list[str] | None = None,
    phrases: PhraseCountsJob | None = None,
) -> TopicFit:
    """Fit BERTopic's topic representations on given cluster labels, then reduce topics and outliers.

    Parameters
    ----------
    texts : model texts, n.
    embeddings : float32, n x dim, L2-normalised.
    cluster_labels : int, n; HDBSCAN labels (-1 = outlier).
    config : resolved build parameters.
    encoder : the corpus's representation (pipeline.represent.representation.Representation) or an encoder with
        ``encode(list[str])``, needed only by the "keybert" representations; kept on the model so it can embed new
        documents later.
    tokens : the texts' pipeline.text.tokens.TokenizedCorpus when already tokenised (the build's vocabulary stage).
    store : the build's layout store (pipeline.store.layouts; the null store by default, which keeps nothing): it
        keeps the c-TF-IDF counts and sentence presence of a vocabulary for a rebuild that learns the same one (most
        changes of clustering parameters do).
    titles : each document's title (n; "" where it has none), or None: a phrase of a title weighs more in the
        topic's name (pipeline.topics.naming.names).
    phrases : the phrase counts of ``texts`` and ``titles`` already under way (pipeline.topics.naming.stored: from
        the store or a second process); None counts them here.

    Steps: learn boilerplate words from the clusters (vocabulary.boilerplate_terms); fix the vocabulary over
    documents; BERTopic in manual mode (:func:`make_bertopic`: ``ClassTfidfTransformer`` and the representation
    model of ``config.representation``); topic reduction to ``max_topics``; outlier reassignment
    (:func:`reassign_outliers`) and ``update_topics`` with the same vectorizer, c-TF-IDF and representation models
    (pipeline.adapters.bertopic_model.refit_topic_terms); the fit check (pipeline.topics.misfits: papers that fit
    no topic move to -1) and ``update_topics`` again when it moved any.

    Returns a TopicFit. The caller checks beforehand that some document has a content word.
    """
    from pipeline.adapters.bertopic_model import keep_document_texts, refit_topic_terms

    n = len(texts)
    notes: list[str] = []
    found = sorted(set(cluster_labels.tolist()) - {OUTLIER_TOPIC})
    nr_topics = config.max_topics if config.max_topics and len(found) > config.max_topics else None
    if nr_topics:
        notes.append(
            f"HDBSCAN found {len(found)} topics; merged to {nr_topics} by c-TF-IDF similarity (BERTopic reduce_topics)"
        )

    vectorizer = topic_vectorizer(texts, cluster_labels, config, tokens, notes, store)
    del tokens  # the vectorizer holds them until its sentence presence is made, then lets them go
    if config.representation == "coherent" and hasattr(vectorizer, "sentence_presence_of"):
        # The representation's sentences x terms, made now, before BERTopic's state (its first c-TF-IDF extraction
        # made them, 0.6 GB above 5.5 at 285,717 papers, the build's peak); the tokens are let go once it is made.
        vectorizer.sentence_presence_of(texts)
    if config.representation.startswith("keybert") and encoder is None:
        raise ValueError(
            "the keybert representations need the corpus's representation "
            "passed as encoder (see pipeline.operations.build)"
        )
    topic_model = make_bertopic(config, vectorizer, nr_topics, encoder)
    # keys for the texts, except for the representations that embed the texts themselves
    documents = texts if config.representation.startswith("keybert") else bertopic_documents(vectorizer, texts)
    topics, _ = topic_model.fit_transform(documents, embeddings=embeddings, y=np.asarray(cluster_labels))
    keep_document_texts(topic_model, documents, texts)
    clustered = np.asarray(topics, dtype=np.int64)

    def refit(assignment: np.ndarray) -> None:
        refit_topic_terms(topic_model, documents, assignment.tolist())  # the same vectorizer, c-TF-IDF, representation

    clustered, coherence_note, presence = keep_coherent_topics(
        topic_model, texts, clustered, refit
    )  # pipeline.topics.membership
    notes.extend([coherence_note] if coherence_note else [])
    final, n_reassigned = reduce_outliers(
        topic_model, embeddings, clustered, presence, refit, config, coherence_note, notes
    )
    started = time.perf_counter()
    check = eject_misfits(embeddings, final, config.fit_share)  # pipeline.topics.misfits
    if check.ejected.any():
        refit(check.topics)  # terms, sizes and names from the papers that stay
        final = check.topics
        n_reassigned = int(((clustered == OUTLIER_TOPIC) & (final != OUTLIER_TOPIC)).sum())
        notes.extend(filter(None, [fit_note(check)]))
    check.seconds = time.perf_counter() - started
    topic_terms = _terms(topic_model)
    for topic in set(final.tolist()):
        topic_terms.setdefault(int(topic), [])

    def documents_of_topics() -> dict[int, list[str]]:
        members = pd.Series(np.arange(n)).groupby(final).agg(list)
        return {int(topic): [texts[row] for row in rows] for topic, rows in members.items()}

    # term labels, made only if a topic has no name to take (the fallback of pipeline.topics.naming)
    term_labels = DeferredLabels(
        {topic: [term for term, _ in pairs] for topic, pairs in topic_terms.items()}, documents_of_topics
    )
    # noun phrases, unique (pipeline.topics.naming)
    counts = phrases.result() if phrases is not None else None
    learned = topic_model.vectorizer_model.__dict__.get("_extra_stop_words", [])  # the boilerplate words
    names, phrase_counts = name_topics(
        texts, final, fallback=term_labels, titles=titles, counts=counts, boilerplate=learned
    )
    subtitles = {topic: SUBTITLE_SEPARATOR.join(name.subtitle) for topic, name in names.items()}
    labels = {topic: names[topic].name if topic in names else term_labels[topic] for topic in term_labels}
    topic_model.set_topic_labels(
        {topic: label for topic, label in labels.items() if topic in topic_model.topic_labels_}
    )
    return TopicFit(
        topic_model, final, clustered, topic_terms, labels, notes, n_reassigned, subtitles, phrase_counts, check
    )


def representative_documents(
    embeddings: np.ndarray, topics: np.ndarray, doc_ids: list[str], per_topic: int
) -> dict[int, list[str]]:
    """Per topic, the ids of the ``per_topic`` documents most cosine-similar to the topic's mean embedding.

    ``embeddings`` is float32 n x dim, L2-normalised; ``topics`` int n. Returns {topic: [doc_id, ...]}, best first.
    """
    result: dict[int, list[str]] = {}
    for topic in sorted(set(topics.tolist())):
        members = np.flatnonzero(topics == topic)
        centroid = embeddings[members].mean(axis=0)
        scores = embeddings[members] @ (centroid / (np.linalg.norm(centroid) or 1.0))
        best = members[np.argsort(-scores, kind="stable")[:per_topic]]
        result[int(topic)] = [doc_ids[i] for i in best]
    return result


def topic_table(fit: TopicFit, representatives: dict[int, list[str]], coordinates: np.ndarray) -> pd.DataFrame:
    """One row per topic present in ``fit.topics``: topic, label, subtitle (its distinguishing phrases), size,
    top_terms ([term, weight] lists), representative_doc_ids, x, y (median map position of its documents), sorted
    by topic id."""
    rows = []
    for topic in sorted(set(fit.topics.tolist())):
        members = fit.topics == topic
        rows.append(
            {
                "topic": int(topic),
                "label": fit.labels[topic],
                "subtitle": fit.subtitles.get(topic, ""),
                "size": int(members.sum()),
                "top_terms": [[term, weight] for term, weight in fit.topic_terms.get(topic, [])],
                "representative_doc_ids": representatives.get(topic, []),
                "x": float(np.median(coordinates[members, 0])),
                "y": float(np.median(coordinates[members, 1])),
            }
        )
    columns = ["topic", "label", "subtitle", "size", "top_terms", "representative_doc_ids", "x", "y"]
    return pd.DataFrame(rows, columns=columns)


def hierarchy_table(topic_model: Any, texts: list[str], labels: dict[int, str]) -> pd.DataFrame:
    """BERTopic's ``hierarchical_topics`` merge tree with snake_case columns (HIERARCHY_COLUMNS).

    Leaves are topic ids; merged nodes have ids above the largest topic. Node names use our labels for leaves.
    Empty (with the columns) when there are fewer than two topics.
    """
    n_topics = len([topic for topic in labels if topic != OUTLIER_TOPIC])
    if n_topics < 2:
        return pd.DataFrame(columns=HIERARCHY_COLUMNS)
    from pipeline.adapters.bertopic_model import plain_ctfidf_terms
    from pipeline.topics.distance import cosine_distance_matrix

    with plain_ctfidf_terms(topic_model), warnings.catch_warnings():
        # BERTopic sets a column on a slice of its documents table once per merge; pandas 2 warns each time.
        warnings.filterwarnings("ignore", category=pd.errors.SettingWithCopyWarning)
        tree = topic_model.hierarchical_topics(
            bertopic_documents(topic_model.vectorizer_model, texts), distance_function=cosine_distance_matrix
        )
    tree = tree.rename(
        columns={
            "Parent_ID": "parent_id",
            "Parent_Name": "parent_name",
            "Child_Left_ID": "child_left_id",
            "Child_Left_Name": "child_left_name",
            "Child_Right_ID": "child_right_id",
            "Child_Right_Name": "child_right_name",
            "Distance": "distance",
            "Topics": "topics",
        }
    )
    for column in ("parent_id", "child_left_id", "child_right_id"):
        tree[column] = tree[column].astype(int)
    for side in ("child_left", "child_right"):
        tree[f"{side}_name"] = [labels.get(node, name) for node, name in zip(tree[f"{side}_id"], tree[f"{side}_name"])]
    tree["topics"] = tree["topics"].map(lambda members: [int(member) for member in members])
    tree["distance"] = tree["distance"].astype(float)
    return tree[HIERARCHY_COLUMNS].reset_index(drop=True)


def save_topic_model(topic_model: Any, folder: Path, embedding_model: str) -> None:
    """Save with safetensors (no pickle): topic embeddings, c-TF-IDF matrix and config; the embedding model by name."""
    topic_model.save(str(folder), serialization="safetensors", save_ctfidf=True, save_embedding_model=embedding_model)
