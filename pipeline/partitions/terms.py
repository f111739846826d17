"""The topics' term counts over row partitions: each partition counts its documents' terms over the c-TF-IDF
vocabulary and sums them per topic; the partitions' sums are added on the driver.

c-TF-IDF (BERTopic's class-based TF-IDF) reads one row of term counts per topic: the sum of its documents' counts
(pipeline.text.vocabulary.FixedVocabularyVectorizer: a topic's joined documents count as the sum of theirs, no word
pair spans two papers). Counting is row-local and a sum is a sum, so each task counts its partition as
pipeline.text.vocabulary.vectorizer_for_vocabulary does (the build's own counting: the tokens of pipeline.text.tokens,
the same counts as scikit-learn's CountVectorizer; each worker keeps the vocabulary's sorted lookup for its later
tasks) and returns a (topics x terms) sparse matrix and the terms'
document frequencies; the driver adds the partitions' matrices (integers: exactly the single-process sums). The
weighting itself (c-TF-IDF over topics x terms) is small and stays on the driver.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp

from pipeline.partitions.cluster import DEFAULT_PARTITION_ROWS, partition_bounds, send


@dataclass(frozen=True)
class CountSettings:
    """What every partition counts with, sent to each worker once: the topics' ids (row order of the result), the
    c-TF-IDF vocabulary (terms in column order), the whole stop list and the longest n-gram."""

    topic_ids: list[int]
    vocabulary: list[str]
    stop_words: list[str]
    ngram_max: int
    digest: str = ""


# Vocabulary lookups a worker keeps (by the settings' digest): the build's, and one more.
KEPT_LOOKUPS = 2
_LOOKUPS: OrderedDict[str, tuple[np.ndarray, np.ndarray]] = OrderedDict()


def vocabulary_lookup(vocabulary: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(the terms sorted: str array, each one's column in ``vocabulary``: int64), for finding a term's column by
    binary search."""
    terms = np.asarray(list(vocabulary), dtype=str)
    order = np.argsort(terms, kind="stable").astype(np.int64)
    return terms[order], order


def kept_lookup(settings: CountSettings) -> tuple[np.ndarray, np.ndarray]:
    """On a worker: :func:`vocabulary_lookup` of the settings' vocabulary, made once per worker and vocabulary."""
    kept = _LOOKUPS.get(settings.digest)
    if kept is None:
        kept = _LOOKUPS[settings.digest] = vocabulary_lookup(settings.vocabulary)
        while len(_LOOKUPS) > KEPT_LOOKUPS:
            _LOOKUPS.popitem(last=False)
    _LOOKUPS.move_to_end(settings.digest)
    return kept


def pair_counts(
    texts: list[str], lookup: tuple[np.ndarray, np.ndarray], n_terms: int, extra_stop_words: Sequence[str]
) -> sp.csr_matrix:
    """Counts (CSR int64, len(texts) x n_terms) of the vocabulary's single words and word pairs in ``texts``, as
    pipeline.text.vocabulary.vectorizer_for_vocabulary counts them for ``ngram_max`` 2 (the texts' tokens,
    pipeline.text.tokens.ngram_counts, then each term found in the vocabulary: here by binary search in ``lookup``,
    made once per worker, where that function aligns the whole vocabulary again for every call)."""
    from pipeline.text.tokens import ngram_counts, tokenize

    names, counts = ngram_counts(tokenize(texts), sorted(extra_stop_words))
    terms, columns = lookup
    if not len(names) or not len(terms):
        return sp.csr_matrix((len(texts), n_terms), dtype=np.int64)
    position = np.minimum(np.searchsorted(terms, names), len(terms) - 1)
    present = np.flatnonzero(terms[position] == names)
    found = sp.csr_matrix(counts[:, present], dtype=np.int64).tocoo()
    aligned = sp.csr_matrix(
        (found.data, (found.row, columns[position[present]][found.col])), shape=(len(texts), n_terms), dtype=np.int64
    )
    aligned.eliminate_zeros()
    aligned.sort_indices()
    return aligned


class TermCounts(NamedTuple):
    """``counts``: CSR int64, len(topic_ids) x len(vocabulary), row i the summed term counts of the documents of
    topic ``topic_ids[i]``; ``document_frequency``: int64, len(vocabulary), the documents holding each term."""

    counts: sp.csr_matrix
    document_frequency: np.ndarray


def topic_term_counts(
    texts: list[str],
    topics: np.ndarray,
    topic_ids: Sequence[int],
    vocabulary: Sequence[str],
    stop_words: Sequence[str],
    ngram_max: int = 2,
    lookup: tuple[np.ndarray, np.ndarray] | None = None,
) -> TermCounts:
    """One task: the :class:`TermCounts` of ``texts`` (model texts) whose topics are ``topics`` (int, len(texts);
    -1 outliers; each in ``topic_ids``). ``vocabulary`` (terms in column order), ``stop_words`` (the whole stop
    list) and ``ngram_max``: the c-TF-IDF vectorizer's. With ``ngram_max`` 2 the counts are :func:`pair_counts`
    (``lookup``: :func:`vocabulary_lookup` of the vocabulary, made here when None), otherwise
    pipeline.text.vocabulary.vectorizer_for_vocabulary's. Raises ValueError for a topic not in ``topic_ids``."""
    from pipeline.text.vocabulary import vectorizer_for_vocabulary
    from pipeline.text.words import STOP_WORDS

    topics = np.asarray(topics, dtype=np.int64)
    ids = np.asarray(list(topic_ids), dtype=np.int64)
    order = np.argsort(ids, kind="stable")
    position = np.searchsorted(ids[order], topics)
    if len(topics) and (position.max() >= len(ids) or not np.array_equal(ids[order][position], topics)):
        raise ValueError("a document's topic is not among topic_ids")
    rows = order[position] if len(topics) else np.zeros(0, np.int64)
    if not texts:
        return TermCounts(
            sp.csr_matrix((len(ids), len(vocabulary)), dtype=np.int64), np.zeros(len(vocabulary), np.int64)
        )
    if ngram_max == 2:
        extra = sorted(set(stop_words) - set(STOP_WORDS))
        counts = pair_counts(list(texts), lookup or vocabulary_lookup(vocabulary), len(vocabulary), extra)
    else:
        counts = vectorizer_for_vocabulary(list(texts), vocabulary, stop_words, ngram_max).transform(list(texts))
    membership = sp.csr_matrix(
        (np.ones(len(rows), np.int64), (rows, np.arange(len(rows)))), shape=(len(ids), len(rows)), dtype=np.int64
    )
    summed = sp.csr_matrix(membership @ counts, dtype=np.int64)
    summed.sort_indices()
    frequency = np.bincount(counts.indices, minlength=len(vocabulary)).astype(np.int64)
    return TermCounts(summed, frequency)


def topic_term_counts_partitioned(
    client: Any,
    texts: list[str],
    topics: np.ndarray,
    topic_ids: Sequence[int],
    vocabulary: Sequence[str],
    stop_words: Sequence[str],
    ngram_max: int = 2,
    partition_rows: int = DEFAULT_PARTITION_ROWS,
) -> TermCounts:
    """:func:`topic_term_counts` of all ``texts`` as one Dask task per ``partition_rows`` documents, the partitions'
    counts and frequencies added on the driver (the vocabulary and stop words sent to every worker once)."""
    bounds = partition_bounds(len(texts), partition_rows)
    if not bounds:
        return topic_term_counts([], np.zeros(0, np.int64), topic_ids, vocabulary, stop_words, ngram_max)
    digest = hashlib.sha256("\n".join(vocabulary).encode("utf-8")).hexdigest()
    settings = CountSettings(list(topic_ids), list(vocabulary), list(stop_words), ngram_max, digest)
    shared = send(client, settings, broadcast=True)
    parts = send(client, [(texts[start:stop], np.asarray(topics[start:stop])) for start, stop in bounds])
    futures = client.map(count_partition, parts, [shared] * len(parts), pure=False)
    total = sp.csr_matrix((len(topic_ids), len(vocabulary)), dtype=np.int64)
    frequency = np.zeros(len(vocabulary), np.int64)
    for future in futures:  # added in order as each is ready: the driver holds one partition's matrix at a time
        part: TermCounts = future.result()
        total = sp.csr_matrix(total + part.counts, dtype=np.int64)
        frequency += part.document_frequency
    total.sort_indices()
    return TermCounts(total, frequency)


def count_partition(part: tuple[list[str], np.ndarray], settings: CountSettings) -> TermCounts:
    """One task: :func:`topic_term_counts` of a partition ``(texts, topics)`` with the broadcast settings."""
    texts, topics = part
    lookup = kept_lookup(settings) if settings.ngram_max == 2 else None
    return topic_term_counts(
        texts, topics, settings.topic_ids, settings.vocabulary, settings.stop_words, settings.ngram_max, lookup
    )
