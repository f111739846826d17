"""Whole builds of bad input (issue 13): nothing lost (every input id in the cache or the dropped list), copies in
the cache, truncated papers named and marked, the 'no topics' note printed once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pandas as pd

from pipeline import cache
from pipeline.config import BuildConfig
from tests.conftest import CASES, ROOT, SEED, needs_shared

ABSTRACTS = [
    "Diel pH swings on shallow reef flats pre-condition corals to ocean acidification and raise calcification.",
    "Graph neural networks pass messages along edges to classify nodes in large citation graphs.",
    "A thin alumina coating suppresses electrolyte decomposition on high-voltage battery cathodes.",
    "Congestion pricing shifted commuter departure times and shortened peak travel in the pilot city.",
    "Attention over graph edges makes graph neural networks robust to noisy node features.",
    "Coral calcification on reef flats declines as aragonite saturation falls with acidification.",
]


def test_every_input_id_is_in_the_cache_or_dropped_and_copies_are_listed(build_cache, tmp_path: Path):
    records = [{"id": f"p{i}", "title": f"Paper {i}", "abstract": text} for i, text in enumerate(ABSTRACTS)]
    records += [
        {"id": "copy", "title": "The same reef paper, cross-listed", "abstract": ABSTRACTS[0], "decision": "Poster"},
        {"id": "empty", "title": "No abstract", "abstract": ""},
        {"id": "withdrawn", "title": "Gone", "abstract": "We have withdrawn our paper."},
    ]
    path = tmp_path / "mixed.jsonl"
    pd.DataFrame(records).to_json(path, orient="records", lines=True)
    topic_cache = cache.read_cache(build_cache(path, "mixed"))
    manifest = topic_cache.manifest
    dropped = {doc_id for ids in manifest["dropped_ids"].values() for doc_id in ids}
    assert set(topic_cache.documents["doc_id"]) | dropped == {record["id"] for record in records}
    assert manifest["dropped_ids"]["placeholder, not an abstract"] == ["withdrawn"]
    assert manifest["duplicate_of"] == {"copy": "p0"}
    copies = topic_cache.copies
    assert copies["doc_id"].tolist() == ["copy"] and copies["copy_of"].tolist() == ["p0"]
    kept = topic_cache.documents.set_index("doc_id").loc["p0"]
    assert copies.loc[0, "topic"] == kept["topic"] and (copies.loc[0, "x"], copies.loc[0, "y"]) == (
        kept["x"],
        kept["y"],
    )
    assert (
        copies.loc[0, "title"] == "The same reef paper, cross-listed"
        and copies.loc[0, "topic_label"] == kept["topic_label"]
    )
    assert manifest["languages"] == {"en": 6} and manifest["id_column"] == "id"


def test_truncated_documents_are_named_with_lengths_and_marked(build_cache):
    # The transformer reads 256 word pieces, and 11 of the 19 seed abstracts are longer (the default tfidf-svd
    # representation reads every word and truncates nothing: tests/test_build.py).
    topic_cache = cache.read_cache(
        build_cache(SEED, "seed-minilm-truncation", config=replace(BuildConfig(), embedding_model="all-MiniLM-L6-v2"))
    )
    documents = topic_cache.documents
    assert documents["truncated"].sum() == 11 == topic_cache.manifest["embedding_cache"]["truncated"]
    window = topic_cache.manifest["embedding_cache"]["max_seq_length"]
    assert (documents.loc[documents["truncated"], "word_pieces"] > window).all()
    assert (documents.loc[~documents["truncated"], "word_pieces"] <= window).all()
    warning = next(
        warning for warning in topic_cache.manifest["warnings"] if "longer than the embedding model's window" in warning
    )
    longest = documents.sort_values(["word_pieces", "doc_id"], ascending=[False, True]).iloc[0]
    assert f"{longest['doc_id']} ({longest['word_pieces']:,} word pieces)" in warning
    assert (
        topic_cache.manifest["embedding_model"].startswith("all-MiniLM-L6-v2")
        and topic_cache.manifest["embedding_dim"] == 384
    )


def test_the_no_topics_note_is_printed_once(tmp_path: Path, embedding_store: Path):
    path = CASES / "02-all-outliers" / "abstracts.jsonl"
    needs_shared(path)
    env = {**os.environ, "ATLAS_EMBEDDING_CACHE": str(embedding_store), "HF_HUB_OFFLINE": "1"}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "topic_atlas",
            "build",
            "--input",
            str(path),
            "--cache",
            str(tmp_path / "cache"),
            "--min-cluster-size",
            "15",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert (result.stdout + result.stderr).count("No topics found") == 1  # logged or summarised, not both
    manifest = json.loads((tmp_path / "cache" / cache.MANIFEST_FILE).read_text())
    assert any("No topics found" in note for note in manifest["notes"])


def test_the_seed_heading_is_reported_with_its_text(seed_cache: Path):
    warnings = cache.read_cache(seed_cache).manifest["warnings"]
    assert any(
        warning.startswith("skipped 1 heading line in iclr2025_seed_abstracts.txt: 'ICLR 2025") for warning in warnings
    )
    assert SEED.name in " ".join(warnings)
