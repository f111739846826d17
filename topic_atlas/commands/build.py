"""``topic-atlas build``: argument parsing and one call of :meth:`topic_atlas.Atlas.build`."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from pipeline.config import CLUSTER_SPACE_EPOCHS, FEWER_EPOCHS_ABOVE, MAP_EPOCHS, BuildConfig
from pipeline.operations.build import default_input
from pipeline.represent.embedding_store import default_store
from pipeline.represent.encoder_registry import ENCODER_NAMES, is_known_encoder
from pipeline.represent.representation import LEXICAL, block_names, is_lexical
from pipeline.runtime.console import counted, shown_on_terminal
from pipeline.runtime.errors import InputError


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``build`` subcommand."""
    defaults = BuildConfig()
    parser = subparsers.add_parser(
        "build",
        help="fit BERTopic over a corpus and write a cache for the dashboard",
        description=(
            "Fit BERTopic over a corpus of abstracts and write a cache folder. The corpus may be CSV, TSV, JSON, "
            "JSONL, Parquet, blank-line-separated text (.txt, .md), any of these text formats gzip-compressed "
            "(.csv.gz, ...), Excel (.xlsx), BibTeX (.bib), RIS (.ris) or an OpenReview notes dump (JSON or JSONL); "
            "see docs/input-formats.md."
        ),
    )
    parser.add_argument(
        "--input",
        type=Path,
        action="append",
        default=None,
        help=f"corpus file (default: {default_input()}); repeat it to build one atlas of several collections, "
        "each named by its file (iclr2024_abstracts.parquet: ICLR 2024)",
    )
    parser.add_argument(
        "--collections",
        type=Path,
        default=None,
        metavar="FILE",
        help="a TOML collection file (path, name, venue, year and side tables per collection; see "
        "data/collections/all-venues.toml): one atlas of all of them",
    )
    parser.add_argument("--cache", type=Path, required=True, help="cache folder to create or replace atomically")
    parser.add_argument(
        "--encoding", default=None, help="text encoding of the input (default: UTF-8, else Windows-1252 with a warning)"
    )
    parser.add_argument(
        "--embedding-cache",
        type=Path,
        default=default_store(),
        help=f"SQLite file of cached embeddings (default: {default_store()})",
    )
    parser.add_argument(
        "--no-embedding-cache", action="store_true", help="embed every document afresh and cache nothing"
    )
    parser.add_argument(
        "--embedding-model",
        default=defaults.embedding_model,
        metavar="NAME",
        help=f"document representation: {LEXICAL} (TF-IDF -> SVD fitted on the corpus), an encoder "
        f"({', '.join(ENCODER_NAMES)}, or a local sentence-transformers folder), or blocks joined by '+' (default: "
        f"{defaults.embedding_model}; see pipeline/represent/representation.py)",
    )
    parser.add_argument(
        "--min-cluster-size", type=int, default=None, help="HDBSCAN min_cluster_size (default: about sqrt(n)/2)"
    )
    parser.add_argument(
        "--min-samples", type=int, default=None, help="HDBSCAN min_samples (default: about min_cluster_size / 3)"
    )
    parser.add_argument(
        "--max-topics",
        type=int,
        default=defaults.max_topics,
        help=f"merge down to at most this many topics (default: {defaults.max_topics}; 0 = no limit)",
    )
    parser.add_argument("--no-outlier-reduction", action="store_true", help="keep every HDBSCAN outlier in topic -1")
    parser.add_argument(
        "--outlier-threshold",
        type=float,
        default=defaults.outlier_threshold,
        help="minimum embedding similarity for reassigning an outlier",
    )
    parser.add_argument(
        "--map-refine-max-documents",
        type=int,
        default=defaults.map_refine_max_documents,
        help=(
            "refine the 2D map with NeRV for corpora up to this size (default: "
            f"{defaults.map_refine_max_documents}; 0 = never; see pipeline/geometry/refine.py)"
        ),
    )
    parser.add_argument(
        "--fit-sample-size",
        type=int,
        default=defaults.fit_sample_size,
        help=(
            "above this many documents fit UMAP and HDBSCAN on a sample of this many and place the rest from their "
            f"nearest sampled papers (default: {defaults.fit_sample_size:,}; 0 = fit every document; see "
            "pipeline/geometry/landmarks.py)"
        ),
    )
    parser.add_argument(
        "--fit-sample-map-epochs",
        type=int,
        default=defaults.fit_sample_map_epochs,
        help=(
            "with a fit sample, UMAP's epochs over every document, started from the sample's map with the rest placed "
            f"(default: {defaults.fit_sample_map_epochs}; docs/decisions/sample-fit.md)"
        ),
    )
    for flag, what, above in (
        ("--umap-epochs", "the clustering space's", CLUSTER_SPACE_EPOCHS),
        ("--map-epochs", "the map's", MAP_EPOCHS),
    ):
        parser.add_argument(
            flag,
            type=int,
            default=None,
            help=(
                f"SGD epochs of {what} UMAP fit (default: UMAP's own, 500 up to 10,000 documents and 200 above, "
                f"but {above} above {FEWER_EPOCHS_ABOVE:,} documents fitted whole; fewer are faster and coarser: "
                "docs/decisions/map-umap-settings.md)"
            ),
        )
    parser.add_argument(
        "--theme-grouping",
        choices=("fields", "map"),
        default=defaults.theme_grouping,
        help=(
            "group topics into themes by the field their papers belong to (fields, the default) or by their places "
            "on the map (map); see docs/decisions/theme-measures.md"
        ),
    )
    parser.add_argument(
        "--dask-scheduler",
        default=None,
        metavar="ADDRESS",
        help=(
            "run the per-document work of a sampled build on a Dask cluster: local:N (N worker processes here) or "
            "tcp://host:8786 (see docs/scale.md); the same atlas as without"
        ),
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=defaults.random_state,
        help=f"random seed of UMAP (default: {defaults.random_state})",
    )
    parser.add_argument(
        "--name",
        default=None,
        help="the corpus's name on the page and its figures, e.g. \"ICLR 2025\" (default: from the file's name)",
    )
    parser.add_argument(
        "--namer-url",
        default=None,
        help="optional: an OpenAI-compatible endpoint (e.g. http://127.0.0.1:8080/v1) whose model names each topic "
        "beside its computed name (column llm_label); off by default",
    )
    parser.add_argument("--force", action="store_true", help="replace --cache even if it is not a Topic Atlas cache")
    parser.add_argument(
        "--no-align",
        action="store_true",
        help=(
            "number the topics afresh instead of keeping the ids of the "
            "atlas already in --cache (see pipeline/topics/align.py)"
        ),
    )
    parser.set_defaults(handler=_handle_build)


def checked_representation(name: str) -> str:
    """``name`` (``--embedding-model``) once each of its blocks is known: tfidf-svd, an encoder name (ENCODER_NAMES)
    or an existing local sentence-transformers folder, so that a bad name is refused before any stage runs (and a
    name the Hub would be asked for, offline, never reaches it). Raises InputError listing the names accepted."""
    accepted = f"{LEXICAL}, {', '.join(ENCODER_NAMES)}, a local sentence-transformers folder, or blocks joined by '+'"
    try:
        blocks = block_names(name)
    except ValueError as error:
        raise InputError(f"--embedding-model {name!r}: blocks are joined by '+'; give {accepted}") from error
    unknown = [block for block in blocks if not is_lexical(block) and not is_known_encoder(block)]
    if unknown:
        raise InputError(f"--embedding-model {name!r}: {unknown[0]!r} is no representation; give {accepted}")
    return name


def checked_epochs(epochs: int, flag: str) -> int:
    """An epochs option ``flag`` (``--fit-sample-map-epochs``, ``--umap-epochs``, ``--map-epochs``), at least 1.
    Raises InputError otherwise."""
    if epochs < 1:
        raise InputError(f"{flag} {epochs}: give 1 or more epochs")
    return epochs


def _handle_build(args: argparse.Namespace) -> int:
    from topic_atlas.atlas import Atlas

    config = replace(
        BuildConfig(),
        embedding_model=checked_representation(args.embedding_model),
        min_cluster_size=args.min_cluster_size,
        min_samples=args.min_samples,
        max_topics=args.max_topics or None,
        reduce_outliers=not args.no_outlier_reduction,
        outlier_threshold=args.outlier_threshold,
        map_refine_max_documents=args.map_refine_max_documents,
        fit_sample_size=args.fit_sample_size,
        fit_sample_map_epochs=checked_epochs(args.fit_sample_map_epochs, "--fit-sample-map-epochs"),
        umap_n_epochs=None if args.umap_epochs is None else checked_epochs(args.umap_epochs, "--umap-epochs"),
        map_n_epochs=None if args.map_epochs is None else checked_epochs(args.map_epochs, "--map-epochs"),
        dask_scheduler=args.dask_scheduler,
        theme_grouping=args.theme_grouping,
        random_state=args.seed,
        corpus_name=(args.name or "").strip() or None,
        namer_url=args.namer_url,
    )
    atlas = Atlas.build(
        args.input,
        args.cache,
        config,
        collections=args.collections,
        encoding=args.encoding,
        embedding_store=None if args.no_embedding_cache else args.embedding_cache,
        force=args.force,
        align=not args.no_align,
    )
    manifest = atlas.manifest
    print(
        f"cache written to {atlas.folder}: {counted(manifest['n_documents'], 'document')}, "
        f"{counted(manifest['n_topics'], 'topic')}, "
        f"outlier fraction {manifest['outlier_fraction']:.3f}, peak memory {manifest['peak_rss_mb']:.0f} MiB"
    )
    print(f"  - {manifest.get('alignment', 'not aligned')}")
    for note in dict.fromkeys(manifest["notes"] + manifest["warnings"]):  # a note that is also a warning, once
        if not shown_on_terminal(note):  # every message once: a note logged during the run is not repeated
            print(f"  - {note}")
    print("  stage seconds: " + ", ".join(f"{stage} {seconds:.1f}" for stage, seconds in manifest["timings_s"].items()))
    return 0
