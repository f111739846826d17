"""The build's speed features: incremental embedding cache, layout (UMAP) cache, offline encoders, lean imports.

Builds here use the static encoder (``--embedding-model all-MiniLM-L6-v2-static``: its vectors are cached per text,
which the tests of the embedding cache need) on 80 real abstracts, so each takes a few seconds. The derived
encoder models are made once per machine in .cache/encoders (ATLAS_MODEL_CACHE); on a machine that has not made
them yet, the first test that needs one pays for it (static: 35-100 CPU seconds of distillation; ONNX: 5-40 s).
"""

from __future__ import annotations

import socket
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pipeline.config import BuildConfig
from pipeline.operations.build import run_build
from pipeline.represent.embedding_store import embed_texts
from pipeline.represent.encoder_backends import get_encoder
from pipeline.represent.encoder_registry import ENCODER_NAMES, encoder_spec, model_id
from pipeline.runtime.parquet import read_frame
from tests.conftest import PAPERS, ROOT, needs_shared

N_DOCS = 80
STATIC = replace(BuildConfig(), embedding_model="all-MiniLM-L6-v2-static")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    needs_shared(PAPERS)
    return read_frame(PAPERS).head(N_DOCS + 5).reset_index(drop=True)


@pytest.fixture(scope="module")
def first_build(tmp_path_factory: pytest.TempPathFactory, corpus: pd.DataFrame) -> tuple[Path, dict]:
    """A cold build of the first 80 abstracts with a fresh embedding store; returns (store, manifest)."""
    folder = tmp_path_factory.mktemp("speed")
    path = folder / "first.parquet"
    corpus.head(N_DOCS).to_parquet(path, index=False)
    store = folder / "store" / "embeddings.sqlite"
    result = run_build(path, folder / "cache", STATIC, embedding_store=store)
    return store, result.manifest


def layout_hits(manifest: dict) -> dict[str, bool]:
    """The layout store's hits of a build for what depends on the input alone (the c-TF-IDF counts, "ngrams" and
    "sentences", depend on the clusters' boilerplate words too)."""
    return {
        stage: hit for stage, hit in manifest["layout_cache"]["hits"].items() if stage not in ("ngrams", "sentences")
    }


def test_cold_build_embeds_everything_and_names_its_encoder(first_build):
    store, manifest = first_build
    assert manifest["embedding_cache"]["embedded"] == N_DOCS and manifest["embedding_cache"]["cached"] == 0
    assert manifest["embedding_model_name"] == "all-MiniLM-L6-v2-static"
    assert manifest["embedding_model"] == model_id("all-MiniLM-L6-v2-static")
    encoder = manifest["embedding_encoder"]["all-MiniLM-L6-v2-static"]
    assert encoder["kind"] == "static" and len(encoder["weights_sha256"]) == 64 and Path(encoder["path"]).is_dir()
    assert layout_hits(manifest) == {
        "prepared": False,
        "tokens": False,
        "neighbours": False,
        "umap_cluster_space": False,
        "map_2d": False,
        "map_refine": False,
        "map_metrics": False,
        "phrases": False,
        "reference_tokens": False,
    }


def test_adding_and_changing_documents_embeds_only_those(first_build, corpus: pd.DataFrame, tmp_path: Path):
    store, _ = first_build
    changed = corpus.copy()
    changed.loc[0, "abstract"] = changed.loc[0, "abstract"] + " We also release our code."
    path = tmp_path / "grown.parquet"
    changed.to_parquet(path, index=False)  # 80 old documents (one changed) + 5 new ones
    manifest = run_build(path, tmp_path / "cache", STATIC, embedding_store=store).manifest
    assert manifest["n_documents"] == N_DOCS + 5
    assert manifest["embedding_cache"]["embedded"] == 6
    assert manifest["embedding_cache"]["cached"] == N_DOCS - 1


def test_changing_only_hdbscan_parameters_reuses_the_layouts(first_build, corpus: pd.DataFrame, tmp_path: Path):
    store, manifest = first_build
    path = tmp_path / "same.parquet"
    corpus.head(N_DOCS).to_parquet(path, index=False)
    smaller = max(3, manifest["params"]["min_cluster_size"] - 2)
    again = run_build(
        path, tmp_path / "cache", replace(STATIC, min_cluster_size=smaller), embedding_store=store
    ).manifest
    assert again["embedding_cache"]["embedded"] == 0
    assert layout_hits(again) == {
        "prepared": True,
        "tokens": True,
        "neighbours": True,
        "umap_cluster_space": True,
        "map_2d": True,
        "map_refine": True,
        "map_metrics": True,
        "phrases": True,
        "reference_tokens": True,
    }
    assert again["params"]["min_cluster_size"] == smaller
    other_seed = manifest["params"]["random_state"] + 1  # another seed than the first build's, whatever that was
    reseeded = run_build(
        path, tmp_path / "cache2", replace(STATIC, random_state=other_seed), embedding_store=store
    ).manifest
    assert layout_hits(reseeded) == {
        "prepared": True,
        "tokens": True,
        "neighbours": True,
        "umap_cluster_space": False,
        "map_2d": False,
        "map_refine": False,
        "map_metrics": False,
        "phrases": True,
        "reference_tokens": True,
    }


def _no_network(*args, **kwargs):
    raise OSError("network access attempted while loading an encoder")


@pytest.mark.parametrize("name", ENCODER_NAMES)
def test_each_encoder_loads_offline_and_agrees_with_the_transformer(name: str, monkeypatch):
    """Every encoder option loads with the network cut off, gives unit vectors (384-d; 256-d with PCA), and ranks like
    MiniLM."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(socket.socket, "connect", _no_network)
    texts = [
        "Diffusion models generate images by iterative denoising.",
        "Score-based generative models produce images from noise.",
        "Reinforcement learning agents maximise reward in games.",
    ]
    encoder = get_encoder(name)
    vectors = embed_texts(texts, name, store_path=None, encoder=encoder, progress=False).embeddings
    assert vectors.shape == (3, 256 if name.endswith("-static-pca") else 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)
    similarities = vectors @ vectors.T
    assert similarities[0, 1] > similarities[0, 2]  # the two image-generation sentences are nearest
    assert encoder_spec(name).max_seq_length == encoder.max_seq_length


def test_caches_of_different_encoders_never_mix(tmp_path: Path):
    store = tmp_path / "embeddings.sqlite"
    texts = ["graph neural networks for molecules", "language model alignment"]
    first = embed_texts(texts, "all-MiniLM-L6-v2-static", store, progress=False)
    second = embed_texts(texts, "all-MiniLM-L6-v2-onnx-int8", store, progress=False)
    again = embed_texts(texts, "all-MiniLM-L6-v2-static", store, progress=False)
    assert (first.n_embedded, second.n_embedded, again.n_embedded, again.n_cached) == (2, 2, 0, 2)
    assert not np.allclose(first.embeddings, second.embeddings)


def test_build_imports_no_plotting_or_transformer_libraries(first_build, tmp_path: Path, corpus: pd.DataFrame):
    """A warm static-encoder build in a fresh process never imports torch, transformers, plotly or matplotlib."""
    store, _ = first_build
    path = tmp_path / "same.parquet"
    corpus.head(N_DOCS).to_parquet(path, index=False)
    probe = (
        "import sys, runpy\n"
        "sys.argv = ['topic-atlas', 'build', '--input', sys.argv[1], '--cache', sys.argv[2], '--embedding-cache', "
        "sys.argv[3], '--embedding-model', 'all-MiniLM-L6-v2-static']\n"
        "try:\n    runpy.run_module('topic_atlas', run_name='__main__')\n"
        "except SystemExit as e:\n    assert not e.code, e.code\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules} "
        "& {'torch', 'transformers', 'sentence_transformers', 'plotly', 'matplotlib', 'umap'})\n"
        "print('HEAVY', heavy)\n"
    )
    output = subprocess.run(
        [sys.executable, "-c", probe, str(path), str(tmp_path / "cache"), str(store)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert output.returncode == 0, output.stderr[-2000:]
    assert "HEAVY []" in output.stdout, output.stdout[-500:]


@pytest.mark.parametrize("config", [BuildConfig(), STATIC], ids=["tfidf-svd", "static"])
def test_fresh_builds_are_reproducible(config: BuildConfig, corpus: pd.DataFrame, tmp_path: Path):
    """Two cold builds with separate stores (so the lexical fit and UMAP really run twice) give the same vectors,
    map and topics."""
    path = tmp_path / "small.parquet"
    corpus.head(60).to_parquet(path, index=False)
    first = run_build(path, tmp_path / "a", config, embedding_store=tmp_path / "store-a" / "e.sqlite")
    second = run_build(path, tmp_path / "b", config, embedding_store=tmp_path / "store-b" / "e.sqlite")
    assert second.manifest["layout_cache"]["hits"]["map_2d"] is False
    from pipeline.cache import read_cache

    one, two = read_cache(first.cache_dir), read_cache(second.cache_dir)
    assert np.array_equal(one.embeddings(), two.embeddings())
    assert one.documents["topic"].tolist() == two.documents["topic"].tolist()
    assert np.allclose(one.documents[["x", "y"]].to_numpy(), two.documents[["x", "y"]].to_numpy())


def test_two_umap_fits_in_two_threads_match_them_one_after_the_other(corpus: pd.DataFrame):
    """The build fits the 2D map in a second thread while the clustering space is fitted: same arrays either way."""
    from concurrent.futures import ThreadPoolExecutor

    import umap.layouts

    from pipeline.adapters.umap_kernels import enable_numba_cache
    from pipeline.geometry.neighbors import cosine_knn
    from pipeline.geometry.umap_layout import umap_layout

    embeddings = embed_texts(
        corpus["abstract"].head(N_DOCS).tolist(), "all-MiniLM-L6-v2-static", store_path=None, progress=False
    ).embeddings
    indices, similarities = cosine_knn(embeddings, 15)
    enable_numba_cache()
    assert umap.layouts._nb_optimize_layout_euclidean_single_epoch.targetoptions.get("nogil") is True
    space = umap_layout(embeddings, indices, similarities, 5, 15, 0.0, 42)
    drawn = umap_layout(embeddings, indices, similarities, 2, 15, 0.0, 42, 15)
    with ThreadPoolExecutor(max_workers=1) as pool:
        future = pool.submit(umap_layout, embeddings, indices, similarities, 2, 15, 0.0, 42, 15)
        assert np.array_equal(umap_layout(embeddings, indices, similarities, 5, 15, 0.0, 42), space)
        assert np.array_equal(future.result(), drawn)


def test_a_rebuild_reuses_the_cleaned_corpus_and_gets_the_same_documents(corpus: pd.DataFrame, tmp_path: Path):
    """The second build of one file skips cleaning (pipeline.store.prepared) and writes the same documents table."""
    path = tmp_path / "papers.parquet"
    corpus.to_parquet(path, index=False)
    store = tmp_path / "store" / "embeddings.sqlite"
    first = run_build(path, tmp_path / "first", embedding_store=store).manifest
    second = run_build(path, tmp_path / "second", embedding_store=store).manifest
    assert (first["layout_cache"]["hits"]["prepared"], second["layout_cache"]["hits"]["prepared"]) == (False, True)
    assert first["dropped_ids"] == second["dropped_ids"] and first["warnings"] == second["warnings"]
    pd.testing.assert_frame_equal(
        read_frame(tmp_path / "first" / "documents.parquet"),
        read_frame(tmp_path / "second" / "documents.parquet"),
    )


def test_a_build_runs_every_blas_pool_with_one_thread_whoever_calls_it(corpus: pd.DataFrame, tmp_path: Path):
    """run_build limits the BLAS/OpenMP pools itself (pipeline.runtime.threads), including those loaded after it starts
    (scipy's, under UMAP's spectral initialisation), so a caller's defaults cannot change the floats, and with them
    the topics (two BLAS threads gave 57 topics instead of 59 on the whole conference)."""
    path = tmp_path / "small.parquet"
    corpus.head(60).to_parquet(path, index=False)
    probe = (
        "import os, sys\n"
        "for name in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS', 'ATLAS_THREADS'):\n"
        "    os.environ.pop(name, None)\n"
        "import numpy\nfrom threadpoolctl import threadpool_info, threadpool_limits\n"
        "threadpool_limits(limits=2)\n"
        "from pipeline.operations.build import run_build\n"
        "run_build(sys.argv[1], sys.argv[2], embedding_store=sys.argv[3])\n"
        "import numba\n"
        "print('POOLS', sorted({(pool['internal_api'], pool['num_threads']) for pool in threadpool_info() "
        "if pool['internal_api'] == 'openblas'}), 'NUMBA', numba.get_num_threads())\n"
    )
    output = subprocess.run(
        [sys.executable, "-c", probe, str(path), str(tmp_path / "cache"), str(tmp_path / "store" / "e.sqlite")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert output.returncode == 0, output.stderr[-2000:]
    report = output.stdout.split("POOLS", 1)[1].strip()
    assert report == "[('openblas', 1)] NUMBA 1", report  # numpy's and scipy's OpenBLAS, and numba (UMAP's kernels)
