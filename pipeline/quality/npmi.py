"""NPMI topic coherence over boolean sliding windows, the figures of gensim's ``c_npmi``, vectorised.

gensim's ``CoherenceModel(coherence="c_npmi")`` (Röder, Both & Hinneburg 2015; window of 10 tokens) walks every
window of every document in Python: 8 s of a whole-conference build (11,672 abstracts, 2.2 million windows), more
than any other part of the evaluation. This module computes the same numbers with sparse matrix products:

1. Each document is a list of tokens; a document of L tokens has L - W + 1 windows of W tokens (one window, the
   whole document, when L < W; an empty document counts one empty window). The number of windows is N.
2. A word "occurs in" a window as gensim's ``WordOccurrenceAccumulator`` records it. gensim slides the window by
   one token at a time, marking the token that enters as present and the token that leaves as absent, so a word
   whose copy leaves the window is marked absent even when another copy is still inside, until a new copy enters.
   Hence: the word is present in window s when its last copy in the window, at p, entered at least W tokens after
   the copy before s (or there is none). An occurrence at p is that last copy for the windows
   ``[max(0, p - W + 1), min(p, next - W, L - W, f)]``, next the word's next position and f its first position at
   or after p - W + 1. (A plain "the window contains the word" rule differs from gensim's published figures by up
   to a few thousandths.)
3. With M the binary windows x words matrix, a word's count is a column sum of M and a pair's count the entry of
   M^T M; P = count / N. For each pair of a topic's terms, NPMI = log((P(a, b) + e) / (P(a) P(b))) /
   -log(P(a, b) + e), e = 1e-12 (gensim's ``log_ratio_measure`` with ``normalize=True``); a topic's coherence is the
   mean over its pairs of terms (gensim's ``s_one_one`` segmentation and arithmetic mean).

tests/test_npmi.py checks the figures against gensim on real abstracts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import scipy.sparse as sp

WINDOW = 10
EPSILON = 1e-12


def window_counts(
    tokens: Sequence[Sequence[str]], words: Sequence[str], window: int = WINDOW
) -> tuple[np.ndarray, sp.csr_matrix, int]:
    """Window counts of ``words`` in the documents ``tokens``, as gensim's boolean sliding window counts them.

    Returns (counts: int64 len(words) -- windows in which each word counts as present, pairs: int64 sparse
    len(words) x len(words) -- windows in which both words of a pair do, diagonal = counts, n_windows).
    """
    index = {word: column for column, word in enumerate(words)}
    documents, columns, positions, lengths = [], [], [], np.zeros(len(tokens), dtype=np.int64)
    for row, document_tokens in enumerate(tokens):
        lengths[row] = len(document_tokens)
        for offset, token in enumerate(document_tokens):
            word_column = index.get(token)
            if word_column is not None:
                documents.append(row)
                columns.append(word_column)
                positions.append(offset)
    windows_per_document = np.where(lengths < window, 1, lengths - window + 1)
    n_windows = int(windows_per_document.sum())
    if not positions:
        return np.zeros(len(words), np.int64), sp.csr_matrix((len(words), len(words)), dtype=np.int64), n_windows
    document, column, position = (np.asarray(values, dtype=np.int64) for values in (documents, columns, positions))
    order = np.lexsort((position, column, document))
    document, column, position = document[order], column[order], position[order]
    group = np.cumsum(np.concatenate([[0], (document[1:] != document[:-1]) | (column[1:] != column[:-1])]))
    last_of_group = np.ones(len(position), dtype=bool)
    last_of_group[:-1] = group[1:] != group[:-1]
    following = np.where(last_of_group, np.iinfo(np.int64).max // 4, np.concatenate([position[1:], [0]]))
    # f: the word's first position at or after p - W + 1 (within its group): a copy there, still in the window when
    # an earlier copy leaves, has been marked absent by then.
    span = int(position.max()) + window + 1
    keys = group * span + position
    earliest = position[np.searchsorted(keys, group * span + np.maximum(position - window + 1, 0), side="left")]
    short = lengths[document] < window
    start = np.where(short, 0, np.maximum(position - window + 1, 0))
    end = np.where(short, 0, np.minimum.reduce([position, following - window, lengths[document] - window, earliest]))
    first = np.ones(len(position), dtype=bool)
    first[1:] = group[1:] != group[:-1]
    keep = (start <= end) & (~short | first)
    start, end, document, column = start[keep], end[keep], document[keep], column[keep]
    offsets = np.concatenate([[0], np.cumsum(windows_per_document)[:-1]])
    spans = end - start + 1
    rows = np.repeat(offsets[document] + start, spans) + (
        np.arange(spans.sum()) - np.repeat(np.cumsum(spans) - spans, spans)
    )
    membership = sp.csr_matrix(
        (np.ones(len(rows), dtype=np.int64), (rows, np.repeat(column, spans))), shape=(n_windows, len(words))
    )
    membership.data[:] = 1  # a word's intervals in one document are disjoint; this only guards duplicates
    pairs = (membership.T @ membership).tocsr()
    return np.asarray(pairs.diagonal(), dtype=np.int64), pairs, n_windows


def topic_npmi(
    topic_terms: Mapping[int, Sequence[str]], tokens: Sequence[Sequence[str]], window: int = WINDOW
) -> dict[int, float]:
    """{topic: mean NPMI over the pairs of its terms} for topics with at least 2 terms (terms as given: the caller
    chooses how many and drops those absent from the documents). Module docstring for the definition."""
    topics = {topic: list(dict.fromkeys(terms)) for topic, terms in topic_terms.items() if len(set(terms)) >= 2}
    words = sorted({term for terms in topics.values() for term in terms})
    counts, pairs, n_windows = window_counts(tokens, words, window)
    column = {word: index for index, word in enumerate(words)}
    probability = counts / max(n_windows, 1)
    result: dict[int, float] = {}
    for topic, terms in topics.items():
        ids = np.asarray([column[term] for term in terms])
        joint = pairs[ids][:, ids].toarray() / max(n_windows, 1)
        upper = np.triu_indices(len(ids), k=1)
        joint_pairs = joint[upper]
        with np.errstate(divide="ignore", invalid="ignore"):
            pmi = np.log((joint_pairs + EPSILON) / (probability[ids][upper[0]] * probability[ids][upper[1]]))
            result[topic] = float(np.mean(pmi / -np.log(joint_pairs + EPSILON)))
    return result
