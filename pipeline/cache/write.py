"""Writing a cache's tables (:func:`write_tables`: the Parquet tables, the embeddings, the manifest last) into a
staging folder (pipeline.cache.publish), and :func:`carry_over` of what a rewrite leaves as it was."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.cache.manifest import Manifest
from pipeline.schema import (
    CACHE_KIND,
    CANDIDATE_COLUMNS,
    CANDIDATES_FILE,
    COPIES_FILE,
    COPY_COLUMNS,
    DOCUMENT_COLUMNS,
    DOCUMENTS_FILE,
    DROPPED_COLUMNS,
    DROPPED_FILE,
    EMBEDDINGS_FILE,
    HIERARCHY_COLUMNS,
    HIERARCHY_FILE,
    JOURNEY_COLUMNS,
    JOURNEYS_FILE,
    LINEAGE_COLUMNS,
    LINEAGE_FILE,
    MANIFEST_FILE,
    MANIFEST_KEYS,
    SCHEMA_VERSION,
    SUBTOPIC_COLUMNS,
    SUBTOPICS_FILE,
    TOPIC_COLUMNS,
    TOPICS_FILE,
    TOPICS_PER_CLASS_FILE,
)


def _json_default(value: Any) -> Any:
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"cannot write {type(value).__name__} to JSON")


# Rows per Parquet row group of a large documents table (write_parquet_in_parts).
PART_ROWS = 50_000


def write_parquet_in_parts(table: pd.DataFrame, path: Path, part_rows: int = PART_ROWS) -> None:
    """``table.to_parquet(path, index=False)``, a row group of ``part_rows`` rows at a time above that many rows: only
    one part is held as Arrow (the whole table's Arrow copy was 0.6 GB at 285,717 papers). The parts' schemas are
    unified first (a column that is empty in one part, e.g. all None, takes the others' type), so the file reads as
    the whole table written at once would. Raises what pyarrow raises for a column it cannot store."""
    if len(table) <= part_rows:
        table.to_parquet(path, index=False)
        return
    starts = range(0, len(table), part_rows)
    schemas = [pa.Schema.from_pandas(table.iloc[start : start + part_rows], preserve_index=False) for start in starts]
    schema = pa.unify_schemas(schemas).with_metadata(schemas[0].metadata)
    with pq.ParquetWriter(path, schema) as writer:
        for start in starts:
            part = table.iloc[start : start + part_rows]
            writer.write_table(pa.Table.from_pandas(part, schema=schema, preserve_index=False))


def write_tables(
    folder: Path,
    manifest: Manifest,
    documents: pd.DataFrame,
    topics: pd.DataFrame,
    hierarchy: pd.DataFrame,
    embeddings: np.ndarray,
    topics_per_class: pd.DataFrame | None = None,
    lineage: pd.DataFrame | None = None,
    copies: pd.DataFrame | None = None,
    journeys: pd.DataFrame | None = None,
    candidates: pd.DataFrame | None = None,
    subtopics: pd.DataFrame | None = None,
    dropped: pd.DataFrame | None = None,
) -> None:
    """Write the cache files into ``folder`` (normally the staging folder of :func:`staged_cache`).

    ``topics_per_class``, ``lineage`` (LINEAGE_COLUMNS), ``copies`` (COPY_COLUMNS first), ``journeys``
    (JOURNEY_COLUMNS), ``candidates`` (CANDIDATE_COLUMNS), ``subtopics`` (SUBTOPIC_COLUMNS) and ``dropped``
    (DROPPED_COLUMNS first: pipeline.ingest.clean.dropped_table) are written only when given and not empty.

    ``manifest`` (pipeline.cache.manifest.Manifest) must hold MANIFEST_KEYS; ``kind`` and ``schema_version`` are
    put first here (CACHE_KIND and SCHEMA_VERSION where it lacks them).
    ``embeddings`` is float32, n_documents x dim. The manifest is written last, so a folder without one is partial.

    Raises ValueError when a table lacks a required column or the row counts disagree.
    """
    for name, table, required in (
        (DOCUMENTS_FILE, documents, DOCUMENT_COLUMNS),
        (TOPICS_FILE, topics, TOPIC_COLUMNS),
        (HIERARCHY_FILE, hierarchy, HIERARCHY_COLUMNS),
    ):
        missing = [column for column in required if column not in table.columns]
        if missing:
            raise ValueError(f"{name} lacks columns {missing}")
    if embeddings.shape[0] != len(documents):
        raise ValueError(f"{embeddings.shape[0]} embeddings for {len(documents)} documents")
    write_parquet_in_parts(documents, folder / DOCUMENTS_FILE)
    # Parquet lists hold one type: [term, weight] pairs are stored as structs and turned back into pairs on read.
    topics = topics.assign(top_terms=_term_structs(topics["top_terms"]))
    topics.to_parquet(folder / TOPICS_FILE, index=False)
    hierarchy.to_parquet(folder / HIERARCHY_FILE, index=False)
    if topics_per_class is not None and not topics_per_class.empty:
        topics_per_class.to_parquet(folder / TOPICS_PER_CLASS_FILE, index=False)
    if lineage is not None and not lineage.empty:
        lineage[LINEAGE_COLUMNS].astype({"previous_topic": "Int64", "topic": "Int64"}).to_parquet(
            folder / LINEAGE_FILE, index=False
        )
    if copies is not None and not copies.empty:
        missing = [column for column in COPY_COLUMNS if column not in copies.columns]
        if missing:
            raise ValueError(f"{COPIES_FILE} lacks columns {missing}")
        copies.to_parquet(folder / COPIES_FILE, index=False)
    if journeys is not None and not journeys.empty:
        missing = [column for column in JOURNEY_COLUMNS if column not in journeys.columns]
        if missing:
            raise ValueError(f"{JOURNEYS_FILE} lacks columns {missing}")
        journeys.to_parquet(folder / JOURNEYS_FILE, index=False)
    if candidates is not None and not candidates.empty:
        missing = [column for column in CANDIDATE_COLUMNS if column not in candidates.columns]
        if missing:
            raise ValueError(f"{CANDIDATES_FILE} lacks columns {missing}")
        candidates.assign(top_terms=_term_structs(candidates["top_terms"])).to_parquet(
            folder / CANDIDATES_FILE, index=False
        )
    if subtopics is not None and not subtopics.empty:
        missing = [column for column in SUBTOPIC_COLUMNS if column not in subtopics.columns]
        if missing:
            raise ValueError(f"{SUBTOPICS_FILE} lacks columns {missing}")
        subtopics[SUBTOPIC_COLUMNS].to_parquet(folder / SUBTOPICS_FILE, index=False)
    if dropped is not None and not dropped.empty:
        missing = [column for column in DROPPED_COLUMNS if column not in dropped.columns]
        if missing:
            raise ValueError(f"{DROPPED_FILE} lacks columns {missing}")
        dropped.to_parquet(folder / DROPPED_FILE, index=False)
    np.save(folder / EMBEDDINGS_FILE, embeddings.astype(np.float32, copy=False), allow_pickle=False)
    full_manifest: Manifest = {"kind": CACHE_KIND, "schema_version": SCHEMA_VERSION, **manifest}
    missing_keys = [key for key in MANIFEST_KEYS if key not in full_manifest]
    if missing_keys:
        raise ValueError(f"manifest lacks {missing_keys}")  # timings_s: NotRequired in the type, required here
    (folder / MANIFEST_FILE).write_text(json.dumps(full_manifest, indent=2, default=_json_default), encoding="utf-8")


def _term_structs(pairs_per_row: Any) -> list[list[dict[str, Any]]]:
    """[term, weight] pairs as Parquet structs (a Parquet list holds one type); read back as pairs."""
    return [[{"term": str(term), "weight": float(weight)} for term, weight in pairs] for pairs in pairs_per_row]


def carry_over(source: Path, staging: Path, skip: tuple[str, ...] = ()) -> list[str]:
    """Copy into ``staging`` every file and folder of the cache ``source`` that ``staging`` does not hold yet
    (the model, files other stages or later versions add), so rewriting some tables loses nothing else;
    names in ``skip`` (files made stale by the rewrite) are left behind.

    Returns the names copied.
    """
    copied = []
    for entry in sorted(Path(source).iterdir()):
        target = staging / entry.name
        if target.exists() or entry.name.startswith(".") or entry.name in skip:
            continue
        if entry.is_dir():
            shutil.copytree(entry, target)
        else:
            shutil.copy2(entry, target)
        copied.append(entry.name)
    return copied
