"""Checks on a file uploaded to "Find and place", before anything parses it (OWASP's file-upload guidance: a size
limit, the type judged by content rather than by name, a bound on rows, no path from the user).

:func:`upload_problem` is pure: bytes in, a message for the page out (None when the file may be parsed).
:func:`parse_name` picks the name the reader sees from the content, so a Parquet file renamed ``.csv`` is read as
Parquet and a user's path never reaches the file system (the page writes only a fixed name in a temporary folder).
"""

from __future__ import annotations

import io

MAX_UPLOAD_MB = 20  # also .streamlit/config.toml's server.maxUploadSize (tests/test_uploads.py checks both agree)
MAX_UPLOAD_BYTES = MAX_UPLOAD_MB * 1024 * 1024
MAX_UPLOAD_ROWS = 20_000  # papers placed at once; 100,000 short lines fit in 20 MB, so the size alone is no bound
LINES_PER_PAPER = 10  # a pretty-printed JSON record or a paragraph spans a few lines; a million rows is far past
TEXT_FORMATS = ("csv", "tsv", "json", "jsonl", "txt")
EXPECTED = (
    "a CSV, TSV, JSON, JSONL or Parquet table with an 'abstract' (or 'title') column, or a text file with one "
    "abstract per paragraph"
)
_SIGNATURES = {  # magic bytes of files people upload by mistake
    b"PK\x03\x04": "a zip archive (or an Excel/Word file, which are zip archives)",
    b"\x1f\x8b": "a gzip-compressed file",
    b"%PDF": "a PDF document",
    b"\x89PNG": "a PNG image",
    b"\xff\xd8\xff": "a JPEG image",
    b"\xd0\xcf\x11\xe0": "an old Office document",
    b"7z\xbc\xaf": "a 7-Zip archive",
    b"BZh": "a bzip2-compressed file",
    b"\x7fELF": "a program",
}


def is_parquet(data: bytes) -> bool:
    """Parquet files begin and end with the magic bytes PAR1."""
    return len(data) >= 8 and data[:4] == b"PAR1" and data[-4:] == b"PAR1"


def _mb(n_bytes: int) -> str:
    return f"{n_bytes / 1024 / 1024:.1f} MB"


def _parquet_problem(data: bytes) -> str | None:
    import pyarrow.parquet as pq

    try:
        metadata = pq.ParquetFile(io.BytesIO(data)).metadata
    except Exception as error:  # pyarrow raises several types for damaged files
        return f"the file looks like Parquet but cannot be read ({type(error).__name__}: {error}); expected {EXPECTED}"
    if metadata.num_rows > MAX_UPLOAD_ROWS:
        return f"the file has {metadata.num_rows:,} rows; at most {MAX_UPLOAD_ROWS:,} papers can be placed at once"
    return None


def upload_problem(name: str, data: bytes) -> str | None:
    """Why the uploaded file ``data`` (named ``name`` by the browser) cannot be placed, or None.

    Refused: more than MAX_UPLOAD_BYTES; an archive, image, PDF, program or other binary content (judged by magic
    bytes and NUL bytes, whatever the name says); more than MAX_UPLOAD_ROWS rows (Parquet: from its footer; text:
    from its line count, before parsing, so a million-row file costs one pass over its bytes). A text file whose
    columns are wrong is refused later by the reader (pipeline.ingest.corpus), which names the accepted columns.
    """
    if len(data) > MAX_UPLOAD_BYTES:
        return f"the file is {_mb(len(data))}; files up to {MAX_UPLOAD_MB} MB can be placed"
    if not data.strip():
        return f"the file is empty; expected {EXPECTED}"
    if is_parquet(data):
        return _parquet_problem(data)
    for signature, what in _SIGNATURES.items():
        if data.startswith(signature):
            return f"the file is {what}, whatever its name says; expected {EXPECTED}"
    if data[:4] == b"PAR1" or b"\x00" in data[:65536]:  # a truncated Parquet file, or any other binary
        return f"the file holds binary data, not text or a whole Parquet file; expected {EXPECTED}"
    lines = data.count(b"\n") + 1
    if lines > LINES_PER_PAPER * MAX_UPLOAD_ROWS:
        return f"the file has {lines:,} lines; at most {MAX_UPLOAD_ROWS:,} papers can be placed at once"
    return None


def parse_name(name: str, data: bytes) -> str:
    """The file name the reader gets: ``upload.parquet`` for Parquet content, else ``upload.<extension>`` with the
    browser's extension when it is a text format (``txt`` otherwise). Never a path of the user's."""
    if is_parquet(data):
        return "upload.parquet"
    extension = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    return f"upload.{extension if extension in TEXT_FORMATS else 'txt'}"
