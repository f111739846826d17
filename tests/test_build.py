"""Real builds (BERTopic, UMAP, HDBSCAN, MiniLM) on small real corpora, checked against the cache contract."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipeline import cache
from pipeline.config import BuildConfig
from pipeline.operations.build import run_build
from pipeline.runtime.errors import CorpusTooSmallError, EmptyVocabularyError, InputError, TargetError
from pipeline.runtime.parquet import read_frame
from tests.conftest import CASES, PAPERS, SEED, needs_shared

BAD_LABEL = re.compile(r"^-?\d+_*$|^\d+_")


def check_contract(cache_dir: Path, n_documents: int) -> cache.TopicCache:
    """Assert what every cache must hold; returns it for further checks."""
    topic_cache = cache.read_cache(cache_dir)
    manifest, documents, topics = topic_cache.manifest, topic_cache.documents, topic_cache.topics
    for key in cache.MANIFEST_KEYS + ["dropped", "warnings", "peak_rss_mb"]:
        assert key in manifest, key
    assert manifest["schema_version"] == cache.SCHEMA_VERSION
    assert manifest["n_documents"] == len(documents) == n_documents
    assert manifest["n_topics"] == len(set(documents["topic"]) - {-1})
    assert manifest["outlier_fraction"] == pytest.approx((documents["topic"] == -1).mean(), abs=1e-4)
    assert set(manifest["timings_s"]) >= {"load", "clean", "embed", "topics", "save_model"}
    assert {"python", "bertopic", "umap-learn", "hdbscan"} <= set(manifest["versions"])
    assert documents["doc_id"].is_unique
    assert np.isfinite(documents[["x", "y"]].to_numpy()).all()
    assert documents["probability"].between(0, 1).all()
    assert set(documents["topic"]) == set(topics["topic"])
    assert topics.set_index("topic")["size"].to_dict() == documents["topic"].value_counts().to_dict()
    assert topics["label"].is_unique
    for label in topics["label"]:
        assert label.strip() and not BAD_LABEL.match(label), label
    for row in topics.itertuples():
        assert set(row.representative_doc_ids) <= set(documents.loc[documents["topic"] == row.topic, "doc_id"])
        assert all(isinstance(term, str) and isinstance(weight, float) for term, weight in row.top_terms)
    assert topic_cache.embeddings().shape == (n_documents, manifest["embedding_dim"])
    assert (cache_dir / cache.REPRESENTATION_DIR / "representation.json").is_file()
    assert (cache_dir / "model" / "topic_embeddings.safetensors").is_file()
    assert not list(cache_dir.rglob("*.pkl")) and not list(cache_dir.rglob("*.pickle"))
    return topic_cache


def test_seed_builds_a_sensible_small_map(seed_cache: Path):
    topic_cache = check_contract(seed_cache, 19)
    assert 1 <= topic_cache.manifest["n_topics"] <= 4
    assert topic_cache.manifest["dropped"] == {"heading line": 1}
    # The default representation (tfidf-svd) reads every word of every abstract: nothing is truncated
    # (tests/test_robust_build.py builds the same seed with the transformer, which truncates 11 of them).
    assert topic_cache.manifest["embedding_cache"]["truncated"] == 0
    assert not any(
        "longer than the embedding model's window" in warning for warning in topic_cache.manifest["warnings"]
    )


def test_slice_of_real_corpus_fulfils_the_contract(slice_cache: Path):
    topic_cache = check_contract(slice_cache, 300)
    documents, topics = topic_cache.documents, topic_cache.topics
    assert topic_cache.manifest["n_topics"] >= 3
    assert {"keywords", "decision", "authors", "topic_label", "neighbor_ids", "neighbor_scores"} <= set(
        documents.columns
    )
    assert all(
        len(ids) == 10 and doc_id not in ids for doc_id, ids in zip(documents["doc_id"], documents["neighbor_ids"])
    )
    assert all(list(scores) == sorted(scores, reverse=True) for scores in documents["neighbor_scores"])
    real = topics[topics["topic"] != -1]
    assert (real["top_terms"].map(len) > 0).all()
    hierarchy = topic_cache.hierarchy
    assert len(hierarchy) == len(real) - 1
    assert sorted(hierarchy.iloc[hierarchy["distance"].idxmax()]["topics"]) == sorted(real["topic"])


def test_same_input_gives_identical_topics(build_cache, papers_slice: Path, slice_cache: Path):
    again = build_cache(papers_slice, "slice300-again")
    first, second = cache.read_cache(slice_cache).documents, cache.read_cache(again).documents
    assert first["topic"].tolist() == second["topic"].tolist()
    assert np.allclose(first[["x", "y"]].to_numpy(), second[["x", "y"]].to_numpy())


def test_fewer_map_epochs_draw_another_map_from_the_same_clustering_space(
    build_cache, papers_slice: Path, slice_cache: Path
):
    """``--map-epochs`` (BuildConfig.map_n_epochs) is the map's alone: a rebuild with it reads the clustering space
    the default build stored, draws a map of its own, and records the epochs."""
    fewer = build_cache(papers_slice, "slice300-map-epochs", config=BuildConfig(map_n_epochs=20))
    manifest = cache.read_manifest(fewer)
    assert manifest["params"]["map_n_epochs"] == 20 and manifest["params"]["umap_n_epochs"] is None
    assert manifest["layout_cache"]["hits"]["umap_cluster_space"] and not manifest["layout_cache"]["hits"]["map_2d"]
    first, second = cache.read_cache(slice_cache).documents, cache.read_cache(fewer).documents
    assert first["topic"].tolist() == second["topic"].tolist()
    assert not np.allclose(first[["x", "y"]].to_numpy(), second[["x", "y"]].to_numpy())


def test_above_twenty_thousand_documents_fitted_whole_both_umap_fits_run_fewer_epochs():
    from pipeline.config import CLUSTER_SPACE_EPOCHS, FEWER_EPOCHS_ABOVE, MAP_EPOCHS

    def epochs(config: BuildConfig, n: int) -> tuple[int | None, int | None]:
        resolved = config.resolved_for(n)
        return resolved.umap_n_epochs, resolved.map_n_epochs

    assert epochs(BuildConfig(), FEWER_EPOCHS_ABOVE) == (None, None)  # UMAP's own: 200 above 10,000 documents
    assert epochs(BuildConfig(), FEWER_EPOCHS_ABOVE + 1) == (CLUSTER_SPACE_EPOCHS, MAP_EPOCHS)
    assert epochs(BuildConfig(), 285_717) == (None, None)  # a fit sample of 50,000 keeps UMAP's own
    assert epochs(BuildConfig(fit_sample_size=0), 285_717) == (CLUSTER_SPACE_EPOCHS, MAP_EPOCHS)  # fitted whole
    assert epochs(BuildConfig(umap_n_epochs=200, map_n_epochs=300), 49_805) == (200, 300)  # the user's, kept


def test_failed_build_leaves_the_previous_cache_readable(build_cache, tmp_path: Path, seed_cache: Path):
    target = tmp_path / "cache"
    shutil.copytree(seed_cache, target)
    before = (target / cache.MANIFEST_FILE).read_text()
    broken = tmp_path / "broken.csv"
    broken.write_text('id,abstract\nb1,"an unclosed quote\n', encoding="utf-8")
    with pytest.raises(InputError):
        run_build(broken, target)
    assert (target / cache.MANIFEST_FILE).read_text() == before
    cache.read_cache(target)
    assert not [path for path in tmp_path.iterdir() if ".building-" in path.name]


def test_failure_while_writing_leaves_previous_cache_and_no_staging(
    monkeypatch, tmp_path: Path, seed_cache: Path, embedding_store, encoder
):
    """A crash inside the write stage (here: the hierarchy table cannot be written) must not touch the target."""
    target = tmp_path / "cache"
    shutil.copytree(seed_cache, target)
    before = (target / cache.MANIFEST_FILE).read_text()

    def fail(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(pd.DataFrame, "to_parquet", fail)
    with pytest.raises(OSError, match="disk full"):
        run_build(SEED, target, embedding_store=embedding_store, encoder=encoder)
    assert (target / cache.MANIFEST_FILE).read_text() == before
    assert not [path for path in tmp_path.iterdir() if ".building-" in path.name]


@pytest.mark.parametrize("n_documents", [1, 2, 5])
def test_tiny_corpora_build_with_adapted_parameters(build_cache, tmp_path: Path, n_documents: int):
    """Case 01 and its kind: 1, 2 and 5 documents never reach UMAP's k >= N; every document gets a place."""
    path = CASES / "01-tiny-corpus" / "abstracts_5.txt"
    needs_shared(path)
    paragraphs = path.read_text(encoding="utf-8").split("\n\n")
    corpus = tmp_path / "tiny.txt"
    corpus.write_text("\n\n".join(paragraphs[:n_documents]), encoding="utf-8")
    topic_cache = check_contract(build_cache(corpus, f"tiny{n_documents}"), n_documents)
    params = topic_cache.manifest["params"]
    assert params["umap_n_neighbors"] <= max(2, n_documents - 1)
    if n_documents == 5:
        assert any("n_neighbors" in note for note in params["adaptations"])


def test_single_abstract_case_file(build_cache):
    path = CASES / "01-tiny-corpus" / "abstract_1.txt"
    needs_shared(path)
    topic_cache = check_contract(build_cache(path, "one"), 1)
    assert topic_cache.documents["topic"].tolist() == [0]


def test_all_outliers_case_builds_and_says_so(build_cache):
    """Case 02: with min_cluster_size 15, 24 unrelated abstracts are all outliers; the build says so plainly."""
    path = CASES / "02-all-outliers" / "abstracts.jsonl"
    needs_shared(path)
    config = BuildConfig(min_cluster_size=15)
    topic_cache = check_contract(build_cache(path, "outliers", config=config), 24)
    assert set(topic_cache.documents["topic"]) == {-1}
    assert topic_cache.topics["label"].tolist() == ["Outliers"]
    notes = " ".join(topic_cache.manifest["warnings"])
    assert "No topics found" in notes and "24" in notes and "outlier" in notes


def test_stopword_only_corpus_is_refused_without_a_cache(tmp_path: Path, embedding_store):
    path = CASES / "03-stopword-only-vocabulary" / "all_stopwords.csv"
    needs_shared(path)
    target = tmp_path / "cache"
    with pytest.raises(EmptyVocabularyError, match="stop words") as error:
        run_build(path, target, embedding_store=embedding_store)
    assert "6" in str(error.value)
    assert not target.exists()


def test_some_stopword_documents_are_reported_and_labels_stay_readable(build_cache):
    path = CASES / "03-stopword-only-vocabulary" / "some_stopwords.csv"
    needs_shared(path)
    topic_cache = check_contract(build_cache(path, "some-stopwords"), 25)  # s6 ("1 2 3 ! ?") has no words at all
    assert sorted(topic_cache.manifest["no_content_word_ids"]) == ["s1", "s2", "s3", "s4", "s5", "s6"]
    for row in topic_cache.topics.itertuples():
        assert row.top_terms or "no keywords" in row.label or row.topic == -1


def test_no_usable_rows_is_a_clear_error(tmp_path: Path):
    path = tmp_path / "empty.csv"
    path.write_text("id,abstract\nx1,\nx2,  \n", encoding="utf-8")
    with pytest.raises(CorpusTooSmallError, match="no usable abstracts"):
        run_build(path, tmp_path / "cache")
    assert not (tmp_path / "cache").exists()


def test_refuses_to_replace_a_folder_that_is_not_a_cache(tmp_path: Path):
    target = tmp_path / "my-documents"
    target.mkdir()
    (target / "thesis.tex").write_text("precious", encoding="utf-8")
    with pytest.raises(TargetError, match="not a Topic Atlas cache"):
        run_build(SEED, target)
    assert (target / "thesis.tex").read_text() == "precious"


def test_manifest_is_plain_json(seed_cache: Path):
    manifest = json.loads((seed_cache / cache.MANIFEST_FILE).read_text())
    assert manifest["corpus_name"] == "ICLR 2025 seed"  # no --name: from "iclr2025_seed_abstracts.txt"
    assert manifest["input_sha256"] and len(manifest["input_sha256"]) == 64
    assert (
        manifest["embedding_model"].startswith("tfidf-svd@scikit-learn==")
        and manifest["embedding_model_name"] == "tfidf-svd"
    )


def test_topics_per_class_over_decisions(slice_cache: Path):
    topic_cache = cache.read_cache(slice_cache)
    per_class = topic_cache.topics_per_class
    documents = topic_cache.documents
    assert set(per_class["class"]) <= set(documents["decision"].dropna())
    assert len(set(per_class["class"])) >= 3
    counts = documents.groupby(["topic", "decision"]).size()
    for row in per_class.itertuples():
        assert counts[(row.topic, row._2)] == row.frequency
        assert list(row.terms)


def test_no_cluster_may_hold_most_of_the_corpus():
    """HDBSCAN's eom selection keeps two touching blobs as one cluster of 89%; capped at half, they split."""
    from pipeline.geometry.cluster import hdbscan_clusters

    rng = np.random.default_rng(0)
    points = np.vstack(
        [rng.normal([0, 0], 0.3, (120, 2)), rng.normal([1.2, 0], 0.3, (120, 2)), rng.normal([12, 12], 0.3, (30, 2))]
    )
    uncapped, _ = hdbscan_clusters(points, 10, 3)
    capped, _ = hdbscan_clusters(points, 10, 3, max_cluster_share=0.5)
    assert np.bincount(uncapped[uncapped >= 0]).max() > 0.8 * len(points)
    assert np.bincount(capped[capped >= 0]).max() <= len(points) // 2
    assert len(set(capped.tolist()) - {-1}) == 3


def test_a_vector_depends_on_its_text_alone(encoder):
    """Embedded with others or alone, a text gets the same vector bit for bit (one text per forward pass)."""
    from pipeline.represent.embedding_store import embed_texts

    needs_shared(PAPERS)
    papers = read_frame(PAPERS).head(40)
    texts = papers["title"].tolist() + papers["abstract"].tolist()  # lengths from 5 to 256+ word pieces: padding varies
    together = embed_texts(texts, store_path=None, encoder=encoder, progress=False).embeddings
    alone = np.vstack(
        [embed_texts([text], store_path=None, encoder=encoder, progress=False).embeddings for text in texts[:3]]
    )
    assert np.array_equal(together[:3], alone)


def test_a_handover_gives_its_value_once_and_keeps_no_reference():
    """pipeline.operations.build_state.Handover: the build hands its tokens to the topics this way, so that letting
    them go there frees them; a second take is an error, not a silent None."""
    import gc
    import weakref

    from pipeline.operations.build_state import Handover

    class Tokens:
        pass

    handed = Handover(Tokens())
    taken = handed.take()
    kept = weakref.ref(taken)
    with pytest.raises(RuntimeError, match="already taken"):
        handed.take()
    del taken
    gc.collect()
    assert kept() is None


def test_columns_set_aside_come_back_in_their_places_as_they_were():
    """pipeline.operations.build_state.ColumnsAside: the build keeps the abstracts on disk while it fits; what comes
    back is every value as it was (missing ones as None), in its row and its column's place."""
    from pipeline.operations.build_state import ColumnsAside

    frame = pd.DataFrame(
        {
            "doc_id": [f"p{index}" for index in range(120_003)],
            "abstract": ["Ünïcode ∑ 大規模", None, "plain"] * 40_001,
            "title": ["t"] * 120_003,
        }
    )
    aside = ColumnsAside(frame, ["abstract", "not a column"])
    assert aside.columns == ["abstract"]
    back = aside.put_back(frame.drop(columns=["abstract"]))
    assert list(back.columns) == ["doc_id", "abstract", "title"]
    assert back["abstract"].tolist() == frame["abstract"].tolist() and back["abstract"].dtype == object
    with pytest.raises(ValueError, match="rows"):
        aside.put_back(frame.head(3))
    folder = aside.path.parent
    assert folder.is_dir()
    aside.close()
    assert not folder.exists()


def test_a_build_gives_back_the_abstracts_it_set_aside(slice_cache: Path, papers_slice: Path):
    """The abstracts are not held while the build fits (set aside after cleaning), yet the cache has each paper's,
    as the file wrote it."""
    documents = cache.read_cache(slice_cache).documents.set_index("doc_id")
    papers = read_frame(papers_slice)
    written = papers.set_index(papers.columns[0])["abstract"]
    kept = documents.index.intersection(written.index)
    assert len(kept) >= 290
    assert documents.loc[kept, "abstract"].tolist() == written.loc[kept].tolist()
