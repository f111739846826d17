"""Assemble and fit BERTopic on precomputed clusters; derive the topic table, labels and hierarchy.

BERTopic is used in its documented "manual topic modeling" form: our UMAP + HDBSCAN labels are passed as
``y`` with ``BaseDimensionalityReduction`` and ``BaseCluster`` (BERTopic docs, "Manual Topic Modeling"). That
keeps BERTopic for what it is for (c-TF-IDF, representations, topic reduction, outlier reduction, hierarchy,
safetensors serialisation) while the build controls the layout stages: one neighbour search for both UMAP fits,
tiny corpora, and corpora in which every document is an outlier.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from pipeline.cache import HIERARCHY_COLUMNS, OUTLIER_TOPIC
from pipeline.config import BuildConfig
from pipeline.labels import make_labels
from pipeline.vocabulary import make_vectorizer

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
    labels : {topic: label}.
    notes : plain-language messages about the fit (outliers reassigned, topics merged, no topics found).
    n_reassigned : outliers moved into a topic by outlier reduction.
    """

    topic_model: Any
    topics: np.ndarray
    clustered_topics: np.ndarray
    topic_terms: dict[int, list[tuple[str, float]]]
    labels: dict[int, str]
    notes: list[str] = field(default_factory=list)
    n_reassigned: int = 0


def _terms(topic_model: Any) -> dict[int, list[tuple[str, float]]]:
    topics = topic_model.get_topics() or {}
    return {int(topic): [(str(term), float(weight)) for term, weight in pairs if str(term).strip()] for topic, pairs in topics.items()}


def fit_topic_model(texts: list[str], embeddings: np.ndarray, cluster_labels: np.ndarray, config: BuildConfig, encoder: Any = None) -> TopicFit:
    """Fit BERTopic's topic representations on given cluster labels, then reduce topics and outliers.

    Parameters
    ----------
    texts : model texts, n.
    embeddings : float32, n x dim, L2-normalised.
    cluster_labels : int, n; HDBSCAN labels (-1 = outlier).
    config : resolved build parameters.
    encoder : the SentenceTransformer, kept on the model so it can embed new documents later (may be None).

    Returns a TopicFit. Raises EmptyVocabularyError-free: the caller checks the vocabulary first.
    """
    from bertopic import BERTopic
    from bertopic.cluster import BaseCluster
    from bertopic.dimensionality import BaseDimensionalityReduction
    from bertopic.vectorizers import ClassTfidfTransformer

    n = len(texts)
    notes: list[str] = []
    found = sorted(set(cluster_labels.tolist()) - {OUTLIER_TOPIC})
    nr_topics = config.max_topics if config.max_topics and len(found) > config.max_topics else None
    if nr_topics:
        notes.append(f"HDBSCAN found {len(found)} topics; merged to {nr_topics} by c-TF-IDF similarity (BERTopic reduce_topics)")

    vocabulary_vectorizer = make_vectorizer(texts, config.ngram_max, config.min_df or 1, config.max_df)

    def vectorizer():
        from sklearn.base import clone

        return clone(vocabulary_vectorizer)

    ctfidf = ClassTfidfTransformer(reduce_frequent_words=True)
    topic_model = BERTopic(
        embedding_model=encoder,
        umap_model=BaseDimensionalityReduction(),
        hdbscan_model=BaseCluster(),
        vectorizer_model=vectorizer(),
        ctfidf_model=ctfidf,
        top_n_words=config.top_n_words,
        nr_topics=nr_topics,
        calculate_probabilities=False,
        # language=None: BERTopic's "english" preprocessing deletes every character outside [A-Za-z0-9 ] before
        # c-TF-IDF ("vision-language" -> "visionlanguage", CJK text -> nothing); our vectorizer tokenises instead.
        language=None,
        verbose=False,
    )
    topics, _ = topic_model.fit_transform(texts, embeddings=embeddings, y=np.asarray(cluster_labels))
    clustered = np.asarray(topics, dtype=np.int64)
    final = clustered.copy()
    n_outliers = int((clustered == OUTLIER_TOPIC).sum())
    n_topics = len(set(clustered.tolist()) - {OUTLIER_TOPIC})
    n_reassigned = 0
    if n_topics == 0:
        notes.append(
            f"No topics found: all {n} documents were labelled as outliers (min_cluster_size={config.min_cluster_size}). "
            "Lower --min-cluster-size or add documents."
        )
    elif config.reduce_outliers and n_outliers:
        reassigned = np.asarray(
            topic_model.reduce_outliers(texts, clustered.tolist(), strategy="embeddings", embeddings=embeddings, threshold=config.outlier_threshold),
            dtype=np.int64,
        )
        n_reassigned = int(((clustered == OUTLIER_TOPIC) & (reassigned != OUTLIER_TOPIC)).sum())
        if n_reassigned:
            topic_model.update_topics(texts, topics=reassigned.tolist(), vectorizer_model=vectorizer(), ctfidf_model=ctfidf, top_n_words=config.top_n_words)
            final = reassigned
        notes.append(
            f"outlier reduction reassigned {n_reassigned} of {n_outliers} outlier documents to their most similar topic "
            f"(embedding similarity >= {config.outlier_threshold}); {int((final == OUTLIER_TOPIC).sum())} remain outliers"
        )
    topic_terms = _terms(topic_model)
    for topic in set(final.tolist()):
        topic_terms.setdefault(int(topic), [])
    labels = make_labels({topic: [term for term, _ in pairs] for topic, pairs in topic_terms.items()})
    topic_model.set_topic_labels({topic: label for topic, label in labels.items() if topic in topic_model.topic_labels_})
    return TopicFit(topic_model, final, clustered, topic_terms, labels, notes, n_reassigned)


def representative_documents(embeddings: np.ndarray, topics: np.ndarray, doc_ids: list[str], per_topic: int) -> dict[int, list[str]]:
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
    """One row per topic present in ``fit.topics``: topic, label, size, top_terms ([term, weight] lists),
    representative_doc_ids, x, y (median map position of its documents), sorted by topic id."""
    rows = []
    for topic in sorted(set(fit.topics.tolist())):
        members = fit.topics == topic
        rows.append(
            {
                "topic": int(topic),
                "label": fit.labels[topic],
                "size": int(members.sum()),
                "top_terms": [[term, weight] for term, weight in fit.topic_terms.get(topic, [])],
                "representative_doc_ids": representatives.get(topic, []),
                "x": float(np.median(coordinates[members, 0])),
                "y": float(np.median(coordinates[members, 1])),
            }
        )
    return pd.DataFrame(rows, columns=["topic", "label", "size", "top_terms", "representative_doc_ids", "x", "y"])


def hierarchy_table(topic_model: Any, texts: list[str], labels: dict[int, str]) -> pd.DataFrame:
    """BERTopic's ``hierarchical_topics`` merge tree with snake_case columns (HIERARCHY_COLUMNS).

    Leaves are topic ids; merged nodes have ids above the largest topic. Node names use our labels for leaves.
    Empty (with the columns) when there are fewer than two topics.
    """
    n_topics = len([topic for topic in labels if topic != OUTLIER_TOPIC])
    if n_topics < 2:
        return pd.DataFrame(columns=HIERARCHY_COLUMNS)
    tree = topic_model.hierarchical_topics(texts)
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
