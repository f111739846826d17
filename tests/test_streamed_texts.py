"""pipeline.runtime.streamed_texts: texts written to a file and read back in batches, as the phrase counts' child
process reads them."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.runtime import streamed_texts
from pipeline.runtime.streamed_texts import StreamedTexts, write_texts


def test_each_pass_reads_every_text_in_order_across_batches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(streamed_texts, "BATCH_ROWS", 3)  # several row groups and batches from eight rows
    texts = [f"Abstract {number}: graph neural networks ü 漢字" for number in range(8)]
    titles = [f"Title {number}" for number in range(8)]
    path = tmp_path / "texts.parquet"
    write_texts(path, {"text": texts, "title": titles})
    streamed = StreamedTexts(path, "text")
    assert len(streamed) == 8
    assert list(streamed) == texts and list(streamed) == texts  # read again from the file on each pass
    assert list(StreamedTexts(path, "title")) == titles
    write_texts(tmp_path / "empty.parquet", {"text": []})
    assert len(StreamedTexts(tmp_path / "empty.parquet", "text")) == 0


def test_columns_of_other_lengths_are_refused(tmp_path: Path):
    with pytest.raises(ValueError, match="columns of"):
        write_texts(tmp_path / "texts.parquet", {"text": ["a", "b"], "title": ["a"]})


def test_a_pass_holds_a_few_batches_in_arrows_pool_not_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Read with Arrow's pre-buffering, a pass kept every row group it had read in Arrow's memory pool until its end
    (the whole file: 1.1 GB at a million papers). At its last text the pool must hold a few batches, not the file."""
    import pyarrow as pa

    monkeypatch.setattr(streamed_texts, "BATCH_ROWS", 100)
    texts = [f"{number} " + "graph neural networks and attention " * 30 for number in range(4_000)]
    path = tmp_path / "texts.parquet"
    write_texts(path, {"text": texts})
    batch_bytes = sum(map(len, texts[:100]))
    before = pa.total_allocated_bytes()  # what the process's other Arrow buffers hold
    held = []
    for number, _ in enumerate(StreamedTexts(path, "text")):
        if number == len(texts) - 1:
            held.append(pa.total_allocated_bytes() - before)
    assert held and held[0] < 5 * batch_bytes, (held, batch_bytes)
