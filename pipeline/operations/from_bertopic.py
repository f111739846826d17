"""An atlas from a user's fitted BERTopic model: ``Atlas.from_bertopic(topic_model, docs)``.

The model's topics are kept as it assigned them (ids, names, custom labels, c-TF-IDF terms, other aspects in the
saved model, representative documents) and its hierarchy is BERTopic's own ``hierarchical_topics``. What the model
does not hold the atlas adds the build's way:

- **the search space**: the atlas's own representation (``BuildConfig.embedding_model``, tfidf-svd by default) fitted
  on the documents, so the page's search, "Find and place" and similar papers embed a query offline, whatever
  encoder the model was fitted with. The saved model's topic embeddings are its topics' centroids in that space, so
  ``Atlas.to_bertopic().transform`` works with it too (pipeline.adapters.bertopic_export);
- **the map**, when the model has none: the model's reduced embeddings when they are 2D, else UMAP (the build's
  settings for the 2D map) of them, else of the ``embeddings`` given, else of the atlas's own vectors;
- themes (pipeline.topics.themes), quality metrics (pipeline.quality.evaluation) and the manifest.

Everything is written through pipeline.cache (:func:`pipeline.cache.staged_cache`, ``write_tables``), so the folder
is a cache like a build's: ``topic-atlas`` reads it, and the dashboard serves it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from pipeline import cache
from pipeline.adapters.bertopic_export import ModelTopics, model_topics, save_with_topic_embeddings
from pipeline.config import BuildConfig
from pipeline.geometry.neighbors import cosine_knn
from pipeline.ingest.clean import join_title_abstract, model_text
from pipeline.ingest.corpus import COLUMN_ALIASES
from pipeline.operations import locking
from pipeline.operations.build_tables import build_params, library_versions, neighbour_columns, record_run
from pipeline.represent.unit_rows import normalise_rows
from pipeline.runtime.console import counted
from pipeline.runtime.errors import TargetError
from pipeline.runtime.stages import StageTimer
from pipeline.store.keys import texts_fingerprint

log = logging.getLogger(__name__)

SOURCE = "BERTopic model"
N_REPRESENTATIVE = 5


@dataclass
class AtlasInput:
    """The documents of a from_bertopic atlas, in the model's order.

    ``documents``: doc_id, title, abstract (the document as given) and the metadata's other columns; ``texts``: the
    model texts the atlas's representation reads ("title. abstract", cleaned as the build cleans them)."""

    documents: pd.DataFrame
    texts: list[str]
    id_column: str | None = None


def metadata_columns(metadata: pd.DataFrame | None, n_documents: int) -> pd.DataFrame:
    """``metadata`` with its columns named as the build names a corpus file's (pipeline.ingest.corpus.COLUMN_ALIASES,
    ignoring case: "openreview_id" -> doc_id, "journal" -> venue, ...); an empty table of ``n_documents`` rows when
    None. Raises ValueError when its row count is not ``n_documents``."""
    if metadata is None:
        return pd.DataFrame(index=range(n_documents))
    if not isinstance(metadata, pd.DataFrame):
        raise ValueError(f"metadata must be a pandas DataFrame (one row per document), not {type(metadata).__name__}")
    if len(metadata) != n_documents:
        raise ValueError(f"metadata has {len(metadata)} rows but {n_documents} documents were given: one row each")
    frame = metadata.reset_index(drop=True)
    by_lower = {str(column).lower(): column for column in frame.columns}
    renames: dict[Any, str] = {}
    for canonical, aliases in COLUMN_ALIASES.items():
        found = next((by_lower[alias] for alias in aliases if alias in by_lower), None)
        if canonical != "abstract" and found is not None and canonical not in renames.values():
            renames[found] = canonical
    return frame.rename(columns=renames)


def atlas_input(docs: Sequence[str], metadata: pd.DataFrame | None) -> AtlasInput:
    """The documents table and model texts of ``docs`` (the model's fitted documents) with their ``metadata``.
    Ids come from the metadata's id column (doc_id, openreview_id, id, ...), else ``row-1``, ``row-2``, ...

    Raises ValueError when a document is not a string, the ids repeat, or the metadata's rows do not match."""
    bad = next((row for row, text in enumerate(docs) if not isinstance(text, str)), None)
    if bad is not None:
        raise ValueError(f"document {bad + 1} is a {type(docs[bad]).__name__}, not a string: pass the texts")
    renamed = metadata_columns(metadata, len(docs))  # the same columns in the same order, renamed
    id_column = None
    if metadata is not None and "doc_id" in renamed:  # the metadata's own name of it ("openreview_id" makes links)
        id_column = str(metadata.columns[list(renamed.columns).index("doc_id")])
    frame = renamed.drop(columns=["abstract"], errors="ignore")
    ids = (
        frame.pop("doc_id").astype(str) if "doc_id" in frame else pd.Series([f"row-{i + 1}" for i in range(len(docs))])
    )
    repeated = ids[ids.duplicated()]
    if len(repeated):
        raise ValueError(f"metadata's id column repeats {repeated.iloc[0]!r}: each document needs its own id")
    titles = frame.pop("title").fillna("").astype(str) if "title" in frame else pd.Series([""] * len(docs))
    documents = pd.DataFrame({"doc_id": ids.tolist(), "title": titles.tolist(), "abstract": list(docs)})
    documents = pd.concat([documents, frame.reset_index(drop=True)], axis=1)
    texts = [join_title_abstract(model_text(title), model_text(text)) or text for title, text in zip(titles, docs)]
    return AtlasInput(documents, texts, id_column)


def checked_target(target: Path, force: bool) -> Path:
    """``target`` resolved, after pipeline.cache.check_target: raises TargetError when it is a file, or a non-empty
    folder that is not a Topic Atlas cache (unless ``force``)."""
    target = target.expanduser().resolve()
    try:
        cache.check_target(target, overwrite_foreign=force)
    except FileExistsError as error:
        raise TargetError(str(error)) from error
    return target


def map_source(model: ModelTopics, embeddings: np.ndarray | None, own: np.ndarray) -> tuple[np.ndarray, str]:
    """(the vectors the 2D map is drawn from, which they are): the model's reduced embeddings, else the given
    ``embeddings``, else the atlas's ``own`` vectors."""
    if model.reduced is not None:
        return model.reduced, "the model's reduced embeddings"
    if embeddings is not None:
        return np.asarray(embeddings, dtype=np.float32), "the embeddings given"
    return own, "the atlas's own representation"


def draw_map(vectors: np.ndarray, config: BuildConfig) -> np.ndarray:
    """The 2D map of ``vectors`` (n x d): the vectors themselves when 2D, else UMAP with the build's settings for
    the map (cosine, config.umap_n_neighbors, map_min_dist, map_negative_sample_rate, random_state), PCA below 5
    documents. float32, n x 2."""
    from pipeline.geometry.umap_layout import pca_layout, umap_layout

    if vectors.shape[1] == 2:
        return vectors.astype(np.float32)
    unit = normalise_rows(vectors)
    if len(unit) < 5:
        return pca_layout(unit, 2)
    n_neighbors = min(config.umap_n_neighbors, len(unit) - 1)
    indices, similarities = cosine_knn(unit, n_neighbors)
    return umap_layout(
        unit,
        indices,
        similarities,
        n_components=2,
        n_neighbors=n_neighbors,
        min_dist=config.map_min_dist,
        random_state=config.random_state,
        negative_sample_rate=config.map_negative_sample_rate,
    )


def topic_centroids(topic_ids: list[int], topics: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """float32, len(topic_ids) x dim: each topic's mean vector over its documents, unit length (zeros for a topic
    without documents), rows in the order of ``topic_ids``."""
    rows = [
        vectors[topics == topic].mean(axis=0) if (topics == topic).any() else np.zeros(vectors.shape[1])
        for topic in topic_ids
    ]
    return normalise_rows(np.vstack(rows))


def topic_label(model: ModelTopics, topic: int) -> str:
    """The atlas's label of a model topic: the user's custom label, else the first four of its terms (the words of
    BERTopic's own name, "0_graph_molecular_protein_molecules", without the id)."""
    custom = model.custom_labels.get(topic, "").strip()
    if custom:
        return custom
    words = [term for term, _ in model.terms.get(topic, [])[:4]]
    return ", ".join(words) if words else model.names.get(topic, f"Topic {topic}")


def representative_ids(model: ModelTopics, documents: pd.DataFrame, vectors: np.ndarray) -> dict[int, list[str]]:
    """Per topic, up to N_REPRESENTATIVE document ids: the model's representative documents first (matched by
    text), then the documents nearest the topic's centroid in ``vectors``."""
    from pipeline.topics.model import representative_documents

    doc_ids = documents["doc_id"].tolist()
    row_of = {text: row for row, text in reversed(list(enumerate(documents["abstract"])))}
    nearest = representative_documents(vectors, model.topics, doc_ids, N_REPRESENTATIVE)
    chosen: dict[int, list[str]] = {}
    for topic, by_centroid in nearest.items():
        mine = [doc_ids[row_of[text]] for text in model.representative_docs.get(topic, []) if text in row_of]
        chosen[topic] = list(dict.fromkeys(mine + by_centroid))[:N_REPRESENTATIVE]
    return chosen


def topic_frame(
    model: ModelTopics, documents: pd.DataFrame, vectors: np.ndarray, coordinates: np.ndarray
) -> pd.DataFrame:
    """topics.parquet's table (cache.TOPIC_COLUMNS, subtitle, bertopic_name, theme, theme_label): one row per topic
    with documents, sorted by id."""
    from pipeline.topics.themes import assign_cut_themes

    representatives = representative_ids(model, documents, vectors)
    rows = []
    for topic in sorted(set(model.topics.tolist())):
        members = model.topics == topic
        rows.append(
            {
                "topic": int(topic),
                "label": topic_label(model, topic),
                "subtitle": "",
                "size": int(members.sum()),
                "top_terms": [[term, weight] for term, weight in model.terms.get(topic, [])],
                "representative_doc_ids": representatives.get(topic, []),
                "x": float(np.median(coordinates[members, 0])),
                "y": float(np.median(coordinates[members, 1])),
                "bertopic_name": model.names.get(topic, ""),
            }
        )
    return assign_cut_themes(pd.DataFrame(rows), model.topics, vectors, coordinates)


def document_frame(
    atlas: AtlasInput,
    model: ModelTopics,
    labels: dict[int, str],
    coordinates: np.ndarray,
    neighbours: tuple[np.ndarray, np.ndarray],
    config: BuildConfig,
) -> pd.DataFrame:
    """documents.parquet's rows, in the model's order: cache.DOCUMENT_COLUMNS, then topic_label, outlier_reason,
    neighbor_ids and neighbor_scores (similar papers in the atlas's space), then the metadata's columns.
    ``probability`` is the model's (1.0 in a topic and 0.0 for an outlier when it kept none)."""
    documents = atlas.documents.copy()
    topics = model.topics
    in_topic = (topics != cache.OUTLIER_TOPIC).astype(float)
    documents["topic"] = topics
    documents["probability"] = model.probabilities * in_topic if model.probabilities is not None else in_topic
    documents["x"], documents["y"] = coordinates[:, 0].astype(float), coordinates[:, 1].astype(float)
    documents["topic_label"] = [labels[int(topic)] for topic in topics]
    documents[cache.OUTLIER_REASON_COLUMN] = [
        cache.NO_DENSE_CLUSTER if topic == cache.OUTLIER_TOPIC else "" for topic in topics
    ]
    ids, scores = neighbour_columns(*neighbours, documents["doc_id"].tolist(), config.n_neighbors_similar)
    documents["neighbor_ids"], documents["neighbor_scores"] = ids, scores
    first = cache.DOCUMENT_COLUMNS + ["topic_label", cache.OUTLIER_REASON_COLUMN, "neighbor_ids", "neighbor_scores"]
    return documents[first + [column for column in documents.columns if column not in first]]


def hierarchy_frame(topic_model: Any, docs: Sequence[str], labels: dict[int, str]) -> pd.DataFrame:
    """BERTopic's ``hierarchical_topics`` over the model's documents as hierarchy.parquet's table
    (pipeline.topics.model.hierarchy_table: leaves named by the atlas's labels); empty below two topics."""
    from pipeline.topics.model import hierarchy_table

    return hierarchy_table(topic_model, list(docs), labels)


def bertopic_manifest(
    atlas: AtlasInput,
    model: ModelTopics,
    topics: pd.DataFrame,
    represented: Any,
    config: BuildConfig,
    map_from: str,
) -> cache.Manifest:
    """The manifest of a from_bertopic atlas (pipeline.cache.MANIFEST_KEYS and the build's keys that apply), before
    its metrics and timings; ``source`` says where the topics and the map came from."""
    from pipeline.adapters.checks import installed_version

    representation = represented.representation
    real = [topic for topic in topics["topic"] if int(topic) != cache.OUTLIER_TOPIC]
    return {
        "kind": cache.CACHE_KIND,  # write_tables puts these two first
        "schema_version": cache.SCHEMA_VERSION,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "input_path": SOURCE,
        "corpus_name": config.corpus_name or SOURCE,
        "input_sha256": texts_fingerprint(atlas.documents["abstract"].tolist()),
        "input_encoding": "utf-8",
        "input_records": len(atlas.texts),
        "n_documents": len(atlas.texts),
        "n_topics": len(real),
        "outlier_fraction": round(float((model.topics == cache.OUTLIER_TOPIC).mean()), 4),
        "n_outliers_reassigned": 0,
        "text_column": "abstract",
        "id_column": atlas.id_column,
        "embedding_model": " + ".join(representation.identities.values()),
        "embedding_model_name": representation.name,
        "embedding_encoder": {},
        "embedding_dim": int(represented.embeddings.shape[1]),
        "params": build_params(config),
        "versions": library_versions(),
        "source": {"kind": "bertopic", "bertopic": installed_version("bertopic"), "map": map_from},
        "dropped": {},
        "dropped_ids": {},
        "warnings": [],
        "notes": [f"topics, names and terms from a fitted BERTopic model; the map from {map_from}"],
        "topic_ids_ever_used": sorted(int(topic) for topic in real),
        "model_topic_ids": {str(int(topic)): int(topic) for topic in real},
    }


def evaluate(atlas: AtlasInput, model: ModelTopics, vectors: np.ndarray, coordinates: np.ndarray) -> dict[str, Any]:
    """The build's quality metrics (pipeline.quality.evaluation.evaluate_topics) of the model's topics."""
    from pipeline.quality.agreement import agreement_references, reference_column
    from pipeline.quality.evaluation import evaluate_topics

    column = reference_column(atlas.documents)
    terms = {topic: [term for term, _ in pairs] for topic, pairs in model.terms.items()}
    return evaluate_topics(
        atlas.texts,
        model.topics,
        terms,
        vectors,
        coordinates,
        reference=atlas.documents[column].tolist() if column else None,
        reference_name=column,
        references=agreement_references(atlas.documents),
    )


def write_bertopic_atlas(
    topic_model: Any,
    docs: Sequence[str],
    target: Path | str,
    embeddings: np.ndarray | None = None,
    metadata: pd.DataFrame | None = None,
    config: BuildConfig = BuildConfig(),
    force: bool = False,
) -> Path:
    """Write the atlas of a fitted BERTopic model into the cache folder ``target`` (module docstring) and return it.

    Parameters
    ----------
    topic_model : a fitted ``bertopic.BERTopic``.
    docs : the n documents it was fitted on, in order (the page shows them as the papers' abstracts).
    embeddings : float, n x dim: the documents' embeddings, for the map when the model holds no reduced ones.
    metadata : one row per document: title, doc_id (or openreview_id, id, ...), year, decision, any other column.
    config : the atlas's parameters (its representation, the map's UMAP settings, the seed).
    force : replace ``target`` even when it is a folder that is not a Topic Atlas cache.

    Raises ValueError (an unfitted model, documents, metadata or embeddings that do not match it) and TargetError
    (``target`` is a file or a folder of other files); nothing is written then.
    """
    from pipeline.represent.representation import represent_corpus

    timer = StageTimer()
    n = len(docs)
    if n == 0:
        raise ValueError("no documents given: pass the documents the model was fitted on")
    if embeddings is not None and np.asarray(embeddings).shape[0] != n:
        raise ValueError(f"embeddings have {np.asarray(embeddings).shape[0]} rows but {n} documents were given")
    with timer.stage("load"):
        model = model_topics(topic_model, n)
        atlas = atlas_input(docs, metadata)
        target = checked_target(Path(target), force)
    config = config.resolved_for(n)
    with timer.stage("embed"):
        represented = represent_corpus(atlas.texts, config.embedding_model, params=config.lexical_params())
        vectors = represented.embeddings
    with timer.stage("map_2d"):
        source, map_from = map_source(model, embeddings, vectors)
        coordinates = draw_map(source, config)
    with timer.stage("neighbours"):
        neighbours = cosine_knn(vectors, min(n, config.n_neighbors_similar + 1))
    with timer.stage("topics"):
        topics = topic_frame(model, atlas.documents, vectors, coordinates)
        labels = cache.display_labels(topics)
        documents = document_frame(atlas, model, labels, coordinates, neighbours, config)
    with timer.stage("hierarchy"):
        hierarchy = hierarchy_frame(topic_model, docs, labels)
    with timer.stage("evaluate"):
        manifest = bertopic_manifest(atlas, model, topics, represented, config, map_from)
        manifest["metrics"] = evaluate(atlas, model, vectors, coordinates)
    topic_ids = sorted(int(topic) for topic in topic_model.get_topics())
    with locking.held(target), cache.staged_cache(target) as staging:
        with timer.stage("save_model"):
            centroids = topic_centroids(topic_ids, model.topics, vectors)
            save_with_topic_embeddings(
                topic_model, staging / cache.MODEL_DIR, represented.representation.name, centroids
            )
            represented.representation.save(staging / cache.REPRESENTATION_DIR)
        record_run(manifest, timer)
        cache.write_tables(staging, manifest, documents, topics, hierarchy, vectors)
    log.info(
        "wrote %s: %s, %s from a BERTopic model", target, counted(n, "document"), counted(manifest["n_topics"], "topic")
    )
    return target
