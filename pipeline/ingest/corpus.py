"""Read a corpus file into a validated table of documents.

Input contract
--------------
Formats, chosen by file extension:

- ``.parquet``; ``.csv`` (comma) and ``.tsv`` / ``.tab`` (tab), with quoted fields that may hold commas,
  quotes (doubled ``""``) and line breaks; ``.json`` (an array of records, or ``{"papers"|"records"|"data": [...]}``);
  ``.jsonl`` / ``.ndjson`` (one record per line); ``.txt`` / ``.md`` (one abstract per paragraph,
  paragraphs separated by blank lines; a first paragraph that reads as a heading, see :func:`is_heading`, is
  skipped, and the warning quotes it).
- read by :mod:`pipeline.ingest.formats`: any text format above gzip-compressed (``.csv.gz``, ``.jsonl.gz``, ...);
  ``.xlsx`` / ``.xlsm`` (the first sheet); BibTeX ``.bib``; RIS ``.ris``; OpenReview notes (API v1 or v2) as a JSON
  list, ``{"notes": [...]}`` or JSONL. Any other suffix is refused saying what to do (e.g. save an ``.xls`` as
  ``.xlsx``).

Columns, matched case-insensitively and ignoring surrounding spaces and a byte-order mark:

- ``abstract`` (aliases: abstracts, summary, text, content, body) and ``title`` (aliases: paper_title, name):
  at least one is required. When the file has an abstract column, the abstract is the text that decides whether
  a row is usable (a row with a title but no abstract is dropped and counted); a file with only titles is modelled
  on titles.
- optional, kept and shown: ``doc_id`` from id / openreview_id / paper_id / doc_id / forum (else ``row-N``, the
  1-based record number), ``keywords`` (a list, or one string joined by ``;`` or ``,``), ``decision``
  (normalised to Oral, Spotlight, Poster, Reject, Withdrawn, Desk Rejected where recognised), ``authors``,
  ``primary_area``, ``rating_mean``, ``venue`` (venue / journal / booktitle / conference, as text) and ``year``
  (year / publication_year: the first year in the cell, Int64). A collection's own venue and year replace them
  (:mod:`pipeline.ingest.collections`).
- every cell that is an OpenReview API v2 field ``{"value": x}`` is read as ``x``; a title or abstract that is
  still an object or a list is refused (naming the record), never modelled as its JSON text.

CSV/TSV fields may be of any length (the csv module's field limit is raised to the platform's largest).

Text files are decoded as UTF-8 (a byte-order mark is removed). A file that is not valid UTF-8 is decoded as
Windows-1252, which also reads Latin-1 text correctly for every printable character, and the build warns and
names the encoding; ``encoding=`` states it explicitly.

What is dropped, and why, is decided by :mod:`pipeline.ingest.clean`; this module only refuses files it cannot read,
with an :class:`~pipeline.runtime.errors.InputError` that names the file, the line or record, and the problem.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import logging
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from pipeline.ingest.decisions import normalise_decision
from pipeline.ingest.formats import (
    BIBTEX_SUFFIXES,
    EXCEL_SUFFIXES,
    RIS_SUFFIXES,
    format_suffix,
    gunzip,
    is_openreview_note,
    note_value,
    notes_to_frame,
    read_bibtex,
    read_excel,
    read_ris,
    unknown_format_message,
)
from pipeline.ingest.repeated_columns import first_of_repeated_keys, read_parquet_input
from pipeline.runtime.errors import InputError

log = logging.getLogger(__name__)

COLUMN_ALIASES: dict[str, tuple[str, ...]] = {
    "doc_id": ("doc_id", "openreview_id", "id", "paper_id", "forum", "forum_id", "uid"),
    "title": ("title", "paper_title", "name"),
    "abstract": ("abstract", "abstracts", "summary", "text", "content", "body"),
    "keywords": ("keywords", "keyword", "tags", "author_keywords"),
    "decision": ("decision", "status", "venue_decision"),
    "authors": ("authors", "author", "author_names"),
    "primary_area": ("primary_area", "area", "subject_area"),
    "rating_mean": ("rating_mean", "mean_rating", "avg_rating", "rating"),
    "venue": ("venue", "journal", "booktitle", "conference"),
    "year": ("year", "publication_year"),
}
TEXT_COLUMNS = ("abstract", "title")
TEXT_SUFFIXES = (".csv", ".tsv", ".tab", ".json", ".jsonl", ".ndjson", ".txt", ".md") + BIBTEX_SUFFIXES + RIS_SUFFIXES
SUPPORTED_SUFFIXES = (".parquet",) + TEXT_SUFFIXES + EXCEL_SUFFIXES
_YEAR = re.compile(r"(?<!\d)(1[5-9]\d\d|2\d\d\d)(?!\d)")


def _raise_csv_field_limit() -> int:
    """Let the csv module read fields of any length (its default stops at 131,072 characters, which pandas does
    not): the largest limit the platform's C long accepts. Returns the limit set."""
    limit = sys.maxsize
    while True:
        try:
            csv.field_size_limit(limit)
            return limit
        except OverflowError:
            limit //= 2


_raise_csv_field_limit()
HEADING_MAX_CHARS = 120


@dataclass
class RawCorpus:
    """A corpus file read into a table, before cleaning.

    Attributes
    ----------
    records : one row per input record, in file order; columns are canonical names from COLUMN_ALIASES
        (``doc_id`` always present, as str) plus ``record`` (1-based record number in the file).
    path : the file read (resolved).
    sha256 : hex digest of the file's bytes.
    encoding : the text encoding used ("utf-8", "utf-8-sig", "windows-1252", ... or "binary" for Parquet).
    text_column : "abstract" or "title", the column whose emptiness decides a row's use.
    columns_found : the column names as they were in the file.
    warnings : messages for the log and the manifest.
    skipped : {reason: count} of records skipped while reading (e.g. the heading of a text file).
    skipped_text : {reason: what was skipped, quoted}, so a skip can be checked by a person.
    id_column : the file's column the ids came from (e.g. "openreview_id"), None when they were generated (row-N).
    """

    records: pd.DataFrame
    path: Path
    sha256: str
    encoding: str
    text_column: str
    columns_found: list[str]
    warnings: list[str] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    skipped_text: dict[str, str] = field(default_factory=dict)
    id_column: str | None = None


def file_sha256(path: Path) -> str:
    """Hex SHA-256 of a file's bytes, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# Byte-order marks of the wide encodings (UTF-32's first: its little-endian mark begins with UTF-16's).
UTF32_MARKS = (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")
UTF16_MARKS = (b"\xff\xfe", b"\xfe\xff")


def decode_bytes(data: bytes, path: Path, encoding: str | None = None) -> tuple[str, str, list[str]]:
    """Decode a text file's bytes.

    Returns (text, encoding used, warnings). With ``encoding`` given it is used strictly. Otherwise a UTF-32 or
    UTF-16 byte-order mark decodes the file as it says (a spreadsheet's "Unicode text" export is UTF-16; read as
    UTF-8 it failed as a row with too many fields), then UTF-8 (BOM removed), then Windows-1252 with a warning.
    Raises InputError naming the first bad byte and its offset when neither decodes.
    """
    if encoding:
        try:
            return data.decode(encoding), encoding, []
        except (UnicodeDecodeError, LookupError) as error:
            raise InputError(f"{path}: cannot decode as {encoding}: {error}") from error
    for marks, wide in ((UTF32_MARKS, "utf-32"), (UTF16_MARKS, "utf-16")):
        if data.startswith(marks):
            try:
                return data.decode(wide), wide, []  # the codec reads the mark's byte order and drops it
            except UnicodeDecodeError as error:
                raise InputError(
                    f"{path}: starts with a {wide.upper()} byte-order mark but is not valid {wide.upper()} "
                    f"(bad bytes at offset {error.start})"
                ) from error
    if data.startswith(b"\xef\xbb\xbf"):
        try:
            return data[3:].decode("utf-8"), "utf-8-sig", []
        except UnicodeDecodeError as error:
            raise InputError(
                f"{path}: starts with a UTF-8 byte-order mark but is "
                f"not valid UTF-8 (bad byte at offset {error.start + 3})"
            ) from error
    try:
        return data.decode("utf-8"), "utf-8", []
    except UnicodeDecodeError as utf8_error:
        bad = data[utf8_error.start]
        try:
            text = data.decode("windows-1252")
        except UnicodeDecodeError as error:
            raise InputError(
                f"{path}: file is not valid UTF-8 (first bad byte 0x{bad:02X} at offset {utf8_error.start}) "
                "and not Windows-1252 either. Re-save it as UTF-8 or pass --encoding NAME."
            ) from error
        warning = (
            f"{path.name}: not valid UTF-8 (first bad byte 0x{bad:02X} at offset {utf8_error.start}); "
            "decoded as windows-1252 (Latin-1 compatible). Re-save as UTF-8, or pass --encoding, to avoid guessing."
        )
        return text, "windows-1252", [warning]


def _canonical_name(name: Any) -> str:
    return str(name).replace("\ufeff", "").strip().lower().replace(" ", "_").replace("-", "_")


def map_columns(columns: list[str], path: Path) -> dict[str, str]:
    """Map file column names to canonical names. Where several columns could give one field, the first alias of
    COLUMN_ALIASES wins ("abstract" over "summary"), and of two columns of one name but for case or spaces, the one
    spelt as the alias ("abstract" over "Abstract"), else the file's first (:func:`ignored_columns_warning` names
    the others).

    Returns {file column: canonical name}. Raises InputError listing the columns found and the ones
    accepted when neither an abstract nor a title column exists.
    """
    by_canonical: dict[str, str] = {}
    for column in columns:  # two of one name but for case or spaces: the one spelt so ("abstract"), else the first
        name = _canonical_name(column)
        if name not in by_canonical or (column == name and by_canonical[name] != name):
            by_canonical[name] = column
    mapping: dict[str, str] = {}
    for canonical, aliases in COLUMN_ALIASES.items():
        for alias in aliases:
            if alias in by_canonical and by_canonical[alias] not in mapping:
                mapping[by_canonical[alias]] = canonical
                break
    if not set(TEXT_COLUMNS) & set(mapping.values()):
        accepted = ", ".join(COLUMN_ALIASES["abstract"] + COLUMN_ALIASES["title"])
        found = ", ".join(repr(str(column)) for column in columns) or "none"
        raise InputError(
            f"{path}: no abstract or title column. Columns found: {found}. Accepted text columns: {accepted}."
        )
    return mapping


# How pandas' CSV reader renames a column name that the header repeats: "abstract", "abstract.1".
_REPEATED_NAME = re.compile(r"(.+)\.(\d+)")


def ignored_columns_warning(columns: list[str], mapping: dict[str, str], path: Path) -> str | None:
    """The warning for columns that name the title or the abstract that another column already gives (``mapping``:
    map_columns's): "abstract" beside "Abstract", or "summary" beside "abstract". Only the one map_columns chose is
    read; the user is told which, so that a file whose better texts sit in the other column is not built from the
    wrong one silently. Other fields are not named: an OpenReview export's ``id`` and ``forum`` are one id twice.
    None when no text column is passed over."""
    aliases = {alias: canonical for canonical in TEXT_COLUMNS for alias in COLUMN_ALIASES[canonical]}
    read = {canonical: column for column, canonical in mapping.items()}
    present = set(columns)

    def field_of(column: str) -> str | None:
        """The text field a column names: by its name, or as pandas renames a repeated one ("abstract.1")."""
        repeated = _REPEATED_NAME.fullmatch(column)
        if repeated and repeated.group(1) in present:
            column = repeated.group(1)
        return aliases.get(_canonical_name(column))

    passed_over = []
    for column in columns:
        field = field_of(column)
        if column not in mapping and field is not None and field in read:
            passed_over.append((column, field))
    if not passed_over:
        return None
    parts = [f"{column!r} (the {canonical} is read from {read[canonical]!r})" for column, canonical in passed_over]
    return f"{path.name}: columns not read, another column gives the same field: {'; '.join(parts)}"


LONG_TEXT_CHARS = 200  # a column whose texts average this many characters could be the abstracts


def titles_only_warning(table: pd.DataFrame, mapping: dict[str, str], path: Path) -> str:
    """The warning for a file with a title column but no abstract column (``mapping``: map_columns's): the atlas is
    built from the titles alone; names the other columns of long texts (LONG_TEXT_CHARS on average), which may be
    the abstracts under a name COLUMN_ALIASES does not know."""
    long_texts = [
        str(column)
        for column in table.columns
        if column not in mapping
        and table[column].map(lambda value: isinstance(value, str)).mean() > 0.5
        and table[column].map(lambda value: len(value) if isinstance(value, str) else 0).mean() >= LONG_TEXT_CHARS
    ]
    hint = (
        f"; its column {', '.join(repr(name) for name in long_texts)} holds long texts: rename it 'abstract' to use it"
        if long_texts
        else ""
    )
    accepted = ", ".join(COLUMN_ALIASES["abstract"])
    return f"{path.name}: no abstract column ({accepted}), so the atlas is built from the titles alone{hint}"


def _unclosed_quote_line(text: str, delimiter: str) -> int | None:
    """1-based line where a quoted CSV field opens and never closes, or None when all quotes balance.

    A character-by-character scan (about 5 s for 22 MB): run only after pandas has reported an unclosed quote
    ("EOF inside string"), to name the line where it opened.
    """
    line = 1
    in_quotes = False
    opened_on = 0
    at_field_start = True
    i = 0
    while i < len(text):
        char = text[i]
        if in_quotes:
            if char == '"':
                if i + 1 < len(text) and text[i + 1] == '"':
                    i += 1
                else:
                    in_quotes = False
            elif char == "\n":
                line += 1
        else:
            if char == '"' and at_field_start:
                in_quotes, opened_on = True, line
            elif char == "\n":
                line += 1
            at_field_start = char in (delimiter, "\n", "\r")
        i += 1
    return opened_on if in_quotes else None


_C_ERROR_PREFIX = re.compile(r"^Error tokenizing data\. C error: ")
_FIELD_COUNT_ERROR = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")


def _parse_error(text: str, path: Path, delimiter: str, error: pd.errors.ParserError) -> InputError:
    """The InputError for a CSV/TSV that pandas' reader refused: file, line and problem, and what to do.

    An unclosed quote ("EOF inside string") names the line where the quote opened and how many records were read
    before it (:func:`_records_around`); a line with too many fields names the line and both counts (pandas'
    message has them); anything else quotes pandas' message.
    """
    problem = _C_ERROR_PREFIX.sub("", str(error).strip())
    open_line = _unclosed_quote_line(text, delimiter) if "EOF inside string" in problem else None
    if open_line is not None:
        read, expected = _records_around(text, delimiter, open_line)
        return InputError(
            f"CSV parse error in {path.name}: a quote opened on line {open_line} (record {read + 1}) is never closed, "
            f"so every later line would be swallowed into one field: {read} records were read before it, and the file "
            f"seems to hold {expected} (counting each later line as a record). Close or remove that quote."
        )
    fields = _FIELD_COUNT_ERROR.search(problem)
    if fields:
        header, line, found = fields.groups()
        return InputError(
            f"CSV parse error in {path.name}: line {line} has {found} fields but the header has {header}. "
            f"Quote a field that holds the delimiter ({delimiter!r}) in double quotes, or remove the extra fields."
        )
    return InputError(f"CSV parse error in {path.name}: {problem}")


def _read_delimited(text: str, path: Path, delimiter: str) -> pd.DataFrame:
    """Parse CSV/TSV text with pandas' C reader; every field is read as a string, only empty cells as missing.

    Strings such as "None", "NA", "n/a", "null" or "NaN" stay strings (pandas' default NA list would make a paper
    titled "NA" lose its title), as a JSON reader keeps them: a CSV and a JSONL of the same records give the same
    records. Whether an abstract is a placeholder is decided later, for every format alike (pipeline.ingest.clean).

    Quoted fields may hold the delimiter, doubled quotes ``""`` and line breaks. The text is parsed once by pandas
    and once more by Python's csv module in strict mode (C speed: together about 0.8 s for the 22 MB CSV of the
    whole conference), because pandas reads leniently: a stray quote that closes a field in the middle would
    silently merge the records in between, and only the strict count notices.

    Raises InputError naming the file, the line and the problem: an unclosed quote (the line it opens on), a line
    with more fields than the header, a quote closing a field in the middle, or records the strict count and pandas
    disagree on.
    """
    try:
        table = pd.read_csv(
            io.StringIO(text),
            sep=delimiter,
            dtype=str,
            keep_default_na=False,
            na_values=[""],
            skip_blank_lines=True,
        )
    except pd.errors.EmptyDataError as error:
        raise InputError(f"{path}: the file is empty") from error
    except pd.errors.ParserError as error:
        raise _parse_error(text, path, delimiter, error) from error
    # A data line with more fields than the header makes pandas use the first column as the index.
    if not isinstance(table.index, pd.RangeIndex):
        raise InputError(
            f"CSV parse error in {path.name}: some lines have more fields than the header "
            f"({len(table.columns)} columns)"
        )
    expected_records, problem = _count_csv_records(text, delimiter)
    if problem:
        raise InputError(f"CSV parse error in {path.name}: {problem}")
    if expected_records != len(table):
        raise InputError(
            f"CSV parse error in {path.name}: {expected_records} records in the file but {len(table)} parsed"
        )
    return table


def _records_around(text: str, delimiter: str, open_line: int) -> tuple[int, int]:
    """(records fully read before ``open_line``, records the file seems to hold) for a CSV whose quote opened on
    ``open_line`` never closes. The second counts the broken record as one and reads every later line afresh."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    before = "\n".join(lines[: open_line - 1])
    read = max(0, _count_csv_records(before, delimiter)[0]) if before.strip() else 0
    after = [line for line in lines[open_line:] if line.strip()]
    later = (
        sum(
            1
            for row in csv.reader(io.StringIO("\n".join(after)), delimiter=delimiter)
            if any(cell.strip() for cell in row)
        )
        if after
        else 0
    )
    return read, read + 1 + later


def _count_csv_records(text: str, delimiter: str) -> tuple[int, str | None]:
    """(records after the header, None), counted by Python's csv module in strict mode (blank lines skipped), or
    (-1, "line N: problem") where strict parsing fails (e.g. a quote that closes a field in the middle)."""
    reader = csv.reader(io.StringIO(text), delimiter=delimiter, strict=True)
    rows = 0
    try:
        for row in reader:
            rows += any(cell.strip() for cell in row)
    except csv.Error as error:
        return -1, (
            f'line {reader.line_num}: {error}. A double quote inside a quoted field must be doubled (""), '
            "or the field left unquoted"
        )
    return max(0, rows - 1), None


def _read_json(text: str, path: Path) -> pd.DataFrame:
    try:
        data = json.loads(text, object_pairs_hook=first_of_repeated_keys)
    except json.JSONDecodeError as error:
        raise InputError(
            f"JSON parse error in {path.name}: {error.msg} at line {error.lineno}, column {error.colno}"
        ) from error
    kind = other_json_kind(data)
    if kind:
        raise InputError(
            f"{path}: this is {kind}, not a corpus. Expected a JSON array "
            "of paper records with 'abstract' and/or 'title' fields."
        )
    if isinstance(data, dict):
        for key in ("papers", "records", "data", "documents", "notes"):
            if isinstance(data.get(key), list):
                data = data[key]
                break
    if not isinstance(data, list):
        raise InputError(f"{path}: expected a JSON array of records (objects), found {type(data).__name__}")
    if _are_data_series(data):
        raise InputError(
            f"{path}: its records hold arrays of numbers (x, y, ... as in a chart's traces), not papers. "
            "Expected a JSON array of paper records with 'abstract' and/or 'title' fields."
        )
    return _records_to_frame(data, path, "record")


def other_json_kind(data: Any) -> str | None:
    """What a JSON document is when it is a known kind of file other than a corpus, else None: a plotly figure
    (``{"data": [...], "layout": {...}}``), a Vega or Vega-Lite chart, a Jupyter notebook, GeoJSON, or a Topic
    Atlas cache manifest."""
    if not isinstance(data, dict):
        return None
    if isinstance(data.get("data"), list) and isinstance(data.get("layout"), dict):
        return "a plotly figure (keys 'data' and 'layout')"
    if "vega" in str(data.get("$schema", "")):
        return "a Vega or Vega-Lite chart specification"
    if "cells" in data and "nbformat" in data:
        return "a Jupyter notebook"
    if data.get("type") in ("FeatureCollection", "Feature"):
        return "a GeoJSON file"
    if data.get("kind") == "topic-atlas-cache":
        return "a Topic Atlas cache manifest"
    return None


def _are_data_series(records: list[Any]) -> bool:
    """True when most records are chart traces or data series: no abstract-like field, and more fields holding
    arrays of numbers than fields holding text."""
    abstract_names = set(COLUMN_ALIASES["abstract"]) - {"text", "content", "body"}
    votes = 0
    objects = [record for record in records if isinstance(record, dict)]
    for record in objects:
        names = {_canonical_name(name) for name in record}
        numeric_arrays = sum(
            isinstance(value, list)
            and len(value) > 1
            and all(isinstance(item, (int, float)) and not isinstance(item, bool) for item in value)
            for value in record.values()
        )
        texts = sum(isinstance(value, str) and len(value.split()) > 3 for value in record.values())
        votes += not (names & abstract_names) and numeric_arrays > texts
    return bool(objects) and votes * 2 > len(objects)


def _read_jsonl(text: str, path: Path) -> pd.DataFrame:
    records = []
    for line_number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line, object_pairs_hook=first_of_repeated_keys))
        except json.JSONDecodeError as error:
            raise InputError(
                f"JSONL parse error in {path.name}, line {line_number}: {error.msg} (column {error.colno})"
            ) from error
    return _records_to_frame(records, path, "line")


def _records_to_frame(records: list[Any], path: Path, unit: str) -> pd.DataFrame:
    """JSON records as a table: OpenReview notes (every record one, see pipeline.ingest.formats) by their content
    fields, other objects by their keys. Raises InputError naming the first record that is not an object."""
    if records and all(is_openreview_note(record) for record in records):
        return notes_to_frame(records)
    for index, record in enumerate(records, start=1):
        if not isinstance(record, dict):
            raise InputError(
                f"{path}: {unit} {index} is a {type(record).__name__}, "
                "expected an object with fields such as 'abstract' and 'title'"
            )
    return pd.DataFrame.from_records(records) if records else pd.DataFrame()


def split_paragraphs(text: str) -> list[str]:
    """Split plain text into paragraphs at blank lines; each paragraph's lines are joined with spaces."""
    paragraphs = re.split(r"\n[ \t]*\n", text.replace("\r\n", "\n").replace("\r", "\n"))
    return [
        " ".join(line.strip() for line in paragraph.strip().splitlines())
        for paragraph in paragraphs
        if paragraph.strip()
    ]


_SENTENCE_END = (".", "!", "?", "。", "！", "？", ")", '"', "”")


def is_heading(first: str, first_raw: str, others: list[str]) -> bool:
    """True when a text file's first paragraph is a heading rather than an abstract.

    ``first`` is the paragraph as read, ``first_raw`` as written (with its line breaks), ``others`` the later
    paragraphs. A heading is one line of at most HEADING_MAX_CHARS characters that does not end a sentence (no
    final ".", "!", "?", "。"...) and either is a Markdown heading ("# ...") or is under a third of the median
    length of the other paragraphs. So a short one-line abstract ("We study X.") or a file of one-line abstracts
    of similar length keeps its first record.
    """
    if not others or "\n" in first_raw.strip() or len(first) > HEADING_MAX_CHARS:
        return False
    if first.startswith("#"):
        return True
    if first.rstrip().endswith(_SENTENCE_END):
        return False
    lengths = sorted(len(paragraph) for paragraph in others)
    return len(first) < lengths[len(lengths) // 2] / 3


def _read_text(text: str, path: Path) -> tuple[pd.DataFrame, dict[str, int], dict[str, str]]:
    paragraphs = split_paragraphs(text)
    skipped: dict[str, int] = {}
    skipped_text: dict[str, str] = {}
    first_raw = re.split(r"\n[ \t]*\n", text.replace("\r\n", "\n").replace("\r", "\n").lstrip(), maxsplit=1)[0]
    if len(paragraphs) > 1 and is_heading(paragraphs[0], first_raw, paragraphs[1:]):
        skipped["heading line"] = 1
        skipped_text["heading line"] = repr(paragraphs[0])
        paragraphs = paragraphs[1:]
    return pd.DataFrame({"abstract": paragraphs}), skipped, skipped_text


def _as_text(value: Any) -> str | None:
    """A cell as a string, or None when missing. Numbers become their text (``2023`` -> "2023")."""
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, (list, tuple)):
        return "; ".join(str(item) for item in value if item is not None)
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if hasattr(value, "tolist") and not isinstance(value, str):
        return _as_text(value.tolist())
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    if value is pd.NA or value is pd.NaT:
        return None
    return without_surrogates(str(value))


def without_surrogates(text: str) -> str:
    """``text`` with each UTF-16 surrogate code point (U+D800-U+DFFF) replaced by U+FFFD. No UTF-8 file can hold
    one, but a JSON file's ``"\\ud800"`` escape decodes to one, and then every later step that writes or hashes the
    text as UTF-8 fails (a build ended with an unexpected UnicodeEncodeError)."""
    if text.isascii() or not _has_surrogate(text):
        return text
    return "".join("\ufffd" if "\ud800" <= character <= "\udfff" else character for character in text)


def _has_surrogate(text: str) -> bool:
    """Whether ``text`` holds a surrogate code point (it cannot be encoded as UTF-8)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _cell_has_surrogate(value: Any) -> bool:
    """Whether a cell (a str, or a list of them, as a keywords cell) holds a surrogate code point."""
    if isinstance(value, str):
        return not value.isascii() and _has_surrogate(value)
    if hasattr(value, "tolist") and not isinstance(value, str):
        value = value.tolist()
    return isinstance(value, (list, tuple)) and any(_cell_has_surrogate(item) for item in value)


def surrogate_warning(table: pd.DataFrame, path: Path) -> str | None:
    """The warning that the records of ``table`` (1-based, the first ten named) holding a surrogate code point in any
    text cell or list of texts had it replaced by U+FFFD (:func:`without_surrogates`); None when none does."""
    flagged = np.zeros(len(table), dtype=bool)
    for column in table.columns:
        values = table[column]
        if values.dtype == object:  # text and list columns; numbers hold no text
            flagged |= np.fromiter(map(_cell_has_surrogate, values), dtype=bool, count=len(values))
    rows = (np.flatnonzero(flagged) + 1).tolist()
    if not rows:
        return None
    shown = ", ".join(map(str, rows[:10])) + (", ..." if len(rows) > 10 else "")
    return (
        f"{path.name}: {len(rows)} records (record {shown}) held characters no UTF-8 text can hold (lone UTF-16 "
        "surrogates, such as a JSON \\ud800 escape); each was replaced by U+FFFD"
    )


def unread_years_warning(cells: list[Any], years: Any, source: str, path: Path) -> str | None:
    """The warning that cells of the year column ``source`` hold something but no year of 1500-2999 (``years``: what
    :func:`_as_year` read, <NA> where nothing; the first five such records named, 1-based), so those papers have no
    year; None when every filled cell gave one."""
    unread = [
        row
        for row, (cell, year) in enumerate(zip(cells, years), start=1)
        if pd.isna(year) and _as_text(cell) is not None
    ]
    if not unread:
        return None
    shown = ", ".join(f"{row} ({_as_text(cells[row - 1])!r})" for row in unread[:5]) + (
        ", ..." if len(unread) > 5 else ""
    )
    return (
        f"{path.name}: {len(unread)} records have no year that column '{source}' can give (record {shown}): a year "
        "is a whole number from 1500 to 2999; those papers have none, so year filters and trends leave them out"
    )


def _as_keywords(value: Any) -> list[str]:
    """Keywords from a list or from one string joined by ';' (or ',' when there is no ';')."""
    if value is None:
        return []
    if hasattr(value, "tolist") and not isinstance(value, str):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        items = [without_surrogates(str(item)) for item in value if item is not None]
    else:
        text = _as_text(value)
        if text is None:
            return []
        separator = ";" if ";" in text else ","
        items = text.split(separator)
    return [item.strip() for item in items if item and item.strip()]


def _as_year(value: Any) -> int | None:
    """The first plausible year (1500-2999) in a cell ("2020", 2020, "2020///", "2020/05/01"), else None."""
    text = _as_text(value)
    match = _YEAR.search(text) if text else None
    return int(match.group(1)) if match else None


def _refuse_objects(column: list[Any], source: str, path: Path, table: pd.DataFrame) -> None:
    """Raise InputError at the first cell of a title or abstract column that holds an object or a list rather than
    text (after OpenReview v2's ``{"value": ...}`` was unwrapped), naming the file, the record and what to do:
    such a cell would otherwise be modelled as its JSON text."""
    for row, value in enumerate(column):
        if isinstance(value, (dict, list, tuple)) or (hasattr(value, "tolist") and not isinstance(value, str)):
            kind = (
                f"an object with keys {', '.join(map(str, list(value)[:5]))}" if isinstance(value, dict) else "a list"
            )
            ids = [name for name in table.columns if _canonical_name(name) in COLUMN_ALIASES["doc_id"]]
            named = f" (id {table[ids[0]].iloc[row]})" if ids else ""
            raise InputError(
                f"{path.name}: record {row + 1}{named}: column '{source}' holds {kind}, not text. "
                f"Give each {_canonical_name(source)} as a string (an OpenReview API v2 field "
                '{"value": "..."} is read as its value)'
            )


def canonical_records(table: pd.DataFrame, path: Path) -> tuple[pd.DataFrame, str, list[str]]:
    """Rename, convert and type the columns of a raw table.

    Returns (records, text column, warnings). ``records`` has ``record`` (1-based), ``doc_id`` (str, unique),
    str-or-None text columns, ``keywords`` (list of str), and the other optional columns.
    Raises InputError when neither an abstract nor a title column exists.
    """
    columns_found = [str(column) for column in table.columns]
    mapping = map_columns(columns_found, path)
    warnings: list[str] = []
    records = pd.DataFrame({"record": range(1, len(table) + 1)})
    for source, canonical in mapping.items():
        column = [note_value(value) for value in table[source].tolist()]  # OpenReview v2: {"value": ...}
        if canonical in TEXT_COLUMNS:
            _refuse_objects(column, source, path, table)
        if canonical == "keywords":
            records[canonical] = [_as_keywords(value) for value in column]
        elif canonical == "year":
            records[canonical] = pd.array([_as_year(value) for value in column], dtype="Int64")
            unread = unread_years_warning(column, records[canonical], source, path)
            if unread:
                warnings.append(unread)
        elif canonical == "rating_mean":
            records[canonical] = pd.to_numeric(pd.Series(column, dtype=object), errors="coerce").astype(float)
        else:
            records[canonical] = pd.Series([_as_text(value) for value in column], dtype=object)
    ignored = ignored_columns_warning(columns_found, mapping, path)
    if ignored:
        warnings.append(ignored)
    text_column = "abstract" if "abstract" in records.columns else "title"
    if text_column == "title":
        warnings.append(titles_only_warning(table, mapping, path))
    replaced = surrogate_warning(table[list(mapping)], path)
    if replaced:
        warnings.append(replaced)
    for optional in ("title", "abstract"):
        if optional not in records.columns:
            records[optional] = pd.Series([None] * len(records), dtype=object)
    if "keywords" not in records.columns:
        records["keywords"] = [[] for _ in range(len(records))]
    if "decision" in records.columns:
        records["decision"] = [normalise_decision(value) if value else None for value in records["decision"]]
    ids = [
        value.strip() if isinstance(value, str) and value.strip() else None
        for value in records.get("doc_id", [None] * len(records))
    ]
    generated = [f"row-{number}" for number in records["record"]]
    records["doc_id"] = [given if given is not None else fallback for given, fallback in zip(ids, generated)]
    if "doc_id" in mapping.values() and any(value is None for value in ids):
        warnings.append(
            f"{path.name}: {sum(value is None for value in ids)} "
            "records have no id; they were named row-N by record number"
        )
    duplicated = records["doc_id"].duplicated(keep=False)
    if duplicated.any():
        repeated = sorted(set(records.loc[duplicated, "doc_id"]))
        warnings.append(f"{path.name}: ids repeated ({', '.join(repeated[:10])}); repeats were suffixed with #record")
        records.loc[records["doc_id"].duplicated(keep="first"), "doc_id"] = [
            f"{doc_id}#{record}"
            for doc_id, record in records.loc[
                records["doc_id"].duplicated(keep="first"), ["doc_id", "record"]
            ].itertuples(index=False)
        ]
    return records, text_column, warnings


def _read_file(path: Path, encoding: str | None) -> tuple[pd.DataFrame, str, list[str], dict[str, int], dict[str, str]]:
    """A corpus file as a raw table, by its suffixes (``.gz`` after a text format: decompressed first).

    Returns (table, encoding used, warnings, skipped counts, skipped texts). Raises InputError for a format not
    read (naming what to do, :func:`pipeline.ingest.formats.unknown_format_message`), an unreadable or empty file,
    or one its reader refuses.
    """
    suffix, compressed = format_suffix(path)
    if suffix not in SUPPORTED_SUFFIXES or (compressed and suffix not in TEXT_SUFFIXES):
        raise InputError(unknown_format_message(path, suffix, compressed, SUPPORTED_SUFFIXES))
    if suffix == ".parquet":
        try:
            return read_parquet_input(path), "binary", [], {}, {}
        except Exception as error:  # pyarrow raises several types for damaged files
            raise InputError(f"{path}: not a readable Parquet file ({type(error).__name__}: {error})") from error
    if suffix in EXCEL_SUFFIXES:
        table, warnings = read_excel(path)
        return table, "binary", warnings, {}, {}
    if compressed:
        data = gunzip(path)
    else:
        try:
            data = path.read_bytes()
        except OSError as error:
            raise InputError(f"{path}: cannot read ({error.strerror})") from error
    text, used_encoding, warnings = decode_bytes(data, path, encoding)
    if not text.strip():
        raise InputError(f"{path}: the file is empty")
    skipped: dict[str, int] = {}
    skipped_text: dict[str, str] = {}
    if suffix == ".csv":
        table = _read_delimited(text, path, ",")
    elif suffix in (".tsv", ".tab"):
        table = _read_delimited(text, path, "\t")
    elif suffix == ".json":
        table = _read_json(text, path)
    elif suffix in (".jsonl", ".ndjson"):
        table = _read_jsonl(text, path)
    elif suffix in BIBTEX_SUFFIXES:
        table = read_bibtex(text, path)
    elif suffix in RIS_SUFFIXES:
        table = read_ris(text, path)
    else:
        table, skipped, skipped_text = _read_text(text, path)
    return table, used_encoding, warnings, skipped, skipped_text


def load_corpus(path: Path | str, encoding: str | None = None) -> RawCorpus:
    """Read a corpus file (see the module docstring for the input contract).

    Parameters
    ----------
    path : file to read; its extension picks the format.
    encoding : text encoding of CSV/TSV/JSON/JSONL/BibTeX/RIS/text files (also gzip-compressed); None = UTF-8, else
        Windows-1252 with a warning.

    Raises
    ------
    InputError : the file is missing, unreadable, of an unknown format (saying what to do), malformed (naming the
        line, record or entry), has neither an abstract nor a title column (listing the columns found and
        accepted), or a title or abstract that is an object rather than text.
    """
    path = Path(path).expanduser().resolve()
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    table, used_encoding, warnings, skipped, skipped_text = _read_file(path, encoding)
    if table.empty and not len(table.columns):
        raise InputError(f"{path}: no records found")
    records, text_column, column_warnings = canonical_records(table, path)
    corpus = RawCorpus(
        records=records,
        path=path,
        sha256=file_sha256(path),
        encoding=used_encoding,
        text_column=text_column,
        columns_found=[str(column) for column in table.columns],
        warnings=warnings + column_warnings,
        skipped=skipped,
        skipped_text=skipped_text,
        id_column=next(
            (
                column
                for column, canonical in map_columns([str(column) for column in table.columns], path).items()
                if canonical == "doc_id"
            ),
            None,
        ),
    )
    for warning in corpus.warnings:
        log.warning(warning)
    return corpus
