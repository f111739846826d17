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
