"""The corpus tokenised once: every document as a sequence of word ids, split into sentences.

A build needs the same tokens many times: which documents have a content word, the boilerplate words, the TF-IDF of
the lexical representation, the c-TF-IDF vocabulary of single words and word pairs, the c-TF-IDF of every topic
(BERTopic counts the joined documents of each topic at every extraction, merge and class), and the words that share
a sentence (pipeline.topics.model.CoherentTerms). scikit-learn's CountVectorizer tokenises again each time, in Python,
about two seconds per pass over the whole conference. Here the texts are tokenised once, exactly as that CountVectorizer
tokenises them (pipeline.text.vocabulary: ``separate_cjk``, ``TOKEN_PATTERN``, English stop words removed), and every
count is made from the word ids with numpy; tests/test_tokens.py checks that the counts equal scikit-learn's.

Sentences are pipeline.text.vocabulary.split_sentences' (a token never spans a sentence boundary, since the split is at
white space); word pairs of a document run across its sentences, as scikit-learn's do, and those of a sentence stay
inside it.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from pipeline.store.keys import StageKey, stage_key, texts_fingerprint
from pipeline.store.layouts import StageStore
from pipeline.text.words import (
    CJK_CHARACTER,
    STOP_WORDS,
    TOKEN_PATTERN,
    WordCounts,
    separate_cjk,
    split_sentences,
)

_TOKEN = re.compile(TOKEN_PATTERN)
_STOP = frozenset(STOP_WORDS)
# A sentence boundary (pipeline.text.words' split_sentences: white space after ".", "!" or "?"), found as "", unless
# only white space follows it, or a word of two characters or more; for texts without a CJK character
# (_document_tokens). The alternatives start with different characters, so either order finds the same; this one is
# the faster.
_BREAK_OR_WORD = re.compile(r"[.!?]\s+(?=\S)|(\w\w+)")
# Codes other than a word's: a stop word or a token without a letter, a sentence boundary, a document's end.
_DROPPED, _BREAK, _END = -1, -2, -3
# Tokens per block of sentences in sentence_presence: its intermediate arrays are several int64 per word and word pair
# of a block; over every sentence at once they were about 2 GB at 285,717 abstracts (2.35 million sentences).
PRESENCE_BLOCK_TOKENS = 1_000_000
# Tokens per block of documents when single words and word pairs are counted (ngram_counts).
NGRAM_BLOCK_TOKENS = 4_000_000


@dataclass
class TokenizedCorpus:
    """Documents as word ids.

    Attributes
    ----------
    words : str array, W; the distinct content words, sorted (scikit-learn's column order).
    ids : int32, T; every document's word ids in reading order, documents one after another.
    document_starts : int64, n + 1; document d's tokens are ids[document_starts[d]:document_starts[d + 1]].
    sentence_starts : int64, S + 1; the same for sentences, over the same ids.
    sentence_documents : int64, S; the document of each sentence.
    key : the key of stage "tokens" for the tokenised texts (:func:`tokens_key`), stored or not: the input key of
        every stage made from these tokens (word counts, the lexical fit, the c-TF-IDF counts, sentence presence).
    """

    words: np.ndarray
    ids: np.ndarray
    document_starts: np.ndarray
    sentence_starts: np.ndarray
    sentence_documents: np.ndarray
    key: StageKey

    @property
    def n_documents(self) -> int:
        """Documents tokenised."""
        return len(self.document_starts) - 1

    def arrays(self) -> dict[str, np.ndarray]:
        """The fields as arrays, the key aside (for pipeline.store.layouts, which stores .npz without pickle)."""
        return {
            "words": self.words,
            "ids": self.ids,
            "document_starts": self.document_starts,
            "sentence_starts": self.sentence_starts,
            "sentence_documents": self.sentence_documents,
        }


def tokens_key(texts: list[str]) -> StageKey:
    """The key of stage "tokens" for ``texts``: their fingerprint, this module's code (with pipeline.text.words: the
    token pattern, the stop words, CJK handling, sentences), numpy's and scikit-learn's versions (its English stop
    words)."""
    return stage_key(
        "tokens",
        inputs={"texts": texts_fingerprint(texts)},
        libraries=("numpy", "scikit-learn"),
        code=(__name__,),
    )


def _document_tokens(text: str) -> list[str]:
    """The tokens of ``text`` in reading order, stop words and tokens without a letter still among them, with a
    "" (a sentence boundary) between sentences (list of str, T_d + S_d - 1).

    A text without a CJK character is lower-cased and matched once: its words of two characters or more (those that
    :data:`TOKEN_PATTERN` takes hold a letter; :class:`_Codes` tells them apart) and the white space that
    :func:`split_sentences` splits at, unless only white space follows it (an empty last sentence, which it drops).
    Lower-casing makes no white space, ".", "!", "?" or CJK character, nor removes one (every code point checked), so
    the boundaries are the original text's. A text with one is tokenised sentence by sentence, as scikit-learn does
    once :func:`separate_cjk` has put spaces around its CJK characters (which may follow a "." without a space).
    """
    if text.isascii() or CJK_CHARACTER.search(text) is None:
        return _BREAK_OR_WORD.findall(text.lower())
    tokens: list[str] = []
    for sentence in split_sentences(text):
        tokens += _TOKEN.findall(separate_cjk(sentence))
        tokens.append("")
    return tokens[:-1]


class _Codes(dict):
    """Tokens' codes, each given at its first look-up: a content word's position among ``words`` (a token that
    :data:`TOKEN_PATTERN` takes whole and not a stop word, appended to ``words``), _BREAK for a sentence boundary
    (""), _DROPPED for any other token."""

    def __init__(self) -> None:
        super().__init__({"": _BREAK})
        self.words: list[str] = []

    def __missing__(self, token: str) -> int:
        if token in _STOP or _TOKEN.fullmatch(token) is None:
            code = _DROPPED
        else:
            code = len(self.words)
            self.words.append(token)
        self[token] = code
        return code


def tokenize(texts: Iterable[str]) -> TokenizedCorpus:
    """Tokenise ``texts`` (model texts) once; see the module docstring. About 4.5 s of CPU for the 49,805 texts of
    caches/all-venues (1.1 s for the 11,660 of caches/default), 15 s when each sentence was matched on its own; its
    key (:func:`tokens_key`) about 0.1 s of that.

    The codes (:class:`_Codes`) of every document's tokens (:func:`_document_tokens`) go into one array, _END after
    each document, and the starts are counted from the markers with numpy.
    """
    model_texts = list(texts)
    codes = _Codes()
    flat = array("i")
    for text in model_texts:
        flat.extend(map(codes.__getitem__, _document_tokens(text)))
        flat.append(_END)
    all_codes = np.frombuffer(flat, dtype=np.intc)
    kept = all_codes >= 0
    # A sentence ends at each marker (a boundary or a document's end), after as many kept tokens as precede it: its
    # position less the dropped tokens and markers before it. Few and small arrays: each fresh one costs page faults.
    not_kept = np.flatnonzero(~kept)
    marker_at = np.flatnonzero(all_codes[not_kept] <= _BREAK)
    sentence_ends = not_kept[marker_at] - marker_at
    is_end = (all_codes[not_kept[marker_at]] == _END).astype(np.int64)
    seen = np.asarray(codes.words, dtype=str)
    order = np.argsort(seen, kind="stable")
    rank = np.empty(len(order), dtype=np.int32)
    rank[order] = np.arange(len(order), dtype=np.int32)
    return TokenizedCorpus(
        seen[order],
        rank[all_codes[kept]],
        np.concatenate([[0], sentence_ends[is_end == 1]]).astype(np.int64),
        np.concatenate([[0], sentence_ends]).astype(np.int64),
        np.cumsum(is_end) - is_end,
        tokens_key(model_texts),
    )


def cached_tokens(store: StageStore, texts: list[str]) -> TokenizedCorpus:
    """:func:`tokenize` of ``texts``, through ``store`` under :func:`tokens_key`, so a rebuild of the same corpus with
    the same tokeniser does not tokenise it again (hit or miss in ``store.hits["tokens"]``)."""
    key = tokens_key(texts)
    return from_arrays(store.cached(key, lambda: tokenize(texts).arrays()), key)


def from_arrays(arrays: dict[str, np.ndarray], key: StageKey) -> TokenizedCorpus:
    """The inverse of :meth:`TokenizedCorpus.arrays` (``key``: see TokenizedCorpus)."""
    return TokenizedCorpus(
        arrays["words"],
        arrays["ids"].astype(np.int32),
        arrays["document_starts"],
        arrays["sentence_starts"],
        arrays["sentence_documents"],
        key,
    )


def sparse_arrays(matrix: sp.spmatrix) -> dict[str, np.ndarray]:
    """A sparse matrix as plain arrays (for pipeline.store.layouts, which stores .npz without pickle): CSR and CSC
    kept in their format, any other format as CSR."""
    if matrix.format not in ("csr", "csc"):
        matrix = sp.csr_matrix(matrix)
    return {
        "data": matrix.data,
        "indices": matrix.indices,
        "indptr": matrix.indptr,
        "shape": np.asarray(matrix.shape, dtype=np.int64),
        "format": np.asarray(matrix.format),
    }


def from_sparse_arrays(arrays: dict[str, np.ndarray]) -> sp.csr_matrix | sp.csc_matrix:
    """The inverse of :func:`sparse_arrays`, no array copied (arrays without a format are CSR)."""
    compressed = sp.csc_matrix if "format" in arrays and str(arrays["format"]) == "csc" else sp.csr_matrix
    return compressed(
        (arrays["data"], arrays["indices"], arrays["indptr"]), shape=tuple(int(size) for size in arrays["shape"])
    )


def unit_of_tokens(starts: np.ndarray) -> np.ndarray:
    """For token positions 0..T-1, the unit (document or sentence) each belongs to, given the units' starts."""
    return np.repeat(np.arange(len(starts) - 1), np.diff(starts))


def word_counts(corpus: TokenizedCorpus) -> WordCounts:
    """Single-word counts, documents x words (CSR int64): CountVectorizer's ``fit_transform`` with the same settings."""
    # The tokens are already grouped by document: a CSR matrix with repeated columns, summed in place (on copies of the
    # ids and starts, which sum_duplicates sorts), with no document number per token and no COO step: 32 million
    # tokens at 285,717 documents, so 259 MB of int64 document numbers and the COO's copies fewer while counting.
    matrix = sp.csr_matrix(
        (np.ones(len(corpus.ids), dtype=np.int64), corpus.ids.copy(), corpus.document_starts.copy()),
        shape=(corpus.n_documents, len(corpus.words)),
    )
    matrix.sum_duplicates()
    return WordCounts(matrix, corpus.words, corpus.key)


def count_words(texts: Iterable[str]) -> WordCounts:
    """Single-word counts of ``texts`` (:func:`tokenize`, then :func:`word_counts`)."""
    return word_counts(tokenize(texts))


def _kept_words(
    corpus: TokenizedCorpus, extra_stop_words: Iterable[str], starts: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(word ids of the tokens not among ``extra_stop_words``, int32; where each unit starts among them, int64,
    U + 1) for units (documents or sentences) starting at ``starts``."""
    is_extra = np.isin(corpus.words, list(extra_stop_words))
    if not is_extra.any():
        return corpus.ids, starts
    kept = ~is_extra[corpus.ids]
    kept_before = np.zeros(len(kept) + 1, dtype=np.int64)
    np.cumsum(kept, out=kept_before[1:])
    return corpus.ids[kept], kept_before[starts]


def _term_entries(
    corpus: TokenizedCorpus, extra_stop_words: Iterable[str], starts: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Single words and word pairs inside units (documents or sentences) starting at ``starts``, ``extra_stop_words``
    removed before pairs are formed: (codes of the distinct terms, sorted, int64, D; how many units hold each term,
    int64, D; the units holding each, term after term, each term's sorted, int32, E; how often the term occurs in
    each of those units, int64, E).

    A term's code sorts as its name does: word a is a * (W + 1), pair "a b" a * (W + 1) + 1 + b. Word ids are ranks
    among the sorted words, and no token holds a character below the space, so "a b" sorts after "a", before any
    longer word starting with "a" (which is a later word), and pairs of the same first word sort by their second.
    """
    ids, kept_starts = _kept_words(corpus, extra_stop_words, starts)
    n_units, n_words = len(starts) - 1, len(corpus.words)
    lengths = np.diff(kept_starts)
    boundaries = kept_starts[1:-1]
    inside = np.ones(max(len(ids) - 1, 0), dtype=bool)
    inside[boundaries[(boundaries > 0) & (boundaries < len(ids))] - 1] = False
    pair_starts = np.concatenate([[0], np.cumsum(np.maximum(lengths - 1, 0))])
    # Two stable counting sorts instead of a sort of the codes (the 12.7 million of the largest corpus: 1 s of CPU,
    # these 0.2 s): scipy's CSR to CSC transposition keeps the order of each row's entries, so sorting the pairs (rows:
    # units) by second word, then the words (second "word" 0) and those pairs (rows: second word + 1) by first word
    # orders them by code, then unit.
    by_second = sp.csr_matrix((ids[:-1][inside], ids[1:][inside], pair_starts), shape=(n_units, n_words)).tocsc()
    by_first = sp.csr_matrix(
        (
            np.concatenate([np.repeat(np.arange(n_units, dtype=np.int32), lengths), by_second.indices]),
            np.concatenate([ids, by_second.data]),
            np.concatenate([[0], len(ids) + by_second.indptr.astype(np.int64)]),
        ),
        shape=(n_words + 1, n_words),
    ).tocsc()
    seconds, units, first_starts = by_first.indices, by_first.data, by_first.indptr
    new_term = np.ones(len(units), dtype=bool)
    np.not_equal(seconds[1:], seconds[:-1], out=new_term[1:])
    new_term[first_starts[:-1][np.diff(first_starts) > 0]] = True
    new_entry = new_term.copy()
    new_entry[1:] |= units[1:] != units[:-1]
    entry_starts = np.flatnonzero(new_entry)
    first_entries = np.flatnonzero(new_term[entry_starts])
    term_starts = entry_starts[first_entries]
    codes = (np.searchsorted(first_starts, term_starts, side="right") - 1) * (n_words + 1) + seconds[term_starts]
    return (
        codes,
        _run_lengths(first_entries, len(entry_starts)),
        units[entry_starts],
        _run_lengths(entry_starts, len(units)),
    )


def _run_lengths(starts: np.ndarray, total: int) -> np.ndarray:
    """Lengths of the runs that start at ``starts`` (increasing positions, the first 0) in ``total`` items."""
    return np.diff(starts, append=total)


def _term_names(words: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Terms' names from their codes (:func:`_term_entries`): an object array of str. A fixed-width str array would
    give every term the longest one's width: 7.7 million terms at 998,609 documents took 3.4 GB as '<U109' against
    about 0.6 GB as str objects."""
    if not len(codes):
        return np.zeros(0, dtype=object)
    first, second = np.divmod(codes, len(words) + 1)
    word_list = words.tolist()
    endings = [""] + [f" {word}" for word in word_list]
    names = np.empty(len(codes), dtype=object)
    names[:] = [word_list[a] + endings[b] for a, b in zip(first.tolist(), second.tolist())]
    return names


def ngram_counts(
    corpus: TokenizedCorpus,
    extra_stop_words: Iterable[str] = (),
    min_df: int = 1,
    max_df: float = 1.0,
    block_tokens: int = NGRAM_BLOCK_TOKENS,
) -> tuple[np.ndarray, sp.csr_matrix]:
    """(terms, counts) of single words and word pairs in at least ``min_df`` and at most ``max_df`` (a share) of the
    documents, ``extra_stop_words`` removed like stop words before pairs are formed: what
    CountVectorizer(ngram_range=(1, 2), min_df=..., max_df=...) ``fit_transform`` gives (sorted vocabulary, str objects
    in an object array, C; documents x terms counts, CSR int64, n x C, sorted indices).

    The documents are counted in blocks of about ``block_tokens`` tokens (at 285,717 documents the intermediate arrays
    of one piece took 2.5 GB); a document lies in one block, so its counts are those of one piece, and a term's
    document frequency is the sum of its blocks'."""
    n = corpus.n_documents
    extra = list(extra_stop_words)
    blocks = [
        _document_block_entries(corpus, extra, first, last)
        for first, last in unit_blocks(corpus.document_starts, block_tokens)
    ]
    codes = _sorted_distinct([block.codes for block in blocks])
    frequency = np.zeros(len(codes), dtype=np.int64)
    for block in blocks:
        block.position = np.searchsorted(codes, block.codes)
        frequency[block.position] += block.frequency  # a block's codes are distinct
    chosen = (frequency >= min_df) & (frequency <= max_df * n)
    column, n_columns = np.cumsum(chosen) - 1, int(chosen.sum())
    # The blocks' rows are written into the whole matrix's arrays one block at a time, each block's entries let go as
    # it is written (a stack of the blocks' matrices would hold every entry twice).
    n_entries = sum(int(block.frequency[chosen[block.position]].sum()) for block in blocks)
    index_dtype = np.int32 if max(n_entries, n_columns) < np.iinfo(np.int32).max else np.int64
    data = np.empty(n_entries, dtype=np.int64)
    indices = np.empty(n_entries, dtype=index_dtype)
    indptr = np.zeros(n + 1, dtype=index_dtype)
    row = entry = 0
    while blocks:
        rows = blocks.pop(0).matrix(chosen, column, n_columns)
        data[entry : entry + rows.nnz], indices[entry : entry + rows.nnz] = rows.data, rows.indices
        indptr[row + 1 : row + 1 + rows.shape[0]] = entry + rows.indptr[1:]
        row, entry = row + rows.shape[0], entry + rows.nnz
    counts = sp.csr_matrix((data, indices, indptr), shape=(n, n_columns))
    counts.has_sorted_indices = True
    return _term_names(corpus.words, codes[chosen]), counts


def _sorted_distinct(parts: list[np.ndarray]) -> np.ndarray:
    """The distinct values of ``parts`` (int64 arrays), sorted (a sort and a comparison: numpy's hashing unique took
    13 s for the 20 million codes of 285,717 documents' blocks, this 2 s)."""
    values = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    values.sort()
    distinct = np.ones(len(values), dtype=bool)
    np.not_equal(values[1:], values[:-1], out=distinct[1:])
    return values[distinct]


@dataclass
class _BlockEntries:
    """:func:`_term_entries` of a block of documents (documents numbered within the block); ``position``: each of its
    codes' place among the whole corpus's codes, set once they are known."""

    codes: np.ndarray
    frequency: np.ndarray
    documents: np.ndarray
    occurrences: np.ndarray
    n_documents: int
    position: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    def matrix(self, chosen: np.ndarray, column: np.ndarray, n_columns: int) -> sp.csr_matrix:
        """The block's rows of the counts (CSR int64, block documents x ``n_columns``, sorted indices): its entries of
        the ``chosen`` codes (bool over the whole corpus's codes), in columns ``column`` (int, the same length)."""
        kept = chosen[self.position]
        in_kept = np.repeat(kept, self.frequency)
        per_column = np.zeros(n_columns, dtype=np.int64)
        per_column[column[self.position[kept]]] = self.frequency[kept]
        # The entries, term after term in code order, are the block's matrix in compressed columns; its transpose to
        # rows comes out with sorted indices.
        by_term = sp.csc_matrix(
            (
                self.occurrences[in_kept].astype(np.int64),
                self.documents[in_kept],
                np.concatenate([[0], np.cumsum(per_column)]),
            ),
            shape=(self.n_documents, n_columns),
        )
        return by_term.tocsr()


def _units_between(corpus: TokenizedCorpus, starts: np.ndarray) -> tuple[TokenizedCorpus, np.ndarray]:
    """(the tokens of consecutive units as a corpus of their own, each unit a document and a sentence of it; the
    units' starts within it) for ``starts`` (int64, u + 1: the units' first tokens in ``corpus``, then the end), so
    :func:`_term_entries` counts a block of units as it counts the whole."""
    local = starts - starts[0]
    ids = corpus.ids[starts[0] : starts[-1]]
    return TokenizedCorpus(corpus.words, ids, local, local, np.arange(len(local) - 1), corpus.key), local


def _document_block_entries(
    corpus: TokenizedCorpus, extra_stop_words: list[str], first: int, last: int
) -> _BlockEntries:
    """:func:`_term_entries` of documents [first, last), numbered from 0 within the block; the occurrences as int32."""
    block, starts = _units_between(corpus, corpus.document_starts[first : last + 1])
    codes, frequency, documents, occurrences = _term_entries(block, extra_stop_words, starts)
    return _BlockEntries(codes, frequency, documents, occurrences.astype(np.int32), last - first)


def _vocabulary_codes(words: np.ndarray, vocabulary: list[str]) -> np.ndarray:
    """Each vocabulary term's code (:func:`_term_entries`), or -1 for a term that is neither a known word nor a pair of
    known words (int64, V)."""
    index = {word: position for position, word in enumerate(words.tolist())}
    width = len(words) + 1
    codes = np.full(len(vocabulary), -1, dtype=np.int64)
    for column, term in enumerate(vocabulary):
        first, space, second = term.partition(" ")
        if first in index and not space:
            codes[column] = index[first] * width
        elif first in index and second in index:
            codes[column] = index[first] * width + 1 + index[second]
    return codes


def unit_blocks(starts: np.ndarray, block_tokens: int) -> list[tuple[int, int]]:
    """Consecutive ranges [first, last) of units (documents or sentences; ``starts``: int, n + 1, each unit's first
    token) holding about ``block_tokens`` tokens each (a unit longer than that is a block of its own); [] without
    units."""
    n = len(starts) - 1
    targets = np.arange(block_tokens, int(starts[-1]), max(block_tokens, 1))
    edges = np.unique(np.concatenate([[0], np.searchsorted(starts, targets), [n]]))
    return [(int(first), int(last)) for first, last in zip(edges[:-1], edges[1:])]


def sentence_presence(
    corpus: TokenizedCorpus,
    vocabulary: list[str],
    extra_stop_words: Iterable[str] = (),
    block_tokens: int = PRESENCE_BLOCK_TOKENS,
) -> sp.csc_matrix:
    """Binary sentences x vocabulary (CSC bool, S x V, sorted indices: its readers take a topic's candidate terms by
    column): which terms (single words, and word pairs inside the sentence) each sentence holds; the same as
    CountVectorizer(vocabulary=...) on each sentence, binarised. A term that is not a word or a pair of words of the
    corpus has an empty column.

    The sentences are counted in blocks of about ``block_tokens`` tokens, twice: the first pass counts each term's
    sentences, so the matrix's arrays are made once at their size; the second writes each block's entries into its
    columns, after the blocks before it. The whole matrix is never held twice: at 285,717 papers (55 million entries)
    making it rose 546 MiB, where stacking the blocks' rows and turning them into columns rose 759 MiB, for a second
    pass of counting (17 s against 10.5; measured alone on the stored tokens, docs/benchmarks.md)."""
    known = _vocabulary_codes(corpus.words, vocabulary)
    extra = list(extra_stop_words)
    blocks = unit_blocks(corpus.sentence_starts, block_tokens)
    per_column = np.zeros(len(vocabulary), dtype=np.int64)
    for first, last in blocks:
        _, frequency, _, held, position = _block_terms(corpus, known, extra, first, last)
        per_column[held] += frequency[position[held]]
    indptr = np.concatenate([[0], np.cumsum(per_column)])
    n_sentences = len(corpus.sentence_starts) - 1
    index_type = np.int32 if max(n_sentences, int(indptr[-1])) <= np.iinfo(np.int32).max else np.int64
    indices = np.empty(int(indptr[-1]), dtype=index_type)
    filled = indptr[:-1].copy()  # where each column's next entries go
    for first, last in blocks:
        block = _block_presence(corpus, known, extra, first, last)
        counts = np.diff(block.indptr)
        targets = np.repeat(filled - block.indptr[:-1], counts) + np.arange(block.nnz)
        indices[targets] = block.indices + first
        filled += counts
    return sp.csc_matrix(
        (np.ones(len(indices), dtype=bool), indices, indptr.astype(index_type)), shape=(n_sentences, len(vocabulary))
    )


def _block_presence(
    corpus: TokenizedCorpus, known: np.ndarray, extra_stop_words: list[str], first: int, last: int
) -> sp.csc_matrix:
    """:func:`sentence_presence`'s columns over sentences [first, last), rows numbered from 0 within the block
    (``known``: each vocabulary term's code, -1 for none): CSC bool, (last - first) x V, each column's rows sorted."""
    codes, frequency, sentences, held, position = _block_terms(corpus, known, extra_stop_words, first, last)
    # The entries are the matrix in compressed columns, one column per term in code order and an empty last one for
    # the vocabulary's terms that no sentence holds.
    by_term = sp.csc_matrix(
        (
            np.ones(len(sentences), dtype=bool),
            sentences,
            np.concatenate([[0], np.cumsum(frequency), [len(sentences)]]),
        ),
        shape=(last - first, len(codes) + 1),
    )
    return sp.csc_matrix(by_term[:, np.where(held, position, len(codes))])


def _block_terms(
    corpus: TokenizedCorpus, known: np.ndarray, extra_stop_words: list[str], first: int, last: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The terms of sentences [first, last) as both passes of :func:`sentence_presence` read them: the block's
    :func:`_term_entries` (codes, how many sentences hold each, those sentences numbered within the block), then which
    vocabulary terms the block holds (bool V) and each one's place among the block's codes (int V, len(codes) past
    the last), for ``known``, the vocabulary's codes (-1 for none)."""
    block, starts = _units_between(corpus, corpus.sentence_starts[first : last + 1])
    codes, frequency, sentences, _ = _term_entries(block, extra_stop_words, starts)
    position = np.searchsorted(codes, known)
    held = (known >= 0) & (np.append(codes, -1)[position] == known)  # position len(codes) reads the -1
    return codes, frequency, sentences, held, position
