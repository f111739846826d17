"""What a build or an add reads, from the arguments a person gives: one corpus file, several files (each a
collection), a TOML collection file, or a file named as a collection (``--name``, ``--venue``, ``--year``).

:meth:`topic_atlas.Atlas.build` and :meth:`topic_atlas.Atlas.add` call these, and so the command line
(``topic_atlas/commands/build.py``, ``add.py``) through them; the collections themselves are read by
:mod:`pipeline.ingest.collections`. The errors name the command line's flags, which the API's arguments mirror.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from pipeline.ingest.collections import Collection, collection_from_path, read_collection_file
from pipeline.runtime.errors import InputError


def build_inputs(inputs: Sequence[Path], collections_file: Path | None = None) -> tuple[Path, list[Collection] | None]:
    """(the file the manifest names, the collections or None) of a build: ``collections_file``'s collections; else
    one input file (none: pipeline.operations.build.default_input) built alone exactly as always; else several,
    each a collection named by its file (two files named alike: each by its own stem).

    Raises InputError for both ``inputs`` and ``collections_file``, or the same file given twice."""
    from pipeline.operations.build import default_input

    if collections_file is not None:
        if inputs:
            raise InputError("give either --collections FILE or --input files, not both")
        return collections_file, read_collection_file(collections_file)
    if len(inputs) <= 1:
        return (inputs[0] if inputs else default_input()), None
    collections = [collection_from_path(path.expanduser().resolve()) for path in inputs]
    names = [collection.name for collection in collections]
    if len(set(names)) < len(names):  # two files named alike: each by its own stem
        collections = [replace(collection, name=collection.path.stem) for collection in collections]
    if len({collection.path for collection in collections}) < len(collections):
        raise InputError("the same --input file is given twice; give each collection once")
    return inputs[0], collections


def add_inputs(
    input_path: Path | None,
    collections_file: Path | None = None,
    name: str | None = None,
    venue: str | None = None,
    year: int | None = None,
) -> tuple[Path | None, list[Collection] | None]:
    """(the plain input file, the collections to add) of an add: ``collections_file``'s entries, and ``input_path``
    as one more collection when ``name``, ``venue`` or ``year`` name it (each defaulting to what its file name says),
    else as plain papers (or as a collection named from its file when the atlas has collections:
    pipeline.operations.add.read_incoming).

    Raises InputError when neither file is given, or ``name``, ``venue`` or ``year`` without ``input_path``."""
    if input_path is None and collections_file is None:
        raise InputError("give --input FILE and/or --collections FILE")
    collections = read_collection_file(collections_file) if collections_file is not None else []
    named = name is not None or venue is not None or year is not None
    if input_path is None:
        if named:
            raise InputError("--name, --venue and --year describe --input; give --input FILE")
        return None, collections
    if not named:
        return input_path, collections or None
    path = input_path.expanduser().resolve()
    found = collection_from_path(path)
    venue = (venue or found.venue).strip()
    year = year if year is not None else found.year
    name = (name or (f"{venue} {year}" if year is not None else found.name)).strip()
    return None, [*collections, replace(found, name=name, venue=venue, year=year)]
