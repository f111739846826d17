"""Fuzz the loader: random small tables and texts either load as a valid corpus or raise our InputError."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.ingest.clean import prepare_documents
from pipeline.ingest.corpus import load_corpus
from pipeline.runtime.errors import InputError

COLUMN_NAMES = st.sampled_from(
    ["abstract", "Title", "\ufeffabstract", "id", "keywords", "decision", "text", "x", "", " title ", "Abstract"]
)
CELLS = st.one_of(
    st.none(), st.text(max_size=40), st.integers(), st.floats(allow_nan=True), st.lists(st.text(max_size=8), max_size=3)
)
RECORDS = st.lists(st.dictionaries(COLUMN_NAMES, CELLS, max_size=5), max_size=6)
FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check(path: Path) -> None:
    """Loading must give a usable corpus or our own error, never another exception."""
    try:
        corpus = load_corpus(path)
    except InputError:
        return
    prepared = prepare_documents(corpus)
    documents = prepared.documents
    assert documents["doc_id"].is_unique
    assert all(isinstance(text, str) and text for text in documents["text"])
    assert len(documents) + sum(prepared.dropped.values()) == len(corpus.records) + sum(corpus.skipped.values())


@FUZZ
@given(records=RECORDS, suffix=st.sampled_from([".json", ".jsonl", ".csv", ".tsv", ".parquet"]))
def test_random_tables(records: list[dict], suffix: str):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"corpus{suffix}"
        if suffix == ".json":
            path.write_text(json.dumps(records), encoding="utf-8")
        elif suffix == ".jsonl":
            path.write_text("\n".join(json.dumps(record) for record in records), encoding="utf-8")
        else:
            frame = pd.DataFrame.from_records(records) if records else pd.DataFrame()
            frame = frame.map(lambda value: json.dumps(value) if isinstance(value, list) else value)
            try:
                if suffix == ".parquet":
                    frame.astype(str).to_parquet(path)
                else:
                    frame.to_csv(path, index=False, sep="\t" if suffix == ".tsv" else ",")
            except (ValueError, TypeError):
                return  # pandas itself cannot write this table; nothing to load
        check(path)


@FUZZ
@given(
    text=st.text(max_size=300),
    encoding=st.sampled_from(["utf-8", "utf-16", "latin-1"]),
    suffix=st.sampled_from([".txt", ".csv", ".json", ".jsonl"]),
)
def test_random_bytes_and_text(text: str, encoding: str, suffix: str):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"corpus{suffix}"
        path.write_bytes(text.encode(encoding, errors="replace"))
        check(path)
