"""``python -m pipeline build``: corpus file -> cache folder.

Stages, each timed and logged: load -> clean -> vocabulary check -> embed -> neighbours -> UMAP (clustering
space) -> HDBSCAN -> UMAP (2D map) -> BERTopic (c-TF-IDF, topic and outlier reduction, labels) -> representative
documents -> hierarchy -> write. The cache is written to a staging folder beside the target and swapped in
only when complete (see :mod:`pipeline.cache`).
"""

from __future__ import annotations

import argparse
import logging
import platform
import resource
import shutil
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pandas as pd

from pipeline import cache
from pipeline.clean import DROP_NO_WORDS, prepare_documents
from pipeline.config import BuildConfig
from pipeline.corpus import load_corpus
from pipeline.embed import DEFAULT_STORE, embed_texts, model_id
from pipeline.errors import CorpusTooSmallError, EmptyVocabularyError, TargetError
from pipeline.vocabulary import documents_without_content_words

log = logging.getLogger("pipeline.build")

# Below this many documents UMAP cannot build a neighbour graph worth the name: one topic, PCA map.
MIN_DOCUMENTS_FOR_UMAP = 5
VERSIONED_PACKAGES = ("bertopic", "umap-learn", "hdbscan", "scikit-learn", "sentence-transformers", "torch", "numpy", "pandas", "pyarrow")


def default_input() -> Path:
    """The default corpus: ../shared/data/iclr2025/papers.parquet beside the checkout, else the bundled seed sample."""
    root = Path(__file__).resolve().parent.parent
    shared = root.parent / "shared" / "data" / "iclr2025" / "papers.parquet"
    return shared if shared.is_file() else root / "data" / "sample" / "iclr2025_seed_abstracts.txt"


class StageTimer:
    """Records wall-clock seconds per stage and logs each as it ends."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time the enclosed block as stage ``name``."""
        log.info("stage %s ...", name)
        start = time.perf_counter()
        yield
        self.seconds[name] = round(time.perf_counter() - start, 3)
        log.info("stage %s done in %.2f s", name, self.seconds[name])


@dataclass
class BuildResult:
    """What a build wrote: the cache folder and its manifest."""

    cache_dir: Path
    manifest: dict[str, Any]


def library_versions() -> dict[str, str]:
    """Python and key library versions, for the manifest."""
    versions = {"python": platform.python_version()}
    for package in VERSIONED_PACKAGES:
        try:
            versions[package] = version(package)
        except PackageNotFoundError:
            versions[package] = "not installed"
    return versions


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far, in MiB (Linux reports ru_maxrss in KiB)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def check_paths(input_path: Path, cache_dir: Path, force: bool) -> tuple[Path, Path]:
    """Resolve and check the command-line paths before anything is written.

    Raises TargetError when the cache folder is the input file, contains it, is the file system root or home
    folder, is a file, or is a non-empty folder that is not a Topic Atlas cache (unless ``force``).
    """
    input_path = Path(input_path).expanduser().resolve()
    cache_dir = Path(cache_dir).expanduser().resolve()
    if cache_dir in (Path(cache_dir.anchor), Path.home().resolve()):
        raise TargetError(f"refusing to use {cache_dir} as a cache folder; choose a dedicated folder")
    if cache_dir == input_path or cache_dir in input_path.parents:
        raise TargetError(f"the cache folder {cache_dir} would replace the input {input_path}; choose another --cache")
    try:
        cache.check_target(cache_dir, overwrite_foreign=force)
    except FileExistsError as error:
        raise TargetError(str(error)) from error
    return input_path, cache_dir


def neighbour_columns(knn_indices: np.ndarray, knn_similarities: np.ndarray, doc_ids: list[str], k: int) -> tuple[list[list[str]], list[list[float]]]:
    """Per document, its ``k`` nearest other documents' ids and cosine similarities (itself excluded)."""
    ids = np.asarray(doc_ids, dtype=object)
    neighbour_ids, neighbour_scores = [], []
    for row, (indices, similarities) in enumerate(zip(knn_indices, knn_similarities)):
        keep = indices != row
        neighbour_ids.append(ids[indices[keep][:k]].tolist())
        neighbour_scores.append([round(float(value), 4) for value in similarities[keep][:k]])
    return neighbour_ids, neighbour_scores


def run_build(
    input_path: Path | str,
    cache_dir: Path | str,
    config: BuildConfig = BuildConfig(),
    encoding: str | None = None,
    embedding_store: Path | str | None = DEFAULT_STORE,
    force: bool = False,
    encoder: Any = None,
) -> BuildResult:
    """Build the cache for one corpus file.

    Parameters
    ----------
    input_path : corpus file (see pipeline.corpus for the formats).
    cache_dir : cache folder to create or replace.
    config : build parameters; size-dependent ones are resolved for the corpus.
    encoding : text encoding of the input (None = UTF-8, else Windows-1252 with a warning).
    embedding_store : SQLite embedding cache, or None to embed everything afresh.
    force : replace ``cache_dir`` even when it is not a Topic Atlas cache.
    encoder : an already loaded SentenceTransformer to reuse (tests, benchmarks).

    Returns a BuildResult. Raises InputError (bad file), CorpusTooSmallError (no usable document),
    EmptyVocabularyError (only stop words) or TargetError (bad cache path); in each case nothing is written.
    """
    input_path, cache_dir = check_paths(Path(input_path), Path(cache_dir), force)
    timer = StageTimer()
    with timer.stage("load"):
        raw = load_corpus(input_path, encoding=encoding)
    with timer.stage("clean"):
        prepared = prepare_documents(raw)
        documents = prepared.documents
        n = len(documents)
        if n == 0:
            raise CorpusTooSmallError(
                f"{input_path}: no usable abstracts: all {len(raw.records)} records were dropped "
                f"({'; '.join(f'{reason}: {count}' for reason, count in prepared.dropped.items())})"
            )
        for warning in prepared.warnings:
            log.warning(warning)
    texts = documents["text"].tolist()
    doc_ids = documents["doc_id"].tolist()
    warnings = list(prepared.warnings)
    with timer.stage("vocabulary"):
        try:
            without_content = documents_without_content_words(texts, doc_ids)
        except EmptyVocabularyError as error:
            wordless = prepared.dropped.get(DROP_NO_WORDS, 0)
            raise EmptyVocabularyError(
                f"{input_path.name}: no words left to describe topics after stop-word removal: all {n + wordless} documents "
                f"contain only stop words, numbers or punctuation ({n} only stop words, {wordless} no words at all)."
            ) from error
        # Documents without a content word: those dropped for having no words at all, and those kept whose words
        # are all stop words (they are placed on the map, but add nothing to any topic's terms).
        without_content = prepared.dropped_ids.get(DROP_NO_WORDS, []) + without_content
        if without_content:
            warnings.append(f"{len(without_content)} documents have no content words after stop-word removal: {', '.join(without_content[:20])}")
            log.warning(warnings[-1])
    config = config.resolved_for(n)
    for note in config.adaptations:
        log.warning("adapted to a small corpus: %s", note)
    with timer.stage("embed"):
        embedded = embed_texts(texts, config.embedding_model, embedding_store, config.embedding_batch_size, encoder=encoder)
        embeddings = embedded.embeddings
        if embedded.n_truncated:
            warnings.append(
                f"{embedded.n_truncated} documents are longer than the embedding model's window of {embedded.max_seq_length} word pieces; "
                "only their beginning was embedded (c-TF-IDF still uses the whole text)"
            )
            log.warning(warnings[-1])
    from pipeline.neighbors import cosine_knn

    with timer.stage("neighbours"):
        k = max(config.umap_n_neighbors, config.n_neighbors_similar + 1)
        knn_indices, knn_similarities = cosine_knn(embeddings, k)
    from pipeline.layout import pca_layout, umap_layout

    if n < MIN_DOCUMENTS_FOR_UMAP:
        note = f"only {n} documents: fewer than {MIN_DOCUMENTS_FOR_UMAP}, so UMAP and HDBSCAN were skipped; all documents form one topic and the map is a PCA projection"
        warnings.append(note)
        log.warning(note)
        with timer.stage("map_2d"):
            coordinates = pca_layout(embeddings, 2)
        cluster_labels = np.zeros(n, dtype=np.int64)
        probabilities = np.ones(n, dtype=np.float32)
    else:
        from pipeline.cluster import hdbscan_clusters

        with timer.stage("umap_cluster_space"):
            reduced = umap_layout(embeddings, knn_indices, knn_similarities, config.umap_n_components, config.umap_n_neighbors, config.umap_min_dist, config.random_state)
        with timer.stage("hdbscan"):
            cluster_labels, probabilities = hdbscan_clusters(reduced, config.min_cluster_size, config.min_samples, config.cluster_selection_method)
        with timer.stage("map_2d"):
            coordinates = umap_layout(embeddings, knn_indices, knn_similarities, 2, config.umap_n_neighbors, config.map_min_dist, config.random_state)
    from pipeline.model import fit_topic_model, hierarchy_table, representative_documents, save_topic_model, topic_table

    with timer.stage("topics"):
        fit = fit_topic_model(texts, embeddings, cluster_labels, config, encoder=None)
        for note in fit.notes:
            log.info(note)
        warnings.extend(note for note in fit.notes if note.startswith("No topics"))
    with timer.stage("representatives"):
        representatives = representative_documents(embeddings, fit.topics, doc_ids, config.n_representative)
        topics_frame = topic_table(fit, representatives, coordinates)
    with timer.stage("hierarchy"):
        hierarchy = hierarchy_table(fit.topic_model, texts, fit.labels)
    neighbour_ids, neighbour_scores = neighbour_columns(knn_indices, knn_similarities, doc_ids, config.n_neighbors_similar)
    label_of = fit.labels
    output = documents.drop(columns=["text", "record"]).copy()
    output.insert(1, "topic", fit.topics)
    output["topic_label"] = [label_of[topic] for topic in fit.topics]
    # HDBSCAN membership strength; 0 for documents HDBSCAN called outliers (including those reassigned later).
    output["probability"] = np.where(cluster_labels == -1, 0.0, probabilities).astype(float)
    output["reassigned"] = (fit.clustered_topics == -1) & (fit.topics != -1)
    output["x"], output["y"] = coordinates[:, 0].astype(float), coordinates[:, 1].astype(float)
    output["neighbor_ids"], output["neighbor_scores"] = neighbour_ids, neighbour_scores
    output = output[cache.DOCUMENT_COLUMNS + [column for column in output.columns if column not in cache.DOCUMENT_COLUMNS]]
    n_topics = int((topics_frame["topic"] != -1).sum())
    outlier_fraction = float((fit.topics == -1).mean())
    manifest = {
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "input_path": str(input_path),
        "input_sha256": raw.sha256,
        "input_encoding": raw.encoding,
        "input_records": len(raw.records) + sum(raw.skipped.values()),
        "n_documents": n,
        "n_topics": n_topics,
        "outlier_fraction": round(outlier_fraction, 4),
        "n_outliers_reassigned": fit.n_reassigned,
        "text_column": raw.text_column,
        "embedding_model": model_id(config.embedding_model),
        "embedding_model_name": config.embedding_model,
        "embedding_dim": int(embeddings.shape[1]),
        "embedding_cache": {"cached": embedded.n_cached, "embedded": embedded.n_embedded, "truncated": embedded.n_truncated, "max_seq_length": embedded.max_seq_length},
        "params": config.to_dict(),
        "versions": library_versions(),
        "dropped": prepared.dropped,
        "dropped_ids": prepared.dropped_ids,
        "no_content_word_ids": without_content,
        "warnings": warnings,
        "notes": fit.notes,
    }
    staging = cache.staging_folder(cache_dir)
    try:
        with timer.stage("save_model"):
            save_topic_model(fit.topic_model, staging / cache.MODEL_DIR, config.embedding_model)
        manifest["timings_s"] = dict(timer.seconds)
        manifest["peak_rss_mb"] = peak_rss_mb()
        cache.write_tables(staging, manifest, output, topics_frame, hierarchy, embeddings)
        cache.publish_folder(staging, cache_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    log.info(
        "wrote %s: %d documents, %d topics, %.1f%% outliers, peak memory %.0f MiB",
        cache_dir, n, n_topics, 100 * outlier_fraction, manifest["peak_rss_mb"],
    )
    return BuildResult(cache_dir, cache.read_manifest(cache_dir))


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``build`` subcommand."""
    defaults = BuildConfig()
    parser = subparsers.add_parser(
        "build",
        help="fit BERTopic over a corpus and write a cache for the dashboard",
        description="Fit BERTopic over a corpus of abstracts (CSV, TSV, JSON, JSONL, Parquet or blank-line-separated text) and write a cache folder.",
    )
    parser.add_argument("--input", type=Path, default=None, help=f"corpus file (default: {default_input()})")
    parser.add_argument("--cache", type=Path, required=True, help="cache folder to create or replace atomically")
    parser.add_argument("--encoding", default=None, help="text encoding of the input (default: UTF-8, else Windows-1252 with a warning)")
    parser.add_argument("--embedding-cache", type=Path, default=DEFAULT_STORE, help=f"SQLite file of cached embeddings (default: {DEFAULT_STORE})")
    parser.add_argument("--no-embedding-cache", action="store_true", help="embed every document afresh and cache nothing")
    parser.add_argument("--min-cluster-size", type=int, default=None, help="HDBSCAN min_cluster_size (default: about sqrt(n)/2)")
    parser.add_argument("--min-samples", type=int, default=None, help="HDBSCAN min_samples (default: HDBSCAN's, = min_cluster_size)")
    parser.add_argument("--max-topics", type=int, default=defaults.max_topics, help=f"merge down to at most this many topics (default: {defaults.max_topics}; 0 = no limit)")
    parser.add_argument("--no-outlier-reduction", action="store_true", help="keep every HDBSCAN outlier in topic -1")
    parser.add_argument("--outlier-threshold", type=float, default=defaults.outlier_threshold, help="minimum embedding similarity for reassigning an outlier")
    parser.add_argument("--seed", type=int, default=defaults.random_state, help=f"random seed of UMAP (default: {defaults.random_state})")
    parser.add_argument("--force", action="store_true", help="replace --cache even if it is not a Topic Atlas cache")
    parser.set_defaults(handler=_handle_build)


def _handle_build(args: argparse.Namespace) -> int:
    config = replace(
        BuildConfig(),
        min_cluster_size=args.min_cluster_size,
        min_samples=args.min_samples,
        max_topics=args.max_topics or None,
        reduce_outliers=not args.no_outlier_reduction,
        outlier_threshold=args.outlier_threshold,
        random_state=args.seed,
    )
    result = run_build(
        args.input or default_input(),
        args.cache,
        config,
        encoding=args.encoding,
        embedding_store=None if args.no_embedding_cache else args.embedding_cache,
        force=args.force,
    )
    manifest = result.manifest
    print(
        f"cache written to {result.cache_dir}: {manifest['n_documents']} documents, {manifest['n_topics']} topics, "
        f"outlier fraction {manifest['outlier_fraction']:.3f}, peak memory {manifest['peak_rss_mb']:.0f} MiB"
    )
    for note in manifest["notes"] + manifest["warnings"]:
        print(f"  - {note}")
    print("  stage seconds: " + ", ".join(f"{stage} {seconds:.1f}" for stage, seconds in manifest["timings_s"].items()))
    return 0
