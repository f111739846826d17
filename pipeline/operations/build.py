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
(pipeline.represent.embedding_store). A build without an embedding cache uses the null store, which keeps nothing. The
2D map is drawn, and its metrics measured, in a second thread while the main thread fits the clustering space and the
topics; from 5,000 documents on, the phrase counts are made in a second process from the clean stage on
(pipeline.topics.naming.stored).

This module is the sequence of the stages; what each runs lives beside its job: the stage timer in
pipeline.runtime.stages, the clustering in pipeline.geometry.cluster_job, the map thread's work in
pipeline.geometry.map_job, the map metrics and the evaluation in pipeline.quality.build_metrics, the journeys in
pipeline.journeys.links_job, what the stages hand on in pipeline.operations.build_state, the document table and the
manifest in pipeline.operations.build_tables.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from pipeline import cache
from pipeline.adapters.bertopic_import import import_bertopic_lean
from pipeline.config import BuildConfig, use_landmarks
from pipeline.geometry.cluster_job import MIN_DOCUMENTS_FOR_UMAP, cluster
from pipeline.geometry.landmarks import Landmarks, cached_landmarks
from pipeline.geometry.map_job import map_drawer
from pipeline.geometry.neighbors import Neighbours
from pipeline.ingest.clean import (
    DROP_NO_WORDS,
    PreparedCorpus,
    copy_table,
    dropped_records,
    dropped_table,
    require_documents,
)
from pipeline.ingest.collections import Collection, collections_display_name
from pipeline.ingest.corpus import load_corpus
from pipeline.journeys.links_job import find_journeys
from pipeline.operations import locking
from pipeline.operations.build_state import Fitted, Handover, PreparedInput, set_aside
from pipeline.operations.build_tables import build_manifest, document_table, record_collections, record_run
from pipeline.quality.build_metrics import evaluate_build, map_metrics_measurer
from pipeline.represent.embedding_store import DEFAULT_STORE, resolve_store
from pipeline.represent.truncation import truncation_warning
from pipeline.runtime.allocator import fit_to_corpus
from pipeline.runtime.console import counted
from pipeline.runtime.errors import AtlasError, EmptyVocabularyError, TargetError
from pipeline.runtime.paths import PROJECT_ROOT, SAMPLE_CORPUS, package_file
from pipeline.runtime.stages import StageTimer
from pipeline.store.keys import fingerprint
from pipeline.store.layouts import StageStore, open_store

if TYPE_CHECKING:  # imported where they run: --help must not pay for scikit-learn or bertopic
    from pipeline.cache.manifest import CollectionEntry
    from pipeline.represent.encoder_backends import EncoderLike
    from pipeline.represent.representation import RepresentedCorpus
    from pipeline.runtime.two_processes import WorkerProcess
    from pipeline.text.tokens import TokenizedCorpus
    from pipeline.text.words import WordCounts
    from pipeline.topics.naming.stored import PhraseCountsJob

log = logging.getLogger("pipeline.operations.build")

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


@dataclass
class BuildResult:
    """What a build wrote: the cache folder and its manifest."""

    cache_dir: Path
    manifest: cache.Manifest


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


def read_and_clean(
    input_path: Path, encoding: str | None, layouts: StageStore, timer: StageTimer, worker: WorkerProcess | None = None
) -> PreparedInput:
    """The load and clean stages (the cleaned corpus through ``layouts``, pipeline.store.prepared; ``worker``: the
    cleaning's worker process, already started), then the canonical order. Raises InputError and
    CorpusTooSmallError."""
    with timer.stage("load"):
        raw = load_corpus(input_path, encoding=encoding)
    with timer.stage("clean"):
        from pipeline.store.prepared import cached_preparation

        prepared = cached_preparation(layouts, raw, encoding, worker)
        require_documents(prepared, raw, input_path)
        for warning in prepared.warnings:
            log.warning(warning)
    # Fit in a canonical order (by text hash), so the input's row order cannot change the topics (UMAP's SGD and
    # HDBSCAN's tie-breaking follow row order: shuffling 300 papers gave ARI 0.46); tables are written in input order.
    order = canonical_order(prepared.documents["text"].tolist())
    documents = prepared.documents.iloc[order].reset_index(drop=True)
    corpus = PreparedInput(
        replace(raw, records=dropped_records(raw.records, prepared.dropped_ids)),
        prepared,
        documents,
        documents["text"].tolist(),
        documents["doc_id"].tolist(),
        order,
        list(prepared.warnings),
        len(raw.records) + sum(raw.skipped.values()),
    )
    return set_aside(corpus)


def read_and_clean_collections(
    collections: list[Collection],
    source: Path,
    encoding: str | None,
    layouts: StageStore,
    timer: StageTimer,
    worker: WorkerProcess | None = None,
) -> tuple[PreparedInput, list[CollectionEntry]]:
    """The load and clean stages for an atlas of several collections (pipeline.ingest.collections): each collection
    read, joined to its side tables and cleaned on its own (duplicates within it handled as for one file), then
    merged (a paper in two collections stays in both), then the canonical order. Returns the corpus and the
    manifest's ``collections``. ``worker``: the cleaning's worker process, already started. Raises InputError and
    CorpusTooSmallError naming the collection's file."""
    from pipeline.ingest.collections import collections_manifest, combined_raw, join_side_tables, merge_collections
    from pipeline.store.prepared import cached_preparations

    with timer.stage("load"):
        raws = [join_side_tables(load_corpus(each.path, encoding=encoding), each) for each in collections]
    with timer.stage("clean"):  # the records the store lacks cleaned by two processes (pipeline.store.prepared)
        corpora = cached_preparations(layouts, raws, encoding, worker)
        for collection, raw, prepared_collection in zip(collections, raws, corpora):
            require_documents(prepared_collection, raw, collection.path)
    prepared = merge_collections(collections, corpora)
    for warning in prepared.warnings:
        log.warning(warning)
    order = canonical_order(prepared.documents["text"].tolist())
    documents = prepared.documents.iloc[order].reset_index(drop=True)
    # each collection's dropped records only, stacked: not every record stacked and then filtered
    dropped = [replace(raw, records=dropped_records(raw.records, prepared.dropped_ids)) for raw in raws]
    corpus = PreparedInput(
        combined_raw(collections, dropped, source),
        prepared,
        documents,
        documents["text"].tolist(),
        documents["doc_id"].tolist(),
        order,
        list(prepared.warnings),
        sum(len(raw.records) for raw in raws),  # the stacked records' count (combined_raw keeps no skips)
    )
    return set_aside(corpus), collections_manifest(collections, raws, corpora)


def tokenise_and_represent(
    corpus: PreparedInput,
    input_path: Path,
    config: BuildConfig,
    embedding_store: Path | str | None,
    layouts: StageStore,
    encoder: EncoderLike | None,
    timer: StageTimer,
) -> tuple[Handover[TokenizedCorpus], list[str], RepresentedCorpus]:
    """The vocabulary and embed stages: (the texts' tokens, handed over for the topics to take and let go, ids of
    documents without a content word, the represented corpus). Raises EmptyVocabularyError when no document has a
    content word."""
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
    return Handover(tokens), without_content, represented


def document_titles(documents: pd.DataFrame) -> list[str] | None:
    """Each document's title ("" where missing), in the frame's order; None when the corpus has no titles."""
    if "title" not in documents.columns:
        return None
    return documents["title"].fillna("").astype(str).tolist()


def fit_topics_and_map(
    corpus: PreparedInput,
    handed_tokens: Handover[TokenizedCorpus],
    represented: RepresentedCorpus,
    neighbour_lists: Callable[[], Neighbours],
    embeddings_key: str,
    config: BuildConfig,
    layouts: StageStore,
    timer: StageTimer,
    phrases: PhraseCountsJob | None = None,
    landmarks: Landmarks | None = None,
) -> Fitted:
    """Clustering, BERTopic, hierarchy and topics per class in this thread while the 2D map is drawn in a second one
    (pipeline.geometry.umap_layout: UMAP's SGD releases the GIL); the map is joined where the topics' positions are
    needed. Its stages (map_2d, map_refine) are timed in that thread; map_wait is how long this thread waited for it,
    after measuring the terms' coherence and diversity (stage evaluate_terms), which need no map. The map thread then
    measures the map (stage map_metrics) while this thread goes on: the returned Fitted's ``map_figures`` is that
    future, which :func:`run_build` joins where it writes the metrics (stage map_metrics_wait).
    ``phrases``: the corpus's phrase counts under way (pipeline.topics.naming.stored), for the topics' names.
    ``handed_tokens``: the texts' tokens, taken by the topics' vectorizer, which lets them go once its sentence
    presence is made; the rest it remembers of the corpus is let go once the topics, hierarchy and per-class topics
    are made (0.9 GB at 285,717 papers, before the evaluation and the wait for the map).
    ``neighbour_lists()``: every document's neighbour lists (stage neighbours), waiting for them where they are still
    searched (with ``landmarks``, a large corpus's sample that both UMAP fits and HDBSCAN run on, they are searched in
    a thread of their own while the landmarks are fitted: :func:`run_build`). Raises what neighbour_lists raises.
    """
    from pipeline.text.vocabulary import forget_corpus
    from pipeline.topics.model import fit_topic_model, hierarchy_table

    n, embeddings = len(corpus.texts), represented.embeddings
    if n < MIN_DOCUMENTS_FOR_UMAP:
        note = (
            f"only {n} documents: fewer than {MIN_DOCUMENTS_FOR_UMAP}, so UMAP and HDBSCAN were skipped; "
            "the documents are one topic if they share words (else outliers) and the map is a PCA projection"
        )
        corpus.warnings.append(note)
        log.warning(note)
    steps = map_drawer(
        n,
        embeddings,
        embeddings_key,
        neighbour_lists,
        config,
        layouts,
        timer,
        map_metrics_measurer(layouts, embeddings_key, embeddings, corpus.documents),
        landmarks,
    )
    mapper = ThreadPoolExecutor(max_workers=1, thread_name_prefix="atlas-map")
    finished = False
    try:
        drawn_map = mapper.submit(steps.draw)
        measured_map = mapper.submit(lambda: steps.measure(drawn_map.result()))  # the same thread, after the map
        if landmarks is not None:
            # The clustering waits for every document's lists, which the map's refinement (the longer branch) needs
            # first: run beside their search it slows it (290k: lists found 5 min 8 s into the build, not 5:38).
            with timer.stage("neighbours_wait"):
                neighbour_lists()
        cluster_labels, probabilities = cluster(
            n, embeddings, embeddings_key, neighbour_lists, config, layouts, timer, landmarks
        )
        with timer.stage("topics"):
            fit = fit_topic_model(
                corpus.texts,
                embeddings,
                cluster_labels,
                config,
                encoder=represented.representation,
                tokens=handed_tokens.take(),  # this frame keeps no reference: the vectorizer lets them go
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
        forget_corpus(fit.topic_model.vectorizer_model)  # nothing counts the corpus's texts again
        with timer.stage("evaluate_terms"):  # NPMI and diversity need only the terms: measured before the map is
            from pipeline.quality.topic_metrics import coherence_metrics  # joined, while the map thread still works

            coherence = coherence_metrics(
                corpus.texts, {topic: [term for term, _ in pairs] for topic, pairs in fit.topic_terms.items()}, layouts
            )
        with timer.stage("map_wait"):
            coordinates = drawn_map.result()
        finished = True
    finally:  # on success the map thread goes on measuring the map; on an error nothing new starts in it
        mapper.shutdown(wait=not finished, cancel_futures=not finished)
    knn = neighbour_lists()
    return Fitted(cluster_labels, probabilities, fit, hierarchy, per_class, coordinates, knn, measured_map, coherence)


def completed(value: Neighbours) -> Future[Neighbours]:
    """A future that already holds ``value``."""
    future: Future[Neighbours] = Future()
    future.set_result(value)
    return future


def landmark_search(embeddings: np.ndarray, embeddings_key: str, config: BuildConfig, layouts: StageStore) -> Landmarks:
    """A large corpus's landmarks (pipeline.geometry.landmarks.cached_landmarks), searched in this process or, with
    ``config.dask_scheduler``, as partitions on that Dask cluster (pipeline.partitions.run: the same lists). Raises
    AtlasError (one line) when the scheduler cannot be used."""
    size, k = config.fit_sample_size, config.umap_n_neighbors
    if config.dask_scheduler is None:
        return cached_landmarks(embeddings, size, k, layouts, embeddings_key)
    from pipeline.partitions.cluster import connect
    from pipeline.partitions.run import search_landmarks_partitioned

    try:
        with connect(config.dask_scheduler) as client:
            return cached_landmarks(
                embeddings,
                size,
                k,
                layouts,
                embeddings_key,
                lambda rows, sample, neighbours: search_landmarks_partitioned(client, rows, sample, neighbours),
            )
    except (ValueError, OSError, ImportError) as error:  # a bad address, no scheduler, other versions, no dask
        raise AtlasError(f"the Dask scheduler {config.dask_scheduler!r} cannot be used: {error}") from error


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
    source: str | None = None,
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
        a pipeline.represent.encoder_backends encoder; ignored when it is not the one config names (see
        pipeline.represent.encoder_backends.get_encoder).
    align : when ``cache_dir`` holds an atlas, keep its topic ids for the topics that match (pipeline.topics.align);
        False numbers the topics afresh.
    collections : several input files as one atlas (pipeline.ingest.collections): one representation, one set of
        topics, one map; ``input_path`` is then the collection file (or the first input) the manifest names. None
        (the default) builds ``input_path`` alone, exactly as before.
    source : what the manifest names as the input (``input_path``, and the corpus name derived from it) instead of
        ``input_path``: "DataFrame" for a table ``topic_atlas.Atlas.fit`` wrote to a temporary file that is gone
        once the build ends. None: ``input_path``.

    What depends only on the input is kept in the folder ``layouts`` beside ``embedding_store``
    (pipeline.store.layouts, keyed by pipeline.store.keys; module docstring), so a rebuild that changes only HDBSCAN or
    topic parameters runs neither the cleaning, the representation nor UMAP again. The manifest's
    ``layout_cache.hits`` says, per stored stage, whether its output was reused.

    Returns a BuildResult. Raises InputError (bad file), CorpusTooSmallError (no usable document),
    EmptyVocabularyError (only stop words) or TargetError (bad cache path); in each case nothing is written.
    """
    from pipeline.store.prepared import cleaning_worker

    input_files = [Path(input_path)] + [collection.path for collection in collections or []]
    with cleaning_worker(input_files) as worker:  # started first: its start overlaps the imports and reading below
        from pipeline.geometry.neighbors import cached_cosine_knn
        from pipeline.journeys.links import journey_summary
        from pipeline.quality.evaluation import with_map_figures
        from pipeline.runtime.threads import limit_threads
        from pipeline.topics.field_themes import grouped_themes
        from pipeline.topics.model import representative_documents, save_topic_model, topic_table
        from pipeline.topics.naming.assign import name_themes, with_llm_names
        from pipeline.topics.naming.languages import topics_of_other_languages, with_language_names
        from pipeline.topics.naming.stored import BACKGROUND_MIN_DOCUMENTS, PhraseCountsJob

        limit_threads()  # the same thread counts, so the same floats, whoever calls (pipeline.runtime.threads)
        embedding_store = resolve_store(embedding_store)  # DEFAULT_STORE: $ATLAS_EMBEDDING_CACHE, read now
        input_path, cache_dir = check_paths(Path(input_path), Path(cache_dir), force)
        for collection in collections or []:
            check_paths(collection.path, cache_dir, force)
        timer = StageTimer()
        layouts = open_store(Path(embedding_store).parent / "layouts" if embedding_store is not None else None)
        collection_entries: list[CollectionEntry] = []
        if collections:
            corpus, collection_entries = read_and_clean_collections(
                collections, input_path, encoding, layouts, timer, worker
            )
            if not config.corpus_name:  # named by its collections, not by the collection file ("all-venues.toml")
                config = replace(config, corpus_name=collections_display_name(collections))
        else:
            corpus = read_and_clean(input_path, encoding, layouts, timer, worker)
    config = config.resolved_for(len(corpus.texts))
    # Above 100,000 documents freed memory goes back to the kernel from here on (pipeline.runtime.allocator): the
    # heap a batch command keeps held 0.4-1.1 GB more between the 290,219-paper build's stages (docs/benchmarks.md).
    fit_to_corpus(len(corpus.texts))
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
        handed_tokens, without_content, represented = tokenise_and_represent(
            corpus, input_path, config, embedding_store, layouts, encoder, timer
        )
        embeddings = represented.embeddings
        embeddings_key = fingerprint(embeddings)
        find_neighbours = partial(
            cached_cosine_knn,
            embeddings,
            max(config.umap_n_neighbors, config.n_neighbors_similar + 1),
            layouts,
            embeddings_key,
        )
        with timer.stage("import_bertopic"):
            import_bertopic_lean()  # before the build's threads start: it hides modules from every thread meanwhile
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="atlas-neighbours") as searcher:
            landmarks = None
            if use_landmarks(len(corpus.texts), config.fit_sample_size):
                # The landmarks' fits and map need only their own lists: every document's are searched (about
                # 130 s at 285,717 documents) in a thread of their own while the landmarks are found and mapped.
                searched = searcher.submit(timer.timed("neighbours", find_neighbours))
                with timer.stage("landmark_neighbours"):
                    landmarks = landmark_search(embeddings, embeddings_key, config, layouts)
                log.info(
                    "fitting UMAP and HDBSCAN on %s of %s documents, placing the rest from their nearest ones",
                    f"{config.fit_sample_size:,}",
                    f"{len(corpus.texts):,}",
                )
            else:
                with timer.stage("neighbours"):
                    searched = completed(find_neighbours())
            fitted = fit_topics_and_map(
                corpus,
                handed_tokens,
                represented,
                searched.result,
                embeddings_key,
                config,
                layouts,
                timer,
                phrases,
                landmarks,
            )
    finally:
        phrases.stop()
    knn = fitted.knn
    with timer.stage("representatives"):
        representatives = representative_documents(
            embeddings, fitted.fit.topics, corpus.doc_ids, config.n_representative
        )
        languages = corpus.documents["language"].tolist() if "language" in corpus.documents.columns else None
        topics_frame = grouped_themes(  # theme, theme_label: the map's top level
            topic_table(fitted.fit, representatives, fitted.coordinates),
            fitted.fit.topics,
            embeddings,
            fitted.coordinates,
            fitted.fit.phrases,
            config.theme_grouping,
            apart=topics_of_other_languages(fitted.fit.topics, languages) if languages is not None else (),
        )
        if fitted.fit.phrases is not None:  # themes named by what their topics share (pipeline.topics.naming)
            topics_frame = name_themes(fitted.fit.phrases, fitted.fit.topics, topics_frame)
        if languages is not None:  # a topic (and its theme) of French papers is "Papers in French", not "Des"
            topics_frame = with_language_names(topics_frame, fitted.fit.topics, languages)
        if config.namer_url:  # the optional language-model namer: names stored beside the computed ones
            topics_frame = with_llm_names(config.namer_url, topics_frame, corpus, fitted.fit.topics, corpus.warnings)
    output = document_table(corpus, fitted, represented, knn, config)
    manifest = build_manifest(
        Path(source) if source is not None else input_path,
        corpus,
        fitted,
        represented,
        topics_frame,
        output[cache.OUTLIER_REASON_COLUMN].tolist(),
        without_content,
        config,
        layouts,
    )
    if collections:
        from pipeline.quality.coverage import coverage_report, load_crosswalk

        coverage = coverage_report(corpus.documents, load_crosswalk())
        for warning in coverage["warnings"]:
            log.warning(warning)
        record_collections(manifest, collection_entries, coverage)
    links = None
    if collections:
        with timer.stage("journeys"):
            links = find_journeys(corpus.documents, embeddings, knn, config, collection_entries)
            by_abstract = embeddings.shape[1] >= config.journey_min_dims
            manifest["journeys"] = journey_summary(
                links,
                config.journey_similarity,
                "the build's neighbour lists and titles"
                if by_abstract
                else f"titles only ({embeddings.shape[1]} dimensions, fewer than {config.journey_min_dims})",
            )
    with timer.stage("evaluate"):  # the map's figures are filled in below, once the map thread has measured them
        manifest["metrics"] = evaluate_build(
            corpus.documents,
            corpus.texts,
            fitted.fit.topics,
            fitted.fit.topic_terms,
            embeddings,
            embeddings_key,
            fitted.coordinates,
            knn,
            layouts,
            {},
            fitted.coherence_figures,
        )
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
            from pipeline.topics.subtopics import with_subtopics

            documents, subtopics = with_subtopics(
                aligned.documents,
                aligned.topics,
                embeddings,
                fitted.coordinates,
                fitted.fit.phrases,
                config.random_state,
            )
        with cache.staged_cache(cache_dir) as staging:
            with timer.stage("save_model"):
                save_topic_model(fitted.fit.topic_model, staging / cache.MODEL_DIR, represented.representation.name)
                represented.representation.save(staging / cache.REPRESENTATION_DIR)
            with timer.stage("map_metrics_wait"):  # the map thread measured the map while this thread went on
                map_figures = fitted.map_figures.result() if fitted.map_figures is not None else {}
            manifest = aligned.manifest
            manifest["metrics"] = with_map_figures(manifest["metrics"], map_figures)
            manifest["layout_cache"] = layouts.manifest_entry()  # every stage's hit, the map metrics' included
            record_run(manifest, timer)
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
                dropped=dropped_table(corpus.raw.records, corpus.prepared.dropped_ids, corpus.prepared.dropped_copies),
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
