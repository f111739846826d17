"""The corpus a benchmark reads: one corpus file (``--input``) or a collection file (``--collections``, an atlas of
several collections as ``topic-atlas build --collections`` builds it), cleaned exactly as the build cleans it.

Used by bench.build and bench.quality so that the peers they fit see the documents our build sees.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import pandas as pd


@dataclass(frozen=True)
class Source:
    """What a benchmark builds: ``path`` and the build option that names it (``--input`` or ``--collections``)."""

    path: Path
    option: str = "--input"

    @property
    def is_collections(self) -> bool:
        """True for a collection file (several collections as one atlas)."""
        return self.option == "--collections"

    def build_arguments(self) -> list[str]:
        """The ``topic-atlas build`` arguments that read this source."""
        return [self.option, str(self.path)]


def add_source_arguments(parser: argparse.ArgumentParser) -> None:
    """``--input FILE`` or ``--collections FILE``, one of them required."""
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--input", type=Path, help="corpus file (any format the build reads)")
    group.add_argument(
        "--collections",
        type=Path,
        help="collection file (TOML, e.g. data/collections/all-venues.toml): the atlas of several collections",
    )


def source_of(args: argparse.Namespace) -> Source:
    """The Source of parsed ``--input`` / ``--collections`` arguments, its path resolved."""
    if args.collections is not None:
        return Source(args.collections.resolve(), "--collections")
    return Source(args.input.resolve(), "--input")


def cleaned_documents(source: Source) -> pd.DataFrame:
    """The documents the build fits, cleaned as it cleans them: one row per document with ``text`` (the model
    text), ``doc_id`` and the reference columns the file has (``primary_area``, ``decision``; for collections also
    ``collection``, ``venue``, ``year``). One file: in input order (pipeline.ingest.clean.prepare_documents); a
    collection file: each collection cleaned on its own and merged, in the build's canonical order
    (pipeline.operations.build.read_and_clean_collections). Raises InputError for an unreadable file."""
    from pipeline.ingest.clean import prepare_documents
    from pipeline.ingest.corpus import load_corpus

    if not source.is_collections:
        return prepare_documents(load_corpus(source.path)).documents
    from pipeline.ingest.collections import read_collection_file
    from pipeline.operations.build import read_and_clean_collections
    from pipeline.operations.build_state import documents_with_all_columns
    from pipeline.runtime.stages import StageTimer
    from pipeline.store.layouts import open_store

    corpus, _ = read_and_clean_collections(
        read_collection_file(source.path), source.path, None, open_store(None), StageTimer()
    )
    return documents_with_all_columns(corpus)
