"""The manifest's type: :class:`Manifest`, the ``manifest.json`` of a cache folder as a TypedDict, and the TypedDicts
of its nested objects whose shape is fixed. It is the manifest's definition (docs/cache-format.md describes each key):
every function that builds, reads, changes or returns a manifest is annotated with it, so mypy checks each key
written and the type of its value. Standard library only; the compute modules that make a part of the manifest
(pipeline.quality.coverage, pipeline.journeys.links, ...) import these types only for type checking.

The keys :func:`pipeline.cache.read_manifest` requires are ``pipeline.schema.MANIFEST_KEYS``; they are the required
keys of :class:`Manifest` but ``timings_s``, which a writer adds last (when its stages have run) and which is
therefore ``NotRequired`` here. tests/test_manifest_type.py checks that a real build's manifest has exactly the keys
declared here.

Objects whose keys are data (stage names, reasons, topic ids) are ``dict[str, ...]``; ``metrics`` (defined key by key
in pipeline.quality.evaluation), ``lineage`` (pipeline.topics.align, pipeline.operations.add) and the entries of
``add_history`` (pipeline.operations.add) are ``dict[str, Any]``: their keys depend on the corpus and the operation.

No ``from __future__ import annotations`` here: on Python 3.11 a TypedDict's ``__required_keys__`` and
``__optional_keys__`` are right only when its annotations are evaluated (tests/test_manifest_type.py reads them).
"""

from typing import Any, NotRequired, TypedDict


class EmbeddingCache(TypedDict):
    """``embedding_cache``: texts found in the embedding cache and embedded, those truncated to the encoder's
    ``max_seq_length`` (None for a lexical representation), and whether the lexical fit was reused."""

    cached: int
    embedded: int
    truncated: int
    max_seq_length: int | None
    lexical_fit_cached: bool


class LayoutCache(TypedDict):
    """``layout_cache``: the layout store's folder (None without one) and, per stage, whether it was reused."""

    folder: str | None
    hits: dict[str, bool]


class BuildParams(TypedDict):
    """``params``: every field of pipeline.config.BuildConfig as resolved for the corpus (``BuildConfig.to_dict``),
    ``adaptations`` (what a small corpus changed) a list. tests/test_manifest_type.py checks the keys against
    BuildConfig's fields."""

    embedding_model: str
    embedding_batch_size: int
    lexical_dims: int
    lexical_documents_per_dim: int
    lexical_ngram_max: int
    lexical_min_df: int
    lexical_max_df: float
    lexical_n_iter: int
    lexical_fit_rows: int
    umap_n_neighbors: int
    umap_n_components: int
    umap_min_dist: float
    umap_n_epochs: int | None
    map_n_epochs: int | None
    map_min_dist: float
    map_negative_sample_rate: int
    map_refine_max_documents: int
    map_refine_perplexity: float
    map_refine_recall_weight: float
    map_refine_alpha: float
    map_refine_steps: int
    fit_sample_size: int
    fit_sample_map_epochs: int
    dask_scheduler: str | None
    random_state: int
    theme_grouping: str
    min_cluster_size: int | None
    min_samples: int | None
    cluster_selection_method: str
    max_cluster_share: float
    ngram_max: int
    min_df: int | None
    max_df: float
    learn_stop_words: bool
    boilerplate_min_share: float
    boilerplate_max_lift: float
    top_n_words: int
    bm25_weighting: bool
    reduce_frequent_words: bool
    representation: str
    n_candidate_terms: int
    coherence_weight: float
    exclusive_terms: bool
    reduce_outliers: bool
    outlier_threshold: float
    max_outlier_fraction: float
    fit_share: float
    n_representative: int
    n_neighbors_similar: int
    journey_similarity: float
    journey_min_dims: int
    max_topics: int | None
    namer_url: str | None
    adaptations: list[str]
    corpus_name: str | None


class FitCheckEntry(TypedDict):
    """``fit_check`` (pipeline.topics.misfits): the share of the median own-topic similarity that is the threshold,
    the threshold (cosine, 4 decimals; None without topics), the papers moved to -1 and their ids (sorted), and the
    wall seconds of the check with the refit it caused."""

    share_of_median: float
    threshold: float | None
    n_moved: int
    moved_ids: list[str]
    seconds: float


class SideTableEntry(TypedDict):
    """A collection's side table: its file and the id column it is joined on."""

    path: str
    on: str


class AddedFile(TypedDict):
    """Papers an ``add`` put into a collection the atlas already had: their file, its SHA-256, how many."""

    path: str
    sha256: str | None
    documents: int


class CollectionEntry(TypedDict):
    """One entry of ``collections`` (pipeline.ingest.collections.collections_manifest): the collection's name,
    venue, year (None when unknown), file, SHA-256 (side tables included), side tables, records read, documents kept,
    rows dropped per reason, and the files an ``add`` added to it. An atlas of one file grown by an ``add`` of
    collections gets an entry of its own whose ``sha256`` and ``records`` are the manifest's (None when absent)."""

    name: str
    venue: str
    year: int | None
    path: str
    sha256: str | None
    side_tables: list[SideTableEntry]
    records: int | None
    documents: int
    dropped: dict[str, int]
    added: NotRequired[list[AddedFile]]


class CoverageCollection(TypedDict):
    """A collection in ``coverage``: its venue, year and papers."""

    venue: str
    year: int | None
    papers: int


class Coverage(TypedDict):
    """``coverage`` (pipeline.quality.coverage.coverage_report): per collection name its size, and the sentences
    for collections that look incomplete."""

    collections: dict[str, CoverageCollection]
    warnings: list[str]


class JourneySummary(TypedDict):
    """``journeys`` (pipeline.journeys.links.journey_summary): the similarity threshold, how candidates were found,
    the number of links, links per ``found_by`` and per pair of collections ("A -> B")."""

    threshold: float
    candidates: str
    n_links: int
    found_by: dict[str, int]
    between: dict[str, int]


class LabelOverride(TypedDict):
    """An entry of ``label_overrides``: the user's label and the automatic label it replaced."""

    label: str
    automatic: str


class MetricsStale(TypedDict):
    """``metrics_stale``: the edit since which the listed ``metrics`` are out of date, and a sentence saying so."""

    since_edit: int
    metrics: list[str]
    note: str


class Source(TypedDict):
    """``source`` of an atlas made from a BERTopic model: ``kind`` "bertopic", the bertopic version (None when its
    version cannot be read), and what the map was drawn from."""

    kind: str
    bertopic: str | None
    map: str


class Manifest(TypedDict):
    """A cache's ``manifest.json`` (docs/cache-format.md, "manifest.json"). Required: ``pipeline.schema.MANIFEST_KEYS``
    but ``timings_s`` (module docstring). The other keys are written by a build, by ``from_bertopic`` or by the
    operations that change an atlas (add, edit, rename, align)."""

    kind: str
    schema_version: int
    created_at: str
    input_path: str
    corpus_name: NotRequired[str]
    input_sha256: str
    input_encoding: NotRequired[str]
    input_records: NotRequired[int]
    n_documents: int
    n_topics: int
    outlier_fraction: float
    n_outliers_reassigned: NotRequired[int]
    text_column: NotRequired[str]
    embedding_model: NotRequired[str]
    embedding_model_name: NotRequired[str]
    embedding_encoder: NotRequired[dict[str, Any]]
    embedding_dim: NotRequired[int]
    embedding_cache: NotRequired[EmbeddingCache]
    layout_cache: NotRequired[LayoutCache]
    params: BuildParams
    versions: dict[str, str]
    source: NotRequired[Source]
    dropped: NotRequired[dict[str, int]]
    dropped_ids: NotRequired[dict[str, list[str]]]
    dropped_copies: NotRequired[dict[str, list[list[str]]]]
    duplicate_of: NotRequired[dict[str, str]]
    languages: NotRequired[dict[str, int]]
    id_column: NotRequired[str | None]
    no_content_word_ids: NotRequired[list[str]]
    warnings: NotRequired[list[str]]
    notes: NotRequired[list[str]]
    outlier_reasons: NotRequired[dict[str, int]]
    fit_check: NotRequired[FitCheckEntry]
    collections: NotRequired[list[CollectionEntry]]
    coverage: NotRequired[Coverage]
    journeys: NotRequired[JourneySummary]
    metrics: NotRequired[dict[str, Any]]
    metrics_stale: NotRequired[MetricsStale]
    alignment: NotRequired[str]
    lineage: NotRequired[dict[str, Any]]
    topic_ids_ever_used: NotRequired[list[int]]
    model_topic_ids: NotRequired[dict[str, int]]
    label_overrides: NotRequired[dict[str, LabelOverride]]
    theme_label_overrides: NotRequired[dict[str, str]]
    add_history: NotRequired[list[dict[str, Any]]]
    n_documents_fitted: NotRequired[int]
    timings_s: NotRequired[dict[str, float]]
    cpu_s: NotRequired[dict[str, float]]
    peak_rss_mb: NotRequired[float]
