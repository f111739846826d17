"""The files people have beside CSV and JSON: gzip-compressed text, Excel workbooks, BibTeX, RIS and OpenReview dumps.

Each reader turns a file into a raw table whose column names :func:`pipeline.ingest.corpus.map_columns` knows
(``id``, ``title``, ``abstract``, ``keywords``, ``authors``, ``venue``, ``year``, ``primary_area``, ``decision``);
:mod:`pipeline.ingest.corpus` picks the reader by the file's suffixes and canonicalises the table as for any format.

- ``.gz`` after a text format (``papers.csv.gz``, ``.jsonl.gz``, ``.json.gz``, ``.tsv.gz``, ``.bib.gz``, ...):
  decompressed with :mod:`gzip`, then read as the uncompressed file is.
- ``.xlsx`` / ``.xlsm``: the first sheet, through ``pandas.read_excel`` (openpyxl); when the workbook has several
  sheets the build warns and names the sheet it read.
- ``.bib`` / ``.bibtex``: bibtexparser 2 (``@string`` macros resolved, enclosing braces and quotes removed). The
  entry key is the id; ``journal`` or ``booktitle`` the venue; ``author`` joined by " and " becomes names joined by
  ", ". A title's case-protecting braces (``{BERT}``) go; the rest of the LaTeX (commands, accent escapes such as
  ``{\\"u}``, math) is kept as written, for :mod:`pipeline.ingest.latex` to strip from the model text and render for
  reading, as for any other file.
- ``.ris``: rispy. ``TI``/``T1`` title, ``AB`` (else ``N2``) abstract, ``KW`` keywords, ``PY``/``Y1`` year, ``AU``
  (else ``A1``) authors, ``JO``/``T2`` (else ``JF``) venue, ``ID`` the id (else the record number).
- OpenReview notes (API v1 and v2), as a JSON list of notes, ``{"notes": [...]}`` or one note per JSONL line: a
  note is an object with a ``content`` object and an ``id`` or ``forum``. Fields are ``content.X`` (v1) or
  ``content.X.value`` (v2); read are title, abstract, keywords, authors, venue, primary_area and the decision
  (``content.decision``, else the venue string such as "ICLR 2025 Oral").

Every reader raises :class:`~pipeline.runtime.errors.InputError` naming the file, the entry, line or sheet, and what
to do.
"""

from __future__ import annotations

import gzip
import logging
import re
import zlib
from pathlib import Path
from typing import Any

import pandas as pd

from pipeline.runtime.errors import InputError

GZIP_SUFFIX = ".gz"
EXCEL_SUFFIXES = (".xlsx", ".xlsm")
BIBTEX_SUFFIXES = (".bib", ".bibtex")
RIS_SUFFIXES = (".ris",)
# What a person can do with a file of a kind that is not read, by suffix.
REFUSAL_HINTS = {
    ".xls": "an old Excel workbook: open it and save it as .xlsx or .csv",
    ".ods": "a LibreOffice spreadsheet: save it as .xlsx or .csv",
    ".zip": "an archive: unzip it and give the corpus file inside",
    ".bz2": "a bzip2 archive: decompress it, or recompress it with gzip (.gz)",
    ".xz": "an xz archive: decompress it, or recompress it with gzip (.gz)",
    ".pdf": "a PDF: export the titles and abstracts as CSV, BibTeX or RIS (a reference manager can)",
    ".docx": "a Word document: save it as plain text (.txt, one abstract per paragraph)",
    ".enw": "an EndNote tagged file: export the references as RIS (.ris) instead",
    ".nbib": "a PubMed file: export the references as RIS (.ris) or CSV instead",
}


def format_suffix(path: Path) -> tuple[str, bool]:
    """(the suffix that names the file's format, whether the file is gzip-compressed): ``papers.csv.gz`` ->
    (".csv", True), ``papers.csv`` -> (".csv", False), ``papers.gz`` -> ("", True). Lower case."""
    suffixes = [suffix.lower() for suffix in path.suffixes]
    if suffixes and suffixes[-1] == GZIP_SUFFIX:
        return (suffixes[-2] if len(suffixes) > 1 else ""), True
    return (suffixes[-1] if suffixes else ""), False


def unknown_format_message(path: Path, suffix: str, compressed: bool, supported: tuple[str, ...]) -> str:
    """The one-line refusal of a file whose suffix names no format read here: what it seems to be and what to do."""
    shown = f"{suffix}.gz" if compressed else suffix or "(none)"
    hint = REFUSAL_HINTS.get(suffix)
    if compressed and suffix in supported:
        hint = f"a compressed {suffix[1:]} file that cannot be decompressed here: decompress it first"
    if hint is None:
        hint = "save it as CSV with a title and/or abstract column"
    formats = ", ".join(supported + tuple(f".{each}.gz" for each in ("csv", "tsv", "json", "jsonl")))
    return f"{path}: unknown format '{shown}': {hint}. Read formats: {formats}."


def gunzip(path: Path) -> bytes:
    """The decompressed bytes of a gzip file. Raises InputError naming the file when it cannot be read or is not
    a whole gzip stream (truncated, or another format named .gz)."""
    try:
        with gzip.open(path, "rb") as handle:
            return handle.read()
    except OSError as error:
        reason = error.strerror or str(error)
        raise InputError(
            f"{path}: not a readable gzip file ({reason}). Decompress it with another tool and give the file inside"
        ) from error
    except (EOFError, zlib.error) as error:
        raise InputError(
            f"{path}: the gzip data is truncated or damaged ({error}). Download or compress the file again"
        ) from error


def read_excel(path: Path) -> tuple[pd.DataFrame, list[str]]:
    """The first sheet of an .xlsx workbook as a table of strings (empty cells missing), and warnings: the sheet
    read, when the workbook has several. Raises InputError naming the file when it is not a readable workbook or
    its first sheet is empty."""
    try:
        workbook = pd.ExcelFile(path, engine="openpyxl")
    except ImportError as error:
        raise InputError(f"{path}: reading .xlsx needs openpyxl; install it, or save the sheet as CSV") from error
    except Exception as error:  # zipfile.BadZipFile, KeyError, openpyxl's own errors for a damaged workbook
        raise InputError(
            f"{path}: not a readable .xlsx workbook ({type(error).__name__}: {error}). "
            "Open it in a spreadsheet program and save it as .xlsx or .csv"
        ) from error
    with workbook:
        sheets = [str(name) for name in workbook.sheet_names]
        if not sheets:
            raise InputError(f"{path}: the workbook has no sheets")
        table = workbook.parse(sheets[0], dtype=object, keep_default_na=False, na_values=[""])
    table = table.dropna(how="all").reset_index(drop=True)
    if table.empty:
        raise InputError(
            f"{path}: sheet '{sheets[0]}', the first of the workbook, holds no records. "
            "Move the papers to the first sheet, with a title and/or abstract column in its first row"
        )
    warnings = []
    if len(sheets) > 1:
        others = ", ".join(repr(name) for name in sheets[1:])
        warnings.append(
            f"{path.name}: read sheet '{sheets[0]}', the first of {len(sheets)} (not read: {others}). "
            "Move the papers to the first sheet to read another"
        )
    return table, warnings


# A group that only protects case: not a command's argument, no markup or math inside.
_CASE_BRACES = re.compile(r"(?<![\\\w^_])\{([^{}\\$]*)\}")


def bibtex_title(text: str) -> str:
    """A BibTeX title as written elsewhere: case-protecting braces removed (``{BERT}`` -> BERT, ``{{T}ransformers}``
    -> Transformers); commands with their arguments (``\\emph{x}``, ``{\\"u}``) and math kept as written, for
    pipeline.ingest.latex to strip from the model text and render for reading as for any other format."""
    for _ in range(3):
        unwrapped = _CASE_BRACES.sub(r"\1", text)
        if unwrapped == text:
            break
        text = unwrapped
    return text


def read_bibtex(text: str, path: Path) -> pd.DataFrame:
    """BibTeX entries as a table: id (entry key), title, abstract, keywords, authors, year, venue; one row per entry
    in file order (an entry whose key repeats an earlier one is kept: the ids are suffixed later). Raises
    InputError naming the file and the line of the first entry bibtexparser cannot parse, or when no entry is
    found."""
    import bibtexparser
    from bibtexparser.library import Library
    from bibtexparser.middlewares import RemoveEnclosingMiddleware
    from bibtexparser.model import DuplicateBlockKeyBlock, Entry

    bibtex_log = logging.getLogger("bibtexparser")
    level = bibtex_log.level
    bibtex_log.setLevel(logging.CRITICAL)  # its warning repeats, over lines, what the one-line error below says
    try:
        library = bibtexparser.parse_string(text)
    finally:
        bibtex_log.setLevel(level)
    entries: list[Entry] = list(library.entries)
    for block in library.failed_blocks:
        if isinstance(block, DuplicateBlockKeyBlock) and isinstance(block.ignore_error_block, Entry):
            entries += RemoveEnclosingMiddleware().transform(Library([block.ignore_error_block])).entries
            continue
        detail = getattr(block.error, "abort_reason", None) or str(block.error).strip() or "the entry is not closed"
        raise InputError(
            f"BibTeX parse error in {path.name}, line {(block.start_line or 0) + 1}: {' '.join(detail.split())}. "
            "Check the braces and commas of that entry"
        )
    if not entries:
        raise InputError(f"{path}: no BibTeX entries (@article{{key, title = {{...}}, abstract = {{...}}}}) found")
    entries.sort(key=lambda entry: entry.start_line or 0)
    rows = []
    for entry in entries:
        fields = {key.lower(): str(field.value) for key, field in entry.fields_dict.items()}
        authors = fields.get("author")
        rows.append(
            {
                "id": entry.key,
                "title": bibtex_title(fields["title"]) if "title" in fields else None,
                "abstract": fields.get("abstract"),
                "keywords": fields.get("keywords", fields.get("keyword")),
                "authors": ", ".join(_split_names(authors)) if authors else None,
                "year": fields.get("year"),
                "venue": fields.get("journal", fields.get("booktitle")),
            }
        )
    return pd.DataFrame.from_records(rows)


def _split_names(authors: str) -> list[str]:
    """BibTeX's author list ("Doe, Jane and John Smith") as names, case-protecting braces removed."""
    names = re.split(r"\s+and\s+", " ".join(authors.split()))
    return [bibtex_title(name).strip() for name in names if name.strip()]


def read_ris(text: str, path: Path) -> pd.DataFrame:
    """RIS records as a table: id (``ID``, else none: the record number is used), title, abstract, keywords,
    authors, year, venue; one row per record. Raises InputError naming the file when no record is found or when a
    record opened with ``TY`` is not closed with ``ER`` (rispy would drop it silently)."""
    import rispy

    try:
        records = rispy.loads(text)
    except Exception as error:  # rispy raises plain IOError / ValueError on a malformed tag line
        raise InputError(f"RIS parse error in {path.name}: {error}") from error
    opened = len(re.findall(r"^\s*TY  -", text, flags=re.MULTILINE))
    if not records:
        raise InputError(
            f"{path}: no RIS records found (each starts with a 'TY  - ' line and ends with an 'ER  - ' line)"
        )
    if opened != len(records):
        raise InputError(
            f"RIS parse error in {path.name}: {opened} records open with 'TY  - ' but {len(records)} close with "
            "'ER  - '. End every record with an 'ER  - ' line"
        )
    rows = []
    for record in records:
        year = _first(record, "year", "publication_year")
        rows.append(
            {
                "id": _first(record, "id"),
                "title": _first(record, "title", "primary_title"),
                "abstract": _first(record, "abstract", "notes_abstract"),
                "keywords": record.get("keywords"),
                "authors": ", ".join(record.get("authors") or record.get("first_authors") or []) or None,
                "year": year,
                "venue": _first(record, "journal_name", "secondary_title", "alternate_title3"),
            }
        )
    return pd.DataFrame.from_records(rows)


def _first(record: dict[str, Any], *keys: str) -> str | None:
    """The first of ``keys`` with a non-empty value in a rispy record, as text (a repeated tag's values joined)."""
    for key in keys:
        value = record.get(key)
        if isinstance(value, list):
            value = " ".join(str(item) for item in value if item)
        if value is not None and str(value).strip():
            return str(value).strip()
    return None


def is_openreview_note(record: Any) -> bool:
    """True for an OpenReview note: an object with a ``content`` object and an ``id`` or ``forum``."""
    return (
        isinstance(record, dict) and isinstance(record.get("content"), dict) and ("id" in record or "forum" in record)
    )


def note_value(field: Any) -> Any:
    """A content field's value: v2 wraps it (``{"value": x}``), v1 does not."""
    return field.get("value") if isinstance(field, dict) and "value" in field else field


def _names(value: Any) -> str | None:
    """Authors as "A, B": a list of names, or of ``{"fullname": ...}`` objects (the unified author schema)."""
    if isinstance(value, list):
        names = [
            str(item.get("fullname") or item.get("username") or "") if isinstance(item, dict) else str(item)
            for item in value
        ]
        return ", ".join(name for name in names if name) or None
    return None if value is None else str(value)


def notes_to_frame(notes: list[dict[str, Any]]) -> pd.DataFrame:
    """OpenReview notes (v1 or v2, see :func:`is_openreview_note`) as a table: id, title, abstract, keywords,
    authors, venue, primary_area, decision; one row per note, in order."""
    rows = []
    for note in notes:
        content = {key: note_value(value) for key, value in note["content"].items()}
        venue = content.get("venue")
        rows.append(
            {
                "id": note.get("id") or note.get("forum"),
                "title": content.get("title"),
                "abstract": content.get("abstract"),
                "keywords": content.get("keywords"),
                "authors": _names(content.get("authors")),
                "venue": venue,
                "primary_area": content.get("primary_area"),
                "decision": content.get("decision") or venue,
            }
        )
    return pd.DataFrame.from_records(rows)
