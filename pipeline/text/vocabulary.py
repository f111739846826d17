"""The c-TF-IDF vocabulary and the choice of each topic's terms.

Tokens are runs of two or more word characters holding at least one letter (pure numbers such as ``2023``
are not terms), plus every single CJK/kana/Hangul character on its own, so a Chinese or Japanese sentence
gives character uni- and bigrams instead of one sentence-long "term". Stop words are scikit-learn's English
list, plus academic boilerplate learned from the corpus itself (:func:`boilerplate_terms`: words such as
"propose", "novel" or "results" that many papers use and no topic uses markedly more than the rest); terms in
more than ``max_df`` of the documents are dropped as well.

A topic's terms are chosen from its c-TF-IDF ranking by :func:`select_coherent_terms`: each term describes only
the topic whose c-TF-IDF weight for it is highest (exclusivity), and the leading terms are picked greedily to
co-occur in the same sentences (NPMI over sentences), so they read as one subject rather than as a list of
frequent but unrelated words.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer

from pipeline.adapters.sklearn_vocabulary import fit_fixed_vocabulary
from pipeline.runtime.errors import EmptyVocabularyError
from pipeline.schema import OUTLIER_TOPIC
from pipeline.store.keys import StageKey, stage_key, texts_fingerprint
from pipeline.store.layouts import NULL_STORE, StageStore
from pipeline.store.text_lines import lines_array, lines_of_array
from pipeline.text.words import STOP_WORDS, TOKEN_PATTERN, WordCounts, separate_cjk

if TYPE_CHECKING:
    from pipeline.text.tokens import TokenizedCorpus


class FixedVocabularyVectorizer(CountVectorizer):
    """A CountVectorizer over a fixed ``vocabulary`` that does each piece of tokenising once.

    BERTopic tokenises the corpus again and again: it fits and then transforms the vectorizer on the joined
    documents of every topic, and every time it saves representative documents it transforms up to 500 sampled
    documents per topic (twice a build; the atlas chooses its own representatives). On the whole conference that was
    most of the topic stage. With a fixed vocabulary nothing is learnt from documents, so here:

    - ``fit`` only checks the vocabulary, once (scikit-learn's ``fit`` and ``fit_transform`` would count every token
      to learn nothing);
    - ``transform`` returns the remembered rows of documents given to :meth:`remember` (the corpus, counted once
      when the vocabulary was chosen) and counts only the others;
    - ``get_feature_names_out`` is computed once (scikit-learn rebuilds the array on every call, 0.4-0.6 s at
      170,000 terms, and BERTopic asks at every extraction).

    The counts are exactly CountVectorizer's (tests/test_tokens.py compares them).
    """

    def get_feature_names_out(self, input_features: object = None) -> np.ndarray:
        """The vocabulary's terms in column order (computed on the first call, then reused)."""
        names = self.__dict__.get("_feature_names")
        if names is None:
            names = self.__dict__["_feature_names"] = super().get_feature_names_out(input_features)
        return names

    def fit(self, raw_documents: object, y: object = None) -> FixedVocabularyVectorizer:
        """Check the fixed vocabulary once (pipeline.adapters.sklearn_vocabulary.fit_fixed_vocabulary: scikit-learn's
        fit on no documents); nothing is learnt from ``raw_documents``. Returns self. Raises ValueError for a
        vocabulary with a repeated term or none."""
        if self.vocabulary is None:
            return super().fit(raw_documents, y)
        if self.__dict__.get("_checked_vocabulary") is not self.vocabulary:  # BERTopic fits again at every extraction
            fit_fixed_vocabulary(self, raw_documents)  # type: ignore[arg-type]
            self.__dict__["_checked_vocabulary"] = self.vocabulary
        return self

    def fit_transform(self, raw_documents: object, y: object = None) -> sp.csr_matrix:
        """:meth:`fit`, then :meth:`transform` (scikit-learn's would count every document from scratch)."""
        if self.vocabulary is None:
            return super().fit_transform(raw_documents, y)
        return self.fit(raw_documents).transform(raw_documents)

    def remember(
        self,
        texts: Sequence[str],
        matrix: sp.spmatrix,
        tokens: object = None,
        extra_stop_words: Sequence[str] = (),
        store: StageStore = NULL_STORE,
    ) -> None:
        """Keep ``matrix`` (len(texts) x vocabulary, these texts' counts) to answer later transforms of the texts, and
        the texts' pipeline.text.tokens.TokenizedCorpus (same order) for :meth:`sentence_presence_of`, whose result
        ``store`` (pipeline.store.layouts) keeps under :func:`sentences_key`."""
        memo = {text: row for row, text in enumerate(texts)}
        short = {len(text) for text in texts if len(text) < _PREFIX}
        # Keys for BERTopic (:meth:`bertopic_documents`), known here as the rows they stand for, unless a text could
        # be taken for one.
        keys = None if any(text.startswith(DOCUMENT_KEY_MARK) for text in texts) else document_keys(len(texts))
        memo.update(zip(keys or (), range(len(texts))))
        self.__dict__.update(
            _memo=memo,
            # kept in the narrowest type its counts fit (a paper's count of a term fits a byte but in rare papers),
            # handed out as int64: 315 MB less than int64 at 285,717 papers
            _memo_matrix=sp.csr_matrix(matrix, dtype=_count_type(matrix)),
            _prefixes=None,  # made by _joined_rows when first needed: a join of keys needs none (75 MB at 285,717)
            _short=sorted(short, reverse=True),
        )
        self.__dict__.update(_tokens=tokens, _extra_stop_words=list(extra_stop_words), _sentences=None, _store=store)
        self.__dict__.update(_keys=keys)

    def forget(self) -> None:
        """Let go of what :meth:`remember` kept (the corpus's rows, tokens, sentence presence and keys): once the
        topics, their hierarchy and per-class terms are made, nothing transforms the corpus again, and those are 0.9
        GB at 285,717 papers. :meth:`transform` then counts every document as CountVectorizer does (the same counts);
        the vocabulary, the fixed boilerplate words and the feature names stay."""
        remembered = ("_memo", "_memo_matrix", "_prefixes", "_short", "_tokens", "_sentences", "_sentence_starts")
        for name in (*remembered, "_keys", "_store"):
            self.__dict__.pop(name, None)

    def bertopic_documents(self, texts: Sequence[str]) -> list[str]:
        """What to give BERTopic as ``texts``: when they are the remembered texts, in order, one short key per text
        ("\\x00" and its row), which this vectorizer counts and joins as the texts they stand for; else the texts.

        BERTopic joins the documents of each topic into one string at every c-TF-IDF extraction, and a join is as
        wide as its widest character: 1 GB of strings each time at 285,717 papers, where the keys' joins are 2 MB. It
        reads the documents only through the vectorizer and the representation model, which read the keys here
        (pipeline.topics.model.CoherentTerms), and keeps a few as its representative documents
        (pipeline.adapters.bertopic_model.keep_document_texts puts the texts back).
        """
        keys, memo = self.__dict__.get("_keys"), self.__dict__.get("_memo") or {}
        if keys is None or len(texts) != len(keys) or any(memo.get(text) != row for row, text in enumerate(texts)):
            return list(texts)
        return keys

    def _joined_rows(self, document: str) -> list[int] | None:
        """The remembered rows whose texts, joined by single spaces, make ``document`` (as BERTopic joins a topic's
        documents), longest match first; None when it is not such a join."""
        memo, prefixes, short = self.__dict__["_memo"], self.__dict__["_prefixes"], self.__dict__["_short"]
        if document.startswith(DOCUMENT_KEY_MARK) and self.__dict__.get("_keys") is not None:  # joined keys
            keyed = [memo.get(key) for key in document.split(" ")]
            return None if None in keyed else keyed
        if prefixes is None:  # the remembered texts (the keys aside) by their first _PREFIX characters, longest first
            keys = set(self.__dict__.get("_keys") or ())
            prefixes = {}
            for text in sorted((text for text in memo if text not in keys), key=len, reverse=True):
                prefixes.setdefault(text[:_PREFIX], []).append(text)
            self.__dict__["_prefixes"] = prefixes
        rows, position = [], 0
        while position < len(document):
            candidates = prefixes.get(document[position : position + _PREFIX], []) + [
                document[position : position + length] for length in short
            ]
            for candidate in candidates:
                end = position + len(candidate)
                if (
                    candidate in memo
                    and document.startswith(candidate, position)
                    and (end == len(document) or document[end] == " ")
                ):
                    rows.append(memo[candidate])
                    position = end + 1
                    break
            else:
                return None
        return rows

    def transform(self, raw_documents: object) -> sp.csr_matrix:
        """Term counts of the documents (n x vocabulary, CSR int64). A remembered document is not tokenised again, and
        neither is a join of remembered documents (its counts are the sum of theirs: no word pair spans two papers);
        anything else is counted by CountVectorizer."""
        documents = list(raw_documents)  # type: ignore[call-overload]  # scikit-learn's signature: an iterable
        memo = self.__dict__.get("_memo")
        if not memo:
            return super().transform(documents)
        stored = self.__dict__["_memo_matrix"]
        direct, direct_rows, joined, joined_rows, unknown = [], [], [], [], []
        for index, document in enumerate(documents):
            row = memo.get(document)
            rows = [row] if row is not None else self._joined_rows(document)
            if rows is None:
                unknown.append(index)
            elif len(rows) == 1:
                direct.append(index)
                direct_rows.append(rows[0])
            else:
                joined.append(index)
                joined_rows.append(rows)
        if not documents:
            return sp.csr_matrix((0, len(self.vocabulary)), dtype=np.int64)
        # One fancy index for all single remembered documents (a row at a time cost 0.1 ms each), one sum per join.
        parts = [stored[direct_rows]] if direct else []
        parts += [sp.csr_matrix(stored[rows].sum(axis=0), dtype=np.int64) for rows in joined_rows]
        if unknown:
            parts.append(super().transform([documents[index] for index in unknown]).astype(np.int64).tocsr())
        stacked = parts[0] if len(parts) == 1 else sp.vstack(parts, format="csr", dtype=np.int64)
        order = np.asarray(direct + joined + unknown)
        if np.array_equal(order, np.arange(len(documents))):
            return sp.csr_matrix(stacked, dtype=np.int64)
        position = np.empty(len(order), dtype=np.int64)
        position[order] = np.arange(len(order))
        return sp.csr_matrix(stacked[position], dtype=np.int64)

    def _make_sentence_presence(self, tokens: TokenizedCorpus) -> None:
        """Make (or read from the store) the remembered corpus's sentence presence, then let ``tokens`` go: only where
        each document's sentences start is read again (the tokens' ids and words were 204 MB at 285,717 papers)."""
        from pipeline.text.tokens import from_sparse_arrays, sentence_presence, sparse_arrays

        vocabulary, extra = list(self.vocabulary), self.__dict__["_extra_stop_words"]

        def presence() -> dict[str, np.ndarray]:
            return sparse_arrays(sentence_presence(tokens, vocabulary, extra))

        # Stored as the bool CSC it is used as, so a rebuild reads it with no conversion (from float32 rows a rebuild
        # held 1 GB at once at 285,717 papers).
        arrays = self.__dict__["_store"].cached(sentences_key(tokens, vocabulary, extra), presence)
        self.__dict__.update(
            _sentences=from_sparse_arrays(arrays),
            _sentence_starts=np.searchsorted(tokens.sentence_documents, np.arange(tokens.n_documents + 1)),
            _tokens=None,
        )

    def sentence_presence_of(self, texts: Sequence[str]) -> sp.csc_matrix | None:
        """Binary sentences x vocabulary (bool CSC: its readers take a topic's candidate terms by column, as numbers)
        of the remembered ``texts``' sentences, in order (pipeline.text.tokens), or None when some text was not
        remembered with its tokens. Kept in compressed columns from the first call (converted at every c-TF-IDF
        extraction it was a copy of 440 MB at 285,717 papers, each time), and as bool (275 MB there, not 440); stored
        so (pipeline.store.layouts, :func:`sentences_key`)."""
        memo = self.__dict__.get("_memo")
        if not memo or any(text not in memo for text in texts):
            return None
        if self.__dict__.get("_sentences") is None:
            tokens = self.__dict__.get("_tokens")
            if tokens is None:
                return None
            self._make_sentence_presence(tokens)
        starts = self.__dict__["_sentence_starts"]
        rows = [np.arange(starts[memo[text]], starts[memo[text] + 1]) for text in texts]
        picked = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
        sentences = self.__dict__["_sentences"]
        if len(picked) == sentences.shape[0] and np.array_equal(picked, np.arange(len(picked))):
            # every sentence in order (the corpus as BERTopic passes it): the kept matrix, not a copy of it (55 million
            # entries at 285,717 documents); callers never write into it
            return sentences
        return sentences[picked]


def _count_type(matrix: sp.spmatrix) -> type[np.integer]:
    """The narrowest of uint8, uint16, int32 and int64 that holds every stored count of ``matrix`` (sparse, counts
    of 0 or more)."""
    data = sp.csr_matrix(matrix).data
    largest = int(data.max()) if len(data) else 0
    for kind in (np.uint8, np.uint16, np.int32):
        if largest <= np.iinfo(kind).max:
            return kind
    return np.int64


_PREFIX = 48  # characters of a text that index it for :meth:`FixedVocabularyVectorizer._joined_rows`
# The first character of a document key (FixedVocabularyVectorizer.bertopic_documents): a NUL, which no abstract
# begins with; a text that does makes the vectorizer give BERTopic the texts instead.
DOCUMENT_KEY_MARK = "\x00"


def document_keys(n: int) -> list[str]:
    """The keys of n documents: DOCUMENT_KEY_MARK and the row, "\\x000" to "\\x00{n - 1}"."""
    return [f"{DOCUMENT_KEY_MARK}{row}" for row in range(n)]


def forget_corpus(vectorizer: Any) -> None:
    """:meth:`FixedVocabularyVectorizer.forget` of ``vectorizer``; nothing for another vectorizer."""
    forget = getattr(vectorizer, "forget", None)
    if forget is not None:
        forget()


def bertopic_documents(vectorizer: Any, texts: Sequence[str]) -> list[str]:
    """:meth:`FixedVocabularyVectorizer.bertopic_documents` of ``vectorizer``, or ``texts`` for another vectorizer."""
    keyed = getattr(vectorizer, "bertopic_documents", None)
    return keyed(texts) if keyed is not None else list(texts)


def make_vectorizer(
    texts: list[str],
    ngram_max: int = 2,
    min_df: int = 2,
    max_df: float = 0.5,
    extra_stop_words: Sequence[str] = (),
    tokens: TokenizedCorpus | None = None,
    store: StageStore = NULL_STORE,
) -> FixedVocabularyVectorizer:
    """CountVectorizer for c-TF-IDF whose vocabulary is chosen over *documents*.

    BERTopic fits its vectorizer on one joined document per topic, so ``min_df``/``max_df`` there would count
    topics, not papers (a term unique to one topic would be dropped by ``min_df=2``). Here the document
    frequencies are counted over ``texts`` instead: terms in fewer than ``min_df`` documents or in more than
    ``max_df`` of them are left out, and the result is fixed as the vectorizer's vocabulary. Below 20 documents
    ``max_df`` is 1.0 (a share means little there); if pruning leaves nothing, both limits are relaxed.
    ``extra_stop_words`` (e.g. from :func:`boilerplate_terms`) are removed like the English stop words, so they
    do not form bigrams either. ``tokens``: the texts' pipeline.text.tokens.TokenizedCorpus (same order), from which
    single words and word pairs are counted without tokenising again (otherwise scikit-learn counts them);
    ``store`` (pipeline.store.layouts) keeps those counts (:func:`ngrams_key`), and the sentence presence made from
    them (:func:`sentences_key`), for a rebuild. The vectorizer remembers the texts' counts
    (:class:`FixedVocabularyVectorizer`), so BERTopic never tokenises a corpus document again.

    Raises EmptyVocabularyError when no term is left even then.
    """
    n = len(texts)
    stop_words = sorted(set(STOP_WORDS) | set(extra_stop_words))
    settings = dict(
        preprocessor=separate_cjk, token_pattern=TOKEN_PATTERN, stop_words=stop_words, ngram_range=(1, ngram_max)
    )
    limits = ((min(min_df, max(1, n)), max_df if n >= 20 else 1.0), (1, 1.0))
    if tokens is not None and ngram_max == 2:
        for low, high in limits:
            terms, counts = stored_ngram_counts(tokens, extra_stop_words, low, high, store)
            if len(terms):
                break
    else:
        tokens = None  # the sentence presence of pipeline.text.tokens knows word pairs only
        terms, counts = _pruned_counts(texts, settings, limits)
    if not len(terms):
        raise EmptyVocabularyError(f"No words left to describe topics after stop-word removal in {n} documents.")
    vectorizer = FixedVocabularyVectorizer(vocabulary=terms.tolist(), **settings)
    vectorizer.remember(texts, counts, tokens, extra_stop_words, store)
    return vectorizer


def ngrams_key(tokens: Any, extra_stop_words: Sequence[str], min_df: int, max_df: float) -> StageKey:
    """The key of stage "ngrams" (:func:`stored_ngram_counts`): the tokens' key (pipeline.text.tokens.tokens_key), the
    extra stop words (sorted), ``min_df``, ``max_df``, this module's code (with pipeline.text.tokens), numpy and
    scipy."""
    return stage_key(
        "ngrams",
        inputs={"tokens": tokens.key},
        params={"extra_stop_words": sorted(extra_stop_words), "min_df": min_df, "max_df": max_df},
        libraries=("numpy", "scipy"),
        code=(__name__,),
    )


def sentences_key(tokens: Any, vocabulary: Sequence[str], extra_stop_words: Sequence[str]) -> StageKey:
    """The key of stage "sentences" (:meth:`FixedVocabularyVectorizer.sentence_presence_of`): the tokens' key, the
    fingerprint of the vocabulary (terms in column order), the extra stop words (sorted), this module's code (with
    pipeline.text.tokens), numpy and scipy."""
    return stage_key(
        "sentences",
        inputs={"tokens": tokens.key, "vocabulary": texts_fingerprint(vocabulary)},
        params={"extra_stop_words": sorted(extra_stop_words)},
        libraries=("numpy", "scipy"),
        code=(__name__,),
    )


def stored_ngram_counts(
    tokens: Any, extra_stop_words: Sequence[str], min_df: int, max_df: float, store: StageStore = NULL_STORE
) -> tuple[np.ndarray, sp.csr_matrix]:
    """pipeline.text.tokens.ngram_counts of ``tokens`` (a TokenizedCorpus), through ``store`` under
    :func:`ngrams_key` (hit or miss in ``store.hits["ngrams"]``): (terms, str objects in an object array; documents x
    terms CSR int64). The store keeps the terms as UTF-8 text, one per line (pipeline.store.text_lines)."""
    from pipeline.text.tokens import from_sparse_arrays, ngram_counts, sparse_arrays

    def count() -> dict[str, np.ndarray]:
        terms, counts = ngram_counts(tokens, extra_stop_words, min_df, max_df)
        return {"terms_text": lines_array(terms), **sparse_arrays(counts)}

    stored = store.cached(ngrams_key(tokens, extra_stop_words, min_df, max_df), count)
    return lines_of_array(stored["terms_text"]), from_sparse_arrays(stored).astype(np.int64, copy=False)


def vectorizer_for_vocabulary(
    texts: list[str],
    vocabulary: Sequence[str],
    stop_words: Sequence[str],
    ngram_max: int = 2,
    tokens: TokenizedCorpus | None = None,
) -> FixedVocabularyVectorizer:
    """A :class:`FixedVocabularyVectorizer` over a given ``vocabulary`` (a saved model's terms, in column order) that
    remembers the counts of ``texts``: counted from their pipeline.text.tokens.TokenizedCorpus (``tokens``, made here
    when None) for single words and word pairs, by scikit-learn otherwise. ``stop_words``: the vectorizer's whole stop
    list (English plus boilerplate)."""
    from pipeline.text.tokens import ngram_counts, tokenize

    settings = dict(
        preprocessor=separate_cjk,
        token_pattern=TOKEN_PATTERN,
        stop_words=sorted(stop_words),
        ngram_range=(1, ngram_max),
    )
    vectorizer = FixedVocabularyVectorizer(vocabulary=list(vocabulary), **settings)
    if ngram_max != 2:
        vectorizer.remember(texts, CountVectorizer(vocabulary=list(vocabulary), **settings).transform(texts))
        return vectorizer
    tokens = tokenize(texts) if tokens is None else tokens
    extra = sorted(set(stop_words) - set(STOP_WORDS))
    names, counts = ngram_counts(tokens, extra)
    wanted = np.asarray(list(vocabulary), dtype=str)
    position = np.minimum(np.searchsorted(names, wanted), max(len(names) - 1, 0))
    present = (names[position] == wanted) if len(names) else np.zeros(len(wanted), dtype=bool)
    aligned = (
        (counts[:, position] @ sp.diags(present.astype(np.int64), dtype=np.int64)).tocsr()
        if len(names)
        else sp.csr_matrix((len(texts), len(wanted)), dtype=np.int64)
    )
    aligned.eliminate_zeros()
    vectorizer.remember(texts, aligned, tokens, extra)
    return vectorizer


def _pruned_counts(
    texts: list[str], settings: dict[str, object], limits: Sequence[tuple[int, float]]
) -> tuple[np.ndarray, sp.csr_matrix]:
    """(terms, counts) by scikit-learn's CountVectorizer, keeping the terms within the first (min_df, max_df) of
    ``limits`` that leaves any; ([], empty) when none does."""
    try:
        counter = CountVectorizer(**settings, dtype=np.int64)
        counts = counter.fit_transform(texts).tocsr()
    except ValueError:  # "empty vocabulary"
        return np.zeros(0, dtype=str), sp.csr_matrix((len(texts), 0), dtype=np.int64)
    frequency = np.bincount(counts.indices, minlength=counts.shape[1])
    for low, high in limits:
        keep = np.flatnonzero((frequency >= low) & (frequency <= high * len(texts)))
        if len(keep):
            return counter.get_feature_names_out()[keep], counts[:, keep]
    return np.zeros(0, dtype=str), sp.csr_matrix((len(texts), 0), dtype=np.int64)


def documents_without_content_words(counts: WordCounts, doc_ids: list[str]) -> list[str]:
    """Ids of documents that have no word left after stop-word removal (``counts`` from
    :func:`pipeline.text.tokens.count_words`).

    Raises EmptyVocabularyError when that is every document.
    """
    empty = [doc_ids[row] for row in np.flatnonzero(np.diff(counts.matrix.indptr) == 0)]
    if empty and len(empty) == len(doc_ids):
        raise EmptyVocabularyError(
            f"No words left to describe topics after stop-word removal: all {len(doc_ids)} documents contain only "
            "stop words, numbers or punctuation."
        )
    return empty


def boilerplate_terms(
    counts: WordCounts, groups: Sequence[int] | np.ndarray, min_share: float = 0.05, max_lift: float = 1.5
) -> list[str]:
    """Academic boilerplate learned from document frequency: words common in the corpus but in no group more so.

    A word (English stop words aside) is boilerplate when it occurs in at least ``min_share`` of the documents
    and no group (cluster, -1 ignored) has it in more than ``max_lift`` times that share of its own documents.
    On the 951 ICLR abstracts (max_lift 1.5) this finds "models", "propose", "demonstrate", "novel", "introduce",
    "method", "framework"...; on the 11,672 titles nothing, since titles waste no words (and "benchmark" there
    marks a subject).
    It needs at least 3 groups; otherwise it returns [].

    Parameters
    ----------
    counts : the n documents' word counts (:func:`pipeline.text.tokens.count_words`).
    groups : int, n; cluster per document (-1 = outlier, left out of the lifts but counted in the shares).
    min_share, max_lift : the two thresholds above.

    Returns the boilerplate words, sorted.
    """
    groups = np.asarray(groups)
    ids = sorted(set(groups.tolist()) - {OUTLIER_TOPIC})
    if len(ids) < 3 or counts.matrix.shape[0] < 20 or counts.matrix.shape[1] == 0:
        return []
    presence = (counts.matrix > 0).astype(np.float32)
    share = np.asarray(presence.mean(axis=0)).ravel()
    group_share = np.vstack([np.asarray(presence[groups == group].mean(axis=0)).ravel() for group in ids])
    common = share >= min_share
    even = group_share.max(axis=0) <= max_lift * share
    return sorted(counts.words[common & even].tolist())


def cooccurrence_npmi(presence: sp.spmatrix | np.ndarray) -> np.ndarray:
    """Pairwise NPMI of terms by co-occurrence in the same text units (Bouma 2009), from a binary units x terms
    matrix (units: documents or sentences).

    NPMI(a, b) = log(P(a, b) / (P(a) P(b))) / -log P(a, b), P = share of units; -1 for pairs that never
    co-occur, 1 for pairs that always do. Returns float64, terms x terms, diagonal 0.
    """
    matrix = sp.csc_matrix(presence, dtype=np.float64)
    n = max(matrix.shape[0], 1)
    joint = np.asarray((matrix.T @ matrix).todense()) / n
    single = np.diag(joint).copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        pmi = np.log(joint / np.outer(single, single))
        npmi = np.where(joint > 0, pmi / -np.log(np.where(joint < 1, joint, 0.5)), -1.0)
    npmi = np.where(joint >= 1, 1.0, npmi)
    np.fill_diagonal(npmi, 0.0)
    return np.nan_to_num(npmi, nan=-1.0)


def repeats_a_column(matrix: sp.csr_matrix) -> bool:
    """Whether some row of ``matrix`` (CSR) stores an entry for one column twice. BERTopic's c-TF-IDF, a product of
    sparse matrices, never does, though its rows' columns are not in order; one built from entries by hand may. Row by
    row, so it never copies the whole matrix (93 topics x 2.75 million terms at 285,717 papers: 135 MB); a row's
    distinct columns are counted on one flag per column (0.1 s for 60 rows there; sorting each row took 3.3 s)."""
    flags = np.zeros(matrix.shape[1], dtype=bool)
    for row in range(matrix.shape[0]):
        columns = matrix.indices[matrix.indptr[row] : matrix.indptr[row + 1]]
        flags[columns] = True
        distinct = np.count_nonzero(flags)
        flags[columns] = False
        if distinct != len(columns):
            return True
    return False


def term_owners(weights: np.ndarray | sp.spmatrix, rows: Sequence[int]) -> np.ndarray:
    """Per term (column of ``weights``, topics x terms, dense or sparse), the row among ``rows`` where its weight is
    highest, the first of ``rows`` among equal weights (int64, one entry per column).

    Columns without a positive weight in ``rows`` get ``rows[0]`` (dense) or an unspecified row of ``rows`` (sparse);
    :func:`select_coherent_terms` reads the owner only of terms a topic weighs above 0. A sparse matrix (BERTopic's
    c-TF-IDF: 60 topics x 679,077 terms on the six collections, 4% filled) is never made dense.
    """
    rows = list(rows)
    if not sp.issparse(weights):
        return np.asarray(rows)[np.argmax(weights[rows], axis=0)]
    weights = sp.csr_matrix(weights)
    owner = np.full(weights.shape[1], rows[0], dtype=np.int64)
    best = np.full(weights.shape[1], -np.inf)
    # Row after row, a column goes to a row only above the best weight so far: the largest value and, among equal
    # values, the first of rows, as np.argmax picks; one row's entries at a time (a sort of every stored entry held
    # 1 GB at 285,717 papers).
    for row in rows:
        start, end = weights.indptr[row], weights.indptr[row + 1]
        columns, values = weights.indices[start:end], weights.data[start:end]
        higher = values > best[columns]
        owner[columns[higher]] = row
        best[columns[higher]] = values[higher]
    return owner


def ranked_terms(weights: np.ndarray | sp.csr_matrix, row: int) -> tuple[np.ndarray, np.ndarray]:
    """The terms (column indices, int64) that ``row`` of ``weights`` (topics x terms, dense or CSR) weighs above 0,
    heaviest first and the lower column first among equal weights, with their weights (float64): what a stable
    ``argsort`` of the negated row gives, without sorting the row's zeros."""
    if isinstance(weights, sp.csr_matrix):
        start, end = weights.indptr[row], weights.indptr[row + 1]
        columns = np.asarray(weights.indices[start:end], dtype=np.int64)
        values = np.asarray(weights.data[start:end], dtype=np.float64)
        keep = values > 0
        columns, values = columns[keep], values[keep]
        order = np.lexsort((columns, -values))
        return columns[order], values[order]
    dense = np.asarray(weights[row], dtype=np.float64)
    order = np.argsort(-dense, kind="stable")
    positive = order[dense[order] > 0]
    return positive.astype(np.int64), dense[positive]


def select_coherent_terms(
    weights: np.ndarray | sp.csr_matrix,
    presence: sp.spmatrix,
    row: int,
    rows: Sequence[int],
    n_terms: int = 25,
    n_candidates: int = 40,
    coherence_weight: float = 3.0,
    n_leading: int = 10,
    exclusive: bool = True,
    owner: np.ndarray | None = None,
) -> list[int]:
    """Choose one topic's terms (column indices, best first) from c-TF-IDF weights.

    1. Candidates: the ``n_candidates`` terms of highest weight in ``row`` with weight > 0; with ``exclusive``,
       only terms whose highest weight over ``rows`` (the real topics) is in ``row`` (if that leaves none, the
       plain candidates are used), so no two topics share a term.
    2. Greedy choice: the top candidate first; then, repeatedly, the candidate maximising
       w_j * (1 + coherence_weight * mean NPMI(j, chosen)), where w_j is its weight divided by the top weight and
       NPMI is :func:`cooccurrence_npmi` over ``presence`` (text units x terms, binary; the build uses sentences):
       terms that occur with the terms already chosen move up, terms that never do move down.
    3. The first ``n_leading`` chosen (the terms a label and a coherence score read) and the rest are each put
       back in order of weight, so shown weights decrease within each block.

    Parameters: weights float, topics x terms (c-TF-IDF), dense or CSR with no column twice in a row, in any order (a
    CSR matrix gives the same choice as its dense copy); presence binary, units x terms (CSC when it is large: one
    column slice per topic); ``owner``: per term, the row of ``rows`` where it weighs most (:func:`term_owners`),
    computed here when None (pass it when choosing the terms of every topic: it is the same for all of them). Returns
    at most ``n_terms`` indices.
    """
    positive, positive_weights = ranked_terms(weights, row)
    candidates = positive
    if exclusive and len(rows) > 1:
        owner = term_owners(weights, rows) if owner is None else owner
        owned = positive[owner[positive] == row]
        candidates = owned if len(owned) else positive
    candidates = candidates[:n_candidates]
    if len(candidates) <= 1:
        return candidates.tolist()
    npmi = cooccurrence_npmi(presence[:, candidates])
    weight_of = dict(zip(positive.tolist(), positive_weights.tolist()))
    candidate_weights = np.asarray([weight_of[column] for column in candidates.tolist()], dtype=np.float64)
    relative = candidate_weights / candidate_weights[0]
    chosen = [0]
    remaining = np.arange(1, len(candidates))
    while len(remaining) and len(chosen) < n_terms:
        # one row per remaining candidate: the same means, in the same order, as one .mean() per candidate
        scores = relative[remaining] * (
            1.0 + coherence_weight * npmi[np.ix_(remaining, np.asarray(chosen))].mean(axis=1)
        )
        best = int(np.argmax(scores))
        chosen.append(int(remaining[best]))
        remaining = np.delete(remaining, best)
    by_weight = lambda block: sorted(block, key=lambda j: (-relative[j], j))  # noqa: E731
    ranked = by_weight(chosen[:n_leading]) + by_weight(chosen[n_leading:])
    return [int(candidates[j]) for j in ranked]
