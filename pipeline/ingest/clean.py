"""Text for modelling versus text for display, and which records become documents.

Display text (``title``, ``abstract``) is kept exactly as written. The model text (column ``text``) is the
title and abstract joined by ". ", with HTML tags, Markdown emphasis, URLs, LaTeX math (``$...$``, ``$$...$$``,
``\\(...\\)``, ``\\[...\\]``) and LaTeX command names stripped (the argument of ``\\textbf{word}`` is kept), and
whitespace collapsed. It is what is embedded and what the c-TF-IDF vocabulary is built from.

Records are dropped, counted and listed by id, for these reasons (keys of ``dropped``):

- ``empty or missing abstract`` (or ``title`` in a titles-only file): missing, empty, whitespace-only or 'NaN';
- ``placeholder, not an abstract``: punctuation only ("-", "..."), a placeholder word or phrase ("none", "n/a",
  "TBD", "Abstract.", "xx", "lorem ipsum") or, for abstracts, a short withdrawal notice ("We have withdrawn our
  paper."): the whole ICLR 2025 conference holds 11 such abstracts (:func:`placeholder_reason`);
- ``no words (numbers or punctuation only)``: nothing alphabetic in that abstract (or title) once cleaned (e.g.
  ``2023``);
- ``duplicate``: the same abstract (or, in a titles-only file, title) as an earlier document after lower-casing
  and removing everything but letters and digits: exact and near-exact copies, also under another title
  (cross-listed or renamed papers). The kept document lists the copies in ``duplicate_ids``; the copies
  themselves, with their own title and metadata, are kept in ``PreparedCorpus.copies`` (column ``copy_of``), so
  the cache can list them under the kept paper's topic and position.

The other dropped records, with their own title, abstract and metadata, their reason and the first of the records
holding the same dropped text, are what :func:`dropped_table` gives the cache (``dropped.parquet``), so the page
can list every input record.

Also reported, not dropped: abstracts far longer than the rest (:data:`LONG_TEXT_FACTOR` times the median: a broken
quote that merged records, or a pasted paper), and the language of every document (:mod:`pipeline.ingest.language`).
"""

from __future__ import annotations

import re
import statistics
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

import pandas as pd

from pipeline.ingest.corpus import RawCorpus
from pipeline.ingest.latex import strip_latex
from pipeline.ingest.readable import MARKDOWN_LINK, unescape_entities
from pipeline.runtime.errors import CorpusTooSmallError

DROP_EMPTY = "empty or missing {column}"
DROP_PLACEHOLDER = "placeholder, not an abstract"
DROP_NO_WORDS = "no words (numbers or punctuation only)"
DROP_DUPLICATE = "duplicate"
COPY_COLUMN = "copy_of"
# An abstract this many times longer than the corpus's median is reported (case 14 of ../shared/cases: "> 20x").
LONG_TEXT_FACTOR = 20
LONG_TEXT_MIN_DOCUMENTS = 5

_HTML_TAG = re.compile(r"<[^>]{1,200}>")
# A PDF extractor's glyph it could not map, "(cid:N)": 1,610 early NeurIPS abstracts of the ML Anthology hold them,
# "(cid:173)" a soft hyphen at a line's end ("inaccu(cid:173)\nrate"), and a topic of them was named "Cid".
_SOFT_HYPHEN_GLYPH = re.compile(r"\(cid:173\)\s*")
_UNMAPPED_GLYPH = re.compile(r"\(cid:\d{1,5}\)")
# The chrome of a publisher's web page scraped in place of an abstract (140 COLT papers of the ML Anthology: "Article
# Free Access Share on ... View Profile ... Manage my Alerts ... Save to Binder"); WEB_PAGE_MARKS of them make a page.
_WEB_PAGE = re.compile(
    r"Free Access|View Profile|Save to Binder|Export Citation|Get Citation Alerts|Manage my Alerts|Total Downloads"
    r"|Publisher Site|Please log in to your account"
)
WEB_PAGE_MARKS = 3
_URL = re.compile(r"https?://\S+|www\.\S+")
_MARKDOWN = re.compile(r"(\*\*|__|`+|~~)")
_LETTER = re.compile(r"[^\W\d_]")
_NOT_ALNUM = re.compile(r"[\W_]+")
_ASCII_NOT_ALNUM = bytes(code for code in range(128) if not chr(code).isalnum())  # _NOT_ALNUM's ASCII characters

# Scripts that make a document "non-Latin" for the report (CJK, Hangul, Cyrillic, Arabic, Hebrew, Devanagari, Thai).
_NON_LATIN = re.compile(
    r"[\u0400-\u04ff\u0590-\u05ff\u0600-\u06ff\u0900-\u097f\u0e00-\u0e7f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]"
)


@dataclass
class PreparedCorpus:
    """Documents ready to model.

    Attributes
    ----------
    documents : one row per kept document, input order; the RawCorpus columns plus ``text`` (model text),
        ``duplicate_ids`` (list of ids of its copies) and ``language`` (ISO 639-1 code or "unknown").
    dropped : {reason: count} of records not modelled (reading skips included).
    dropped_ids : {reason: [doc_id, ...]} for the same.
    warnings : messages for the log and the manifest.
    copies : one row per surplus copy of a kept document (the RawCorpus columns of the copy, its own title
        and metadata) plus ``copy_of``, the kept document's id; input order.
    languages : {language: documents} over the kept documents, most common first.
    dropped_copies : {reason: [[doc_id, ...], ...]}: dropped records that are copies of one text (twelve copies of
        one withdrawal notice), one id list per text, in input order; only texts held by two or more records.
    """

    documents: pd.DataFrame
    dropped: dict[str, int] = field(default_factory=dict)
    dropped_ids: dict[str, list[str]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    copies: pd.DataFrame = field(default_factory=pd.DataFrame)
    languages: dict[str, int] = field(default_factory=dict)
    dropped_copies: dict[str, list[list[str]]] = field(default_factory=dict)


def model_text(text: str | None) -> str:
    """Decode HTML entities; drop a PDF extractor's unmapped glyphs ("(cid:173)", a soft hyphen, joins its word);
    strip markup (HTML tags, Markdown links kept as their text), URLs, LaTeX (math and
    math environments, environment markers, references, command names, escapes and ties:
    pipeline.ingest.latex.strip_latex)
    and Markdown emphasis; collapse whitespace. None -> ""."""
    if not text:
        return ""
    # Each rule runs only on a text holding what every one of its matches needs ("(cid:", "](", "<", ...): most
    # abstracts hold none, and the scans that found nothing were half of cleaning's time (docs/benchmarks.md).
    text = unescape_entities(unicodedata.normalize("NFKC", text))
    if "(cid:" in text:
        text = _UNMAPPED_GLYPH.sub(" ", _SOFT_HYPHEN_GLYPH.sub("", text))
    if "](" in text:
        text = MARKDOWN_LINK.sub(r" \1 ", text)  # [the GitHub](https://...) -> the GitHub
    if "<" in text:
        text = _HTML_TAG.sub(" ", text)
    if "http" in text or "www." in text:
        text = _URL.sub(" ", text)
    text = strip_latex(text)
    if "**" in text or "__" in text or "`" in text or "~~" in text:
        text = _MARKDOWN.sub("", text)
    return " ".join(text.replace("{", "").replace("}", "").split())  # str.split's whitespace is re's \s


def join_title_abstract(title: str, abstract: str) -> str:
    """The text embedded for a document: "title. abstract" where both exist, else whichever exists."""
    if title and abstract:
        separator = " " if title.endswith((".", "?", "!", ":")) else ". "
        return f"{title}{separator}{abstract}"
    return title or abstract


def duplicate_key(text: str) -> str:
    """Key under which near-exact copies collide: lower case, letters and digits only. An ASCII text (most abstracts)
    takes a byte table instead of the pattern: the same key in a quarter of the time."""
    if text.isascii():
        return text.lower().encode("ascii").translate(None, _ASCII_NOT_ALNUM).decode("ascii")
    return _NOT_ALNUM.sub("", text.casefold())


def copy_key(title: Any, abstract: Any) -> str:
    """The key under which the build counts two papers as one (``duplicate``, :func:`record_rows`): the
    :func:`duplicate_key` of the cleaned abstract (:func:`model_text`), or for a paper without one (a titles-only
    file) of its cleaned title, marked apart; "" when it has neither, which is no one's copy. ``add`` leaves out a
    copy of an atlas paper by it (pipeline.operations.add_collections), and copies in different collections are
    linked by it (pipeline.ingest.collections.same_text_links)."""
    if isinstance(abstract, str) and abstract.strip():
        return duplicate_key(model_text(abstract))
    if isinstance(title, str) and title.strip():
        return "title:" + duplicate_key(model_text(title))
    return ""


def copy_keys(titles: Sequence[Any], abstracts: Sequence[Any], texts: Sequence[str]) -> list[str]:
    """:func:`copy_key` of each paper, read off its model text (``texts``: "title. abstract" as :func:`record_rows`
    and pipeline.quality.evaluation.cache_texts join them) instead of cleaning its abstract again. :func:`duplicate_key`
    keeps letters and digits only, so the key of the joined text is the cleaned title's key followed by the cleaned
    abstract's, and only the title, a few words, is cleaned here: at 290,000 papers :func:`copy_key` itself cleans
    every abstract again (about 30 s on one core of this project's machine)."""
    keys = []
    for title, abstract, text in zip(titles, abstracts, texts):
        whole = duplicate_key(text)
        if isinstance(abstract, str) and abstract.strip():
            head = duplicate_key(model_text(title)) if isinstance(title, str) else ""
            keys.append(whole[len(head) :] if whole.startswith(head) else copy_key(title, abstract))
        else:
            keys.append("title:" + whole if isinstance(title, str) and title.strip() else "")
    return keys


def is_non_latin(text: str, share: float = 0.2) -> bool:
    """True when more than ``share`` of the letters are in a non-Latin script (CJK, Cyrillic, Arabic, ...)."""
    letters = _LETTER.findall(text)
    if not letters:
        return False
    return sum(1 for char in letters if _NON_LATIN.match(char)) / len(letters) > share


# Placeholders (see placeholder_reason): what is left of the text once lower-cased and reduced to letters and
# single spaces. Found on the whole ICLR 2025 conference ("none", "abstract", "xx") and in public bug reports.
PLACEHOLDER_PHRASES = frozenset(
    {
        "none",
        "null",
        "nil",
        "na",
        "n a",
        "nan",
        "tbd",
        "tba",
        "todo",
        "placeholder",
        "abstract",
        "no abstract",
        "abstract not available",
        "not available",
        "abstract coming soon",
        "coming soon",
        "empty",
        "missing",
        "test",
        "withdrawn",
        "withdrawn paper",
        "redacted",
        "removed",
        "deleted",
    }
)
_REPEATED_CHARACTER = re.compile(r"^(\w)\1+$")
_ALNUM = re.compile(r"[^\W_]")
_NOT_LETTER = re.compile(r"[\W\d_]+")
PLACEHOLDER_MAX_CHARS = 60
_WITHDRAWAL = re.compile(r"\bwithdr[ae]w(?:n|al|ing|s)?\b", re.IGNORECASE)
_AUTHOR_VOICE = re.compile(r"\b(?:we|our|us|authors?)\b", re.IGNORECASE)
_SUBMISSION = re.compile(r"\b(?:paper|submission|manuscript|article|work)\b", re.IGNORECASE)
# A withdrawal notice is short; the shortest real abstract of ICLR 2025 has 57 words.
WITHDRAWAL_NOTICE_MAX_WORDS = 40


# Notices in any voice that a submission is gone or void ("This paper is withdrawn.", "This paper has been
# withdrawn", "This is a null submission.", "We sincerely thank the reviewers for their time and feedback."): real
# ICLR 2024/2025/2026 placeholders (../shared/cases/19, bench/placeholders.py).
_GONE_NOTICE = re.compile(
    r"\b(?:paper|submission|manuscript|article|work|abstract)\b[^.]{0,40}?\b(?:withdrawn|retracted|cancell?ed|void)\b"
    r"|\bwithdraw(?:n|al)?\s+(?:of\s+)?(?:this|the|our)\s+(?:paper|submission|manuscript|article|work)\b"
    r"|\bnull\s+(?:submission|paper|abstract|entry)\b"
    r"|\bthanks?\b[^.]{0,30}\breviewers?\b",
    re.IGNORECASE,
)
# A word: a run of two or more letters, or one CJK character (Chinese and Japanese are written without spaces).
_WORD = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]|[^\W\d_]{2,}")
# An abstract of fewer words than this (runs of two or more letters) is a placeholder ("RAG", "test test"). The
# shortest real abstract of ICLR 2024, 2025 and 2026 has far more (bench/placeholders.py); three keeps a terse
# sentence ("We study reef flats.") and stop-word-only rows, which are kept and reported (case 03).
MIN_ABSTRACT_WORDS = 3
RULE_PUNCTUATION = "punctuation only"
RULE_PHRASE = "placeholder phrase"
RULE_NOTICE = "withdrawal or null notice"
RULE_TOO_FEW_WORDS = f"fewer than {MIN_ABSTRACT_WORDS} words"
RULE_WEB_PAGE = "a web page's text, not an abstract"


def placeholder_rule(text: str, column: str = "abstract") -> str | None:
    """Which placeholder rule ``text`` (a cleaned model text) falls under, or None when it is a real abstract/title.

    Rules, first match wins:

    - RULE_PUNCTUATION: punctuation only ("-", "...");
    - RULE_PHRASE: starts "lorem ipsum", is a placeholder phrase once reduced to lower-case letters
      (PLACEHOLDER_PHRASES: "none", "N/A", "Abstract.", "TBD") or one character repeated ("xx", "xxxx");
    - RULE_NOTICE (abstracts only): a text of at most WITHDRAWAL_NOTICE_MAX_WORDS words that notices withdrawal or
      nullity, in the authors' voice about their submission ("We have withdrawn our paper.", "We thank the reviewers
      ... decided to withdraw the submission") or in any other ("This paper is withdrawn.", "This paper has been
      withdrawn", "This is a null submission.", a note thanking the reviewers); not "Opioid withdrawal in mice ...
      we map ...";
    - RULE_TOO_FEW_WORDS (abstracts only): fewer than MIN_ABSTRACT_WORDS words ("RAG");
    - RULE_WEB_PAGE (abstracts only): the text of a publisher's web page, WEB_PAGE_MARKS of its controls or more
      ("Free Access", "View Profile", "Save to Binder", "Export Citation", ...).

    Text with digits but no letters ("2023") is not a placeholder (see DROP_NO_WORDS). Never raises.
    """
    if not _ALNUM.search(text):
        return RULE_PUNCTUATION if text.strip() else None
    if text[:40].casefold().replace(" ", "").startswith("loremipsum"):
        return RULE_PHRASE
    if len(text) <= PLACEHOLDER_MAX_CHARS:  # the longest phrase has 22 letters: nothing longer needs this check
        letters = " ".join(_NOT_LETTER.sub(" ", text.casefold()).split())
        if not letters:
            return None
        if letters in PLACEHOLDER_PHRASES or _REPEATED_CHARACTER.match(letters.replace(" ", "")):
            return RULE_PHRASE
    if column != "abstract":
        return None
    if _is_withdrawal_notice(text):
        return RULE_NOTICE
    if sum(1 for _ in islice(_WORD.finditer(text), MIN_ABSTRACT_WORDS)) < MIN_ABSTRACT_WORDS and _LETTER.search(text):
        return RULE_TOO_FEW_WORDS
    if len(set(_WEB_PAGE.findall(text))) >= WEB_PAGE_MARKS:
        return RULE_WEB_PAGE
    return None


def placeholder_reason(text: str, column: str = "abstract") -> bool:
    """True when ``text`` (a cleaned model text) stands in for a missing abstract or title instead of being one
    (:func:`placeholder_rule` names the rule)."""
    return placeholder_rule(text, column) is not None


def _is_withdrawal_notice(text: str) -> bool:
    if len(text.split(None, WITHDRAWAL_NOTICE_MAX_WORDS)) > WITHDRAWAL_NOTICE_MAX_WORDS:
        return False
    if _GONE_NOTICE.search(text):
        return True
    return bool(_WITHDRAWAL.search(text) and _AUTHOR_VOICE.search(text) and _SUBMISSION.search(text))


def _is_empty(value: object) -> bool:
    return value is None or not str(value).strip() or str(value).strip().lower() == "nan"


def _drop_reason(deciding: object, column: str) -> tuple[str | None, str]:
    """(why a record cannot be a document, a key of ``dropped``, or None when it can; the deciding text's model
    text)."""
    if _is_empty(deciding):
        return DROP_EMPTY.format(column=column), ""
    cleaned = model_text(str(deciding))
    if placeholder_reason(cleaned, column):
        return DROP_PLACEHOLDER, cleaned
    if not _LETTER.search(cleaned):
        return DROP_NO_WORDS, cleaned
    return None, cleaned


def _listed(ids: list[str], shown: int = 10) -> str:
    return ", ".join(ids[:shown]) + (f" and {len(ids) - shown} more" if len(ids) > shown else "")


def long_text_warning(doc_ids: list[str], texts: list[str], factor: float = LONG_TEXT_FACTOR) -> str | None:
    """A warning naming the texts more than ``factor`` times the median length (characters), with their lengths;
    None when there are none or fewer than LONG_TEXT_MIN_DOCUMENTS texts (a median of two means little)."""
    if len(texts) < LONG_TEXT_MIN_DOCUMENTS:
        return None
    lengths = [len(text) for text in texts]
    median = statistics.median(lengths)
    long = [(doc_id, length) for doc_id, length in zip(doc_ids, lengths) if median and length > factor * median]
    if not long:
        return None
    shown = ", ".join(f"{doc_id} ({length:,} characters, {length / median:.0f}x)" for doc_id, length in long[:10])
    return (
        f"{len(long)} abstracts are over {factor:g} times the median length of {median:,.0f} characters: {shown}. "
        "A quote left open in a CSV file can merge several records into one, or a whole paper was pasted; check these "
        "records"
    )


# The columns :func:`record_rows` gives, one row per record in order (DataFrame, index 0..m-1): ``reason`` (object:
# a key of PreparedCorpus.dropped, or None for a record that can be a document), ``key`` (str, :func:`duplicate_key`
# of the deciding text), ``text`` (str, the document's model text, "" for a dropped record) and ``language`` (str,
# ISO 639-1 or "unknown"; "" for a dropped record).
ROW_COLUMNS = ("reason", "key", "text", "language")


def record_rows(records: pd.DataFrame, text_column: str) -> pd.DataFrame:
    """The row-local part of cleaning: each record's ROW_COLUMNS, computed from that record alone, so any split of the
    records into parts gives the same rows (pipeline.partitions.clean, pipeline.store.prepared).

    ``records``: columns ``title`` and ``abstract`` (any index); ``text_column``: "abstract" or "title"
    (RawCorpus.text_column). The deciding text (the abstract, or the title of a titles-only file) is cleaned
    (:func:`model_text`) and checked (:func:`_drop_reason`); a usable record's two texts are joined
    (:func:`join_title_abstract`) and its language detected (pipeline.ingest.language). Never raises for bad rows.
    """
    from pipeline.ingest.language import detect_languages

    reasons: list[str | None] = []
    keys: list[str] = []
    texts: list[str] = []
    for title, abstract in records[["title", "abstract"]].itertuples(index=False):
        deciding = abstract if text_column == "abstract" else title
        reason, cleaned = _drop_reason(deciding, text_column)
        reasons.append(reason)
        keys.append(duplicate_key(cleaned))
        if reason is not None:
            texts.append("")
            continue
        other = model_text(abstract) if text_column == "title" else model_text(title)
        texts.append(
            join_title_abstract(cleaned, other) if text_column == "title" else join_title_abstract(other, cleaned)
        )
    usable = [row for row, reason in enumerate(reasons) if reason is None]
    languages = [""] * len(reasons)
    for row, language in zip(usable, detect_languages([texts[row] for row in usable])):
        languages[row] = language
    return pd.DataFrame({"reason": reasons, "key": keys, "text": texts, "language": languages})


def prepare_documents(raw: RawCorpus, rows: pd.DataFrame | None = None) -> PreparedCorpus:
    """Turn read records into documents: drop unusable rows and duplicates, with counts and ids.

    ``rows``: :func:`record_rows` of ``raw.records`` when already computed (pipeline.store.prepared computes them in
    two processes), else computed here. Returns a PreparedCorpus (see the module docstring for the rules). Never
    raises for bad rows; the caller decides what too few documents means (:func:`require_documents`).
    """
    from pipeline.ingest.language import language_available, language_report

    records = raw.records
    if rows is None:
        rows = record_rows(records, raw.text_column)
    doc_ids = records["doc_id"].tolist()
    dropped_ids: dict[str, list[str]] = {}
    keep_rows: list[int] = []
    first_by_key: dict[str, int] = {}
    copy_rows: list[int] = []
    copy_of: list[str] = []
    dropped_by_text: dict[tuple[str, str], list[str]] = {}
    for row, (doc_id, reason, key) in enumerate(zip(doc_ids, rows["reason"].tolist(), rows["key"].tolist())):
        if isinstance(reason, str):
            dropped_ids.setdefault(reason, []).append(doc_id)
            dropped_by_text.setdefault((reason, key), []).append(doc_id)
            continue
        # The same abstract under another title is the same paper (cross-listed or renamed).
        if key in first_by_key:
            dropped_ids.setdefault(DROP_DUPLICATE, []).append(doc_id)
            copy_rows.append(row)
            copy_of.append(doc_ids[first_by_key[key]])
            continue
        first_by_key[key] = row
        keep_rows.append(row)
    row_texts = rows["text"].tolist()
    texts = [row_texts[row] for row in keep_rows]
    documents = records.iloc[keep_rows].reset_index(drop=True).copy()
    documents["text"] = texts
    copies = records.iloc[copy_rows].reset_index(drop=True).copy()
    copies[COPY_COLUMN] = copy_of
    copies_by_original: dict[str, list[str]] = {}
    for copy_id, original in zip(copies["doc_id"], copy_of):
        copies_by_original.setdefault(original, []).append(copy_id)
    documents["duplicate_ids"] = [copies_by_original.get(doc_id, []) for doc_id in documents["doc_id"]]
    row_languages = rows["language"].tolist()
    documents["language"] = [row_languages[row] for row in keep_rows]
    dropped = {**raw.skipped, **{reason: len(ids) for reason, ids in dropped_ids.items()}}
    warnings = list(raw.warnings)
    total = len(records) + sum(raw.skipped.values())
    for reason, ids in dropped_ids.items():
        warnings.append(f"dropped {len(ids)} of {total} records: {reason} ({_listed(ids)})")
    dropped_copies = _dropped_copies(dropped_by_text)
    for reason, groups in dropped_copies.items():
        for group in groups:
            warnings.append(
                f"{len(group)} of the records dropped as {reason} are copies of one text: 1 text × {len(group)} "
                f"copies ({_listed(group)})"
            )
    for reason, count in raw.skipped.items():
        warnings.append(
            f"skipped {count} {reason} in {raw.path.name}"
            + (f": {raw.skipped_text[reason]}" if reason in raw.skipped_text else "")
        )
    long = long_text_warning(documents["doc_id"].tolist(), [str(text) for text in documents[raw.text_column]])
    if long:
        warnings.append(long)
    languages, language_warnings = language_report(documents["doc_id"].tolist(), documents["language"].tolist())
    warnings.extend(language_warnings)
    warnings.extend(year_hole_warnings(documents))
    non_latin = (
        []
        if language_available()
        else [doc_id for doc_id, text in zip(documents["doc_id"], texts) if is_non_latin(text)]
    )
    if non_latin:  # without py3langid, at least the scripts
        warnings.append(
            f"{len(non_latin)} documents are mostly in a non-Latin script ({_listed(non_latin)}); "
            "all-MiniLM-L6-v2 is an English model, so they may cluster by language rather than by subject"
        )
    return PreparedCorpus(
        documents=documents,
        dropped=dropped,
        dropped_ids=dropped_ids,
        warnings=warnings,
        copies=copies,
        languages=languages,
        dropped_copies=dropped_copies,
    )


def year_hole_warnings(documents: pd.DataFrame) -> list[str]:
    """The holes in the years of a file whose rows carry a venue and a year (pipeline.ingest.years), as one warning;
    [] without both columns, or without a hole."""
    from pipeline.ingest.years import holes_sentence, venue_year_holes

    if not {"venue", "year"} <= set(documents.columns):
        return []
    years = pd.to_numeric(documents["year"], errors="coerce")
    kept = documents.assign(year=years).dropna(subset=["venue", "year"])
    papers = kept.groupby([kept["venue"].astype(str), kept["year"].astype(int)]).size()
    holes = venue_year_holes({(str(venue), int(year)): int(count) for (venue, year), count in papers.items()})
    return [holes_sentence(holes)] if holes else []


def _dropped_copies(dropped_by_text: dict[tuple[str, str], list[str]]) -> dict[str, list[list[str]]]:
    """{reason: [ids of one text, ...]} for dropped texts held by two or more records (empty texts excluded)."""
    copies: dict[str, list[list[str]]] = {}
    for (reason, key), ids in dropped_by_text.items():
        if key and len(ids) > 1:
            copies.setdefault(reason, []).append(ids)
    return copies


def require_documents(prepared: PreparedCorpus, raw: RawCorpus, input_path: Path) -> None:
    """Refuse a corpus that cannot make an atlas: no usable document, or several records that are all one abstract.

    Raises CorpusTooSmallError naming the file, the counts and the reasons.
    """
    n = len(prepared.documents)
    if n == 0 and not len(raw.records):
        raise CorpusTooSmallError(f"{input_path}: no records: the file holds its header, or nothing, and no paper")
    if n == 0:
        raise CorpusTooSmallError(
            f"{input_path}: no usable abstracts: all {len(raw.records)} records were dropped "
            f"({'; '.join(f'{reason}: {count}' for reason, count in prepared.dropped.items())})"
        )
    if n == 1 and len(prepared.copies):
        raise CorpusTooSmallError(
            f"{input_path}: all {len(prepared.copies) + 1} usable records have the same {raw.text_column} "
            f"({prepared.documents.at[0, 'doc_id']} and {_listed(prepared.copies['doc_id'].tolist(), 5)}), so there is "
            "one paper and nothing to map. Check that the right column holds the abstracts, or add other papers."
        )


def copy_table(copies: pd.DataFrame, documents: pd.DataFrame) -> pd.DataFrame:
    """The surplus copies as the cache lists them (``copies.parquet``): one row per copy with its own id, title,
    abstract and metadata, ``copy_of`` (the kept document's id), and the kept document's ``topic``,
    ``topic_label``, ``probability``, ``x`` and ``y`` (a copy is the same paper, so it sits where the paper sits).

    ``copies``: PreparedCorpus.copies; ``documents``: the cache's documents table. Empty (no columns) without copies.
    """
    if copies.empty:
        return pd.DataFrame()
    shared = [column for column in ("topic", "topic_label", "probability", "x", "y") if column in documents.columns]
    kept = documents.set_index("doc_id")[shared]
    table = copies.drop(columns=[column for column in ("record", "text") if column in copies.columns]).reset_index(
        drop=True
    )
    table = table.join(kept, on=COPY_COLUMN)
    first = ["doc_id", COPY_COLUMN, "title", "abstract", *shared]
    return table[first + [column for column in table.columns if column not in first]]


def dropped_records(records: pd.DataFrame, dropped_ids: dict[str, list[str]]) -> pd.DataFrame:
    """The rows of ``records`` (RawCorpus.records) whose ``doc_id`` cleaning dropped for any reason (``dropped_ids``:
    PreparedCorpus's): all that :func:`dropped_table` reads of them, for a build that lets the other records go once
    they are cleaned (at 290,219 records the raw table held about 0.5 GB through the whole build)."""
    dropped = {str(doc_id) for ids in dropped_ids.values() for doc_id in ids}
    return records[records["doc_id"].astype(str).isin(dropped).to_numpy()].reset_index(drop=True)


def dropped_table(
    records: pd.DataFrame, dropped_ids: dict[str, list[str]], dropped_copies: dict[str, list[list[str]]]
) -> pd.DataFrame:
    """The records cleaning dropped as the cache lists them (``dropped.parquet``): one row per dropped record that is
    not a copy of a kept document (those are in :func:`copy_table`), in input order, with its own ``doc_id``,
    ``title`` and ``abstract`` as given, ``reason`` (its key of ``dropped_ids``) and ``copy_of`` (the first id of
    its group in ``dropped_copies``, the first record itself included, when several records hold that dropped text;
    "" otherwise), then its other input columns.

    ``records``: RawCorpus.records (ids not among them, such as a collection's prefixed ids, are left out);
    ``dropped_ids`` and ``dropped_copies``: PreparedCorpus's. Empty (no columns) when nothing was dropped.
    """
    reason_of = {
        str(doc_id): reason for reason, ids in dropped_ids.items() if reason != DROP_DUPLICATE for doc_id in ids
    }
    first_of = {
        str(doc_id): str(group[0]) for groups in dropped_copies.values() for group in groups for doc_id in group
    }
    ids = records["doc_id"].astype(str)
    rows = records[ids.isin(reason_of).to_numpy()]
    if rows.empty:
        return pd.DataFrame()
    table = rows.drop(columns=[column for column in ("record", "text") if column in rows.columns]).reset_index(
        drop=True
    )
    table["doc_id"] = table["doc_id"].astype(str)
    table["reason"] = table["doc_id"].map(reason_of)
    table[COPY_COLUMN] = table["doc_id"].map(lambda doc_id: first_of.get(doc_id, ""))
    first = ["doc_id", "title", "abstract", "reason", COPY_COLUMN]
    return objects_as_text(table[first + [column for column in table.columns if column not in first]])


def joined_dropped(earlier: pd.DataFrame, later: pd.DataFrame) -> pd.DataFrame:
    """Two :func:`dropped_table` tables (an atlas's and an add's) as one, ``earlier`` first; a column of numbers in
    one and text in the other becomes text, so the whole can be written to Parquet."""
    if not len(earlier) or not len(later):
        return later if len(later) else earlier
    return objects_as_text(pd.concat([earlier, later], ignore_index=True))


def objects_as_text(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` (changed in place, and returned) with each object column's cells as text or None: one type a
    column, as Parquet needs."""
    for column in table.select_dtypes(include="object").columns:
        table[column] = [None if _missing(value) else str(value) for value in table[column]]
    return table


def _missing(value: object) -> bool:
    """Whether a cell of an object column is missing (None or a float NaN; a list or dict is a value)."""
    return value is None or (isinstance(value, float) and value != value)
