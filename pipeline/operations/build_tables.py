"""What a build writes, assembled from its stages' results (pipeline.operations.build): documents.parquet's rows
(:func:`document_table`, with each paper's similar papers, :func:`neighbour_columns`) and the manifest
(:func:`build_manifest`, :func:`library_versions`, :func:`build_params`; then :func:`record_collections` and
:func:`record_run` as the build goes on), a pipeline.cache.manifest.Manifest (docs/cache-format.md)."""

from __future__ import annotations

import platform
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np
import pandas as pd

from pipeline import schema
from pipeline.config import BuildConfig, corpus_display_name
from pipeline.geometry.neighbors import Neighbours
from pipeline.ingest.clean import COPY_COLUMN
from pipeline.operations.build_state import Fitted, PreparedInput, documents_with_all_columns
from pipeline.represent.encoder_backends import encoder_description
from pipeline.represent.representation import is_lexical
from pipeline.represent.truncation import truncated_flags
from pipeline.store.layouts import StageStore

if TYPE_CHECKING:
    from pipeline.cache.manifest import BuildParams, CollectionEntry, Coverage, Manifest
    from pipeline.represent.representation import RepresentedCorpus
    from pipeline.runtime.stages import StageTimer

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


def library_versions() -> dict[str, str]:
    """Python and key library versions, for the manifest."""
    versions = {"python": platform.python_version()}
    for package in VERSIONED_PACKAGES:
        try:
            versions[package] = version(package)
        except PackageNotFoundError:
            versions[package] = "not installed"
    return versions


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
    output = documents_with_all_columns(corpus).drop(columns=["text", "record"])
    output.insert(1, "topic", fit.topics)
    output["topic_label"] = [fit.labels[topic] for topic in fit.topics]
    # HDBSCAN membership strength; 0 for documents HDBSCAN called outliers (including those reassigned later) and for
    # those the fit check moved out of their topic.
    ejected = fit.fit_check.ejected if fit.fit_check is not None else np.zeros(n, dtype=bool)
    output["probability"] = np.where(
        (fitted.cluster_labels == -1) | (fit.clustered_topics == -1) | ejected, 0.0, fitted.probabilities
    ).astype(float)
    output["reassigned"] = (fit.clustered_topics == -1) & (fit.topics != -1)
    output[schema.OUTLIER_REASON_COLUMN] = outlier_reasons(fit.topics, fitted.cluster_labels, ejected)
    if fit.fit_check is not None:  # the similarity the fit check found (pipeline.topics.misfits)
        output[schema.FIT_SIMILARITY_COLUMN] = np.round(fit.fit_check.similarity, 4)
    output["x"], output["y"] = fitted.coordinates[:, 0].astype(float), fitted.coordinates[:, 1].astype(float)
    output["neighbor_ids"], output["neighbor_scores"] = neighbour_ids, neighbour_scores
    # Lengths in word pieces and truncation, for an encoder block (a lexical representation reads every word).
    word_pieces = represented.token_counts or [0] * n
    output["word_pieces"] = word_pieces
    output["truncated"] = (
        truncated_flags(word_pieces, represented.max_seq_length) if represented.max_seq_length else [False] * n
    )
    return output[
        schema.DOCUMENT_COLUMNS + [column for column in output.columns if column not in schema.DOCUMENT_COLUMNS]
    ]


def build_params(config: BuildConfig) -> BuildParams:
    """The manifest's ``params``: every BuildConfig field (``BuildConfig.to_dict``), ``adaptations`` a list.
    tests/test_manifest_type.py checks that BuildParams declares exactly these keys."""
    return cast("BuildParams", config.to_dict())


def build_manifest(
    input_path: Path,
    corpus: PreparedInput,
    fitted: Fitted,
    represented: RepresentedCorpus,
    topics_frame: pd.DataFrame,
    outlier_reasons: list[str],
    without_content: list[str],
    config: BuildConfig,
    layouts: StageStore,
) -> Manifest:
    """The manifest of a build, before its metrics, alignment and timings (see pipeline.cache.manifest); its
    ``layout_cache`` is completed when the build ends (the evaluation's stage comes later). ``outlier_reasons``: the
    document table's ``outlier_reason`` column (pipeline.topics.misfits.outlier_reasons), counted in
    ``outlier_reasons`` beside the fit check's ``fit_check``."""
    from pipeline.topics.misfits import fit_check_entry, outlier_reason_counts

    raw, prepared, fit = corpus.raw, corpus.prepared, fitted.fit
    representation = represented.representation
    manifest: Manifest = {
        "kind": schema.CACHE_KIND,  # write_tables puts these two first
        "schema_version": schema.SCHEMA_VERSION,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "input_path": str(input_path),
        "corpus_name": config.corpus_name or corpus_display_name(str(input_path)),
        "input_sha256": raw.sha256,
        "input_encoding": raw.encoding,
        "input_records": corpus.input_records,
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
        "params": build_params(config),
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
        "outlier_reasons": outlier_reason_counts(outlier_reasons),
    }
    fit_check = fit_check_entry(fit.fit_check, corpus.doc_ids)
    if fit_check is not None:
        manifest["fit_check"] = fit_check
    return manifest


def record_collections(manifest: Manifest, entries: list[CollectionEntry], coverage: Coverage) -> None:
    """Set a build of several collections' ``collections`` and ``coverage`` in ``manifest`` (in place), the
    coverage check's warnings appended to its ``warnings`` (which a build's manifest always has)."""
    manifest["collections"] = entries
    manifest["coverage"] = coverage
    manifest["warnings"].extend(coverage["warnings"])  # the build's list (PreparedInput.warnings), as before


def record_run(manifest: Manifest, timer: StageTimer) -> None:
    """Set what a run cost in ``manifest`` (in place): ``timings_s`` and ``cpu_s`` (seconds per stage of ``timer``)
    and ``peak_rss_mb`` (the process's peak resident memory, MiB). A writer calls it last, before the write."""
    from pipeline.runtime.stages import peak_rss_mb

    manifest["timings_s"], manifest["cpu_s"] = dict(timer.seconds), dict(timer.cpu_seconds)
    manifest["peak_rss_mb"] = peak_rss_mb()
