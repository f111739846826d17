"""Metrics of the topics alone: how coherent and how distinct their terms are, and how the documents spread over them.

- ``npmi``: NPMI coherence of each topic's top 10 terms (Bouma 2009; Röder et al. 2015, "Exploring the space
  of topic coherence measures"), computed as gensim's ``CoherenceModel(coherence="c_npmi")`` computes it, with its
  default sliding window of 10 tokens (pipeline.quality.npmi: the same figures from sparse matrix products), averaged
  over topics (outlier topic -1 excluded). The reference corpus is the corpus's own model texts tokenised by
  scikit-learn's default ``CountVectorizer()`` analyzer, stop words kept: every configuration is scored on the same
  tokens, and a stop word in a top list is scored like any other word (it co-occurs with everything, so it drags the
  topic towards 0). Terms the reference tokens lack, such as multi-word terms, are skipped; a topic left with fewer than
  2 scorable terms is skipped and counted. Range [-1, 1]; higher means the terms of a topic occur together more than
  chance.
- ``topic_diversity``: the share of unique terms among all topics' top 25 terms (Dieng, Ruiz & Blei 2020,
  "Topic modeling in embedding spaces"; used in the BERTopic paper, Grootendorst 2022). Range (0, 1]; 1 means no
  two topics share a top term.
- ``outlier_fraction``, ``n_topics``, ``largest_topic_share``: share of documents in topic -1, number of topics
  other than -1, and the largest topic's share of all documents.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pipeline.quality.npmi import (
    REFERENCE_TOKEN,
    EncodedDocuments,
    cached_reference_documents,
    encode_documents,
    topic_npmi,
)
from pipeline.schema import OUTLIER_TOPIC
from pipeline.store.layouts import NULL_STORE, StageStore

NPMI_TOP_N = 10
DIVERSITY_TOP_N = 25


def reference_tokens(texts: Sequence[str]) -> list[list[str]]:
    """Tokenise texts as scikit-learn's default ``CountVectorizer()`` analyzer does (lower case, runs of 2+ word
    characters, stop words kept), with its token pattern applied directly. Returns one token list per text; the
    reference corpus for :func:`npmi_coherence` (which also takes it encoded: pipeline.quality.npmi
    ``reference_documents``)."""
    return [REFERENCE_TOKEN.findall((text or "").lower()) for text in texts]


@dataclass
class Coherence:
    """NPMI coherence of a set of topics.

    Attributes
    ----------
    mean : mean NPMI over the scored topics, NaN when none could be scored.
    per_topic : {topic: NPMI} for the scored topics.
    skipped : topics with fewer than 2 terms present in the reference tokens.
    terms_scored_mean : mean number of terms scored per scored topic (at most ``top_n``).
    """

    mean: float
    per_topic: dict[int, float] = field(default_factory=dict)
    skipped: list[int] = field(default_factory=list)
    terms_scored_mean: float = float("nan")


def _real_topics(topic_terms: Mapping[int, Sequence[str]]) -> dict[int, list[str]]:
    return {
        int(topic): [str(term) for term in terms] for topic, terms in topic_terms.items() if int(topic) != OUTLIER_TOPIC
    }


def npmi_coherence(
    topic_terms: Mapping[int, Sequence[str]], tokens: list[list[str]] | EncodedDocuments, top_n: int = NPMI_TOP_N
) -> Coherence:
    """NPMI coherence (gensim ``c_npmi``, sliding window 10) of each topic's first ``top_n`` terms.

    Parameters
    ----------
    topic_terms : {topic: terms, best first}; topic -1 is ignored.
    tokens : the reference corpus, from :func:`reference_tokens`, or encoded (pipeline.quality.npmi
        ``reference_documents``, ``cached_reference_documents``).
    top_n : how many leading terms of each topic are scored.

    Terms absent from ``tokens`` (multi-word terms, words the reference tokeniser splits) are skipped; a topic
    with fewer than 2 terms left is skipped and listed in ``Coherence.skipped``. Source: Röder, Both & Hinneburg
    (2015); the figures are gensim's (pipeline.quality.npmi computes them without its per-window Python loop).
    """
    encoded = tokens if isinstance(tokens, EncodedDocuments) else encode_documents(tokens)
    vocabulary = set(encoded.words.tolist())
    scorable: dict[int, list[str]] = {}
    skipped: list[int] = []
    for topic, terms in sorted(_real_topics(topic_terms).items()):
        present = [term for term in dict.fromkeys(terms[:top_n]) if term in vocabulary]
        if len(present) >= 2:
            scorable[topic] = present
        else:
            skipped.append(topic)
    if not scorable:
        return Coherence(float("nan"), {}, skipped)
    per_topic = topic_npmi(scorable, encoded)
    terms_scored = float(np.mean([len(terms) for terms in scorable.values()]))
    return Coherence(float(np.mean(list(per_topic.values()))), per_topic, skipped, terms_scored)


def topic_diversity(topic_terms: Mapping[int, Sequence[str]], top_n: int = DIVERSITY_TOP_N) -> float:
    """Share of unique terms among all topics' first ``top_n`` terms (Dieng, Ruiz & Blei 2020).

    ``topic_terms`` is {topic: terms, best first}; topic -1 is ignored. Returns a value in (0, 1], or NaN when
    no topic has a term. Topics with fewer than ``top_n`` terms contribute the terms they have.
    """
    lists = [terms[:top_n] for terms in _real_topics(topic_terms).values()]
    total = sum(len(terms) for terms in lists)
    if total == 0:
        return float("nan")
    return len({term for terms in lists for term in terms}) / total


def topic_shares(topics: Sequence[int] | np.ndarray) -> dict[str, float | int]:
    """``n_topics`` (ids other than -1), ``outlier_fraction`` and ``largest_topic_share`` of an assignment.

    ``topics`` is int, n (one topic id per document, -1 = outlier). Shares are of all n documents.
    """
    topics = np.asarray(topics, dtype=np.int64)
    n = max(len(topics), 1)
    real = topics[topics != OUTLIER_TOPIC]
    sizes = np.unique(real, return_counts=True)[1] if len(real) else np.zeros(0, dtype=np.int64)
    return {
        "n_topics": int(len(sizes)),
        "outlier_fraction": float((topics == OUTLIER_TOPIC).sum() / n),
        "largest_topic_share": float(sizes.max() / n) if len(sizes) else 0.0,
    }


def coherence_metrics(
    texts: Sequence[str], topic_terms: Mapping[int, Sequence[str]], store: StageStore = NULL_STORE
) -> dict[str, Any]:
    """The metrics of the topics' terms alone: npmi (mean NPMI of the top terms over ``texts`` as the reference
    corpus, :func:`npmi_coherence`), npmi_topics_skipped, npmi_terms_scored_mean, topic_diversity and npmi_by_topic
    ({topic id as str: NPMI rounded to 4 places}). They need neither the map nor the embeddings. ``store``
    (pipeline.store.layouts) keeps the tokenised reference corpus for a rebuild over the same texts."""
    coherence = npmi_coherence(topic_terms, cached_reference_documents(texts, store))
    return {
        "npmi": coherence.mean,
        "npmi_topics_skipped": len(coherence.skipped),
        "npmi_terms_scored_mean": coherence.terms_scored_mean,
        "topic_diversity": topic_diversity(topic_terms),
        "npmi_by_topic": {str(topic): round(value, 4) for topic, value in coherence.per_topic.items()},
    }
