"""Find and place: semantic search and placing new papers on a built map, with the real encoder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline import cache
from pipeline.operations.place import embed_queries, place_file, semantic_search
from tests.conftest import ROOT, SEED


def test_seed_abstracts_are_placed_and_the_known_paper_finds_itself(slice_cache: Path, encoder):
    """The one seed abstract that is in the corpus lands in its copy's topic, at its position, nearest to it."""
    topic_cache = cache.read_cache(slice_cache)
    before = {path.name: path.stat().st_mtime_ns for path in slice_cache.iterdir()}
    placed = place_file(slice_cache, SEED, encoder=encoder)
    assert len(placed) == 19
    assert placed["topic"].isin(topic_cache.topics["topic"]).all()
    assert np.isfinite(placed[["x", "y"]].to_numpy()).all()
    assert all(len(ids) == 10 for ids in placed["neighbor_ids"])
    known = placed[placed["same_as"].notna()]
    assert len(known) == 1
    row = known.iloc[0]
    copy = topic_cache.documents.set_index("doc_id").loc[row["same_as"]]
    assert row["neighbor_ids"][0] == row["same_as"]
    assert row["topic"] == copy["topic"]
    assert abs(row["x"] - copy["x"]) < 1e-6 and abs(row["y"] - copy["y"]) < 1e-6
    assert {path.name: path.stat().st_mtime_ns for path in slice_cache.iterdir()} == before


def test_new_paper_is_placed_among_its_neighbours(slice_cache: Path, encoder):
    topic_cache = cache.read_cache(slice_cache)
    documents = topic_cache.documents
    placed = place_file(slice_cache, SEED, encoder=encoder)
    unknown = placed[placed["same_as"].isna()].iloc[0]
    neighbours = documents.set_index("doc_id").loc[unknown["neighbor_ids"]]
    assert neighbours["x"].min() <= unknown["x"] <= neighbours["x"].max()
    assert neighbours["y"].min() <= unknown["y"] <= neighbours["y"].max()


def test_search_by_exact_title_returns_that_paper_first(slice_cache: Path, encoder):
    topic_cache = cache.read_cache(slice_cache)
    for title in topic_cache.documents["title"].iloc[[0, 57, 200]]:
        query = embed_queries([title], topic_cache, encoder=encoder)[0]
        hits = semantic_search(topic_cache, query, k=5)
        assert hits.iloc[0]["title"] == title
        assert list(hits["score"]) == sorted(hits["score"], reverse=True)


def test_search_finds_papers_by_meaning(slice_cache: Path, encoder):
    topic_cache = cache.read_cache(slice_cache)
    query = embed_queries(
        ["robustness of reinforcement learning agents to distribution shift"], topic_cache, encoder=encoder
    )[0]
    hits = semantic_search(topic_cache, query, k=10)
    text = " ".join((hits["title"] + " " + hits["abstract"]).str.lower())
    assert "reinforcement" in text or "policy" in text or "agent" in text


def test_place_command_writes_parquet(slice_cache: Path, embedding_store: Path, tmp_path: Path):
    out = tmp_path / "placed.parquet"
    env = {**os.environ, "ATLAS_EMBEDDING_CACHE": str(embedding_store), "HF_HUB_OFFLINE": "1"}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pipeline",
            "place",
            "--cache",
            str(slice_cache),
            "--input",
            str(SEED),
            "--out",
            str(out),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    placed = pd.read_parquet(out)
    assert len(placed) == 19 and {"topic", "topic_label", "probability", "x", "y", "neighbor_ids"} <= set(
        placed.columns
    )
