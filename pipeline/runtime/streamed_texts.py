"""Texts handed to another process through a file and read back a batch at a time, never held whole.

The phrase counts' child process (pipeline.topics.naming.stored) reads the corpus's texts and titles four times over
(abbreviations, their ordinary uses, the n-gram index, the short forms' shares), each time in order. Handed to it as
Python lists, they were pickled by multiprocessing into one buffer in the build's process before the child started:
at a million papers 1.4 GB more at that process's peak while doing so, and 9.4 s of its main path (3.8 s through a
file; docs/benchmarks.md, "The phrase counts' texts through a file"). Read back :data:`BATCH_ROWS` at a time, a pass
holds one batch. Arrow is given the file's path, never a Python file object (docs/testing.md), and reads it without
``pre_buffer``: with it, a pass kept every row group it had read in Arrow's memory pool until its end, the whole
file (1.1 GB at a million papers; docs/benchmarks.md, "A million papers in 13.7 GB").
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

# Rows per Parquet row group written, and per batch read back: about 60 MB of abstracts.
BATCH_ROWS = 50_000


def write_texts(path: Path, columns: Mapping[str, Sequence[str]]) -> None:
    """Write ``columns`` ({name: one str per row}, all of one length) to the Parquet file ``path``, uncompressed, a
    row group of BATCH_ROWS rows at a time (so no Arrow copy of a whole column is made). Raises ValueError when the
    columns differ in length, OSError when the file cannot be written."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    lengths = {len(values) for values in columns.values()}
    if len(lengths) > 1:
        raise ValueError(f"write_texts: columns of {sorted(lengths)} rows")
    rows = lengths.pop() if lengths else 0
    schema = pa.schema([(name, pa.string()) for name in columns])
    with pq.ParquetWriter(str(path), schema, compression="none") as writer:
        for start in range(0, max(rows, 1), BATCH_ROWS):
            stop = start + BATCH_ROWS
            batch = {name: pa.array(values[start:stop], pa.string()) for name, values in columns.items()}
            writer.write_table(pa.table(batch, schema=schema), row_group_size=BATCH_ROWS)


class StreamedTexts:
    """One column of a file :func:`write_texts` wrote: ``len()`` its rows, and each iteration reads it again from the
    file, BATCH_ROWS rows at a time, yielding str ("" for a missing value)."""

    def __init__(self, path: Path | str, column: str) -> None:
        import pyarrow.parquet as pq

        self.path, self.column = str(path), column
        self.rows = pq.ParquetFile(self.path).metadata.num_rows

    def __len__(self) -> int:
        return self.rows

    def __iter__(self) -> Iterator[str]:
        import pyarrow.parquet as pq

        for batch in pq.ParquetFile(self.path, pre_buffer=False).iter_batches(BATCH_ROWS, columns=[self.column]):
            for value in batch.column(0).to_pylist():
                yield "" if value is None else value
