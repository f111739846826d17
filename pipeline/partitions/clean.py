"""The row-local part of cleaning over row partitions: each record's drop reason, model text, duplicate key and
language (pipeline.ingest.clean.record_rows), one Dask task per partition of records.

What one record needs is that record alone: its deciding text (the abstract, or the title in a titles-only file)
cleaned (``model_text``) and checked (empty, a placeholder, no words: the clean module's ``_drop_reason``), its
other text cleaned, both joined ("title. abstract"), the key under which copies collide (``duplicate_key``) and its
language (py3langid, on the joined text). That is nearly all of the clean stage's time (269 s of a 290k-row file on
two busy cores). What needs every record stays on the driver and comes after, in record order: which copy of a
text is kept (the first), the counts, the copies' table and the corpus-wide warnings (pipeline.ingest.clean
.prepare_documents); :func:`kept_rows` is that first-copy rule over the partitions' rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from pipeline.ingest.clean import ROW_COLUMNS, record_rows
from pipeline.partitions.cluster import DEFAULT_PARTITION_ROWS, partition_bounds, send


def clean_partition(records: pd.DataFrame, text_column: str) -> pd.DataFrame:
    """One task: pipeline.ingest.clean.record_rows of ``records`` (columns ``title`` and ``abstract``, any index):
    its ROW_COLUMNS row for row. ``text_column``: "abstract" or "title" (RawCorpus.text_column)."""
    return record_rows(records, text_column)


def clean_rows_partitioned(
    client: Any, records: pd.DataFrame, text_column: str, partition_rows: int = DEFAULT_PARTITION_ROWS
) -> pd.DataFrame:
    """:func:`clean_partition` of every record, one Dask task per ``partition_rows`` records (only the ``title`` and
    ``abstract`` columns travel). ``records``: RawCorpus.records (file order). Returns ROW_COLUMNS, one row per
    record in order, index 0..n-1."""
    bounds = partition_bounds(len(records), partition_rows)
    if not bounds:
        return pd.DataFrame({column: pd.Series(dtype=object) for column in ROW_COLUMNS})
    columns = records[["title", "abstract"]]
    parts = send(client, [columns.iloc[start:stop] for start, stop in bounds])
    frames = client.gather(client.map(clean_partition, parts, [text_column] * len(parts), pure=False))
    return pd.concat(frames, ignore_index=True)


def kept_rows(rows: pd.DataFrame) -> np.ndarray:
    """On the driver: the positions (int64, ascending) of the records that become documents: no drop reason, and
    the first record of their duplicate key (prepare_documents' rule: a later copy is set apart)."""
    usable = rows["reason"].isna().to_numpy()
    first = ~rows["key"].where(usable).duplicated().to_numpy()
    return np.flatnonzero(usable & first).astype(np.int64)
