"""Which clusters are topics, and which outliers may join one: checks that do not depend on the encoder.

HDBSCAN finds dense regions in a UMAP layout, and UMAP makes regions even out of papers that have nothing in
common: 24 abstracts on unrelated subjects (inks, volcanic ash, bond spreads, ...) gave 6 "topics", and outlier
reduction then filed the last one under its nearest topic however far it was. Cosine similarity cannot tell
that apart by itself: its scale is the encoder's (random pairs of ICLR abstracts are at 0.05 with the MiniLM
transformer and at 0.96 with its static distillation), and the lead is replacing the representation.
What does tell it apart is whether the papers of a topic use the same words. Measured with
``bench/topic_membership.py`` (share of a topic's 10 leading c-TF-IDF terms that occur in at least two of its
papers):

==========================================================  ==========================
clusters                                                    share of shared terms
==========================================================  ==========================
24 unrelated abstracts, transformer (6 clusters)            0.0 - 0.1
24 unrelated abstracts, static (4 clusters)                 0.0
951 ICLR abstracts, static (14 topics)                      0.8 - 1.0
11,670 ICLR abstracts, static (30 topics)                   0.9 - 1.0
951 ICLR abstracts + the 24 unrelated, static (16 topics)   0.8 - 1.0
==========================================================  ==========================

So a topic coheres when at least COHERENT_SHARE (0.5, half way) of its leading terms are shared; a cluster
that does not is dissolved into the outliers (:func:`incoherent_topics`).

An outlier joins a topic only when it passes the topic's floor (:func:`reassignment_floor`): it uses at least one
of the topic's terms (the 24 unrelated abstracts put among the 951 never do; 12% of the 951's real outliers do
not either, and stay outliers), and its cosine similarity to the topic's centroid is at least the
MEMBER_PERCENTILE-th percentile of the similarities of the topic's own papers to their centroid (each left out of
it): a paper less typical than 95% of a topic's papers is not filed under it. Both are relative to the corpus
and the topic, not to the encoder's scale.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

OUTLIER_TOPIC = -1
COHERENT_SHARE = 0.35
COHERENCE_TERMS = 10
MEMBERSHIP_TERMS = 25
MEMBER_PERCENTILE = 5.0


def term_presence(vectorizer: Any, texts: Sequence[str]) -> Any:
    """Binary documents x terms matrix (scipy CSR) of the fitted ``vectorizer``'s vocabulary in ``texts``."""
    return (vectorizer.transform(list(texts)) > 0).tocsr()


def _term_columns(terms: Sequence[str], vocabulary: Mapping[str, int], limit: int) -> list[int]:
    return [vocabulary[term] for term in list(terms)[:limit] if term in vocabulary]


def shared_term_share(presence: Any, members: np.ndarray, columns: list[int]) -> float:
    """Share of ``columns`` (a topic's leading terms) present in at least two of the rows ``members``; 1.0 for a
    topic of one paper or without terms (nothing to compare)."""
    if len(members) < 2 or not columns:
        return 1.0
    counts = np.asarray(presence[members][:, columns].sum(axis=0)).ravel()
    return float((counts >= 2).mean())


def incoherent_topics(topics: np.ndarray, topic_terms: Mapping[int, Sequence[str]], presence: Any, vocabulary: Mapping[str, int]) -> dict[int, float]:
    """{topic: share of shared leading terms} for each topic whose share is below COHERENT_SHARE (outliers aside).

    ``topics``: int, n (per document); ``topic_terms``: {topic: ranked terms}; ``presence``: :func:`term_presence`
    of the same documents; ``vocabulary``: term -> column of ``presence``.
    """
    found: dict[int, float] = {}
    for topic in sorted(set(np.asarray(topics).tolist()) - {OUTLIER_TOPIC}):
        members = np.flatnonzero(topics == topic)
        share = shared_term_share(presence, members, _term_columns(topic_terms.get(topic, []), vocabulary, COHERENCE_TERMS))
        if share < COHERENT_SHARE:
            found[topic] = share
    return found


def dissolve(topics: np.ndarray, dissolved: Sequence[int]) -> np.ndarray:
    """``topics`` with the ``dissolved`` topics' documents made outliers and the other topics renumbered 0..k-1 in
    their old order (BERTopic expects consecutive topic ids)."""
    topics = np.asarray(topics, dtype=np.int64).copy()
    topics[np.isin(topics, list(dissolved))] = OUTLIER_TOPIC
    kept = sorted(set(topics.tolist()) - {OUTLIER_TOPIC})
    renumber = {old: new for new, old in enumerate(kept)}
    return np.array([renumber.get(int(topic), OUTLIER_TOPIC) for topic in topics], dtype=np.int64)


def dissolution_note(dissolved: Mapping[int, float], topics_before: np.ndarray, n_left: int) -> str:
    """Plain words on what :func:`incoherent_topics` found: how many clusters, which papers; "No topics found"
    first when none is left (the dashboard looks for that phrase)."""
    n_papers = int(np.isin(topics_before, list(dissolved)).sum())
    shares = ", ".join(f"{share:.0%}" for share in dissolved.values())
    why = (
        f"{len(dissolved)} of the clusters HDBSCAN proposed were not kept as topics because their papers share almost no "
        f"words (of each one's {COHERENCE_TERMS} leading terms, only {shares} occur in two of its papers; a topic needs "
        f"{COHERENT_SHARE:.0%}); their {n_papers} papers are outliers"
    )
    if n_left == 0:
        return f"No topics found: the papers are on unrelated subjects. {why[0].upper()}{why[1:]}. Add papers on shared subjects to get topics."
    return why


def leave_one_out_similarities(embeddings: np.ndarray, members: np.ndarray) -> np.ndarray:
    """Cosine similarity of each member to the mean of the other members (float64, len(members)); 1.0 for a
    topic of one paper. ``embeddings``: float32 n x dim, L2-normalised rows."""
    if len(members) < 2:
        return np.ones(len(members))
    vectors = embeddings[members].astype(np.float64)
    others = vectors.sum(axis=0) - vectors
    norms = np.maximum(np.linalg.norm(others, axis=1), 1e-12)
    return np.einsum("ij,ij->i", vectors, others) / norms


def reassignment_floor(
    embeddings: np.ndarray,
    topics: np.ndarray,
    topic_terms: Mapping[int, Sequence[str]],
    presence: Any,
    vocabulary: Mapping[str, int],
) -> tuple[dict[int, float], Any]:
    """Per topic, the lowest centroid similarity at which an outlier may join it, and who uses its words.

    Returns ({topic: MEMBER_PERCENTILE-th percentile of its members' leave-one-out centroid similarity},
    uses: a function ``uses(document_row, topic) -> bool``, True when the document contains at least one of the
    topic's MEMBERSHIP_TERMS leading terms). See the module docstring for why and the measurements.
    """
    floors: dict[int, float] = {}
    columns: dict[int, list[int]] = {}
    for topic in sorted(set(np.asarray(topics).tolist()) - {OUTLIER_TOPIC}):
        members = np.flatnonzero(topics == topic)
        floors[topic] = float(np.percentile(leave_one_out_similarities(embeddings, members), MEMBER_PERCENTILE))
        columns[topic] = _term_columns(topic_terms.get(topic, []), vocabulary, MEMBERSHIP_TERMS)

    def uses(row: int, topic: int) -> bool:
        wanted = columns.get(topic, [])
        return not wanted or bool(presence[row, wanted].sum() > 0)

    return floors, uses


def keep_coherent_topics(topic_model: Any, texts: Sequence[str], topics: np.ndarray, refit: Any) -> tuple[np.ndarray, str | None, Any]:
    """Dissolve the topics of a fitted BERTopic whose papers share no vocabulary (:func:`incoherent_topics`).

    ``refit(new_topics)`` must update the model's representations for the new assignment (BERTopic
    ``update_topics`` with the build's vectorizer, c-TF-IDF and representation models). Returns (topics, renumbered
    when some were dissolved; the note for the manifest or None; the term presence matrix, for
    :func:`eligibility`).
    """
    vectorizer = topic_model.vectorizer_model
    presence = term_presence(vectorizer, texts)
    terms = {int(topic): [str(term) for term, _ in pairs] for topic, pairs in (topic_model.get_topics() or {}).items()}
    bad = incoherent_topics(topics, terms, presence, vectorizer.vocabulary_)
    if not bad:
        return topics, None, presence
    kept = dissolve(topics, bad)
    refit(kept)
    return kept, dissolution_note(bad, topics, len(set(kept.tolist()) - {OUTLIER_TOPIC})), presence


def eligibility(topic_model: Any, embeddings: np.ndarray, topics: np.ndarray, presence: Any) -> Any:
    """``eligible(rows, candidate_topics, similarities) -> bool array``: which outliers pass their candidate topic's
    floor (:func:`reassignment_floor`), for :func:`pipeline.model.reassign_outliers`."""
    terms = {int(topic): [str(term) for term, _ in pairs] for topic, pairs in (topic_model.get_topics() or {}).items()}
    floors, uses = reassignment_floor(embeddings, topics, terms, presence, topic_model.vectorizer_model.vocabulary_)

    def eligible(rows: np.ndarray, candidates: np.ndarray, similarities: np.ndarray) -> np.ndarray:
        return np.array(
            [similarity >= floors.get(int(topic), np.inf) and uses(int(row), int(topic)) for row, topic, similarity in zip(rows, candidates, similarities)],
            dtype=bool,
        )

    return eligible
