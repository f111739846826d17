"""The cleaned corpus of an input file, kept in the layout store so that a rebuild of the same file skips cleaning.

Cleaning the whole conference (model texts, LaTeX, duplicates, placeholders, languages: pipeline.ingest.clean) takes
about 3 s, a third of a rebuild that changes only clustering parameters. Its result depends on nothing but the file's
bytes, the stated encoding, the code that reads and cleans it and the table and language libraries, so it is stored
under the key of stage "prepared" (:func:`preparation_key`, by the rule of pipeline.store.keys):
``<layouts>/prepared/<digest>/`` with ``documents.parquet``, ``copies.parquet`` and ``prepared.json`` (the counts,
ids and warnings). Parquet and JSON only; written to a temporary folder and renamed, so a reader never sees a
partial one. An unreadable entry is ignored and made again.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import tempfile
from functools import partial
from pathlib import Path

import pandas as pd

from pipeline.ingest.clean import PreparedCorpus, prepare_documents, record_rows
from pipeline.ingest.corpus import RawCorpus
from pipeline.runtime.parquet import read_frame
from pipeline.runtime.two_processes import WorkerProcess, map_in_two_processes
from pipeline.store.keys import StageKey, stage_key
from pipeline.store.layouts import StageStore

log = logging.getLogger(__name__)

STAGE = "prepared"


def preparation_key(input_sha256: str, encoding: str | None) -> StageKey:
    """The key of the cleaned corpus: the file's SHA-256 and the encoding asked for; the code that reads
    (pipeline.ingest.corpus), cleans (pipeline.ingest.clean, with what it imports: LaTeX, languages, decisions) and
    stores it (this module); pandas, pyarrow and py3langid."""
    return stage_key(
        STAGE,
        inputs={"file": input_sha256},
        params={"encoding": encoding},
        libraries=("pandas", "pyarrow", "py3langid"),
        code=("pipeline.ingest.corpus", "pipeline.ingest.clean", __name__),
    )


def load_prepared(folder: Path) -> PreparedCorpus | None:
    """The PreparedCorpus stored in ``folder``, or None when there is none or it cannot be read."""
    try:
        meta = json.loads((folder / "prepared.json").read_text(encoding="utf-8"))
        documents = read_frame(folder / "documents.parquet")
        copies = read_frame(folder / "copies.parquet") if (folder / "copies.parquet").is_file() else pd.DataFrame()
    except (OSError, ValueError) as error:
        if folder.exists():
            log.warning("ignoring the unreadable cleaned corpus in %s: %s", folder, error)
        return None
    for column in ("keywords", "duplicate_ids"):  # Parquet gives arrays back; the build works on lists
        if column in documents.columns:
            documents[column] = [list(value) if value is not None else [] for value in documents[column]]
    return PreparedCorpus(
        documents,
        meta["dropped"],
        meta["dropped_ids"],
        meta["warnings"],
        copies,
        meta["languages"],
        dropped_copies=meta.get("dropped_copies", {}),
    )


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
            "dropped_copies": prepared.dropped_copies,
        }
        (staging / "prepared.json").write_text(json.dumps(meta), encoding="utf-8")
        shutil.rmtree(folder, ignore_errors=True)
        os.replace(staging, folder)
    except (OSError, ValueError) as error:
        log.warning("could not keep the cleaned corpus in %s: %s", folder, error)


def cached_preparation(
    store: StageStore, raw: RawCorpus, encoding: str | None, worker: WorkerProcess | None = None
) -> PreparedCorpus:
    """``prepare_documents(raw)`` (pipeline.ingest.clean), or the stored result of an earlier identical cleaning.

    ``store``: the build's layout store (a NullStore keeps nothing); the hit or miss is in ``store.hits["prepared"]``.
    ``raw``: the corpus as read (``raw.sha256`` is the file's), ``encoding``: the encoding asked for (None = UTF-8).
    A large file is cleaned by two processes (:func:`cached_preparations`; ``worker``: one already started, see
    :func:`cleaning_worker`). Raises what prepare_documents raises."""
    return cached_preparations(store, [raw], encoding, worker)[0]


# A second process cleans only when there are at least this many records to clean: starting it (a fresh interpreter
# importing pandas, the cleaners and the language model) costs about 1.5 s.
PARALLEL_MIN_RECORDS = 5_000
# Records per part of the row-local cleaning shared with the worker: about 0.4 s of work on this project's 2-core
# Intel Xeon, so neither process waits for the other by more than that.
PART_RECORDS = 1_000


def cached_preparations(
    store: StageStore, raws: list[RawCorpus], encoding: str | None, worker: WorkerProcess | None = None
) -> list[PreparedCorpus]:
    """:func:`cached_preparation` of each of ``raws`` (one file, or the collections of one atlas, in order): the ones
    the store lacks are cleaned with their records' row-local part shared by this process and a worker process
    (:func:`rows_in_two_processes`), then each file's own first-copy rule, counts and warnings here. Cleaning is a pure
    function of the records, so where a part runs changes nothing in the result: the 290,219-record file took 65 s
    instead of 103 s. Raises what prepare_documents raises."""
    keys = [preparation_key(raw.sha256, encoding) for raw in raws]
    missing = [index for index, key in enumerate(keys) if not store.contains(key)]
    rows = dict(zip(missing, rows_in_two_processes([raws[index] for index in missing], worker=worker)))
    return [
        store.cached_folder(key, partial(prepare_documents, raw, rows.get(index)), load_prepared, save_prepared)
        for index, (raw, key) in enumerate(zip(raws, keys))
    ]


def prepare_in_two_processes(
    raw: RawCorpus, part_records: int = PART_RECORDS, min_records: int | None = None
) -> PreparedCorpus:
    """``prepare_documents(raw)``, the same result, its row-local part computed by :func:`rows_in_two_processes`."""
    return prepare_documents(raw, rows_in_two_processes([raw], part_records, min_records)[0])


def rows_in_two_processes(
    raws: list[RawCorpus],
    part_records: int = PART_RECORDS,
    min_records: int | None = None,
    worker: WorkerProcess | None = None,
) -> list[pd.DataFrame | None]:
    """pipeline.ingest.clean.record_rows of each of ``raws`` (the model texts, drop reasons, duplicate keys and
    languages: nearly all of cleaning's time), computed by this process and a worker process in parts of
    ``part_records`` records (pipeline.runtime.two_processes) when the files hold at least ``min_records`` records
    together (default PARALLEL_MIN_RECORDS); else None for each (prepare_documents computes them itself).
    ``worker``: a worker process already started (:func:`cleaning_worker`), else one is started here."""
    if sum(len(raw.records) for raw in raws) < (PARALLEL_MIN_RECORDS if min_records is None else min_records):
        return [None] * len(raws)
    owners, parts = [], []
    for index, raw in enumerate(raws):
        columns = raw.records[["title", "abstract"]]
        for start in range(0, len(columns), part_records):
            owners.append(index)
            parts.append((columns.iloc[start : start + part_records], raw.text_column))
    found: list[list[pd.DataFrame]] = [[] for _ in raws]
    for index, frame in zip(owners, map_in_two_processes(_part_rows, parts, worker)):
        found[index].append(frame)
    return [pd.concat(frames, ignore_index=True) if frames else None for frames in found]


# An input of at least this many bytes (its files together) gets its cleaning worker started before it is read
# (:func:`cleaning_worker`): PARALLEL_MIN_RECORDS records of ICLR 2025's Parquet file (600 bytes each) are 3 MB, and a
# text file holds fewer records per byte.
EARLY_WORKER_MIN_BYTES = 3_000_000


def cleaning_worker(paths: list[Path]) -> WorkerProcess | contextlib.nullcontext[None]:
    """The cleaning's worker process, started now and warmed (:func:`_warm_worker`) while the build imports its
    stages and reads the input, for input files (``paths``) of EARLY_WORKER_MIN_BYTES or more together; else a
    context holding None (a small input is cleaned in one process, or starts its worker when it is cleaned). Use it
    as a context manager around the cleaning. On the whole conference the worker then takes its first part about
    1 s sooner."""
    size = sum(path.stat().st_size for path in paths if path.is_file())
    return WorkerProcess(_warm_worker) if size >= EARLY_WORKER_MIN_BYTES else contextlib.nullcontext()


def _warm_worker() -> None:
    """What the worker's first part would otherwise wait for: the cleaners imported (this module) and the language
    classifier loaded."""
    from pipeline.ingest.language import detect_language

    detect_language("A text read once so that the language classifier is loaded before the first part arrives.")


def _part_rows(part: tuple[pd.DataFrame, str]) -> pd.DataFrame:
    """record_rows of one part (its records, the file's text column): what the worker process is sent."""
    return record_rows(*part)
