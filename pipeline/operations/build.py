"""``topic-atlas build``: corpus file -> cache folder.

Stages, each timed (wall and CPU seconds) and logged: load -> clean -> vocabulary (the corpus tokenised once) ->
embed (the representation, by default tfidf-svd fitted on the corpus) -> neighbours -> UMAP (clustering space) ->
HDBSCAN -> UMAP (2D map) -> NeRV map refinement (up to 2,000 documents) -> BERTopic (c-TF-IDF, topic and outlier
reduction, labels) -> hierarchy -> topics per class -> representative documents and themes -> evaluate -> align
(topic ids kept from the atlas already in the folder) -> write. The cache is written to a staging folder beside the
target and swapped in only when complete (see :mod:`pipeline.cache`).

Speed: each stage imports what it needs when it runs (``--help`` imports neither scikit-learn nor bertopic;
bertopic is imported without the transformer and plotting stacks, see import_bertopic_lean). What depends only on
the input is kept in the layout store beside the embedding cache (pipeline.store.layouts): the cleaned corpus
(pipeline.store.prepared), its tokens, the lexical fit, neighbour lists, UMAP layouts, the map refinement and
metrics, the c-TF-IDF counts and the phrase counts the topics are named from, each under a key made of its inputs,
parameters, library versions and code by the one rule of pipeline.store.keys, so a rebuild that changes only
clustering or topic parameters redoes only HDBSCAN and the topics, and one that changes the code of a stage redoes it
and every stage after it. Encoder vectors are kept per document in the embedding cache
(pipeline.represent.encoders). A build without an embedding cache uses the null store, which keeps nothing. The 2D
map is drawn, and its metrics measured, in a second thread while the main thread fits the clustering space and the
topics; from 5,000 documents on, the phrase counts are made in a second process from the clean stage on
(pipeline.topics.naming.stored).
"""

from __future__ import annotations

import hashlib
import json
import logging
import platform
import resource
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from pipeline import cache
from pipeline.adapters.bertopic_import import import_bertopic_lean
from pipeline.config import BuildConfig, corpus_display_name
from pipeline.geometry.neighbors import Neighbours
from pipeline.ingest.clean import COPY_COLUMN, DROP_NO_WORDS, PreparedCorpus, copy_table, require_documents
from pipeline.ingest.collections import Collection, collections_display_name
from pipeline.ingest.corpus import RawCorpus, load_corpus
from pipeline.operations import locking
from pipeline.represent.encoders import DEFAULT_STORE, encoder_description, resolve_store
from pipeline.represent.representation import is_lexical
from pipeline.represent.truncation import truncated_flags, truncation_warning
from pipeline.runtime.console import counted
from pipeline.runtime.errors import AtlasError, EmptyVocabularyError, TargetError, mark_stage
from pipeline.runtime.paths import PROJECT_ROOT, SAMPLE_CORPUS, package_file
from pipeline.store.keys import StageKey, fingerprint, stage_key, texts_fingerprint
from pipeline.store.layouts import StageStore, open_store

if TYPE_CHECKING:  # imported where they run: --help must not pay for scikit-learn or bertopic
    from pipeline.represent.encoders import EncoderLike
    from pipeline.represent.representation import RepresentedCorpus
    from pipeline.text.tokens import TokenizedCorpus
    from pipeline.text.words import WordCounts
    from pipeline.topics.model import TopicFit
    from pipeline.topics.naming.stored import PhraseCountsJob

log = logging.getLogger("pipeline.operations.build")

# Below this many documents UMAP cannot build a neighbour graph worth the name: one topic, PCA map.
MIN_DOCUMENTS_FOR_UMAP = 5
# The map's metrics (their kNN accuracies and trustworthiness blocks) run in this many threads
# (pipeline.quality.metrics.map_metrics): the map thread measures them last, while the main thread soon waits for it
# (map_wait), so a second core is free (docs/decisions/map-metrics-threads.md).
MAP_METRICS_THREADS = 2
VERSIONED_PACKAGES = (
    "bertopic",
    "umap-learn",
    "hdbscan",
    "scikit-learn",
    "sentence-transformers",
    "torch",
    "model2vec",
    "onnxruntime",
    "numba",
    "numpy",
    "pandas",
    "pyarrow",
)


# The corpora a bare `build` falls back through: the whole conference, its 951-paper sample, the bundled 19 abstracts.
DEFAULT_INPUTS = (
    Path("shared/data/iclr2025/iclr2025_abstracts.parquet"),
    Path("shared/data/iclr2025/papers.parquet"),
)
BUNDLED_SAMPLE = Path("data/sample/iclr2025_seed_abstracts.txt")


def default_input() -> Path:
    """The default corpus: the whole ICLR 2025 conference (../shared/data/iclr2025/iclr2025_abstracts.parquet beside
    the checkout), else its 951-paper sample (papers.parquet), else the 19 abstracts bundled in data/sample (shipped
    in an installed package as pipeline/resources: pipeline.runtime.paths)."""
    root = PROJECT_ROOT
    for candidate in DEFAULT_INPUTS:
        if (root.parent / candidate).is_file():
            return root.parent / candidate
    return root / BUNDLED_SAMPLE if (root / BUNDLED_SAMPLE).is_file() else package_file(*SAMPLE_CORPUS)


class StageTimer:
    """Records wall-clock seconds and the CPU seconds of the thread that ran it, per stage, and logs each as it ends.

    CPU seconds tell a slow stage from a starved one on a busy machine (wall >> CPU: it waited for a core).
    """

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.cpu_seconds: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time the enclosed block as stage ``name``; an exception leaving it carries the stage's name
        (errors.mark_stage)."""
        log.info("stage %s ...", name)
        start, start_cpu = time.perf_counter(), time.thread_time()
        try:
            yield
        except BaseException as error:
            mark_stage(error, name)
            raise
        # A stage run more than once (load and clean, once per collection) adds up.
        self.seconds[name] = round(self.seconds.get(name, 0.0) + time.perf_counter() - start, 3)
        self.cpu_seconds[name] = round(self.cpu_seconds.get(name, 0.0) + time.thread_time() - start_cpu, 3)
        log.info("stage %s done in %.2f s (%.2f s CPU)", name, self.seconds[name], self.cpu_seconds[name])


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


def canonical_order(texts: list[str]) -> np.ndarray:
    """A permutation (int64, n) sorting texts by SHA-256, equal texts by position: it depends only on the set of
    texts, not on the order they came in."""
    keys = [hashlib.sha256(text.encode("utf-8")).hexdigest() for text in texts]
    return np.array(sorted(range(len(texts)), key=lambda i: (keys[i], i)), dtype=np.int64)


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


def neighbour_columns(
    knn_indices: np.ndarray, knn_similarities: np.ndarray, doc_ids: list[str], k: int
) -> tuple[list[list[str]], list[list[float]]]:
    """Per document, its ``k`` nearest other documents' ids and cosine similarities (itself excluded)."""
    ids = np.asarray(doc_ids, dtype=object)
    neighbour_ids, neighbour_scores = [], []
    for row, (indices, similarities) in enumerate(zip(knn_indices, knn_similarities)):
        keep = indices != row
        neighbour_ids.append(ids[indices[keep][:k]].tolist())
        neighbour_scores.append([round(float(value), 4) for value in similarities[keep][:k]])
    return neighbour_ids, neighbour_scores


def references_fingerprint(values: list[Any] | None) -> str:
    """SHA-256 hex of a reference column's values in document order, each by ``str`` (None kept as null)."""
    return hashlib.sha256(
        json.dumps([None if value is None else str(value) for value in values or []]).encode("utf-8")
    ).hexdigest()


def map_metrics_key(
    embeddings_key: str,
    coordinates: np.ndarray,
    neighbours: StageKey,
    reference: list[Any] | None,
    references: dict[str, list[Any]],
) -> StageKey:
    """The key of stage "map_metrics": the embeddings' fingerprint, the map's (float32 n x 2; it may come from UMAP,
    the refinement or PCA), the neighbour lists' key, the reference columns' fingerprints, pipeline.quality.metrics'
    code, numpy, scipy and scikit-learn."""
    return stage_key(
        "map_metrics",
        inputs={
            "embeddings": embeddings_key,
            "map": fingerprint(np.ascontiguousarray(coordinates, dtype=np.float32)),
            "neighbours": neighbours,
            "reference": references_fingerprint(reference),
            "references": texts_fingerprint(
                f"{name}={references_fingerprint(values)}" for name, values in sorted(references.items())
            ),
        },
        libraries=("numpy", "scipy", "scikit-learn"),
        code=("pipeline.quality.metrics",),
    )


def cached_map_metrics(
    layouts: StageStore,
    embeddings_key: str,
    embeddings: np.ndarray,
    coordinates: np.ndarray,
    reference: list[Any] | None,
    references: dict[str, list[Any]],
    knn: Neighbours,
    compute: Callable[..., dict[str, float | None]],
) -> dict[str, float | None]:
    """``compute(embeddings, coordinates, reference, knn_indices=..., references=..., threads=MAP_METRICS_THREADS)``
    (pipeline.quality.metrics.map_metrics), through the layout store under :func:`map_metrics_key` (a None figure is
    stored as NaN). ``coordinates``: the map, float32 n x 2; ``knn``: the build's neighbour lists."""

    def run() -> dict[str, np.ndarray]:
        figures = compute(
            embeddings,
            coordinates,
            reference,
            knn_indices=knn.indices,
            references=references,
            threads=MAP_METRICS_THREADS,
        )
        return {name: np.asarray(np.nan if value is None else value, dtype=float) for name, value in figures.items()}

    key = map_metrics_key(embeddings_key, coordinates, knn.key, reference, references)
    stored = layouts.cached(key, run)
    return {name: None if np.isnan(value) else float(value) for name, value in stored.items()}


def map_refinement_key(embeddings_key: str, coordinates: np.ndarray, params: dict[str, Any]) -> StageKey:
    """The key of stage "map_refine": the embeddings' fingerprint, the UMAP map's (float32 n x 2), the map_refine_*
    parameters, pipeline.geometry.refine's code and numpy."""
    return stage_key(
        "map_refine",
        inputs={"embeddings": embeddings_key, "map": fingerprint(np.ascontiguousarray(coordinates, dtype=np.float32))},
        params={"method": "nerv", **params},
        libraries=("numpy",),
        code=("pipeline.geometry.refine",),
    )


def cached_map_refinement(
    layouts: StageStore, embeddings_key: str, embeddings: np.ndarray, coordinates: np.ndarray, config: BuildConfig
) -> np.ndarray:
    """The UMAP map ``coordinates`` (n x 2) refined by :func:`pipeline.geometry.refine.nerv_refine` with the config's
    map_refine_* values, through the layout store under :func:`map_refinement_key`. float32, n x 2."""
    from pipeline.geometry.refine import nerv_refine

    params: dict[str, Any] = {
        "perplexity": config.map_refine_perplexity,
        "recall_weight": config.map_refine_recall_weight,
        "alpha": config.map_refine_alpha,
        "steps": config.map_refine_steps,
    }

    def run() -> dict[str, np.ndarray]:
        return {"layout": nerv_refine(embeddings, coordinates, **params)}

    return layouts.cached(map_refinement_key(embeddings_key, coordinates, params), run)["layout"].astype(np.float32)


def content_word_check(counts: WordCounts, doc_ids: list[str], prepared: PreparedCorpus, input_path: Path) -> list[str]:
    """Ids of the documents without a content word: those dropped for having no words at all, then those kept whose
    words are all stop words (they are placed on the map but add nothing to any topic's terms). ``counts``: the
    documents' pipeline.text.vocabulary.WordCounts, rows in the order of ``doc_ids``.

    Raises EmptyVocabularyError, naming the file, when no document has a content word.
    """
    from pipeline.text.vocabulary import documents_without_content_words

    try:
        without = set(documents_without_content_words(counts, doc_ids))
    except EmptyVocabularyError as error:
        wordless, n = prepared.dropped.get(DROP_NO_WORDS, 0), len(doc_ids)
        raise EmptyVocabularyError(
            f"{input_path.name}: no words left to describe topics after stop-word removal: all {n + wordless} "
            f"documents contain only stop words, numbers or punctuation ({n} only stop words, {wordless} no words at "
            "all)."
        ) from error
    in_input_order = [doc_id for doc_id in prepared.documents["doc_id"] if doc_id in without]
    return prepared.dropped_ids.get(DROP_NO_WORDS, []) + in_input_order


@dataclass
class PreparedInput:
    """A corpus read, cleaned and put in the canonical order the build fits in.

    ``documents``, ``texts`` and ``doc_ids`` are in canonical order (:func:`canonical_order`); ``order`` maps them
    back (``documents.iloc[np.argsort(order)]`` is the input order); ``warnings`` gathers what the manifest reports.
    """

    raw: RawCorpus
    prepared: PreparedCorpus
    documents: pd.DataFrame
    texts: list[str]
    doc_ids: list[str]
    order: np.ndarray
    warnings: list[str]


@dataclass
class Fitted:
    """The clustering, the topics and the map of a build (see :func:`fit_topics_and_map`)."""

    cluster_labels: np.ndarray
    probabilities: np.ndarray
    fit: TopicFit
    hierarchy: pd.DataFrame
    per_class: pd.DataFrame | None
    coordinates: np.ndarray
    map_figures: dict[str, float | None] | None = None  # the map metrics, measured in the map thread
    coherence_figures: dict[str, Any] | None = None  # the terms' metrics, measured while the map thread works


def read_and_clean(input_path: Path, encoding: str | None, layouts: StageStore, timer: StageTimer) -> PreparedInput:
    """The load and clean stages (the cleaned corpus through ``layouts``, pipeline.store.prepared), then the canonical
    order. Raises InputError and CorpusTooSmallError."""
    with timer.stage("load"):
        raw = load_corpus(input_path, encoding=encoding)
    with timer.stage("clean"):
        from pipeline.store.prepared import cached_preparation

        prepared = cached_preparation(layouts, raw, encoding)
        require_documents(prepared, raw, input_path)
        for warning in prepared.warnings:
            log.warning(warning)
    # Fit in a canonical order (by text hash), so the input's row order cannot change the topics (UMAP's SGD and
    # HDBSCAN's tie-breaking follow row order: shuffling 300 papers gave ARI 0.46); tables are written in input order.
    order = canonical_order(prepared.documents["text"].tolist())
    documents = prepared.documents.iloc[order].reset_index(drop=True)
    return PreparedInput(
        raw,
        prepared,
        documents,
        documents["text"].tolist(),
        documents["doc_id"].tolist(),
        order,
        list(prepared.warnings),
    )


def read_and_clean_collections(
    collections: list[Collection], source: Path, encoding: str | None, layouts: StageStore, timer: StageTimer
) -> tuple[PreparedInput, list[dict[str, Any]]]:
    """The load and clean stages for an atlas of several collections (pipeline.ingest.collections): each collection
    read, joined to its side tables and cleaned on its own (duplicates within it handled as for one file), then
    merged (a paper in two collections stays in both), then the canonical order. Returns the corpus and the
    manifest's ``collections``. Raises InputError and CorpusTooSmallError naming the collection's file."""
    from pipeline.ingest.collections import collections_manifest, combined_raw, join_side_tables, merge_collections
    from pipeline.store.prepared import cached_preparations

    with timer.stage("load"):
        raws = [join_side_tables(load_corpus(each.path, encoding=encoding), each) for each in collections]
    with timer.stage("clean"):  # in two processes when the store lacks several collections
        corpora = cached_preparations(layouts, raws, encoding)
        for collection, raw, prepared_collection in zip(collections, raws, corpora):
            require_documents(prepared_collection, raw, collection.path)
    prepared = merge_collections(collections, corpora)
    for warning in prepared.warnings:
        log.warning(warning)
    order = canonical_order(prepared.documents["text"].tolist())
    documents = prepared.documents.iloc[order].reset_index(drop=True)
    corpus = PreparedInput(
        combined_raw(collections, raws, source),
        prepared,
        documents,
        documents["text"].tolist(),
        documents["doc_id"].tolist(),
        order,
        list(prepared.warnings),
    )
    return corpus, collections_manifest(collections, raws, corpora)


def tokenise_and_represent(
    corpus: PreparedInput,
    input_path: Path,
    config: BuildConfig,
    embedding_store: Path | str | None,
    layouts: StageStore,
    encoder: EncoderLike | None,
    timer: StageTimer,
) -> tuple[TokenizedCorpus, list[str], RepresentedCorpus]:
    """The vocabulary and embed stages: (tokens, ids of documents without a content word, the represented corpus).
    Raises EmptyVocabularyError when no document has a content word."""
    from pipeline.represent.representation import represent_corpus
    from pipeline.text.tokens import cached_tokens, word_counts

    with timer.stage("vocabulary"):
        tokens = cached_tokens(layouts, corpus.texts)
        counts = word_counts(tokens)
        without_content = content_word_check(counts, corpus.doc_ids, corpus.prepared, input_path)
        if without_content:
            corpus.warnings.append(
                f"{len(without_content)} documents have no content words "
                f"after stop-word removal: {', '.join(without_content[:20])}"
            )
            log.warning(corpus.warnings[-1])
    with timer.stage("embed"):
        represented = represent_corpus(
            corpus.texts,
            config.embedding_model,
            embedding_store,
            layouts,
            config.lexical_params(),
            config.embedding_batch_size,
            encoder=encoder,
            word_counts=counts,
        )
        truncated = truncation_warning(corpus.doc_ids, represented.token_counts, represented.max_seq_length)
        if truncated:
            corpus.warnings.append(truncated)
            log.warning(truncated)
    return tokens, without_content, represented


def map_drawer(
    n: int,
    embeddings: np.ndarray,
    embeddings_key: str,
    knn: Neighbours,
    config: BuildConfig,
    layouts: StageStore,
    timer: StageTimer,
    documents: pd.DataFrame,
) -> Callable[[], tuple[np.ndarray, dict[str, float | None]]]:
    """The function the map thread runs: UMAP to 2D then NeRV refinement for small corpora, or PCA below
    MIN_DOCUMENTS_FOR_UMAP documents; then the map's metrics (stage map_metrics, :func:`cached_map_metrics`): they
    need the map, the embeddings, the neighbour lists and the documents' reference columns, not the topics, so the
    map thread measures them while the main thread still fits the topics. Returns (float32 n x 2 coordinates, the
    map metrics)."""
    from pipeline.geometry.umap_layout import cached_umap_layout, pca_layout
    from pipeline.quality.metrics import agreement_references, map_metrics, reference_column

    column = reference_column(documents)
    reference = documents[column].tolist() if column else None
    references = agreement_references(documents)

    def draw() -> np.ndarray:
        if n < MIN_DOCUMENTS_FOR_UMAP:
            with timer.stage("map_2d"):
                return pca_layout(embeddings, 2)
        with timer.stage("map_2d"):
            layout = cached_umap_layout(
                layouts,
                "map_2d",
                embeddings_key,
                embeddings,
                knn,
                2,
                config.umap_n_neighbors,
                config.map_min_dist,
                config.random_state,
                config.map_negative_sample_rate,
            )
        if n <= config.map_refine_max_documents:
            with timer.stage("map_refine"):
                layout = cached_map_refinement(layouts, embeddings_key, embeddings, layout, config)
        return layout

    def draw_and_measure() -> tuple[np.ndarray, dict[str, float | None]]:
        layout = draw()
        with timer.stage("map_metrics"):
            figures = cached_map_metrics(
                layouts, embeddings_key, embeddings, layout, reference, references, knn, map_metrics
            )
        return layout, figures

    return draw_and_measure


def cluster(
    n: int,
    embeddings: np.ndarray,
    embeddings_key: str,
    knn: Neighbours,
    config: BuildConfig,
    layouts: StageStore,
    timer: StageTimer,
) -> tuple[np.ndarray, np.ndarray]:
    """The clustering space (UMAP) and HDBSCAN: (labels int64 n, -1 = outlier; membership float32 n). Below
    MIN_DOCUMENTS_FOR_UMAP documents every document is in cluster 0."""
    if n < MIN_DOCUMENTS_FOR_UMAP:
        return np.zeros(n, dtype=np.int64), np.ones(n, dtype=np.float32)
    if config.min_cluster_size is None:
        raise ValueError("cluster() needs a resolved BuildConfig (BuildConfig.resolved gives min_cluster_size)")
    from pipeline.geometry.cluster import hdbscan_clusters
    from pipeline.geometry.umap_layout import cached_umap_layout

    with timer.stage("umap_cluster_space"):
        reduced = cached_umap_layout(
            layouts,
            "umap_cluster_space",
            embeddings_key,
            embeddings,
            knn,
            config.umap_n_components,
            config.umap_n_neighbors,
            config.umap_min_dist,
            config.random_state,
        )
    with timer.stage("hdbscan"):
        return hdbscan_clusters(
            reduced,
            config.min_cluster_size,
            config.min_samples,
            config.cluster_selection_method,
            config.max_cluster_share,
        )


def document_titles(documents: pd.DataFrame) -> list[str] | None:
    """Each document's title ("" where missing), in the frame's order; None when the corpus has no titles."""
    if "title" not in documents.columns:
        return None
    return documents["title"].fillna("").astype(str).tolist()


def fit_topics_and_map(
    corpus: PreparedInput,
    tokens: TokenizedCorpus,
    represented: RepresentedCorpus,
    knn: Neighbours,
    embeddings_key: str,
    config: BuildConfig,
    layouts: StageStore,
    timer: StageTimer,
    phrases: PhraseCountsJob | None = None,
) -> Fitted:
    """Clustering, BERTopic, hierarchy and topics per class in this thread while the 2D map is drawn in a second one
    (pipeline.geometry.umap_layout: UMAP's SGD releases the GIL); the map is joined where the topics' positions are
    needed. Its stages (map_2d, map_refine) are timed in that thread; map_wait is how long this thread waited for it,
    after measuring the terms' coherence and diversity (stage evaluate_terms), which need no map.
    ``phrases``: the corpus's phrase counts under way (pipeline.topics.naming.stored), for the topics' names."""
    from pipeline.topics.model import fit_topic_model, hierarchy_table

    n, embeddings = len(corpus.texts), represented.embeddings
    if n < MIN_DOCUMENTS_FOR_UMAP:
        note = (
            f"only {n} documents: fewer than {MIN_DOCUMENTS_FOR_UMAP}, so UMAP and HDBSCAN were skipped; "
            "the documents are one topic if they share words (else outliers) and the map is a PCA projection"
        )
        corpus.warnings.append(note)
        log.warning(note)
    with timer.stage("import_bertopic"):
        import_bertopic_lean()  # before the map thread starts: it hides modules from every thread while it runs
    mapper = ThreadPoolExecutor(max_workers=1, thread_name_prefix="atlas-map")
    try:
        drawn_map = mapper.submit(
            map_drawer(n, embeddings, embeddings_key, knn, config, layouts, timer, corpus.documents)
        )
        cluster_labels, probabilities = cluster(n, embeddings, embeddings_key, knn, config, layouts, timer)
        with timer.stage("topics"):
            fit = fit_topic_model(
                corpus.texts,
                embeddings,
                cluster_labels,
                config,
                encoder=represented.representation,
                tokens=tokens,
                store=layouts,
                titles=document_titles(corpus.documents),
                phrases=phrases,
            )
            for note in fit.notes:
                log.info(note)
            corpus.warnings.extend(note for note in fit.notes if note.startswith("No topics"))
        with timer.stage("hierarchy"):
            hierarchy = hierarchy_table(fit.topic_model, corpus.texts, fit.labels)
        per_class = None
        if "decision" in corpus.documents.columns and corpus.documents["decision"].notna().any():
            from pipeline.topics.per_class import topics_per_class_table

            with timer.stage("topics_per_class"):
                per_class = topics_per_class_table(fit.topic_model, corpus.texts, corpus.documents["decision"].tolist())
        with timer.stage("evaluate_terms"):  # NPMI and diversity need only the terms: measured before the map is
            from pipeline.quality.metrics import coherence_metrics  # joined, while the map thread still works

            coherence = coherence_metrics(
                corpus.texts, {topic: [term for term, _ in pairs] for topic, pairs in fit.topic_terms.items()}, layouts
            )
        with timer.stage("map_wait"):
            coordinates, map_figures = drawn_map.result()
    finally:
        mapper.shutdown(wait=True)
    return Fitted(cluster_labels, probabilities, fit, hierarchy, per_class, coordinates, map_figures, coherence)


def document_table(
    corpus: PreparedInput, fitted: Fitted, represented: RepresentedCorpus, knn: Neighbours, config: BuildConfig
) -> pd.DataFrame:
    """documents.parquet's rows (canonical order): the documents' columns, their topic, label, membership, map
    position, why an outlier is one (outlier_reason) and the fit check's similarity (fit_similarity), similar papers
    and, for an encoder block, their length in word pieces and whether it was truncated."""
    from pipeline.topics.misfits import outlier_reasons

    fit, n = fitted.fit, len(corpus.texts)
    neighbour_ids, neighbour_scores = neighbour_columns(
        knn.indices, knn.similarities, corpus.doc_ids, config.n_neighbors_similar
    )
    output = corpus.documents.drop(columns=["text", "record"]).copy()
    output.insert(1, "topic", fit.topics)
    output["topic_label"] = [fit.labels[topic] for topic in fit.topics]
    # HDBSCAN membership strength; 0 for documents HDBSCAN called outliers (including those reassigned later) and for
    # those the fit check moved out of their topic.
    ejected = fit.fit_check.ejected if fit.fit_check is not None else np.zeros(n, dtype=bool)
    output["probability"] = np.where(
        (fitted.cluster_labels == -1) | (fit.clustered_topics == -1) | ejected, 0.0, fitted.probabilities
    ).astype(float)
    output["reassigned"] = (fit.clustered_topics == -1) & (fit.topics != -1)
    output[cache.OUTLIER_REASON_COLUMN] = outlier_reasons(fit.topics, fitted.cluster_labels, ejected)
    if fit.fit_check is not None:  # the similarity the fit check found (pipeline.topics.misfits)
        output[cache.FIT_SIMILARITY_COLUMN] = np.round(fit.fit_check.similarity, 4)
    output["x"], output["y"] = fitted.coordinates[:, 0].astype(float), fitted.coordinates[:, 1].astype(float)
    output["neighbor_ids"], output["neighbor_scores"] = neighbour_ids, neighbour_scores
    # Lengths in word pieces and truncation, for an encoder block (a lexical representation reads every word).
    word_pieces = represented.token_counts or [0] * n
    output["word_pieces"] = word_pieces
    output["truncated"] = (
        truncated_flags(word_pieces, represented.max_seq_length) if represented.max_seq_length else [False] * n
    )
    return output[
        cache.DOCUMENT_COLUMNS + [column for column in output.columns if column not in cache.DOCUMENT_COLUMNS]
    ]


def with_subtopics(
    documents: pd.DataFrame, topics: pd.DataFrame, embeddings: np.ndarray, fitted: Fitted, config: BuildConfig
) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """(``documents`` with its ``subtopic`` column, subtopics.parquet's table): the large topics cut and named by
    pipeline.topics.subtopics. ``documents``: the aligned document table in canonical order (its ``topic`` the
    written ids); ``topics``: the aligned topics table (topic, label); ``embeddings`` and ``fitted`` in the same
    order. Without phrase counts (a corpus of a few documents) the subtopics are left out."""
    from pipeline.topics.subtopics import cut_subtopics, name_subtopics, subtopic_table

    topic_ids = documents["topic"].to_numpy(dtype=np.int64)
    parts = cut_subtopics(topic_ids, embeddings, fitted.coordinates, config.random_state)
    if fitted.fit.phrases is None or not (parts >= 0).any():
        return documents.assign(**{cache.SUBTOPIC_COLUMN: np.full(len(documents), -1, dtype=np.int64)}), None
    labels = dict(zip(topics["topic"].astype(int), topics["label"].astype(str)))
    names = name_subtopics(fitted.fit.phrases, topic_ids, parts, labels)
    table = subtopic_table(parts, topic_ids, fitted.coordinates, names)
    return documents.assign(**{cache.SUBTOPIC_COLUMN: parts}), table


def build_manifest(
    input_path: Path,
    corpus: PreparedInput,
    fitted: Fitted,
    represented: RepresentedCorpus,
    topics_frame: pd.DataFrame,
    without_content: list[str],
    config: BuildConfig,
    layouts: StageStore,
) -> dict[str, Any]:
    """The manifest of a build, before its metrics, alignment and timings (see pipeline.cache); its ``layout_cache``
    is completed when the build ends (the evaluation's stage comes later)."""
    raw, prepared, fit = corpus.raw, corpus.prepared, fitted.fit
    representation = represented.representation
    return {
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "input_path": str(input_path),
        "corpus_name": config.corpus_name or corpus_display_name(str(input_path)),
        "input_sha256": raw.sha256,
        "input_encoding": raw.encoding,
        "input_records": len(raw.records) + sum(raw.skipped.values()),
        "n_documents": len(corpus.texts),
        "n_topics": int((topics_frame["topic"] != -1).sum()),
        "outlier_fraction": round(float((fit.topics == -1).mean()), 4),
        "n_outliers_reassigned": fit.n_reassigned,
        "text_column": raw.text_column,
        # The representation's name and the identity of each block (pipeline.represent.representation); its fitted state
        # is in representation/ (queries and new papers are transformed with it).
        "embedding_model": " + ".join(representation.identities.values()),
        "embedding_model_name": representation.name,
        "embedding_encoder": {
            block: encoder_description(block) for block in representation.blocks if not is_lexical(block)
        },
        "embedding_dim": int(represented.embeddings.shape[1]),
        "embedding_cache": {
            "cached": represented.n_cached,
            "embedded": represented.n_embedded,
            "truncated": represented.n_truncated,
            "max_seq_length": represented.max_seq_length,
            "lexical_fit_cached": represented.lexical_cached,
        },
        "layout_cache": layouts.manifest_entry(),
        "params": config.to_dict(),
        "versions": library_versions(),
        "dropped": prepared.dropped,
        "dropped_ids": prepared.dropped_ids,
        "dropped_copies": prepared.dropped_copies,
        "duplicate_of": dict(zip(prepared.copies["doc_id"], prepared.copies[COPY_COLUMN]))
        if len(prepared.copies)
        else {},
        "languages": prepared.languages,
        "id_column": raw.id_column,
        "no_content_word_ids": without_content,
        "warnings": corpus.warnings,
        "notes": fit.notes,
    }


def evaluate_build(
    corpus: PreparedInput,
    fitted: Fitted,
    embeddings: np.ndarray,
    embeddings_key: str,
    knn: Neighbours,
    layouts: StageStore,
) -> dict[str, Any]:
    """The evaluate stage's metrics (pipeline.quality.metrics); those that depend only on the embeddings, the map and
    the reference columns are the map thread's (``fitted.map_figures``), else from the layout store when it has
    them."""
    from pipeline.quality.metrics import agreement_references, evaluate_topics, map_metrics, reference_column

    documents, fit = corpus.documents, fitted.fit
    column = reference_column(documents)
    reference = documents[column].tolist() if column else None
    references = agreement_references(documents)
    map_figures = fitted.map_figures
    if map_figures is None:
        map_figures = cached_map_metrics(
            layouts, embeddings_key, embeddings, fitted.coordinates, reference, references, knn, map_metrics
        )
    return evaluate_topics(
        corpus.texts,
        fit.topics,
        {topic: [term for term, _ in pairs] for topic, pairs in fit.topic_terms.items()},
        embeddings,
        fitted.coordinates,
        reference=reference,
        reference_name=column,
        knn_indices=knn.indices,
        map_figures=map_figures,
        references=references,
        coherence_figures=fitted.coherence_figures,
    )


def find_journeys(
    corpus: PreparedInput,
    embeddings: np.ndarray,
    knn: Neighbours,
    config: BuildConfig,
    collection_entries: list[dict[str, Any]],
) -> pd.DataFrame:
    """The links between papers of different collections (pipeline.journeys.links, cache.JOURNEY_COLUMNS): near
    neighbours in the build's lists at least ``config.journey_similarity`` similar, and same normalised titles."""
    from pipeline.journeys.links import best_in_each_collection, collection_order, journey_links

    documents = corpus.documents
    codes, _ = pd.factorize(documents["collection"].astype(str))
    candidates = best_in_each_collection(knn.indices, knn.similarities, codes)
    if embeddings.shape[1] < config.journey_min_dims:  # the threshold does not hold there: titles only
        empty = np.zeros(0, np.int64)
        candidates = (empty, empty, np.zeros(0))
        log.warning(
            "journeys: linked by titles only: the vectors have %d dimensions, and the similarity threshold was "
            "measured at %d (docs/decisions/journeys.md)",
            embeddings.shape[1],
            config.journey_min_dims,
        )
    links = journey_links(
        documents, embeddings, candidates, config.journey_similarity, collection_order(collection_entries)
    )
    log.info("journeys: %s of papers found in two collections", counted(len(links), "pair"))
    return links


def run_build(
    input_path: Path | str,
    cache_dir: Path | str,
    config: BuildConfig = BuildConfig(),
    encoding: str | None = None,
    embedding_store: Path | str | None = DEFAULT_STORE,
    force: bool = False,
    encoder: EncoderLike | None = None,
    align: bool = True,
    collections: list[Collection] | None = None,
) -> BuildResult:
    """Build the cache for one corpus file, or for several collections as one atlas.

    Parameters
    ----------
    input_path : corpus file (see pipeline.ingest.corpus for the formats).
    cache_dir : cache folder to create or replace.
    config : build parameters; size-dependent ones are resolved for the corpus.
    encoding : text encoding of the input (None = UTF-8, else Windows-1252 with a warning).
    embedding_store : SQLite embedding cache, or None to embed everything afresh (and keep no layout store: the
        null store of pipeline.store.layouts computes every stage).
    force : replace ``cache_dir`` even when it is not a Topic Atlas cache.
    encoder : an already loaded encoder to reuse for an encoder block (tests, benchmarks): a SentenceTransformer or
        a pipeline.represent.encoders encoder; ignored when it is not the one config names (see
        pipeline.represent.encoders.get_encoder).
    align : when ``cache_dir`` holds an atlas, keep its topic ids for the topics that match (pipeline.topics.align);
        False numbers the topics afresh.
    collections : several input files as one atlas (pipeline.ingest.collections): one representation, one set of
        topics, one map; ``input_path`` is then the collection file (or the first input) the manifest names. None
        (the default) builds ``input_path`` alone, exactly as before.

    What depends only on the input is kept in the folder ``layouts`` beside ``embedding_store``
    (pipeline.store.layouts, keyed by pipeline.store.keys; module docstring), so a rebuild that changes only HDBSCAN or
    topic parameters runs neither the cleaning, the representation nor UMAP again. The manifest's
    ``layout_cache.hits`` says, per stored stage, whether its output was reused.

    Returns a BuildResult. Raises InputError (bad file), CorpusTooSmallError (no usable document),
    EmptyVocabularyError (only stop words) or TargetError (bad cache path); in each case nothing is written.
    """
    from pipeline.geometry.neighbors import cached_cosine_knn
    from pipeline.journeys.links import journey_summary
    from pipeline.runtime.threads import limit_threads
    from pipeline.topics.misfits import fit_check_summary
    from pipeline.topics.model import representative_documents, save_topic_model, topic_table
    from pipeline.topics.naming.assign import name_themes, with_llm_names
    from pipeline.topics.naming.stored import BACKGROUND_MIN_DOCUMENTS, PhraseCountsJob
    from pipeline.topics.themes import assign_cut_themes

    limit_threads()  # the same thread counts, so the same floats, whoever calls (pipeline.runtime.threads)
    embedding_store = resolve_store(embedding_store)  # DEFAULT_STORE: $ATLAS_EMBEDDING_CACHE, read now
    input_path, cache_dir = check_paths(Path(input_path), Path(cache_dir), force)
    for collection in collections or []:
        check_paths(collection.path, cache_dir, force)
    timer = StageTimer()
    layouts = open_store(Path(embedding_store).parent / "layouts" if embedding_store is not None else None)
    collection_entries: list[dict[str, Any]] = []
    if collections:
        corpus, collection_entries = read_and_clean_collections(collections, input_path, encoding, layouts, timer)
        if not config.corpus_name:  # named by its collections, not by the collection file ("all-venues.toml")
            config = replace(config, corpus_name=collections_display_name(collections))
    else:
        corpus = read_and_clean(input_path, encoding, layouts, timer)
    config = config.resolved_for(len(corpus.texts))
    for note in config.adaptations:
        log.warning("adapted to a small corpus: %s", note)
    with timer.stage("start_phrases"):  # the topics' phrase counts: from the store, or a second process from now on
        phrases = PhraseCountsJob(
            corpus.texts,
            document_titles(corpus.documents),
            layouts,
            background=len(corpus.texts) >= BACKGROUND_MIN_DOCUMENTS,
        )
    try:
        tokens, without_content, represented = tokenise_and_represent(
            corpus, input_path, config, embedding_store, layouts, encoder, timer
        )
        embeddings = represented.embeddings
        with timer.stage("neighbours"):
            embeddings_key = fingerprint(embeddings)
            knn = cached_cosine_knn(
                embeddings, max(config.umap_n_neighbors, config.n_neighbors_similar + 1), layouts, embeddings_key
            )
        fitted = fit_topics_and_map(corpus, tokens, represented, knn, embeddings_key, config, layouts, timer, phrases)
    finally:
        phrases.stop()
    with timer.stage("representatives"):
        representatives = representative_documents(
            embeddings, fitted.fit.topics, corpus.doc_ids, config.n_representative
        )
        topics_frame = assign_cut_themes(  # theme, theme_label: the map's top level
            topic_table(fitted.fit, representatives, fitted.coordinates),
            fitted.fit.topics,
            embeddings,
            fitted.coordinates,
        )
        if fitted.fit.phrases is not None:  # themes named by what their topics share (pipeline.topics.naming)
            topics_frame = name_themes(fitted.fit.phrases, fitted.fit.topics, topics_frame)
        if config.namer_url:  # the optional language-model namer: names stored beside the computed ones
            topics_frame = with_llm_names(config.namer_url, topics_frame, corpus, fitted.fit.topics, corpus.warnings)
    output = document_table(corpus, fitted, represented, knn, config)
    manifest = build_manifest(input_path, corpus, fitted, represented, topics_frame, without_content, config, layouts)
    manifest.update(
        fit_check_summary(fitted.fit.fit_check, corpus.doc_ids, output[cache.OUTLIER_REASON_COLUMN].tolist())
    )
    if collections:
        from pipeline.quality.coverage import coverage_report, load_crosswalk

        manifest["collections"] = collection_entries
        manifest["coverage"] = coverage_report(corpus.documents, load_crosswalk())
        for warning in manifest["coverage"]["warnings"]:
            log.warning(warning)
            manifest["warnings"].append(warning)
    links = None
    if collections:
        with timer.stage("journeys"):
            links = find_journeys(corpus, embeddings, knn, config, collection_entries)
            by_abstract = embeddings.shape[1] >= config.journey_min_dims
            manifest["journeys"] = journey_summary(
                links,
                config.journey_similarity,
                "the build's neighbour lists and titles"
                if by_abstract
                else f"titles only ({embeddings.shape[1]} dimensions, fewer than {config.journey_min_dims})",
            )
    with timer.stage("evaluate"):
        manifest["metrics"] = evaluate_build(corpus, fitted, embeddings, embeddings_key, knn, layouts)
    with locking.held(cache_dir):  # from reading the previous atlas (align) to the swap: no writer in between
        edits = previous_edits(cache_dir)
        with timer.stage("align"):  # the one renumbering step: topic ids kept from the atlas already in cache_dir
            from pipeline.topics.align import AtlasTables, align_to_previous

            aligned = align_to_previous(
                cache_dir if align else None,
                AtlasTables(output, topics_frame, fitted.hierarchy, fitted.per_class, manifest),
                embeddings,
            )
        with timer.stage("subtopics"):  # after align: a subtopic's topic id is the one written
            documents, subtopics = with_subtopics(aligned.documents, aligned.topics, embeddings, fitted, config)
        with cache.staged_cache(cache_dir) as staging:
            with timer.stage("save_model"):
                save_topic_model(fitted.fit.topic_model, staging / cache.MODEL_DIR, represented.representation.name)
                represented.representation.save(staging / cache.REPRESENTATION_DIR)
            manifest = aligned.manifest
            manifest["layout_cache"] = layouts.manifest_entry()  # every stage's hit, the map metrics' included
            manifest["timings_s"], manifest["cpu_s"], manifest["peak_rss_mb"] = (
                dict(timer.seconds),
                dict(timer.cpu_seconds),
                peak_rss_mb(),
            )
            restore = np.argsort(corpus.order)  # back to input order
            written = documents.iloc[restore].reset_index(drop=True)
            cache.write_tables(
                staging,
                manifest,
                written,
                aligned.topics,
                aligned.hierarchy,
                embeddings[restore],
                aligned.topics_per_class,
                aligned.lineage,
                copies=copy_table(corpus.prepared.copies, written),
                journeys=links,
                subtopics=subtopics,
            )
    log.info(
        "wrote %s: %s, %s, %.1f%% outliers, peak memory %.0f MiB",
        cache_dir,
        counted(manifest["n_documents"], "document"),
        counted(manifest["n_topics"], "topic"),
        100 * manifest["outlier_fraction"],
        manifest["peak_rss_mb"],
    )
    if edits:
        with timer.stage("replay_edits"):
            replay_previous_edits(cache_dir, edits)
    return BuildResult(cache_dir, cache.read_manifest(cache_dir))


def previous_edits(cache_dir: Path | str) -> list[dict[str, Any]]:
    """The edit log of the atlas already in ``cache_dir`` (pipeline.operations.edit_log; [] when none or when the
    folder is no atlas), read before the rebuild replaces it."""
    from pipeline.operations.edit_log import read_log

    try:
        return read_log(cache_dir) if (Path(cache_dir) / cache.MANIFEST_FILE).is_file() else []
    except AtlasError as error:  # a damaged log: the rebuild goes on without it, and says so
        log.warning("the edit log of %s cannot be read (%s); its edits are not replayed", cache_dir, error)
        return []


def replay_previous_edits(cache_dir: Path | str, edits: list[dict[str, Any]]) -> None:
    """Make the previous atlas's edits again on the rebuilt one (pipeline.operations.edit_replay: each topic an
    edit named found again by its papers) and log, edit by edit, whether it applied, was already so or no longer
    applies, and why (issue 41)."""
    from pipeline.operations.edit_replay import replay_edits

    for report in replay_edits(cache_dir, edits):
        level = logging.WARNING if report["status"] == "no longer applies" else logging.INFO
        entry = (report["id"], report["summary"], report["status"], report["note"])
        log.log(level, "edit %s (%s) replayed: %s. %s", *entry)
