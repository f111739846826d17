"""The cleaned corpus of an input file, kept beside the layouts so that a rebuild of the same file skips cleaning.

Cleaning the whole conference (model texts, LaTeX, duplicates, placeholders, languages: pipeline.ingest.clean) takes about
3 s, a third of a rebuild that changes only clustering parameters. Its result depends on nothing but the file's
bytes, the stated encoding and the code that reads and cleans it, so it is stored under a key made of the file's
SHA-256, the encoding, the source of every module the cleaning runs (a change to any of them is a new key) and the
pandas and pyarrow versions: ``<layouts>/prepared/<key>/`` with ``documents.parquet``, ``copies.parquet`` and
``prepared.json`` (the counts, ids and warnings). Parquet and JSON only; written to a temporary folder and renamed, so
a reader never sees a partial one. An unreadable entry is ignored and made again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
from importlib.metadata import version
from pathlib import Path

import pandas as pd

from pipeline.ingest.clean import PreparedCorpus

log = logging.getLogger(__name__)

# The modules whose code decides what cleaning gives (their source is part of the key).
CLEANING_MODULES = ("clean.py", "corpus.py", "latex.py", "language.py", "decisions.py", "preparation_cache.py")
FOLDER = "prepared"


def preparation_key(input_sha256: str, encoding: str | None) -> str:
    """SHA-256 hex of the file's hash, the encoding asked for, the cleaning modules' source and the table libraries."""
    digest = hashlib.sha256(
        f"{input_sha256}|{encoding}|pandas {version('pandas')}|pyarrow {version('pyarrow')}".encode()
    )
    here = Path(__file__).resolve().parent
    for name in CLEANING_MODULES:
        path = here / name
        digest.update(path.read_bytes() if path.is_file() else name.encode())
    return digest.hexdigest()


def load_prepared(folder: Path) -> PreparedCorpus | None:
    """The PreparedCorpus stored in ``folder``, or None when there is none or it cannot be read."""
    try:
        meta = json.loads((folder / "prepared.json").read_text(encoding="utf-8"))
        documents = pd.read_parquet(folder / "documents.parquet")
        copies = pd.read_parquet(folder / "copies.parquet") if (folder / "copies.parquet").is_file() else pd.DataFrame()
    except (OSError, ValueError) as error:
        if folder.exists():
            log.warning("ignoring the unreadable cleaned corpus in %s: %s", folder, error)
        return None
    for column in ("keywords", "duplicate_ids"):  # Parquet gives arrays back; the build works on lists
        if column in documents.columns:
            documents[column] = [list(value) if value is not None else [] for value in documents[column]]
    return PreparedCorpus(documents, meta["dropped"], meta["dropped_ids"], meta["warnings"], copies, meta["languages"])


def save_prepared(prepared: PreparedCorpus, folder: Path) -> None:
    """Store ``prepared`` as ``folder`` (replaced atomically). A failure to write is logged, never raised."""
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
        prepared.documents.to_parquet(staging / "documents.parquet", index=False)
        if len(prepared.copies):
            prepared.copies.to_parquet(staging / "copies.parquet", index=False)
        meta = {
            "dropped": prepared.dropped,
            "dropped_ids": prepared.dropped_ids,
            "warnings": prepared.warnings,
            "languages": prepared.languages,
        }
        (staging / "prepared.json").write_text(json.dumps(meta), encoding="utf-8")
        shutil.rmtree(folder, ignore_errors=True)
        os.replace(staging, folder)
    except (OSError, ValueError) as error:
        log.warning("could not keep the cleaned corpus in %s: %s", folder, error)


def cached_preparation(
    layouts_folder: Path | None, raw: object, encoding: str | None, prepare: object
) -> tuple[PreparedCorpus, bool]:
    """(``prepare(raw)``, False), or the stored result of an earlier identical cleaning and True. ``layouts_folder``:
    the build's layout store folder (None = no caching)."""
    if layouts_folder is None:
        return prepare(raw), False
    folder = Path(layouts_folder) / FOLDER / preparation_key(raw.sha256, encoding)
    found = load_prepared(folder)
    if found is not None:
        return found, True
    prepared = prepare(raw)
    save_prepared(prepared, folder)
    return prepared, False
