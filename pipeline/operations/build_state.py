"""What a build hands from stage to stage (pipeline.operations.build): the corpus read, cleaned and in canonical
order (:class:`PreparedInput`), and the clustering, topics and map fitted on it (:class:`Fitted`); what the build's
tables and manifest are assembled from (pipeline.operations.build_tables)."""

from __future__ import annotations

import shutil
import weakref
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import numpy as np
import pandas as pd

from pipeline.geometry.neighbors import Neighbours
from pipeline.ingest.clean import PreparedCorpus
from pipeline.ingest.corpus import RawCorpus
from pipeline.runtime.scratch import scratch_folder

if TYPE_CHECKING:
    from pipeline.topics.model import TopicFit

Value = TypeVar("Value")


@dataclass
class PreparedInput:
    """A corpus read, cleaned and put in the canonical order the build fits in.

    ``documents``, ``texts`` and ``doc_ids`` are in canonical order (pipeline.operations.build.canonical_order);
    ``order`` maps them back (``documents.iloc[np.argsort(order)]`` is the input order); ``warnings`` gathers what the
    manifest reports. ``raw`` holds only the records cleaning dropped (pipeline.ingest.clean.dropped_records: the kept
    ones are in ``documents``); ``input_records`` counts every record read, skipped ones included. ``aside``: the
    documents' columns kept on disk until the document table is made (the abstracts: :class:`ColumnsAside`); neither
    ``documents`` nor ``prepared.documents`` holds them meanwhile.
    """

    raw: RawCorpus
    prepared: PreparedCorpus
    documents: pd.DataFrame
    texts: list[str]
    doc_ids: list[str]
    order: np.ndarray
    warnings: list[str]
    input_records: int
    aside: ColumnsAside | None = None


# The columns a build sets aside after cleaning: the display abstracts, which nothing reads before the document table
# (the model reads ``text``). At 998,609 papers they were 1.5 GB of Python str held through every stage; 429 MiB at
# 285,717 (DataFrame.memory_usage(deep=True), docs/benchmarks.md).
SET_ASIDE_COLUMNS = ("abstract",)
# Rows read back at a time: the Arrow batch being turned into str objects is all that is held beside them.
READ_BACK_ROWS = 50_000


class ColumnsAside:
    """Columns of a frame kept in a Parquet file of a temporary folder of their own (in TMPDIR, made by
    pipeline.runtime.scratch, so that one left by a killed build goes with the next build's) while a build does not
    need them, and put back in their places by :meth:`put_back`. Arrow is given the file's path, never a Python file
    object (one it lets go of while the interpreter ends aborts the process: docs/testing.md). The folder is removed
    by :meth:`close`, when this object is collected, or when the process ends."""

    def __init__(self, frame: pd.DataFrame, columns: Sequence[str]) -> None:
        """Write ``frame``'s ``columns`` (those it has) to the file; the caller drops them from its frames.
        Raises OSError when the temporary folder cannot be written."""
        self.columns = [column for column in columns if column in frame.columns]
        self.positions = {column: frame.columns.get_loc(column) for column in self.columns}
        self.rows = len(frame)
        folder = scratch_folder("atlas-aside-")
        self._remove = weakref.finalize(self, shutil.rmtree, folder, ignore_errors=True)
        self.path = folder / "columns.parquet"
        # uncompressed: at 285,717 abstracts 0.6 s to write and 0.5 s to read back, against 2.0 and 1.6 s with snappy
        frame[self.columns].to_parquet(self.path, index=False, row_group_size=READ_BACK_ROWS, compression=None)

    def put_back(self, frame: pd.DataFrame) -> pd.DataFrame:
        """A copy of ``frame`` (the rows set aside, in their order) with the columns back where they were, their
        values as pandas reads them from Parquet (str objects, None where missing). Raises ValueError when ``frame``
        has another number of rows."""
        import pyarrow.parquet as pq

        if len(frame) != self.rows:
            raise ValueError(f"put_back: {len(frame)} rows for {self.rows} set aside")
        values: dict[str, list[Any]] = {column: [] for column in self.columns}
        # pre_buffer off: with it Arrow holds every row group read until the last (pipeline.runtime.streamed_texts)
        batches = pq.ParquetFile(str(self.path), pre_buffer=False).iter_batches(READ_BACK_ROWS, columns=self.columns)
        for batch in batches:
            for column in self.columns:
                values[column].extend(batch.column(column).to_pylist())
        output = frame.copy()
        for column in sorted(self.columns, key=self.positions.__getitem__):
            column_values = np.empty(self.rows, dtype=object)
            column_values[:] = values.pop(column)
            output.insert(self.positions[column], column, column_values)
        return output

    def close(self) -> None:
        """Remove the file and its folder."""
        self._remove()


def set_aside(corpus: PreparedInput, columns: Sequence[str] = SET_ASIDE_COLUMNS) -> PreparedInput:
    """``corpus`` with ``columns`` (those its documents have) kept in a :class:`ColumnsAside` and dropped from its
    documents in both orders, so that their values are no longer held; ``corpus`` itself when it has none of them.
    Raises OSError when the temporary folder cannot be written."""
    if not any(column in corpus.documents.columns for column in columns):
        return corpus
    aside = ColumnsAside(corpus.documents, columns)
    corpus.documents = corpus.documents.drop(columns=aside.columns)
    corpus.prepared.documents = corpus.prepared.documents.drop(columns=aside.columns)
    corpus.aside = aside
    return corpus


def documents_with_all_columns(corpus: PreparedInput) -> pd.DataFrame:
    """``corpus.documents`` (canonical order) with the columns set aside put back in their places."""
    return corpus.documents.copy() if corpus.aside is None else corpus.aside.put_back(corpus.documents)


@dataclass
class Fitted:
    """The clustering, the topics and the map of a build (pipeline.operations.build.fit_topics_and_map)."""

    cluster_labels: np.ndarray
    probabilities: np.ndarray
    fit: TopicFit
    hierarchy: pd.DataFrame
    per_class: pd.DataFrame | None
    coordinates: np.ndarray
    knn: Neighbours  # every document's neighbour lists (pipeline.geometry.neighbors)
    map_figures: Future[dict[str, float | None]] | None = None  # the map metrics, still measured in the map thread
    coherence_figures: dict[str, Any] | None = None  # the terms' metrics, measured while the map thread works


class Handover(Generic[Value]):
    """A value given to one taker, so that the giver's frame keeps no reference to it and the taker can let it go
    before the giver returns (the build's tokens: 242 MB at 285,717 papers, needed until the topics are made, held by
    the build's frame until its end before)."""

    def __init__(self, value: Value) -> None:
        self._value: Value | None = value

    def take(self) -> Value:
        """The value, once. Raises RuntimeError when it was already taken."""
        if self._value is None:
            raise RuntimeError("the value was already taken")
        value, self._value = self._value, None
        return value
