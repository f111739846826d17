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

The reference corpus is tokenised once as scikit-learn's default ``CountVectorizer()`` analyzer tokenises (lower
case, runs of two or more word characters, stop words kept) and kept as word ids (:class:`EncodedDocuments`), which a
build stores (:func:`cached_reference_documents`): every NPMI of a rebuild over the same texts reads them.

tests/test_npmi.py checks the figures against gensim on real abstracts.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from pipeline.store.keys import StageKey, stage_key, texts_fingerprint
from pipeline.store.layouts import NULL_STORE, StageStore
from pipeline.text.tokens import unit_blocks
from pipeline.text.words import MAX_WORD_CHARS

WINDOW = 10
EPSILON = 1e-12
# Tokens per block of documents in window_counts: its intermediate arrays are a few int64 per occurrence of a counted
# word and per window it is present in; over every document at once they took 2.9 GB at 285,717 abstracts.
BLOCK_TOKENS = 2_000_000
# scikit-learn's default token_pattern, without runs of more than MAX_WORD_CHARS word characters (a 50,000-character
# "word" made a 660 MB reference array, its words stored fixed-width; pipeline.text.words says why none is so long)
REFERENCE_TOKEN = re.compile(rf"(?u)\b(?!\w{{{MAX_WORD_CHARS + 1}}})\w\w+\b")


@dataclass(frozen=True)
class EncodedDocuments:
    """Documents as word ids.

    Attributes
    ----------
    words : str array, W; the distinct tokens, in order of first appearance.
    ids : int32, T; every document's tokens as ids into ``words``, in reading order, one document after another.
    starts : int64, n + 1; document d's tokens are ids[starts[d]:starts[d + 1]].
    """

    words: np.ndarray
    ids: np.ndarray
    starts: np.ndarray

    def arrays(self) -> dict[str, np.ndarray]:
        """The fields as arrays (for pipeline.store.layouts, which stores .npz without pickle)."""
        return {"words": self.words, "ids": self.ids, "starts": self.starts}


def encode_documents(documents: Iterable[Sequence[str]]) -> EncodedDocuments:
    """:class:`EncodedDocuments` of token lists (one list per document)."""
    index: dict[str, int] = {}
    # A typed array, 4 bytes a token: a list of 55 million ids (285,717 abstracts) took 440 MB, and its copy as an
    # array 220 MB more.
    ids = array("i")
    starts = [0]
    for tokens in documents:
        ids.extend([index.setdefault(token, len(index)) for token in tokens])
        starts.append(len(ids))
    return EncodedDocuments(
        np.asarray(list(index), dtype=str), np.frombuffer(ids, dtype=np.int32), np.asarray(starts, dtype=np.int64)
    )


def reference_documents(texts: Iterable[str]) -> EncodedDocuments:
    """The reference corpus of ``texts``: each tokenised with :data:`REFERENCE_TOKEN` after lower-casing (None or ""
    gives no token), then encoded (:func:`encode_documents`). About 5 CPU s for 49,805 titles and abstracts."""
    return encode_documents(REFERENCE_TOKEN.findall((text or "").lower()) for text in texts)


def reference_documents_key(texts: Sequence[str]) -> StageKey:
    """The key of stage "reference_tokens": the texts' fingerprint, this module's code and numpy's version."""
    return stage_key(
        "reference_tokens", inputs={"texts": texts_fingerprint(texts)}, libraries=("numpy",), code=(__name__,)
    )


def cached_reference_documents(texts: Sequence[str], store: StageStore = NULL_STORE) -> EncodedDocuments:
    """:func:`reference_documents` of ``texts`` through ``store`` (pipeline.store.layouts) under
    :func:`reference_documents_key` (hit or miss in ``store.hits["reference_tokens"]``)."""
    arrays = store.cached(reference_documents_key(texts), lambda: reference_documents(texts).arrays())
    return EncodedDocuments(arrays["words"], arrays["ids"].astype(np.int32, copy=False), arrays["starts"])


def window_counts(
    tokens: Sequence[Sequence[str]] | EncodedDocuments,
    words: Sequence[str],
    window: int = WINDOW,
    block_tokens: int = BLOCK_TOKENS,
) -> tuple[np.ndarray, sp.csr_matrix, int]:
    """Window counts of ``words`` in the documents ``tokens`` (token lists, or :class:`EncodedDocuments`), as
    gensim's boolean sliding window counts them.

    Returns (counts: int64 len(words) -- windows in which each word counts as present, pairs: int64 sparse
    len(words) x len(words) -- windows in which both words of a pair do, diagonal = counts, n_windows). The
    documents are taken in blocks of about ``block_tokens`` tokens and their pair counts added up (the same integers
    in any blocks): one block's windows x words matrix, not the corpus's, is held at a time.
    """
    encoded = tokens if isinstance(tokens, EncodedDocuments) else encode_documents(tokens)
    known = {word: index for index, word in enumerate(encoded.words.tolist())}
    column_of_id = np.full(len(encoded.words), -1, dtype=np.int64)
    for word_column, word in enumerate(words):
        if word in known:
            column_of_id[known[word]] = word_column
    lengths = np.diff(encoded.starts)
    n_windows = int(np.where(lengths < window, 1, lengths - window + 1).sum())
    pairs = sp.csr_matrix((len(words), len(words)), dtype=np.int64)
    for first, last in unit_blocks(encoded.starts, block_tokens):  # pipeline.text.tokens
        membership = _window_membership(encoded, column_of_id, first, last, window, len(words))
        pairs = pairs + (membership.T @ membership)
    pairs = sp.csr_matrix(pairs, dtype=np.int64)
    return np.asarray(pairs.diagonal(), dtype=np.int64), pairs, n_windows


def _window_membership(
    encoded: EncodedDocuments, column_of_id: np.ndarray, first: int, last: int, window: int, n_words: int
) -> sp.csr_matrix:
    """The binary windows x words matrix (int64 CSR) of documents [first, last): which of the counted words
    (``column_of_id``: each word id's column, -1 for a word not counted) count as present in each window (module
    docstring, step 2), the block's windows in reading order."""
    starts = encoded.starts[first : last + 1]
    ids = encoded.ids[starts[0] : starts[-1]]
    starts = starts - starts[0]
    lengths = np.diff(starts)
    flat = np.flatnonzero(column_of_id[ids] >= 0) if len(ids) else np.zeros(0, dtype=np.int64)
    windows_per_document = np.where(lengths < window, 1, lengths - window + 1)
    n_windows = int(windows_per_document.sum())
    if not len(flat):
        return sp.csr_matrix((n_windows, n_words), dtype=np.int64)
    document = np.searchsorted(starts, flat, side="right") - 1
    column, position = column_of_id[ids[flat]], flat - starts[document]
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
    first_of_group = np.ones(len(position), dtype=bool)
    first_of_group[1:] = group[1:] != group[:-1]
    keep = (start <= end) & (~short | first_of_group)
    start, end, document, column = start[keep], end[keep], document[keep], column[keep]
    offsets = np.concatenate([[0], np.cumsum(windows_per_document)[:-1]])
    spans = end - start + 1
    rows = np.repeat(offsets[document] + start, spans) + (
        np.arange(spans.sum()) - np.repeat(np.cumsum(spans) - spans, spans)
    )
    membership = sp.csr_matrix(
        (np.ones(len(rows), dtype=np.int64), (rows, np.repeat(column, spans))), shape=(n_windows, n_words)
    )
    membership.data[:] = 1  # a word's intervals in one document are disjoint; this only guards duplicates
    return membership


def topic_npmi(
    topic_terms: Mapping[int, Sequence[str]],
    tokens: Sequence[Sequence[str]] | EncodedDocuments,
    window: int = WINDOW,
) -> dict[int, float]:
    """{topic: mean NPMI over the pairs of its terms} for topics with at least 2 terms (terms as given: the caller
    chooses how many and drops those absent from the documents; ``tokens`` as :func:`window_counts` takes them).
    Module docstring for the definition."""
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
