"""Checks on a file uploaded to "Find and place", before anything parses it (OWASP's file-upload guidance: a size
limit, the type judged by content rather than by name, a bound on rows, no path from the user).

:func:`upload_problem` is pure: bytes in, a message for the page out (None when the file may be parsed).
:func:`parse_name` picks the name the reader sees from the content, so a Parquet file renamed ``.csv`` is read as
Parquet and a user's path never reaches the file system (the page writes only a fixed name in a temporary folder).
"""

from __future__ import annotations

import re
from typing import Any

MAX_UPLOAD_MB = 20  # also .streamlit/config.toml's server.maxUploadSize (tests/test_uploads.py checks both agree)
MAX_UPLOAD_BYTES = MAX_UPLOAD_MB * 1024 * 1024
MAX_UPLOAD_ROWS = 20_000  # papers placed at once; 100,000 short lines fit in 20 MB, so the size alone is no bound
# What a Parquet upload may hold once decompressed and decoded. MAX_UPLOAD_ROWS papers of a real table take about
# 34 MB: the 11,672 papers of ICLR 2025 with every column (title and abstract, about 1,450 characters a paper,
# authors, affiliations, keywords, decision) are 19.8 MB of data in their Parquet file's footer. 64 MB leaves room
# for longer abstracts; a text upload (CSV, TSV, JSON, JSONL, text) is its own size, at most MAX_UPLOAD_MB, and gzip
# or zip is refused. Without it a 30 KB Parquet file of ~320 MB of repeated text took the server from 650 to 2,253 MB
# (red team, issue 40, finding 10).
MAX_DECODED_MB = 64
MAX_DECODED_BYTES = MAX_DECODED_MB * 1024 * 1024
BATCH_ROWS = 64  # rows decoded at once while the decoded size is counted
LINES_PER_PAPER = 10  # a pretty-printed JSON record or a paragraph spans a few lines; a million rows is far past
TEXT_FORMATS = ("csv", "tsv", "json", "jsonl", "txt")
ACCEPTED_EXTENSIONS = (*TEXT_FORMATS, "parquet")  # the uploader's allow-list, checked again here (issue 40, item 16)
# What st.file_uploader is given: the extensions for the browser's file picker, and one MIME type, with which
# Streamlit leaves the check of a name to the page (its own check raised StreamlitAPIException, shown redacted, for a
# file sent past the browser's filter; upload_problem names the extension in one line instead).
UPLOADER_TYPES = [*ACCEPTED_EXTENSIONS, "text/csv"]
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


def _too_big(n_bytes: int) -> str:
    return (
        f"the Parquet file holds {_mb(n_bytes)} or more of data once decompressed; at most {MAX_DECODED_MB} MB "
        f"({MAX_UPLOAD_ROWS:,} papers of abstracts take about 34 MB) can be placed"
    )


def _decoded_size(array: Any) -> int:
    """Bytes ``array`` (a pyarrow Array, string leaves read as dictionaries) takes once its dictionaries are decoded:
    each string counted as often as it is used, without building the strings."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = array.type
    if pa.types.is_dictionary(kind):
        values = array.dictionary
        if pa.types.is_string(values.type) or pa.types.is_binary(values.type) or pa.types.is_large_string(values.type):
            used = pc.sum(pc.binary_length(values).take(array.indices)).as_py() or 0
        else:
            used = values.nbytes * len(array)
        return int(used) + array.indices.nbytes
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        return _decoded_size(array.flatten()) + 8 * len(array)
    if pa.types.is_struct(kind):
        return sum(_decoded_size(field) for field in array.flatten())
    return int(array.nbytes)


def _parquet_problem(data: bytes) -> str | None:
    """The footer's row count and uncompressed sizes, then the decoded size counted batch by batch (a dictionary of
    a few long strings repeated over many rows is small in the footer and huge once read): stopped at the limit, so
    a bomb never takes more than a batch of BATCH_ROWS rows of memory beyond its own pages."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        metadata = pq.ParquetFile(pa.BufferReader(data)).metadata
        if metadata.num_rows > MAX_UPLOAD_ROWS:
            return f"the file has {metadata.num_rows:,} rows; at most {MAX_UPLOAD_ROWS:,} papers can be placed at once"
        declared = 0
        for group in range(metadata.num_row_groups):
            row_group = metadata.row_group(group)
            chunks = sum(row_group.column(column).total_uncompressed_size for column in range(row_group.num_columns))
            declared += max(row_group.total_byte_size, chunks)
        if declared > MAX_DECODED_BYTES:
            return _too_big(declared)
        strings = [
            metadata.schema.column(column).path
            for column in range(metadata.num_columns)
            if metadata.schema.column(column).physical_type == "BYTE_ARRAY"
        ]
        decoded = 0
        for batch in pq.ParquetFile(pa.BufferReader(data), read_dictionary=strings).iter_batches(batch_size=BATCH_ROWS):
            decoded += sum(_decoded_size(column) for column in batch.columns)
            if decoded > MAX_DECODED_BYTES:
                return _too_big(decoded)
    except Exception as error:  # pyarrow raises several types for damaged files
        return f"the file looks like Parquet but cannot be read ({type(error).__name__}: {error}); expected {EXPECTED}"
    return None


def upload_problem(name: str, data: bytes) -> str | None:
    """Why the uploaded file ``data`` (named ``name`` by the browser) cannot be placed, or None.

    Refused: more than MAX_UPLOAD_BYTES; a name whose extension is not in ACCEPTED_EXTENSIONS (a file sent past the
    browser's filter); an archive, image, PDF, program or other binary content (judged by magic bytes and NUL bytes,
    whatever the name says, so gzip and zip are never decompressed); more than MAX_UPLOAD_ROWS rows (Parquet: from its
    footer; text: from its line count, "\\n" or a lone "\\r", and a JSON file's gaps between records, before
    parsing, so a million-row file costs one pass over its bytes: :func:`_text_count_problem`); a Parquet file of
    more than MAX_DECODED_MB once decompressed and decoded (:func:`_parquet_problem`).
    A text file whose columns are wrong is refused later by the reader (pipeline.ingest.corpus), which names the
    accepted columns.
    """
    if len(data) > MAX_UPLOAD_BYTES:
        return f"the file is {_mb(len(data))}; files up to {MAX_UPLOAD_MB} MB can be placed"
    extension = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    if extension not in ACCEPTED_EXTENSIONS:
        shown = f"files ending .{extension[:20]}" if extension else "files without an extension"
        return f"{shown} are not placed; expected {EXPECTED} (.{', .'.join(ACCEPTED_EXTENSIONS)})"
    if not data.strip():
        return f"the file is empty; expected {EXPECTED}"
    if is_parquet(data):
        return _parquet_problem(data)
    for signature, what in _SIGNATURES.items():
        if data.startswith(signature):
            return f"the file is {what}, whatever its name says; expected {EXPECTED}"
    if data[:4] == b"PAR1" or b"\x00" in data[:65536]:  # a truncated Parquet file, or any other binary
        return f"the file holds binary data, not text or a whole Parquet file; expected {EXPECTED}"
    return _text_count_problem(data)


# Between two records of a JSON array of objects ("}, {"): counted without parsing, so a one-line JSON file of
# 170,000 records is refused in one pass over its bytes, not after seconds of parsing and cleaning (issue 40, item 16).
_JSON_RECORD_GAP = re.compile(rb"\}\s*,\s*\{")
# A record may hold a list of objects of its own: twice the papers' bound leaves room for them.
JSON_GAPS_PER_PAPER = 2


def _text_count_problem(data: bytes) -> str | None:
    """A text upload's records counted cheaply, before any parsing: its lines, whichever of "\\n" and a lone
    "\\r" (old Mac line ends: 500,000 CR-separated paragraphs were one "line") ends them, and for JSON the gaps
    between records. None when within MAX_UPLOAD_ROWS (with room for records that span several lines)."""
    lines = max(data.count(b"\n"), data.count(b"\r")) + 1
    if lines > LINES_PER_PAPER * MAX_UPLOAD_ROWS:
        return f"the file has {lines:,} lines; at most {MAX_UPLOAD_ROWS:,} papers can be placed at once"
    if data.lstrip()[:1] in (b"[", b"{"):
        records = len(_JSON_RECORD_GAP.findall(data)) + 1
        if records > JSON_GAPS_PER_PAPER * MAX_UPLOAD_ROWS:
            return f"the file holds about {records:,} records; at most {MAX_UPLOAD_ROWS:,} papers can be placed at once"
    return None


def parse_name(name: str, data: bytes) -> str:
    """The file name the reader gets: ``upload.parquet`` for Parquet content, else ``upload.<extension>`` with the
    browser's extension when it is a text format (``txt`` otherwise). Never a path of the user's."""
    if is_parquet(data):
        return "upload.parquet"
    extension = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    return f"upload.{extension if extension in TEXT_FORMATS else 'txt'}"
