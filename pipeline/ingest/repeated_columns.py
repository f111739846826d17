"""Column names a file repeats exactly, read alike in every format: the first column of a name keeps it, the others
are numbered as pandas' CSV reader numbers them ("abstract", "abstract.1", "abstract.2").

pipeline.ingest.corpus.ignored_columns_warning then names the columns not read, so a file whose second "abstract"
holds the better texts is not built from the first silently. Before this module each format did its own thing
(2026-12-07's red team): CSV and Excel read the first, JSON and JSONL the last without a word, Parquet was refused
with Arrow's "Multiple matches for FieldRef.Name(abstract)", and the API's ``Atlas.add`` of a DataFrame with two
"abstract" columns raised pandas' "Duplicate column names found".
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

import pandas as pd


def numbered_repeats(names: Iterable[Any]) -> list[str]:
    """``names`` as strings, each repeat of an earlier name numbered: ["abstract", "abstract"] -> ["abstract",
    "abstract.1"]; a number already taken is passed over."""
    taken: set[str] = set()
    result = []
    for name in map(str, names):
        chosen, number = name, 0
        while chosen in taken:
            number += 1
            chosen = f"{name}.{number}"
        taken.add(chosen)
        result.append(chosen)
    return result


def first_of_repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's (key, value) pairs as a dict with repeated keys numbered (:func:`numbered_repeats`), for
    ``json.loads(..., object_pairs_hook=...)``: the standard decoder keeps a repeated key's last value."""
    return dict(zip(numbered_repeats(key for key, _ in pairs), (value for _, value in pairs)))


def with_numbered_repeats(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` itself when its column names are unique, else a shallow copy with the repeats numbered."""
    if frame.columns.is_unique:
        return frame
    renamed = frame.copy(deep=False)
    renamed.columns = numbered_repeats(frame.columns)
    return renamed


def read_parquet_input(path: str | os.PathLike[str]) -> pd.DataFrame:
    """A Parquet corpus file as a frame, its repeated column names numbered. Arrow's dataset reader (behind
    ``pyarrow.parquet.read_table``) refuses a schema that repeats a name, so such a file is read by the file reader.
    Raises what pyarrow raises for a missing or damaged file."""
    import pyarrow.parquet as pq

    from pipeline.runtime.parquet import read_frame

    names = pq.read_schema(path).names
    if len(set(names)) == len(names):
        return read_frame(path)
    return with_numbered_repeats(pq.ParquetFile(path).read(use_pandas_metadata=True).to_pandas())
