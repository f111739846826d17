"""Text for modelling versus text for display, and which records become documents.

Display text (``title``, ``abstract``) is kept exactly as written. The model text (column ``text``) is the
title and abstract joined by ". ", with HTML tags, Markdown emphasis, URLs, LaTeX math (``$...$``, ``$$...$$``,
``\\(...\\)``, ``\\[...\\]``) and LaTeX command names stripped (the argument of ``\\textbf{word}`` is kept), and
whitespace collapsed. It is what is embedded and what the c-TF-IDF vocabulary is built from.

Records are dropped, counted and listed by id, for these reasons (keys of ``dropped``):

- ``empty or missing abstract`` (or ``title`` in a titles-only file): missing, empty, whitespace-only or 'NaN';
- ``no words (numbers or punctuation only)``: nothing alphabetic in that abstract (or title) once cleaned (e.g. ``2023``);
- ``duplicate``: the same text as an earlier document after lower-casing and removing everything but letters
  and digits (exact and near-exact copies). The kept document lists the merged ids in ``duplicate_ids``.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

import pandas as pd

from pipeline.corpus import RawCorpus

DROP_EMPTY = "empty or missing {column}"
DROP_NO_WORDS = "no words (numbers or punctuation only)"
DROP_DUPLICATE = "duplicate"

_HTML_TAG = re.compile(r"<[^>]{1,200}>")
_URL = re.compile(r"https?://\S+|www\.\S+")
_MATH = re.compile(r"\$\$.*?\$\$|\$[^$]{0,400}?\$|\\\(.*?\\\)|\\\[.*?\\\]", re.DOTALL)
_LATEX_COMMAND = re.compile(r"\\(?:cite|ref|eqref|label|url|footnote)\*?\{[^}]*\}|\\[a-zA-Z]+\*?")
_MARKDOWN = re.compile(r"(\*\*|__|`+|~~)")
_BRACES = re.compile(r"[{}]")
_SPACE = re.compile(r"\s+")
_LETTER = re.compile(r"[^\W\d_]")

# Scripts that make a document "non-Latin" for the report (CJK, Hangul, Cyrillic, Arabic, Hebrew, Devanagari, Thai).
_NON_LATIN = re.compile(r"[\u0400-\u04ff\u0590-\u05ff\u0600-\u06ff\u0900-\u097f\u0e00-\u0e7f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


@dataclass
class PreparedCorpus:
    """Documents ready to model.

    Attributes
    ----------
    documents : one row per kept document, input order; the RawCorpus columns plus ``text`` (model text)
        and ``duplicate_ids`` (list of ids merged into this one).
    dropped : {reason: count} of records not modelled (reading skips included).
    dropped_ids : {reason: [doc_id, ...]} for the same.
    warnings : messages for the log and the manifest.
    """

    documents: pd.DataFrame
    dropped: dict[str, int] = field(default_factory=dict)
    dropped_ids: dict[str, list[str]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def model_text(text: str | None) -> str:
    """Strip markup, LaTeX math and commands, URLs and Markdown emphasis; collapse whitespace. None -> ""."""
    if not text:
        return ""
    text = unicodedata.normalize("NFKC", text)
    text = _HTML_TAG.sub(" ", text)
    text = _URL.sub(" ", text)
    text = _MATH.sub(" ", text)
    text = _LATEX_COMMAND.sub(" ", text)
    text = _MARKDOWN.sub("", text)
    text = _BRACES.sub("", text)
    return _SPACE.sub(" ", text).strip()


def join_title_abstract(title: str, abstract: str) -> str:
    """The text embedded for a document: "title. abstract" where both exist, else whichever exists."""
    if title and abstract:
        separator = " " if title.endswith((".", "?", "!", ":")) else ". "
        return f"{title}{separator}{abstract}"
    return title or abstract


def duplicate_key(text: str) -> str:
    """Key under which near-exact copies collide: lower case, letters and digits only."""
    return "".join(char for char in text.casefold() if char.isalnum())


def is_non_latin(text: str, share: float = 0.2) -> bool:
    """True when more than ``share`` of the letters are in a non-Latin script (CJK, Cyrillic, Arabic, ...)."""
    letters = _LETTER.findall(text)
    if not letters:
        return False
    return sum(1 for char in letters if _NON_LATIN.match(char)) / len(letters) > share


def prepare_documents(raw: RawCorpus) -> PreparedCorpus:
    """Turn read records into documents: drop unusable rows and duplicates, with counts and ids.

    Returns a PreparedCorpus (see the module docstring for the rules). Never raises for bad rows; the caller
    decides what too few documents means.
    """
    records = raw.records
    dropped_ids: dict[str, list[str]] = {}
    keep_rows: list[int] = []
    texts: list[str] = []
    first_by_key: dict[str, int] = {}
    duplicates_of: dict[int, list[str]] = {}
    empty_reason = DROP_EMPTY.format(column=raw.text_column)
    for row, (doc_id, title, abstract) in enumerate(records[["doc_id", "title", "abstract"]].itertuples(index=False)):
        deciding = abstract if raw.text_column == "abstract" else title
        if deciding is None or not str(deciding).strip() or str(deciding).strip().lower() == "nan":
            dropped_ids.setdefault(empty_reason, []).append(doc_id)
            continue
        if not _LETTER.search(model_text(str(deciding))):
            dropped_ids.setdefault(DROP_NO_WORDS, []).append(doc_id)
            continue
        text = join_title_abstract(model_text(title), model_text(abstract))
        key = duplicate_key(text)
        if key in first_by_key:
            dropped_ids.setdefault(DROP_DUPLICATE, []).append(doc_id)
            duplicates_of.setdefault(first_by_key[key], []).append(doc_id)
            continue
        first_by_key[key] = row
        keep_rows.append(row)
        texts.append(text)
    documents = records.iloc[keep_rows].reset_index(drop=True).copy()
    documents["text"] = texts
    documents["duplicate_ids"] = [duplicates_of.get(row, []) for row in keep_rows]
    dropped = {**raw.skipped, **{reason: len(ids) for reason, ids in dropped_ids.items()}}
    warnings = list(raw.warnings)
    total = len(records) + sum(raw.skipped.values())
    for reason, ids in dropped_ids.items():
        if ids:
            shown = ", ".join(ids[:10]) + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")
            warnings.append(f"dropped {len(ids)} of {total} records: {reason} ({shown})")
    for reason, count in raw.skipped.items():
        warnings.append(f"skipped {count} {reason} in {raw.path.name}")
    non_latin = [doc_id for doc_id, text in zip(documents["doc_id"], texts) if is_non_latin(text)]
    if non_latin:
        warnings.append(
            f"{len(non_latin)} documents are mostly in a non-Latin script ({', '.join(non_latin[:10])}); "
            "all-MiniLM-L6-v2 is an English model, so they may cluster by language rather than by subject"
        )
    return PreparedCorpus(documents=documents, dropped=dropped, dropped_ids=dropped_ids, warnings=warnings)
