"""Reading a Parquet file into a pandas frame by its path, never through a Python file object.

``pandas.read_parquet(path)`` opens a local path with Python's ``open`` and gives Arrow the Python file. Arrow's I/O
threads read it ahead (``pre_buffer``) and may drop their last reference to it after the read returns, which needs
the GIL; when that falls in the interpreter's finalization, CPython ends the thread and the C++ runtime aborts the
process ("terminate called without an active exception", exit -6 or 134) after all its work is done: the known
teardown crash of apache/arrow#34314. Measured on this project's 2-core machine with pandas 2.3.3 and pyarrow 26.0.1,
a process reading an atlas' two tables, 4 processes at a time: through ``pandas.read_parquet`` some runs in a hundred
abort; through :func:`read_frame` none (``python -m bench.exit_aborts --cache DIR`` prints the table).

So every read in the project goes through :func:`read_frame`: Arrow opens the file itself and no Python object
crosses its threads. ``tests/test_parquet_reads.py`` keeps ``pandas.read_parquet`` out of the tree.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq


def read_frame(source: str | os.PathLike[str] | bytes, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """The Parquet file at ``source`` (a path, or the file's bytes) as a frame of its rows; ``columns``: only these.

    The frame is what ``pandas.read_parquet`` gives (the pandas metadata restores the index and dtypes). Raises what
    pyarrow raises for a missing or damaged file (``FileNotFoundError``, ``pyarrow.ArrowInvalid``, ...); callers that
    face users turn it into their one-line error.
    """
    where = pa.BufferReader(source) if isinstance(source, bytes) else os.fspath(source)
    selected = list(columns) if columns is not None else None
    return pq.read_table(where, columns=selected, use_pandas_metadata=True).to_pandas()
