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

import re
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, CountVectorizer

from pipeline.cache import OUTLIER_TOPIC
from pipeline.errors import EmptyVocabularyError
from pipeline.labels import CJK_FUNCTION_CHARACTERS

STOP_WORDS = sorted(ENGLISH_STOP_WORDS | CJK_FUNCTION_CHARACTERS)  # CJK particles: see pipeline.labels

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_CJK_CHARACTER = re.compile(f"([{_CJK}])")
TOKEN_PATTERN = rf"(?u)\b(?=\w*[^\W\d_])(?:(?![{_CJK}])\w){{2,}}\b|[{_CJK}]"


def separate_cjk(text: str) -> str:
    """Lower-case and put spaces around CJK characters so each is its own token."""
    return _CJK_CHARACTER.sub(r" \1 ", text.lower())


def make_vectorizer(
    texts: list[str], ngram_max: int = 2, min_df: int = 2, max_df: float = 0.5, extra_stop_words: Sequence[str] = ()
) -> CountVectorizer:
    """CountVectorizer for c-TF-IDF whose vocabulary is chosen over *documents*.

    BERTopic fits its vectorizer on one joined document per topic, so ``min_df``/``max_df`` there would count
    topics, not papers (a term unique to one topic would be dropped by ``min_df=2``). Here the document
    frequencies are counted over ``texts`` instead: terms in fewer than ``min_df`` documents or in more than
    ``max_df`` of them are left out, and the result is fixed as the vectorizer's vocabulary. Below 20 documents
    ``max_df`` is 1.0 (a share means little there); if pruning leaves nothing, both limits are relaxed.
    ``extra_stop_words`` (e.g. from :func:`boilerplate_terms`) are removed like the English stop words, so they
    do not form bigrams either.

    Raises EmptyVocabularyError when no term is left even then.
    """
    n = len(texts)
    stop_words = sorted(set(STOP_WORDS) | set(extra_stop_words))
    settings = dict(preprocessor=separate_cjk, token_pattern=TOKEN_PATTERN, stop_words=stop_words, ngram_range=(1, ngram_max))
    vocabulary: list[str] = []
    for low, high in ((min(min_df, max(1, n)), max_df if n >= 20 else 1.0), (1, 1.0)):
        try:
            vocabulary = sorted(CountVectorizer(min_df=low, max_df=high, **settings).fit(texts).vocabulary_)
        except ValueError:  # "empty vocabulary" or "After pruning, no terms remain"
            continue
        if vocabulary:
            break
    if not vocabulary:
        raise EmptyVocabularyError(f"No words left to describe topics after stop-word removal in {n} documents.")
    return CountVectorizer(vocabulary=vocabulary, **settings)


def documents_without_content_words(texts: list[str], doc_ids: list[str]) -> list[str]:
    """Ids of documents that have no token left after stop-word removal.

    Raises EmptyVocabularyError when that is every document.
    """
    analyze = CountVectorizer(preprocessor=separate_cjk, token_pattern=TOKEN_PATTERN, stop_words=STOP_WORDS).build_analyzer()
    empty = [doc_id for doc_id, text in zip(doc_ids, texts) if not analyze(text)]
    if empty and len(empty) == len(texts):
        raise EmptyVocabularyError(
            f"No words left to describe topics after stop-word removal: all {len(texts)} documents contain only "
            "stop words, numbers or punctuation."
        )
    return empty


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def split_sentences(text: str) -> list[str]:
    """Split at ".", "!" or "?" followed by white space; never returns an empty list (an empty text gives [""])."""
    parts = [part for part in _SENTENCE_END.split(text) if part.strip()]
    return parts or [text]


def boilerplate_terms(texts: list[str], groups: Sequence[int] | np.ndarray, min_share: float = 0.05, max_lift: float = 1.5) -> list[str]:
    """Academic boilerplate learned from document frequency: words common in the corpus but in no group more so.

    A word (English stop words aside) is boilerplate when it occurs in at least ``min_share`` of the documents
    and no group (cluster, -1 ignored) has it in more than ``max_lift`` times that share of its own documents.
    On the 951 ICLR abstracts (max_lift 1.5) this finds "models", "propose", "demonstrate", "novel", "introduce",
    "method", "framework"...; on the 11,672 titles nothing, since titles waste no words (and "benchmark" there
    marks a subject).
    It needs at least 3 groups; otherwise it returns [].

    Parameters
    ----------
    texts : the n model texts.
    groups : int, n; cluster per document (-1 = outlier, left out of the lifts but counted in the shares).
    min_share, max_lift : the two thresholds above.

    Returns the boilerplate words, sorted.
    """
    groups = np.asarray(groups)
    ids = sorted(set(groups.tolist()) - {OUTLIER_TOPIC})
    if len(ids) < 3 or len(texts) < 20:
        return []
    analyzer = CountVectorizer(preprocessor=separate_cjk, token_pattern=TOKEN_PATTERN, stop_words=STOP_WORDS, binary=True, dtype=np.float32)
    try:
        presence = analyzer.fit_transform(texts).tocsr()
    except ValueError:  # no words at all
        return []
    share = np.asarray(presence.mean(axis=0)).ravel()
    group_share = np.vstack([np.asarray(presence[groups == group].mean(axis=0)).ravel() for group in ids])
    common = share >= min_share
    even = group_share.max(axis=0) <= max_lift * share
    words = analyzer.get_feature_names_out()
    return sorted(words[common & even].tolist())


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


def select_coherent_terms(
    weights: np.ndarray,
    presence: sp.spmatrix,
    row: int,
    rows: Sequence[int],
    n_terms: int = 25,
    n_candidates: int = 40,
    coherence_weight: float = 3.0,
    n_leading: int = 10,
    exclusive: bool = True,
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

    Parameters: weights float, topics x terms (c-TF-IDF); presence binary, units x terms. Returns at most
    ``n_terms`` indices.
    """
    order = np.argsort(-weights[row], kind="stable")
    positive = order[weights[row, order] > 0]
    candidates = positive
    if exclusive and len(rows) > 1:
        rows = list(rows)
        owner = np.asarray(rows)[np.argmax(weights[rows], axis=0)]
        owned = positive[owner[positive] == row]
        candidates = owned if len(owned) else positive
    candidates = candidates[:n_candidates]
    if len(candidates) <= 1:
        return candidates.tolist()
    npmi = cooccurrence_npmi(presence[:, candidates])
    relative = weights[row, candidates] / weights[row, candidates[0]]
    chosen = [0]
    remaining = np.arange(1, len(candidates))
    while len(remaining) and len(chosen) < n_terms:
        # one row per remaining candidate: the same means, in the same order, as one .mean() per candidate
        scores = relative[remaining] * (1.0 + coherence_weight * npmi[np.ix_(remaining, chosen)].mean(axis=1))
        best = int(np.argmax(scores))
        chosen.append(int(remaining[best]))
        remaining = np.delete(remaining, best)
    by_weight = lambda block: sorted(block, key=lambda j: (-relative[j], j))  # noqa: E731
    ranked = by_weight(chosen[:n_leading]) + by_weight(chosen[n_leading:])
    return [int(candidates[j]) for j in ranked]
