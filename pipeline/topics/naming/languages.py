"""Topics and themes whose papers are mostly written in one other language than English are named by it.

The representation and the stop words are English, so papers in another language gather in a topic of their own
(pipeline/ingest/language.py warns of it), and that topic's most frequent phrase is one of the language's function
words: the 285,717 papers of the ML and ACL Anthologies and arXiv put 1,911 French abstracts (JEP-TALN, TALN) and 19
others into a topic and a theme named "Des". Such a topic or theme is named "Papers in French" instead: what its
papers share is their language, and a reader can tell what to expect.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

# A topic is named by its language when at least this share of its papers is detected in it (one other language).
LANGUAGE_SHARE = 0.6
# ISO 639-1 codes of the languages py3langid labels most often in research papers, for people; others by their code.
LANGUAGE_NAMES = {
    "ar": "Arabic",
    "ca": "Catalan",
    "cs": "Czech",
    "da": "Danish",
    "de": "German",
    "el": "Greek",
    "es": "Spanish",
    "eu": "Basque",
    "fa": "Persian",
    "fi": "Finnish",
    "fr": "French",
    "he": "Hebrew",
    "hi": "Hindi",
    "id": "Indonesian",
    "it": "Italian",
    "ja": "Japanese",
    "ko": "Korean",
    "nl": "Dutch",
    "no": "Norwegian",
    "pl": "Polish",
    "pt": "Portuguese",
    "ro": "Romanian",
    "ru": "Russian",
    "sv": "Swedish",
    "th": "Thai",
    "tr": "Turkish",
    "uk": "Ukrainian",
    "vi": "Vietnamese",
    "zh": "Chinese",
}
NOT_A_LANGUAGE = frozenset({"en", "unknown"})


def language_name(code: str) -> str:
    """A language's English name from its ISO 639-1 ``code`` ("fr" -> "French"), else the code itself."""
    return LANGUAGE_NAMES.get(code, code)


def dominant_language(languages: Sequence[str]) -> str | None:
    """The one language other than English that at least LANGUAGE_SHARE of ``languages`` (ISO 639-1 codes, or
    "unknown") are in, else None (also for no papers)."""
    if not len(languages):
        return None
    counts = pd.Series(list(languages), dtype=object).value_counts()
    top = str(counts.index[0])
    if top in NOT_A_LANGUAGE or counts.iloc[0] < LANGUAGE_SHARE * len(languages):
        return None
    return top


def topics_of_other_languages(topics: np.ndarray, languages: Sequence[str]) -> list[int]:
    """The topics (other than -1) whose papers are mostly in one language other than English
    (:func:`dominant_language`), in id order. ``topics`` (int, n) and ``languages`` (n): each paper's topic and
    language, in the same order."""
    topics = np.asarray(topics)
    codes = np.asarray(list(languages), dtype=object)
    found = (int(topic) for topic in np.unique(topics) if int(topic) != -1)
    return [topic for topic in found if dominant_language(codes[topics == topic]) is not None]


def with_language_names(frame: pd.DataFrame, topics: np.ndarray, languages: Sequence[str]) -> pd.DataFrame:
    """``frame`` (the topics table: topic, label, and theme, theme_label when present) with the label of each topic,
    and the theme_label of each theme, whose papers are mostly in one other language (:func:`dominant_language`)
    set to "Papers in <language>". ``topics`` (int, n) and ``languages`` (n): each paper's topic and language, in
    the same order. Returns a new frame; the others' names are kept."""
    frame = frame.copy()
    topics = np.asarray(topics)
    codes = np.asarray(list(languages), dtype=object)
    for row, topic in zip(frame.index, frame["topic"].astype(int)):
        language = dominant_language(codes[topics == topic]) if topic != -1 else None
        if language is not None:
            frame.loc[row, "label"] = f"Papers in {language_name(language)}"
    if {"theme", "theme_label"} <= set(frame.columns):
        theme_of = dict(zip(frame["topic"].astype(int), frame["theme"]))
        paper_themes = np.asarray([theme_of.get(int(topic)) for topic in topics], dtype=object)
        for theme in frame["theme"].dropna().unique():
            language = dominant_language(codes[paper_themes == theme])
            if language is not None:
                frame.loc[frame["theme"] == theme, "theme_label"] = f"Papers in {language_name(language)}"
    return frame
