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

import json
import logging
import os
import shutil
import tempfile
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd

from pipeline.ingest.clean import PreparedCorpus, prepare_documents, record_rows
from pipeline.ingest.corpus import RawCorpus
from pipeline.runtime.two_processes import map_in_two_processes
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
        documents = pd.read_parquet(folder / "documents.parquet")
        copies = pd.read_parquet(folder / "copies.parquet") if (folder / "copies.parquet").is_file() else pd.DataFrame()
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
    store: StageStore, raw: RawCorpus, encoding: str | None, two_processes: bool = True
) -> PreparedCorpus:
    """``prepare_documents(raw)`` (pipeline.ingest.clean), or the stored result of an earlier identical cleaning.

    ``store``: the build's layout store (a NullStore keeps nothing); the hit or miss is in ``store.hits["prepared"]``.
    ``raw``: the corpus as read (``raw.sha256`` is the file's), ``encoding``: the encoding asked for (None = UTF-8).
    ``two_processes``: clean a large file's records in this process and a worker (:func:`prepare_in_two_processes`);
    False where another worker already cleans beside this process. Raises what prepare_documents raises."""
    clean = prepare_in_two_processes if two_processes else prepare_documents
    return store.cached_folder(preparation_key(raw.sha256, encoding), lambda: clean(raw), load_prepared, save_prepared)


# A second process cleans only when there are at least this many records to clean: starting it (a fresh interpreter
# importing pandas, the cleaners and the language model) costs about 1.5 s.
PARALLEL_MIN_RECORDS = 5_000
# Records per part of the row-local cleaning shared with the worker: about 0.4 s of work on this project's 2-core
# Intel Xeon, so neither process waits for the other by more than that.
PART_RECORDS = 1_000


def prepare_in_two_processes(
    raw: RawCorpus, part_records: int = PART_RECORDS, min_records: int = PARALLEL_MIN_RECORDS
) -> PreparedCorpus:
    """``prepare_documents(raw)``, the same result, with its row-local part (pipeline.ingest.clean.record_rows: the
    model texts, drop reasons, duplicate keys and languages, nearly all of its time) shared by this process and a
    worker process in parts of ``part_records`` records (pipeline.runtime.two_processes) when ``raw`` holds at least
    ``min_records``; what needs every record (the first copy kept, counts, warnings) then runs here. Raises what
    prepare_documents raises."""
    records = raw.records
    if len(records) < min_records:
        return prepare_documents(raw)
    columns = records[["title", "abstract"]]
    parts = [columns.iloc[start : start + part_records] for start in range(0, len(records), part_records)]
    frames = map_in_two_processes(partial(record_rows, text_column=raw.text_column), parts)
    return prepare_documents(raw, pd.concat(frames, ignore_index=True))


def cached_preparations(store: StageStore, raws: list[RawCorpus], encoding: str | None) -> list[PreparedCorpus]:
    """:func:`cached_preparation` of each of ``raws`` (the collections of one atlas, in order), the ones the store
    lacks cleaned by two processes: this one and one ``spawn`` worker, each given about half of the records (the
    largest collections first, each to the side with fewer so far). Cleaning is a pure function of the records
    (pipeline.ingest.clean.prepare_documents), so where it runs changes nothing in the result; on the six
    collections (49,805 papers) it took 23.5 s in one process. A collection the worker failed to clean (its
    process died, or cleaning raised) is cleaned again here, so an error is raised here as in a one-process build.
    """
    from concurrent.futures import Future, ProcessPoolExecutor
    from multiprocessing import get_context

    missing = [index for index, raw in enumerate(raws) if not store.contains(preparation_key(raw.sha256, encoding))]
    if len(missing) < 2 or sum(len(raws[index].records) for index in missing) < PARALLEL_MIN_RECORDS:
        return [cached_preparation(store, raw, encoding) for raw in raws]
    here, there = 0, 0
    to_worker: list[int] = []
    for index in sorted(missing, key=lambda index: -len(raws[index].records)):
        size = len(raws[index].records)
        if there < here:
            to_worker.append(index)
            there += size
        else:
            here += size
    prepared: dict[int, PreparedCorpus] = {}
    with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as worker:
        futures: dict[int, Future[PreparedCorpus]] = {
            index: worker.submit(prepare_documents, raws[index]) for index in to_worker
        }
        for index, raw in enumerate(raws):  # this process's share first, while the worker cleans its own
            if index not in futures:
                prepared[index] = cached_preparation(store, raw, encoding, two_processes=False)
        for index, future in futures.items():
            key = preparation_key(raws[index].sha256, encoding)
            prepared[index] = store.cached_folder(key, _from_worker(future, raws[index]), load_prepared, save_prepared)
    return [prepared[index] for index in range(len(raws))]


def _from_worker(future: Any, raw: RawCorpus) -> Callable[[], PreparedCorpus]:
    """The worker's cleaning of ``raw`` when it succeeded, else ``raw`` cleaned in this process (logged)."""

    def result() -> PreparedCorpus:
        try:
            return future.result()
        except Exception as error:  # the worker died or cleaning raised: clean here, where an error is raised as usual
            log.info("cleaning %s in the build's process: its worker gave %s", raw.path.name, type(error).__name__)
            return prepare_documents(raw)

    return result
