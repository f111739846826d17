"""Which clusters are topics, and which outliers may join one: checks that do not depend on the encoder.

HDBSCAN finds dense regions in a UMAP layout, and UMAP makes regions even out of papers that have nothing in
common: 24 abstracts on unrelated subjects (inks, volcanic ash, bond spreads, ...) gave 6 "topics", and outlier
reduction then filed the last one under its nearest topic however far it was. Cosine similarity cannot tell
that apart by itself: its scale is the encoder's (random pairs of ICLR abstracts are at 0.05 with the MiniLM
transformer and at 0.96 with its static distillation), and the lead is replacing the representation.
What does tell it apart is whether the papers of a topic use the same words. Measured with
``bench/topic_membership.py`` (builds without outlier reduction; share of a topic's 10 leading c-TF-IDF terms
that occur in at least two of its papers, min / median / max over topics):

=============================================================  ===================  ==================
clusters                                                       static encoder       transformer
=============================================================  ===================  ==================
24 unrelated abstracts (../shared/cases/02-all-outliers)       0.00 (4 clusters)    0.00 - 0.10 (6)
951 ICLR abstracts                                             0.80 / 1.00 / 1.00   0.90 / 1.00 / 1.00
951 ICLR abstracts + the 24 unrelated                          0.80 / 1.00 / 1.00   0.90 / 1.00 / 1.00
11,660 ICLR abstracts (whole conference)                       0.90 / 1.00 / 1.00
11,671 ICLR titles                                             0.60 / 1.00 / 1.00
=============================================================  ===================  ==================

So a topic coheres when at least COHERENT_SHARE of its leading terms are shared: 0.35, half way between the
highest share of a cluster of unrelated papers (0.10) and the lowest of a real topic (0.60, titles); a cluster
below it is dissolved into the outliers (:func:`incoherent_topics`).

An outlier joins its most similar topic only when it passes the topic's floor (:func:`reassignment_floor`): it
uses at least one of the topic's 25 leading terms, and its cosine similarity to the topic's centroid is at least
the MEMBER_PERCENTILE-th percentile of the topic's own papers' similarities to their centroid (each left out of
it), so a paper is never filed under a topic it is less like than nearly all of the topic's papers. Both are
relative to the corpus and the topic, not to the encoder's scale. Outliers passing (of HDBSCAN's outliers, in
builds without outlier reduction; the 24 unrelated abstracts mixed into the corpus):

=====================================  ==============  ===========  =============  =============  =============
corpus, encoder                        group           terms alone  p0 and terms   p1 and terms   p5 and terms
=====================================  ==============  ===========  =============  =============  =============
951 + 24 unrelated, static             ICLR papers     297/339      294/339        291/339        278/339
                                       unrelated       0/5          0/5            0/5            0/5
11,660 + 24 unrelated, static          ICLR papers     5206/5839    5117/5839      5036/5839      4704/5839
                                       unrelated       2/11         0/11           0/11           0/11
951 + 24 unrelated, transformer        ICLR papers     144/159      131/159        129/159        122/159
                                       unrelated       1/13         0/13           0/13           0/13
=====================================  ==============  ===========  =============  =============  =============

Terms alone let some unrelated papers through, the similarity floor alone too (3 of 11 at p0); together every
unrelated paper is kept out from p0 on. MEMBER_PERCENTILE is 1: the lowest floor that keeps them all out, a little
sturdier than the single least typical paper (p0). Outliers that pass are moved most similar first until 5% remain
(pipeline.topics.model.reassign_outliers). Whole builds with the static encoder, floor against no floor (one run each,
machine shared): the whole conference keeps 6.7% outliers against 5.0%, NPMI 0.233 against 0.235; the 951
abstracts 5.3% against 5.0%, NPMI 0.131 against 0.125 (16 topics either way).

With the default tfidf-svd representation (``bench/topic_membership.py --with-unrelated --input <whole conference>``):
the whole conference's 59 topics share 0.80 / 1.00 / 1.00 of their leading terms; with the 24 unrelated abstracts
mixed in, none of the 10 that HDBSCAN leaves as outliers passes the floor with terms (0/10), but HDBSCAN itself puts
the other 14 into topics, where these checks do not reach; the fit check after outlier reduction
(pipeline.topics.misfits) takes most of them out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from pipeline.geometry.centroids import leave_one_out_similarities
from pipeline.schema import OUTLIER_TOPIC

COHERENT_SHARE = 0.35
COHERENCE_TERMS = 10
MEMBERSHIP_TERMS = 25
MEMBER_PERCENTILE = 1.0


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


def incoherent_topics(
    topics: np.ndarray, topic_terms: Mapping[int, Sequence[str]], presence: Any, vocabulary: Mapping[str, int]
) -> dict[int, float]:
    """{topic: share of shared leading terms} for each topic whose share is below COHERENT_SHARE (outliers aside).

    ``topics``: int, n (per document); ``topic_terms``: {topic: ranked terms}; ``presence``: :func:`term_presence`
    of the same documents; ``vocabulary``: term -> column of ``presence``.
    """
    found: dict[int, float] = {}
    for topic in sorted(set(np.asarray(topics).tolist()) - {OUTLIER_TOPIC}):
        members = np.flatnonzero(topics == topic)
        share = shared_term_share(
            presence, members, _term_columns(topic_terms.get(topic, []), vocabulary, COHERENCE_TERMS)
        )
        if share < COHERENT_SHARE:
            found[topic] = share
    return found


def dissolve(topics: np.ndarray, dissolved: Iterable[int]) -> np.ndarray:
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
    many = len(dissolved) > 1
    why = (
        f"{len(dissolved)} candidate topic{'s' if many else ''} {'were' if many else 'was'} not kept because "
        f"{'their' if many else 'its'} papers share almost no words (of "
        f"{'each one' + chr(39) + 's' if many else 'its'} {COHERENCE_TERMS} leading terms, only {shares} occur in two "
        f"of its papers; a topic needs {COHERENT_SHARE:.0%}); {'their' if many else 'its'} {n_papers} papers are "
        "outliers"
    )
    if n_left == 0:
        return (
            "No topics found: the papers are on unrelated subjects. "
            f"{why[0].upper()}{why[1:]}. Add papers on shared subjects to get topics."
        )
    return why


def reassignment_floor(
    embeddings: np.ndarray,
    topics: np.ndarray,
    topic_terms: Mapping[int, Sequence[str]],
    presence: Any,
    vocabulary: Mapping[str, int],
) -> tuple[dict[int, float], Any]:
    """Per topic, the lowest centroid similarity at which an outlier may join it, and who uses its words.

    Returns ({topic: MEMBER_PERCENTILE-th percentile of its members' leave-one-out centroid similarity},
    uses_any: a function ``uses_any(document_rows, topic) -> bool array``, True where the document contains at least
    one of the topic's MEMBERSHIP_TERMS leading terms). See the module docstring for why and the measurements.
    """
    floors: dict[int, float] = {}
    columns: dict[int, list[int]] = {}
    for topic in sorted(set(np.asarray(topics).tolist()) - {OUTLIER_TOPIC}):
        members = np.flatnonzero(topics == topic)
        floors[topic] = float(np.percentile(leave_one_out_similarities(embeddings, members), MEMBER_PERCENTILE))
        columns[topic] = _term_columns(topic_terms.get(topic, []), vocabulary, MEMBERSHIP_TERMS)

    def uses_any(rows: np.ndarray, topic: int) -> np.ndarray:
        wanted = columns.get(topic, [])
        if not wanted:
            return np.ones(len(rows), dtype=bool)
        return np.asarray(presence[rows][:, wanted].sum(axis=1)).ravel() > 0

    return floors, uses_any


def keep_coherent_topics(
    topic_model: Any, texts: Sequence[str], topics: np.ndarray, refit: Any
) -> tuple[np.ndarray, str | None, Any]:
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
    floor (:func:`reassignment_floor`), for :func:`pipeline.topics.model.reassign_outliers`."""
    terms = {int(topic): [str(term) for term, _ in pairs] for topic, pairs in (topic_model.get_topics() or {}).items()}
    floors, uses_any = reassignment_floor(embeddings, topics, terms, presence, topic_model.vectorizer_model.vocabulary_)

    def eligible(rows: np.ndarray, candidates: np.ndarray, similarities: np.ndarray) -> np.ndarray:
        rows, candidates = np.asarray(rows, dtype=np.int64), np.asarray(candidates, dtype=np.int64)
        floor = np.array([floors.get(int(topic), np.inf) for topic in candidates], dtype=float)
        passed = np.asarray(similarities) >= floor
        for topic in np.unique(candidates[passed]):  # the term test, one sparse slice per topic
            at = np.flatnonzero(passed & (candidates == topic))
            passed[at] = uses_any(rows[at], int(topic))
        return passed

    return eligible
