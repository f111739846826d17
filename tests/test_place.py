"""Find and place: semantic search and placing new papers on a built map, with the real encoder."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline import cache
from pipeline.operations.place import embed_queries, place_file, semantic_search
from pipeline.runtime.parquet import read_frame
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
            "topic_atlas",
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
    placed = read_frame(out)
    assert len(placed) == 19 and {"topic", "topic_label", "probability", "x", "y", "neighbor_ids"} <= set(
        placed.columns
    )


UNRELATED = [
    "Patients with type 2 diabetes were randomised to metformin or placebo across twelve hospital wards; glycated "
    "haemoglobin, hospital readmissions and adverse events were recorded over eighteen months of follow-up.",
    "Slow-braised lamb shoulder with rosemary, garlic and white beans: the recipe serves six, takes four hours in a "
    "low oven, and the sauce is reduced with red wine before serving.",
]


def doc_id_named(line: str, doc_ids: pd.Index) -> bool:
    """Whether ``line`` names one of ``doc_ids`` as a word of its own."""
    return any(re.search(rf"(?<![\w-]){re.escape(str(doc_id))}(?![\w-])", line) for doc_id in doc_ids)


def test_place_says_when_a_paper_fits_no_topic_with_its_similarity(slice_cache: Path, embedding_store, tmp_path):
    """An unrelated abstract (a recipe) placed on 300 ICLR papers fits no topic; real ICLR abstracts fit. The command
    says so once per paper, with the similarity it found, and prints no library noise. (A clinical trial still fits
    a topic of this 300-paper atlas; on the whole conference bench/place_fit.py finds 19 of 24 unrelated abstracts
    and 3 of 500 ICLR 2026 papers fitting no topic.)"""
    paragraphs = [p.strip() for p in SEED.read_text(encoding="utf-8").split("\n\n")[1:] if p.strip()][:3]
    records = [{"id": f"iclr{i}", "abstract": text} for i, text in enumerate(paragraphs)]
    records += [{"id": f"off{i}", "abstract": text} for i, text in enumerate(UNRELATED)]
    path = tmp_path / "mixed.jsonl"
    pd.DataFrame(records).to_json(path, orient="records", lines=True)
    out = tmp_path / "placed.parquet"
    env = {**os.environ, "ATLAS_EMBEDDING_CACHE": str(embedding_store), "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, "-m", "topic_atlas", "place", "--cache", str(slice_cache), "--input", str(path)]
    result = subprocess.run(
        [*command, "--out", str(out)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    placed = read_frame(out).set_index("doc_id")
    assert not placed.at["off1", "fits"] and placed.at["off1", "topic"] == -1
    assert placed.at["off1", "topic_label"] == "fits no topic"
    assert placed.loc[["iclr0", "iclr1", "iclr2"], "fits"].all()
    assert (placed.loc[["iclr0", "iclr1", "iclr2"], "topic"] != -1).all()
    for doc_id in placed.index[~placed["fits"]]:
        line = next(line for line in result.stdout.splitlines() if f"{doc_id} fits no topic" in line)
        assert f"{placed.at[doc_id, 'topic_similarity']:.2f}" in line
    output = result.stdout + result.stderr
    assert "placed 5 documents" in output
    assert "it/s" not in output and "Token indices" not in output and "Traceback" not in output
    # A message printed twice, as by a logger and the console both (hence the prefix cut): every line once. A line
    # about one paper names it, so two papers' lines differ even when their similarities are equal.
    lines = [line if doc_id_named(line, placed.index) else line.split(": ", 1)[-1] for line in output.splitlines()]
    lines = [line for line in lines if line.strip()]
    assert len(lines) == len(set(lines)), "a message was printed twice"


def test_the_page_s_best_hits_are_semantic_search_s_rows_among_the_matching_papers(slice_cache: Path, encoder):
    from dashboard.tables.find import best_hits
    from pipeline.operations.place import semantic_ranking

    topic_cache = cache.read_cache(slice_cache)
    documents = topic_cache.documents
    query = embed_queries(["graph neural networks for molecules"], topic_cache, encoder=encoder)[0]
    rows, scores = semantic_ranking(topic_cache, query, len(documents))
    ranking = pd.DataFrame({"row": rows, "score": scores.astype(float)})
    matching = documents.iloc[::3]  # a filter: every third paper
    hits = best_hits(matching, ranking, documents, 7)
    everything = semantic_search(topic_cache, query, k=len(documents))
    expected = everything[everything["doc_id"].isin(set(matching["doc_id"]))].head(7).reset_index(drop=True)
    pd.testing.assert_frame_equal(hits, expected)
    assert hits["doc_id"].isin(set(matching["doc_id"])).all() and list(hits.index) == list(range(7))
