"""What a word is: the token pattern, the stop words, CJK handling, sentences, and the corpus's word counts.

The one definition every tokenising part of the build shares (pipeline.text.tokens, pipeline.text.vocabulary, the
lexical representation), so that a change to any of it is a change to every stage's key (pipeline.store.keys).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

if TYPE_CHECKING:
    from pipeline.store.keys import StageKey

# Characters that a per-character CJK tokenisation (pipeline.text.vocabulary) turns into terms but that say nothing
# about a subject: every hiragana (Japanese particles and inflections: の, を, た, ...), Chinese particles, pronouns and
# conjunctions (的, 了, 是, 和, 我们, ...) and Korean particles (은, 는, 을, 를, 의, ...). Only characters that rarely
# take part in a content word are listed (not 中, 能, 用, which do: 中国, 能源, 应用). Removed like English stop words.
CJK_FUNCTION_CHARACTERS = frozenset(
    [chr(code) for code in range(0x3041, 0x3097)]
    + list("的了是在和与及或对为以于等我们这那其之也而并被将从个把让该各此即则但都还又很更最已就吗呢吧啊")
    + list("은는이가을를의에와과도로다고및")
)


STOP_WORDS = sorted(ENGLISH_STOP_WORDS | CJK_FUNCTION_CHARACTERS)  # CJK particles: see pipeline.topics.labels


_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"


CJK_CHARACTER = re.compile(f"([{_CJK}])")


# A word is at most MAX_WORD_CHARS characters: a longer run of word characters (a base64 blob, a DNA sequence, a
# 50,000-character "word" pasted into an abstract) is no token at all, here and in every CountVectorizer that uses
# this pattern, so the vocabulary (fixed-width numpy str arrays, stored in the layout store) takes at most W x 100
# characters: one such word made every word of a 951-paper build 50,000 characters wide (6.3 GB, two 2 GB .npy files,
# this one and pipeline.quality.npmi's reference words, which use their own pattern and are not capped yet;
# red team, issue 40, finding 11). No word of a real abstract comes near: the longest runs of word characters in the
# titles and abstracts of ICLR 2024, 2025, 2026 and ICML 2025 (39,512 papers) are 62 and 71 characters. A run of
# more than 100 word characters has no word boundary inside it, so no piece of it is a token either.
MAX_WORD_CHARS = 100
TOKEN_PATTERN = rf"(?u)\b(?=\w*[^\W\d_])(?!\w{{{MAX_WORD_CHARS + 1}}})(?:(?![{_CJK}])\w){{2,}}\b|[{_CJK}]"


def separate_cjk(text: str) -> str:
    """Lower-case and put spaces around CJK characters so each is its own token."""
    return CJK_CHARACTER.sub(r" \1 ", text.lower())


class WordCounts:
    """The corpus's single words once counted: documents x words (English stop words removed, tokens as the c-TF-IDF
    vocabulary makes them). One tokenisation serves the content-word check, the boilerplate words and the lexical
    representation (pipeline.represent.representation), instead of one each.

    Attributes
    ----------
    matrix : CSR, n_documents x n_words, int64 counts.
    words : str array, n_words, sorted (scikit-learn's column order).
    key : the pipeline.store.keys.StageKey of the tokens they were counted from (pipeline.text.tokens.tokens_key),
        the input key of a stage made from them (the lexical fit); None for counts made otherwise.
    """

    def __init__(self, matrix: sp.csr_matrix, words: np.ndarray, key: StageKey | None = None):
        self.matrix, self.words, self.key = matrix, words, key

    def document_frequency(self) -> np.ndarray:
        """Documents containing each word, int64."""
        return np.bincount(self.matrix.indices, minlength=self.matrix.shape[1])


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def split_sentences(text: str) -> list[str]:
    """Split at ".", "!" or "?" followed by white space; never returns an empty list (an empty text gives [""])."""
    parts = [part for part in _SENTENCE_END.split(text) if part.strip()]
    return parts or [text]
