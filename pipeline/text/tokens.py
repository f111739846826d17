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
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from pipeline.store.keys import StageKey, stage_key, texts_fingerprint
from pipeline.store.layouts import StageStore
from pipeline.text.words import STOP_WORDS, TOKEN_PATTERN, WordCounts, separate_cjk, split_sentences

_TOKEN = re.compile(TOKEN_PATTERN)
_STOP = frozenset(STOP_WORDS)


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


def tokenize(texts: Iterable[str]) -> TokenizedCorpus:
    """Tokenise ``texts`` (model texts) once; see the module docstring. About 1.5 s for the whole conference (its key,
    :func:`tokens_key`, 0.02 s)."""
    model_texts = list(texts)
    index: dict[str, int] = {}
    ids: list[int] = []
    document_starts, sentence_starts, sentence_documents = [0], [0], []
    for document, text in enumerate(model_texts):
        for sentence in split_sentences(text):
            tokens = [token for token in _TOKEN.findall(separate_cjk(sentence)) if token not in _STOP]
            ids.extend(index.setdefault(token, len(index)) for token in tokens)
            sentence_starts.append(len(ids))
            sentence_documents.append(document)
        document_starts.append(len(ids))
    seen = np.asarray(list(index), dtype=str)
    order = np.argsort(seen, kind="stable")
    rank = np.empty(len(order), dtype=np.int32)
    rank[order] = np.arange(len(order), dtype=np.int32)
    token_ids = rank[np.asarray(ids, dtype=np.int64)] if ids else np.zeros(0, dtype=np.int32)
    return TokenizedCorpus(
        seen[order],
        token_ids.astype(np.int32),
        np.asarray(document_starts, np.int64),
        np.asarray(sentence_starts, np.int64),
        np.asarray(sentence_documents, np.int64),
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
    """A CSR matrix as plain arrays (for pipeline.store.layouts, which stores .npz without pickle)."""
    matrix = sp.csr_matrix(matrix)
    return {
        "data": matrix.data,
        "indices": matrix.indices,
        "indptr": matrix.indptr,
        "shape": np.asarray(matrix.shape, dtype=np.int64),
    }


def from_sparse_arrays(arrays: dict[str, np.ndarray]) -> sp.csr_matrix:
    """The inverse of :func:`sparse_arrays`."""
    return sp.csr_matrix(
        (arrays["data"], arrays["indices"], arrays["indptr"]), shape=tuple(int(size) for size in arrays["shape"])
    )


def unit_of_tokens(starts: np.ndarray) -> np.ndarray:
    """For token positions 0..T-1, the unit (document or sentence) each belongs to, given the units' starts."""
    return np.repeat(np.arange(len(starts) - 1), np.diff(starts))


def word_counts(corpus: TokenizedCorpus) -> WordCounts:
    """Single-word counts, documents x words (CSR int64): CountVectorizer's ``fit_transform`` with the same settings."""
    documents = unit_of_tokens(corpus.document_starts)
    matrix = sp.csr_matrix(
        (np.ones(len(corpus.ids), dtype=np.int64), (documents, corpus.ids)),
        shape=(corpus.n_documents, len(corpus.words)),
    )
    matrix.sum_duplicates()
    return WordCounts(matrix, corpus.words, corpus.key)


def count_words(texts: Iterable[str]) -> WordCounts:
    """Single-word counts of ``texts`` (:func:`tokenize`, then :func:`word_counts`)."""
    return word_counts(tokenize(texts))


def _kept_tokens(corpus: TokenizedCorpus, extra_stop_words: Iterable[str]) -> np.ndarray:
    """Positions of the tokens that are not among ``extra_stop_words``."""
    extra = np.flatnonzero(np.isin(corpus.words, list(extra_stop_words)))
    return np.flatnonzero(~np.isin(corpus.ids, extra)) if len(extra) else np.arange(len(corpus.ids))


def _pair_codes(corpus: TokenizedCorpus, kept: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(unit of each pair, pair code a * W + b) for consecutive kept tokens inside the same unit (document or
    sentence)."""
    units = unit_of_tokens(starts)[kept]
    same = units[1:] == units[:-1]
    first, second = corpus.ids[kept[:-1]][same].astype(np.int64), corpus.ids[kept[1:]][same].astype(np.int64)
    return units[1:][same], first * len(corpus.words) + second


def ngram_counts(
    corpus: TokenizedCorpus, extra_stop_words: Iterable[str] = (), min_df: int = 1, max_df: float = 1.0
) -> tuple[np.ndarray, sp.csr_matrix]:
    """(terms, counts) of single words and word pairs in at least ``min_df`` and at most ``max_df`` (a share) of the
    documents, ``extra_stop_words`` removed like stop words before pairs are formed: what
    CountVectorizer(ngram_range=(1, 2), min_df=..., max_df=...) ``fit_transform`` gives (sorted vocabulary,
    documents x terms counts, CSR int64)."""
    kept = _kept_tokens(corpus, extra_stop_words)
    n_words, n = len(corpus.words), corpus.n_documents
    documents = unit_of_tokens(corpus.document_starts)[kept]
    pair_documents, codes = _pair_codes(corpus, kept, corpus.document_starts)
    # Single words get codes 0..W-1 and pairs W + a * W + b, so both kinds are counted and pruned alike.
    all_codes = np.concatenate([corpus.ids[kept].astype(np.int64), n_words + codes])
    all_documents = np.concatenate([documents, pair_documents])
    span = n_words + n_words * n_words
    distinct, frequency = sorted_counts(sorted_unique(all_documents * span + all_codes) % span)
    chosen = distinct[(frequency >= min_df) & (frequency <= max_df * n)]
    names = (
        np.asarray([_term_name(corpus.words, code) for code in chosen.tolist()], dtype=str)
        if len(chosen)
        else np.zeros(0, dtype=str)
    )
    order = np.argsort(names, kind="stable")
    column_of = np.empty(len(chosen), dtype=np.int64)
    column_of[order] = np.arange(len(chosen))
    position = np.minimum(np.searchsorted(chosen, all_codes), max(len(chosen) - 1, 0))
    found = chosen[position] == all_codes if len(chosen) else np.zeros(len(all_codes), dtype=bool)
    matrix = sp.csr_matrix(
        (np.ones(int(found.sum()), dtype=np.int64), (all_documents[found], column_of[position[found]])),
        shape=(n, len(chosen)),
    )
    matrix.sum_duplicates()
    return names[order], matrix


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """The distinct values of an int64 array, sorted (a sort and a comparison: numpy's hash-based ``unique`` took
    1.2 s for the whole conference's 2.6 million codes, this 0.2 s)."""
    ordered = np.sort(values, kind="stable")
    return ordered[np.concatenate([[True], ordered[1:] != ordered[:-1]])] if len(ordered) else ordered


def sorted_counts(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct values sorted, how often each occurs) of an int64 array, like ``np.unique(...,
    return_counts=True)``."""
    ordered = np.sort(values, kind="stable")
    if not len(ordered):
        return ordered, np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.concatenate([[True], ordered[1:] != ordered[:-1]]))
    return ordered[starts], np.diff(np.concatenate([starts, [len(ordered)]]))


def _term_name(words: np.ndarray, code: int) -> str:
    """A term's text from its code (single word: its id; pair: W + a * W + b)."""
    if code < len(words):
        return str(words[code])
    first, second = divmod(code - len(words), len(words))
    return f"{words[first]} {words[second]}"


def term_columns(corpus: TokenizedCorpus, vocabulary: list[str]) -> tuple[np.ndarray, dict[int, int]]:
    """How a vocabulary of single words and word pairs maps onto the corpus's word ids: (column of each word id or -1,
    {pair code: column})."""
    single = np.full(len(corpus.words), -1, dtype=np.int64)
    position = {word: index for index, word in enumerate(corpus.words.tolist())}
    pairs: dict[int, int] = {}
    for column, term in enumerate(vocabulary):
        parts = term.split(" ")
        if len(parts) == 1 and parts[0] in position:
            single[position[parts[0]]] = column
        elif len(parts) == 2 and parts[0] in position and parts[1] in position:
            pairs[position[parts[0]] * len(corpus.words) + position[parts[1]]] = column
    return single, pairs


def sentence_presence(
    corpus: TokenizedCorpus, vocabulary: list[str], extra_stop_words: Iterable[str] = ()
) -> sp.csr_matrix:
    """Binary sentences x vocabulary (CSR float32): which terms (single words, and word pairs inside the sentence) each
    sentence holds; the same as CountVectorizer(vocabulary=...) on each sentence, binarised."""
    single, pairs = term_columns(corpus, vocabulary)
    kept = _kept_tokens(corpus, extra_stop_words)
    sentences = unit_of_tokens(corpus.sentence_starts)[kept]
    word_columns = single[corpus.ids[kept]]
    pair_sentences, codes = _pair_codes(corpus, kept, corpus.sentence_starts)
    if pairs:
        known_codes = np.fromiter(pairs.keys(), dtype=np.int64, count=len(pairs))
        known_columns = np.fromiter(pairs.values(), dtype=np.int64, count=len(pairs))
        order = np.argsort(known_codes)
        known_codes, known_columns = known_codes[order], known_columns[order]
        found = np.clip(np.searchsorted(known_codes, codes), 0, len(known_codes) - 1)
        hit = known_codes[found] == codes
        pair_columns = np.where(hit, known_columns[found], -1)
    else:
        pair_columns = np.full(len(codes), -1, dtype=np.int64)
    rows = np.concatenate([sentences, pair_sentences])
    columns = np.concatenate([word_columns, pair_columns])
    valid = columns >= 0
    matrix = sp.csr_matrix(
        (np.ones(int(valid.sum()), dtype=np.float32), (rows[valid], columns[valid])),
        shape=(len(corpus.sentence_documents), len(vocabulary)),
    )
    matrix.sum_duplicates()
    matrix.data[:] = 1.0
    return matrix
