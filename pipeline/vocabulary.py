"""The c-TF-IDF vocabulary: tokenisation, stop words, n-grams, and the empty-vocabulary guard.

Tokens are runs of two or more word characters holding at least one letter (pure numbers such as ``2023``
are not terms), plus every single CJK/kana/Hangul character on its own, so a Chinese or Japanese sentence
gives character uni- and bigrams instead of one sentence-long "term". Stop words are scikit-learn's English
list plus academic boilerplate (ACADEMIC_STOP_WORDS); terms in more than ``max_df`` of the documents are
dropped as well, which removes corpus-wide words ("learning" at ICLR) without a hand list.
"""

from __future__ import annotations

import re

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, CountVectorizer

from pipeline.errors import EmptyVocabularyError

# Words that describe how a paper is written, not what it is about.
ACADEMIC_STOP_WORDS = frozenset(
    """
    abstract paper papers propose proposed proposes proposing present presents presented introduce introduces introduced
    method methods approach approaches technique techniques framework frameworks novel new existing prior previous
    result results show shows shown showing demonstrate demonstrates demonstrated demonstrating achieve achieves achieved
    achieving outperform outperforms outperforming performance performances significant significantly substantial
    substantially extensive experiment experiments experimental empirical empirically evaluate evaluated evaluation
    study studies studied work works recent recently state art sota based using use used uses various different
    effective effectively effectiveness efficient efficiently improve improves improved improvement improvements
    superior competitive task tasks problem problems challenge challenges challenging key important address addresses
    leverage leverages leveraging enable enables enabling provide provides provided furthermore moreover additionally
    however specifically particular particularly including include includes code available github com https www
    benchmark benchmarks dataset datasets model models data
    """.split()
)
STOP_WORDS = sorted(ENGLISH_STOP_WORDS | ACADEMIC_STOP_WORDS)

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_CJK_CHARACTER = re.compile(f"([{_CJK}])")
TOKEN_PATTERN = rf"(?u)\b(?=\w*[^\W\d_])(?:(?![{_CJK}])\w){{2,}}\b|[{_CJK}]"


def separate_cjk(text: str) -> str:
    """Lower-case and put spaces around CJK characters so each is its own token."""
    return _CJK_CHARACTER.sub(r" \1 ", text.lower())


def make_vectorizer(texts: list[str], ngram_max: int = 2, min_df: int = 2, max_df: float = 0.5) -> CountVectorizer:
    """CountVectorizer for c-TF-IDF whose vocabulary is chosen over *documents*.

    BERTopic fits its vectorizer on one joined document per topic, so ``min_df``/``max_df`` there would count
    topics, not papers (a term unique to one topic would be dropped by ``min_df=2``). Here the document
    frequencies are counted over ``texts`` instead: terms in fewer than ``min_df`` documents or in more than
    ``max_df`` of them are left out, and the result is fixed as the vectorizer's vocabulary. Below 20 documents
    ``max_df`` is 1.0 (a share means little there); if pruning leaves nothing, both limits are relaxed.

    Raises EmptyVocabularyError when no term is left even then.
    """
    n = len(texts)
    settings = dict(preprocessor=separate_cjk, token_pattern=TOKEN_PATTERN, stop_words=STOP_WORDS, ngram_range=(1, ngram_max))
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
