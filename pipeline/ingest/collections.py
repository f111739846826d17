"""Several corpus files as one atlas: collections (a venue and a year each), their side tables, and their merge.

A collection is one input file plus what the file itself does not say: its name ("ICLR 2024"), venue ("ICLR"),
year (2024) and side tables joined by id (``iclr2024_decisions_partial.parquet``: decisions and ratings). It comes
from a collection file (TOML, :func:`read_collection_file`) or from a bare ``--input`` path
(:func:`collection_from_path`, venue and year read from the file name).

Each collection is read and cleaned on its own (pipeline.ingest.corpus, pipeline.ingest.clean), so duplicates
within a collection are handled as for a single file; :func:`merge_collections` then stacks the cleaned collections
into one PreparedCorpus with the columns ``collection``, ``venue`` and ``year``. A paper that appears in two
collections is **not** dropped: it is a paper of each, and ``same_text_ids`` links it to its other appearances
(the same abstract, or title without one: pipeline.ingest.clean.copy_keys). An id found in more than one
collection is prefixed with its collection's slug (``iclr2024:abc``) in every collection where it occurs, so ids
stay unique.
"""

from __future__ import annotations

import hashlib
import logging
import re
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from pipeline.ingest.clean import COPY_COLUMN, PreparedCorpus, copy_keys
from pipeline.ingest.corpus import RawCorpus, file_sha256
from pipeline.ingest.decisions import normalise_decision
from pipeline.ingest.years import year_ranges
from pipeline.runtime.errors import InputError
from pipeline.runtime.parquet import read_frame

if TYPE_CHECKING:
    from pipeline.cache.manifest import CollectionEntry

log = logging.getLogger(__name__)

COLLECTION_COLUMNS = ("collection", "venue", "year")
LINK_COLUMN = "same_text_ids"
# Columns a side table may bring, by the name in the side table -> the canonical column it fills.
SIDE_COLUMNS = {"decision": "decision", "authors": "authors", "ratings": "rating_mean", "rating_mean": "rating_mean"}
_VENUE_NAMES = {"iclr": "ICLR", "neurips": "NeurIPS", "icml": "ICML", "nips": "NeurIPS", "acl": "ACL", "emnlp": "EMNLP"}
_STEM_PATTERN = re.compile(r"^([A-Za-z]+)[_-]?((?:19|20)\d\d)")


@dataclass(frozen=True)
class SideTable:
    """A table joined to a collection's records by id: ``path`` (Parquet, CSV or JSON lines) and ``on``, the id
    column in it (the collection's ids are its ``doc_id``)."""

    path: Path
    on: str = "openreview_id"


@dataclass(frozen=True)
class Collection:
    """One input file of an atlas of several: ``name`` (shown on the page, e.g. "ICLR 2024"), ``venue``, ``year``
    (None when unknown) and its side tables."""

    path: Path
    name: str
    venue: str
    year: int | None
    side_tables: tuple[SideTable, ...] = field(default_factory=tuple)

    @property
    def slug(self) -> str:
        """The name in lower-case letters and digits (``iclr2024``): the prefix of a colliding id."""
        return re.sub(r"[^a-z0-9]+", "", self.name.lower()) or "collection"


def collections_display_name(collections: list[Collection]) -> str:
    """The name of an atlas of several collections built without ``--name``: each venue, in the order it first
    appears, with its years (a run of consecutive years as a range), e.g. "ICLR 2024–2026, NeurIPS 2024–2025, ICML
    2025"; a collection with no year is named as it is. Never empty for a non-empty list."""
    years: dict[str, list[int]] = {}
    parts: list[str] = []
    for collection in collections:
        if collection.year is None:
            parts.append(collection.name)
            continue
        if collection.venue not in years:
            years[collection.venue] = []
            parts.append(collection.venue)
        years[collection.venue].append(collection.year)
    return ", ".join(f"{part} {year_ranges(years[part], '–')}" if part in years else part for part in parts)


def collection_from_path(path: Path) -> Collection:
    """A collection of a bare input file: venue and year from a name like ``iclr2024_abstracts.parquet``, else the
    file's stem as its venue and no year."""
    match = _STEM_PATTERN.match(path.stem)
    if match:
        venue = _VENUE_NAMES.get(match.group(1).lower(), match.group(1).upper())
        year: int | None = int(match.group(2))
        return Collection(path, f"{venue} {year}", venue, year)
    return Collection(path, path.stem, path.stem, None)


def _field(entry: dict[str, Any], key: str, kind: type, source: Path, number: int) -> Any:
    value = entry.get(key)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise InputError(
            f"{source}: collection {number} needs '{key}' as a {kind.__name__} (found {value!r}); "
            'each [[collection]] has path, name, venue and year, e.g. path = "iclr2024.parquet"'
        )
    return value


def read_collection_file(source: Path) -> list[Collection]:
    """The collections of a TOML collection file (``data/collections/all-venues.toml`` is one)::

        root = "../../../shared/data"          # optional: relative paths are resolved from here
        [[collection]]
        name = "ICLR 2024"
        venue = "ICLR"
        year = 2024
        path = "iclr2024/iclr2024_abstracts.parquet"
        side_tables = [{path = "iclr2024/iclr2024_decisions_partial.parquet", on = "openreview_id"}]

    Relative paths are resolved against ``root``, itself relative to the collection file's folder.

    Raises InputError naming the file and the collection when the file is not TOML, lists no collection, misses a
    field, repeats a name, or names a file that does not exist.
    """
    source = Path(source).expanduser().resolve()
    try:
        data = tomllib.loads(source.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise InputError(f"{source}: not a readable TOML collection file ({error})") from error
    root = (source.parent / str(data.get("root", "."))).resolve()
    entries = data.get("collection")
    if not isinstance(entries, list) or not entries:
        raise InputError(f"{source}: no [[collection]] tables; each needs path, name, venue and year")
    _refuse_unknown_keys(source, data, entries)
    collections = []
    for number, entry in enumerate(entries, start=1):
        path = root / _field(entry, "path", str, source, number)
        sides = tuple(
            SideTable(root / _field(side, "path", str, source, number), str(side.get("on", "openreview_id")))
            for side in entry.get("side_tables", [])
        )
        for needed in (path, *(side.path for side in sides)):
            if not needed.is_file():
                raise InputError(f"{source}: collection {number} names {needed}, which does not exist")
        year = entry.get("year")
        if year is not None and (not isinstance(year, int) or isinstance(year, bool)):
            raise InputError(f"{source}: collection {number} has year {year!r}; give a whole number such as 2025")
        collections.append(
            Collection(
                path,
                _field(entry, "name", str, source, number),
                _field(entry, "venue", str, source, number),
                year,
                sides,
            )
        )
    names = [collection.name for collection in collections]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise InputError(f"{source}: collection names repeated ({', '.join(repeated)}); give each its own name")
    return collections


# The keys a collection file may hold: at the top, in each [[collection]], in each side table.
FILE_KEYS = {"root", "collection"}
COLLECTION_KEYS = {"name", "venue", "year", "path", "side_tables"}
SIDE_TABLE_KEYS = {"path", "on"}


def _refuse_unknown_keys(source: Path, data: dict, entries: list) -> None:
    """Raise InputError naming the first key of ``source`` that no collection file has (a misspelt ``yaer`` would
    otherwise be ignored, and the collection's year left out), with the keys allowed where it stands."""
    places = [("the file", data, FILE_KEYS)]
    for number, entry in enumerate(entries, start=1):
        if isinstance(entry, dict):
            places.append((f"collection {number}", entry, COLLECTION_KEYS))
            sides = [side for side in entry.get("side_tables", []) if isinstance(side, dict)]
            places += [(f"collection {number}'s side table", side, SIDE_TABLE_KEYS) for side in sides]
    for where, table, allowed in places:
        unknown = sorted(set(table) - allowed)
        if unknown:
            raise InputError(
                f"{source}: {where} has the key {unknown[0]!r}, which a collection file does not use; "
                f"the keys there are {', '.join(sorted(allowed))}"
            )


def _read_side_table(side: SideTable) -> pd.DataFrame:
    """The side table as a frame indexed by its id column. Raises InputError (unreadable, no id column, ids
    repeated)."""
    try:
        if side.path.suffix.lower() == ".parquet":
            table = read_frame(side.path)
        elif side.path.suffix.lower() in (".jsonl", ".ndjson"):
            table = pd.read_json(side.path, lines=True)
        else:
            table = pd.read_csv(side.path)
    except Exception as error:  # pyarrow and pandas raise several types for damaged files
        raise InputError(f"{side.path}: not a readable side table ({type(error).__name__}: {error})") from error
    if side.on not in table.columns:
        raise InputError(f"{side.path}: no id column '{side.on}' (columns: {', '.join(map(str, table.columns))})")
    ids = table[side.on].astype(str)
    if ids.duplicated().any():
        raise InputError(f"{side.path}: ids repeated in '{side.on}' ({', '.join(ids[ids.duplicated()].head(5))})")
    return table.set_index(ids)


def _side_value(column: str, value: Any) -> Any:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    if column == "decision":
        return normalise_decision(str(value))
    if column == "ratings":
        scores = [float(score) for score in np.asarray(value, dtype=float).ravel() if np.isfinite(score)]
        return float(np.mean(scores)) if scores else None
    if column == "rating_mean":
        return float(value)
    if column == "authors" and not isinstance(value, str):
        return "; ".join(str(name) for name in np.asarray(value, dtype=object).ravel())
    return str(value)


def join_side_tables(raw: RawCorpus, collection: Collection) -> RawCorpus:
    """``raw`` with each side table's decision, authors and ratings (mean of the list, as ``rating_mean``) joined by
    id; a value the file itself has is kept. Its ``sha256`` then covers the side tables too (the cleaned corpus is
    stored under it). A side-table row without a paper, or a paper without a row, is counted in a warning."""
    if not collection.side_tables:
        return raw
    records = raw.records.copy()
    digest = hashlib.sha256(raw.sha256.encode("ascii"))
    warnings = list(raw.warnings)
    for side in collection.side_tables:
        table = _read_side_table(side)
        digest.update(file_sha256(side.path).encode("ascii"))
        matched = records["doc_id"].isin(table.index)
        if not matched.all() or len(table) > int(matched.sum()):
            warnings.append(
                f"{collection.name}: side table {side.path.name} matched {int(matched.sum())} of {len(records)} papers "
                f"by '{side.on}' ({len(table) - int(matched.sum())} of its rows name no paper)"
            )
        for source_column, column in SIDE_COLUMNS.items():
            if source_column not in table.columns:
                continue
            values = [
                _side_value(source_column, table.at[doc_id, source_column]) if hit else None
                for doc_id, hit in zip(records["doc_id"], matched)
            ]
            if column in records.columns:
                values = [own if own is not None and own == own else side for own, side in zip(records[column], values)]
            records[column] = pd.Series(values, dtype=float if column == "rating_mean" else object)
    return replace(raw, records=records, sha256=digest.hexdigest(), warnings=warnings)


def colliding_ids(collections: list[Collection], corpora: list[PreparedCorpus]) -> set[str]:
    """Ids (documents, copies and drops) found in more than one collection."""
    seen: dict[str, int] = {}
    for prepared in corpora:
        ids = set(prepared.documents["doc_id"])
        ids.update(prepared.copies["doc_id"] if len(prepared.copies) else [])
        ids.update(doc_id for dropped in prepared.dropped_ids.values() for doc_id in dropped)
        for doc_id in ids:
            seen[doc_id] = seen.get(doc_id, 0) + 1
    return {doc_id for doc_id, count in seen.items() if count > 1}


def _found_in(corpora: list[PreparedCorpus], reserved: set[str] | frozenset[str]) -> set[str]:
    """The document and copy ids of ``corpora`` that are in ``reserved``."""
    if not reserved:
        return set()
    found: set[str] = set()
    for prepared in corpora:
        found.update(doc_id for doc_id in prepared.documents["doc_id"] if doc_id in reserved)
        if len(prepared.copies):
            found.update(doc_id for doc_id in prepared.copies["doc_id"] if doc_id in reserved)
    return found


def _prefixed(prepared: PreparedCorpus, collection: Collection, colliding: set[str]) -> PreparedCorpus:
    """``prepared`` with its colliding ids prefixed ``<slug>:`` everywhere they occur, and the collection's
    columns added to its documents and copies."""

    def rename(doc_id: str) -> str:
        return f"{collection.slug}:{doc_id}" if doc_id in colliding else doc_id

    documents = prepared.documents.copy()
    documents["doc_id"] = [rename(doc_id) for doc_id in documents["doc_id"]]
    documents["duplicate_ids"] = [[rename(doc_id) for doc_id in ids] for ids in documents["duplicate_ids"]]
    copies = prepared.copies.copy()
    if len(copies):
        copies["doc_id"] = [rename(doc_id) for doc_id in copies["doc_id"]]
        copies[COPY_COLUMN] = [rename(doc_id) for doc_id in copies[COPY_COLUMN]]
    for frame in (documents, copies) if len(copies) else (documents,):
        frame["collection"], frame["venue"] = collection.name, collection.venue
        frame["year"] = pd.array([collection.year] * len(frame), dtype="Int64")
    return PreparedCorpus(
        documents,
        dict(prepared.dropped),
        {reason: [rename(doc_id) for doc_id in ids] for reason, ids in prepared.dropped_ids.items()},
        [f"{collection.name}: {warning}" for warning in prepared.warnings],
        copies,
        dict(prepared.languages),
    )


def same_text_links(documents: pd.DataFrame) -> list[list[str]]:
    """Per document of ``documents`` (doc_id, collection, title, abstract and ``text``, its model text), the ids of
    the documents of other collections with the same abstract (or, without one, the same title), compared as the
    build compares duplicates (pipeline.ingest.clean.copy_keys), in row order; within a collection copies are already
    one paper. Until 2026-12-07 the title and abstract were compared together, so a resubmission under a new title
    with the same abstract, which within one collection is a copy, was not linked across two."""
    keys = copy_keys(documents["title"].tolist(), documents["abstract"].tolist(), documents["text"].tolist())
    by_key: dict[str, list[int]] = {}
    for row, key in enumerate(keys):
        if key:
            by_key.setdefault(key, []).append(row)
    ids, names = documents["doc_id"].tolist(), documents["collection"].tolist()
    return [[ids[other] for other in by_key.get(key, []) if names[other] != names[row]] for row, key in enumerate(keys)]


def _nulls_as_none(frame: pd.DataFrame) -> pd.DataFrame:
    """Object columns with the NaN that stacking frames without the column leaves turned into None (Parquet's
    null; a string column with a float NaN cannot be written)."""
    for column in frame.columns:
        if frame[column].dtype == object:
            frame[column] = [None if isinstance(value, float) and value != value else value for value in frame[column]]
    return frame


def merge_collections(
    collections: list[Collection], corpora: list[PreparedCorpus], reserved: set[str] | frozenset[str] = frozenset()
) -> PreparedCorpus:
    """The cleaned collections as one PreparedCorpus, in collection order: colliding ids prefixed, the columns
    ``collection``, ``venue``, ``year`` (Int64) and ``same_text_ids`` added, drops summed per reason (their ids
    listed), warnings prefixed with the collection's name, languages summed. ``reserved``: ids already taken
    elsewhere (the papers of the atlas that ``add`` adds to): an id of these collections found there is prefixed
    too."""
    colliding = colliding_ids(collections, corpora) | _found_in(corpora, reserved)
    if colliding:
        log.warning(
            "%d ids occur in more than one collection; they were prefixed with their collection", len(colliding)
        )
    parts = [_prefixed(prepared, collection, colliding) for collection, prepared in zip(collections, corpora)]
    documents = _nulls_as_none(pd.concat([part.documents for part in parts], ignore_index=True))
    documents[LINK_COLUMN] = same_text_links(documents)
    copies = [_nulls_as_none(part.copies) for part in parts if len(part.copies)]
    dropped: dict[str, int] = {}
    dropped_ids: dict[str, list[str]] = {}
    languages: dict[str, int] = {}
    for part in parts:
        for reason, count in part.dropped.items():
            dropped[reason] = dropped.get(reason, 0) + count
        for reason, ids in part.dropped_ids.items():
            dropped_ids.setdefault(reason, []).extend(ids)
        for language, count in part.languages.items():
            languages[language] = languages.get(language, 0) + count
    warnings = [warning for part in parts for warning in part.warnings]
    if colliding:
        warnings.append(
            f"{len(colliding)} ids occur in more than one collection ({', '.join(sorted(colliding)[:5])}); "
            "each was prefixed with its collection's slug, e.g. iclr2024:ID"
        )
    return PreparedCorpus(
        documents,
        dropped,
        dropped_ids,
        warnings,
        pd.concat(copies, ignore_index=True) if copies else pd.DataFrame(),
        dict(sorted(languages.items(), key=lambda item: -item[1])),
    )


def combined_raw(collections: list[Collection], raws: list[RawCorpus], source: Path) -> RawCorpus:
    """One RawCorpus standing for the collections in the manifest: ``source`` (the collection file, or the first
    input) as its path, a SHA-256 over the collections' names and digests, the records stacked."""
    digest = hashlib.sha256()
    for collection, raw in zip(collections, raws):
        digest.update(f"{collection.name}\0{collection.venue}\0{collection.year}\0{raw.sha256}\n".encode())
    first = raws[0]
    return RawCorpus(
        records=pd.concat([raw.records for raw in raws], ignore_index=True),
        path=source,
        sha256=digest.hexdigest(),
        encoding=",".join(dict.fromkeys(raw.encoding for raw in raws)),
        text_column="abstract" if any(raw.text_column == "abstract" for raw in raws) else "title",
        columns_found=list(dict.fromkeys(column for raw in raws for column in raw.columns_found)),
        warnings=[],
        skipped={},
        id_column=first.id_column,
    )


def collections_manifest(
    collections: list[Collection], raws: list[RawCorpus], corpora: list[PreparedCorpus]
) -> list[CollectionEntry]:
    """The manifest's ``collections``: per collection its name, venue, year, file, SHA-256 (side tables
    included), side tables, records read, documents kept and drops."""
    return [
        {
            "name": collection.name,
            "venue": collection.venue,
            "year": collection.year,
            "path": str(collection.path),
            "sha256": raw.sha256,
            "side_tables": [{"path": str(side.path), "on": side.on} for side in collection.side_tables],
            "records": len(raw.records) + sum(raw.skipped.values()),
            "documents": len(prepared.documents),
            "dropped": prepared.dropped,
        }
        for collection, raw, prepared in zip(collections, raws, corpora)
    ]
