"""The API behind the command line (issue 39: each ``topic-atlas`` command is one call of ``topic_atlas.Atlas``):
build, open, label_topic, place_file, evaluate, add, replay and write_share on the seed atlas, through the real
build and cache."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

import topic_atlas as ta
from pipeline.cache import CacheError
from pipeline.runtime.errors import CorpusTooSmallError, InputError, TargetError
from tests.conftest import SEED


@pytest.fixture
def atlas_folder(seed_cache: Path, tmp_path: Path) -> Path:
    target = tmp_path / "atlas"
    shutil.copytree(seed_cache, target)
    return target


def new_papers(path: Path) -> Path:
    """Two abstracts of the seed file's own subjects, as a CSV file."""
    paragraphs = [part.strip() for part in SEED.read_text(encoding="utf-8").split("\n\n") if part.strip()]
    pd.DataFrame({"id": ["new-a", "new-b"], "abstract": [text + " Revisited." for text in paragraphs[1:3]]}).to_csv(
        path, index=False
    )
    return path


def test_build_returns_the_atlas_it_wrote_and_open_reads_it_when_first_used(tmp_path: Path, embedding_store: Path):
    atlas = ta.Atlas.build(SEED, tmp_path / "built", embedding_store=embedding_store, align=False)
    assert atlas.folder == (tmp_path / "built").resolve()
    assert atlas.manifest["n_documents"] == len(atlas.documents) == 19
    with pytest.raises(InputError, match="not both"):
        ta.Atlas.build([SEED], tmp_path / "other", collections=tmp_path / "c.toml")
    missing = ta.Atlas.open(tmp_path / "missing")  # nothing read yet
    assert repr(missing) == f"Atlas({str(tmp_path / 'missing')!r}, not read yet)"
    with pytest.raises(CacheError):
        assert missing.topics.empty


def test_label_topic_and_the_edits_are_read_back_and_a_log_replays(atlas_folder: Path, tmp_path: Path):
    atlas = ta.Atlas.open(atlas_folder)
    topic = int(atlas.topics.query("topic >= 0")["topic"].iloc[0])
    assert atlas.label_topic(topic, "Chosen by hand")[str(topic)]["label"] == "Chosen by hand"
    assert atlas.topics.set_index("topic").loc[topic, "label"] == "Chosen by hand"
    atlas.label_topic(topic, None)
    assert atlas.manifest["label_overrides"] == {}
    other = tmp_path / "other"
    shutil.copytree(atlas_folder, other)  # before the edit
    entry = atlas.rename("topic", topic, "Edited")
    assert entry["id"] == 1 and atlas.topics.set_index("topic").loc[topic, "label"] == "Edited"
    reports = ta.Atlas.open(other).replay(atlas_folder / "edits.jsonl")
    assert [report["status"] for report in reports] == ["applied"]
    with pytest.raises(InputError, match="no such file"):
        ta.Atlas.open(other).replay(tmp_path / "none.jsonl")


def test_place_file_writes_the_table_and_evaluate_writes_the_metrics(atlas_folder: Path, tmp_path: Path):
    atlas = ta.Atlas.open(atlas_folder)
    new = new_papers(tmp_path / "new.csv")
    for out in (tmp_path / "placed.txt", atlas_folder / "placed.csv"):
        with pytest.raises(TargetError):
            atlas.place_file(new, out)
    placed = atlas.place_file(new, tmp_path / "placed.csv")
    written = pd.read_csv(tmp_path / "placed.csv")
    assert list(written["doc_id"]) == list(placed["doc_id"]) == ["new-a", "new-b"]
    metrics = atlas.evaluate()
    assert json.loads((atlas_folder / "metrics.json").read_text(encoding="utf-8")) == metrics
    assert atlas.metrics == metrics  # what evaluate found, not the build's, until the atlas changes again
    assert 0 < metrics["topic_diversity"] <= 1


def test_add_grows_the_atlas_and_write_share_says_what_it_wrote(atlas_folder: Path, tmp_path: Path):
    atlas = ta.Atlas.open(atlas_folder)
    with pytest.raises(InputError, match=r"^give data \(a DataFrame, texts or a file\) and/or collections$"):
        atlas.add()
    result = atlas.add(new_papers(tmp_path / "new.csv"))
    assert result.report["n_added"] == 2 and result.cache_dir == atlas_folder.resolve()
    assert atlas.manifest["n_documents"] == len(atlas.documents) == 21
    shared = atlas.write_share(tmp_path / "atlas.html")
    assert shared.path.is_file() and shared.papers == 21 and shared.bytes == shared.path.stat().st_size


def test_add_takes_a_dataframe_as_fit_does(atlas_folder: Path, tmp_path: Path):
    """``atlas.add(frame)``: the papers of a DataFrame join without a file, ids and all."""
    atlas = ta.Atlas.load(ta.Atlas.load(atlas_folder).save(tmp_path / "copy"))
    before = len(atlas.documents)
    frame = pd.read_csv(new_papers(tmp_path / "new.csv")).assign(id=["frame-a", "frame-b"])
    result = atlas.add(frame)
    assert result.report["n_added"] == 2
    assert {"frame-a", "frame-b"} <= set(atlas.documents["doc_id"]) and len(atlas.documents) == before + 2
    with pytest.raises(CorpusTooSmallError, match="^the DataFrame: no new papers to add") as raised:
        atlas.add(frame)  # already there
    assert "topic-atlas-added" not in str(raised.value)
    with pytest.raises(ValueError, match="^the DataFrame: no abstract or title column"):
        atlas.add(pd.DataFrame({"words": ["a paper"]}))
