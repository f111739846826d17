"""``add`` of whole collections (a venue and a year each) to an atlas: read, matched against the atlas, linked.

A collection is read, joined to its side tables and cleaned as the build reads it (pipeline.ingest.collections,
pipeline.ingest.clean), so duplicates within it are handled as the build handles them (a repeated abstract is one
paper; its copies go to copies.parquet). A paper is *already in the atlas* only when the atlas holds a paper of
the same collection with its id (or, for a generated ``row-N`` id, its text: pipeline.topics.align.paper_keys). A
paper under a new id whose abstract a paper of the same collection has is a *copy of a paper in the atlas*, left
out as the build leaves out a duplicate (pipeline.ingest.clean.copy_key), and so are its own copies in the file; a
copy of a paper of another collection is a paper of its own, linked to its other appearances by ``same_text_ids``
(the same model text) and in journeys.parquet (:func:`added_journeys`: the build's rule of pipeline.journeys.links).
An id that a paper of another collection already holds is prefixed with the new collection's slug
(``iclr2026:ID``), as the build prefixes colliding ids; the atlas's own papers keep theirs.

An atlas built from one file has one collection: its papers get ``collection``, ``venue`` and ``year`` from the
atlas (:func:`own_collection`: its corpus name, venue and year read from its file name as the build reads them).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from pipeline.cache import TopicCache
from pipeline.cache.manifest import CollectionEntry, JourneySummary
from pipeline.ingest.clean import copy_key
from pipeline.ingest.collections import LINK_COLUMN, Collection, collection_from_path

log = logging.getLogger(__name__)

DROP_ALREADY_IN_ATLAS = "already in the atlas"
# A record whose id the atlas gives to a paper of another text: an id names one paper, so it is not added.
DROP_ID_TAKEN = "id in the atlas with another text"
# A record under a new id whose abstract an atlas paper has: the build's duplicate rule (pipeline.ingest.clean,
# ``duplicate``: the same abstract, also under another title or none), kept across the build and its adds.
DROP_COPY_IN_ATLAS = "copy of a paper in the atlas (the same abstract)"


@dataclass
class NewPapers:
    """The papers an add brings, cleaned and not yet in the atlas.

    Attributes
    ----------
    documents : one row per new paper: the build's columns plus ``text`` (the model text) and, for collections,
        ``collection``, ``venue``, ``year``.
    dropped, dropped_ids : per reason, how many records were left out and their ids ("already in the atlas"
        included).
    copies : the surplus copies of new papers (pipeline.ingest.clean) and the copies of atlas papers under new ids
        (``copy_of`` their atlas paper; :func:`split_known`), for copies.parquet.
    entries : the manifest's ``collections`` entries of the new collections (empty for a plain add).
    dropped_records : the records cleaning dropped, as ``dropped.parquet`` lists them (pipeline.ingest.clean
        .dropped_table; empty when none).
    """

    documents: pd.DataFrame
    dropped: dict[str, int]
    dropped_ids: dict[str, list[str]]
    copies: pd.DataFrame = field(default_factory=pd.DataFrame)
    entries: list[CollectionEntry] = field(default_factory=list)
    dropped_records: pd.DataFrame = field(default_factory=pd.DataFrame)


class KnownSplit(NamedTuple):
    """What :func:`split_known` makes of an add's papers: those to add, and the ids of those left out, by reason."""

    kept: pd.DataFrame  # the new papers not yet in the atlas
    known: list[str]  # ids of those already there (DROP_ALREADY_IN_ATLAS)
    clashing: list[str]  # ids the atlas gives to a paper of another text (DROP_ID_TAKEN)
    copies: list[str]  # ids of copies of an atlas paper's abstract under a new id (DROP_COPY_IN_ATLAS)
    copy_rows: pd.DataFrame  # those papers' rows, with ``copy_of``: the atlas paper they copy (for copies.parquet)


def split_known(atlas_documents: pd.DataFrame, new: pd.DataFrame, batch: int) -> KnownSplit:
    """Split the cleaned ``new`` papers (one row per paper: doc_id, title, abstract) against ``atlas_documents`` (the
    atlas's papers; for a collection, those of the same collection). A paper is already there when its identity
    (pipeline.topics.align.paper_keys: its id, or for a generated ``row-N`` id its text) is one of theirs, or its id
    is one of theirs; when its id is theirs but its title and abstract are not (pipeline.ingest.clean.duplicate_key),
    it is left out as DROP_ID_TAKEN instead (an id names one paper). A paper under a new id whose abstract an atlas
    paper has (pipeline.ingest.clean.copy_key; a titles-only paper's title) is a copy, left out as the build leaves
    out a duplicate and listed as the build lists one (``copy_rows``, for copies.parquet). A generated id that an atlas
    paper with other text holds is renamed ``row-N+added-K`` (K: ``batch``, this add's number) so ids stay
    unique."""
    from pipeline.ingest.clean import COPY_COLUMN
    from pipeline.topics.align import GENERATED_ID, paper_keys, text_key

    atlas_keys = set(paper_keys(atlas_documents))
    atlas_ids = set(atlas_documents["doc_id"].astype(str))
    ids = new["doc_id"].astype(str)
    by_id = np.array([doc_id in atlas_ids and not GENERATED_ID.match(doc_id) for doc_id in ids], dtype=bool)
    known = by_id | np.array([key in atlas_keys for key in paper_keys(new)], dtype=bool)
    clashing = np.zeros(len(new), dtype=bool)
    if by_id.any():
        wanted = set(ids[by_id])  # the atlas's papers of these ids only: their texts are compared
        atlas_rows = atlas_documents[atlas_documents["doc_id"].astype(str).isin(wanted)]
        atlas_text = {
            str(doc_id): text_key(title, abstract)
            for doc_id, title, abstract in zip(atlas_rows["doc_id"], atlas_rows["title"], atlas_rows["abstract"])
        }
        clashing[np.flatnonzero(by_id)] = [
            atlas_text[doc_id] != text_key(title, abstract)
            for doc_id, title, abstract in zip(ids[by_id], new.loc[by_id, "title"], new.loc[by_id, "abstract"])
        ]
    atlas_texts: dict[str, str] = {}  # copy key -> the first atlas paper of it
    for doc_id, title, abstract in zip(
        atlas_documents["doc_id"], atlas_documents["title"], atlas_documents["abstract"]
    ):
        atlas_texts.setdefault(copy_key(title, abstract), str(doc_id))
    atlas_texts.pop("", None)
    new_texts = [copy_key(*pair) for pair in zip(new["title"], new["abstract"])]
    copies = ~known & np.array([key in atlas_texts for key in new_texts], dtype=bool)
    copy_rows = new.loc[copies].assign(
        **{COPY_COLUMN: [atlas_texts[key] for key, copy in zip(new_texts, copies) if copy]}
    )
    kept = new.loc[~known & ~copies].copy()
    kept["doc_id"] = [
        f"{doc_id}+added-{batch}" if str(doc_id) in atlas_ids else str(doc_id) for doc_id in kept["doc_id"]
    ]
    return KnownSplit(
        kept.reset_index(drop=True),
        ids[known & ~clashing].tolist(),
        ids[clashing].tolist(),
        ids[copies].tolist(),
        copy_rows.reset_index(drop=True),
    )


def own_collection(atlas: TopicCache) -> Collection:
    """The one collection of an atlas built from one file: named as the atlas (its ``corpus_name``), with the venue
    and year read from its input file's name (pipeline.ingest.collections.collection_from_path)."""
    path = Path(str(atlas.manifest.get("input_path") or "atlas"))
    found = collection_from_path(path)
    name = str(atlas.manifest.get("corpus_name") or found.name)
    return Collection(path, name, found.venue, found.year)


def has_collections(atlas: TopicCache) -> bool:
    """True when the atlas's papers carry their collection (an atlas of several collections, or one an add grew)."""
    return "collection" in atlas.documents.columns and atlas.documents["collection"].notna().all()


def old_documents(atlas: TopicCache) -> pd.DataFrame:
    """The atlas's documents with ``collection``, ``venue``, ``year`` filled (from :func:`own_collection` where an
    atlas of one file lacks them) and ``same_text_ids`` present (empty lists where absent)."""
    documents = atlas.documents.copy()
    if not has_collections(atlas):
        own = own_collection(atlas)
        documents["collection"], documents["venue"] = own.name, own.venue
        documents["year"] = pd.array([own.year] * len(documents), dtype="Int64")
    if LINK_COLUMN not in documents.columns:
        documents[LINK_COLUMN] = [[] for _ in range(len(documents))]
    return documents


def atlas_entries(atlas: TopicCache) -> list[CollectionEntry]:
    """The manifest's ``collections`` of the atlas before the add: its own, or one entry for an atlas of one file."""
    if atlas.manifest.get("collections"):
        return list(atlas.manifest["collections"])
    own = own_collection(atlas)
    return [
        {
            "name": own.name,
            "venue": own.venue,
            "year": own.year,
            "path": str(own.path),
            "sha256": atlas.manifest.get("input_sha256"),
            "side_tables": [],
            "records": atlas.manifest.get("input_records"),
            "documents": int(atlas.manifest.get("n_documents_fitted", atlas.manifest["n_documents"])),
            "dropped": atlas.manifest.get("dropped", {}),
        }
    ]


def read_collections(atlas: TopicCache, collections: list[Collection], encoding: str | None, batch: int) -> NewPapers:
    """The new papers of ``collections`` (module docstring): each read, joined and cleaned on its own, its papers
    already in the atlas and the copies of their abstracts under new ids left out, ids taken by other collections
    prefixed. ``batch``: this add's number (1-based),
    for the ``row-N+added-K`` renaming of generated ids (pipeline.operations.add.split_known).

    Raises InputError naming the file (unreadable, or a repeated collection name)."""
    from pipeline.ingest.clean import COPY_COLUMN, dropped_table, prepare_documents
    from pipeline.ingest.collections import collections_manifest, combined_raw, join_side_tables, merge_collections
    from pipeline.ingest.corpus import load_corpus
    from pipeline.runtime.errors import InputError

    names = [collection.name for collection in collections]
    if len(set(names)) < len(names):
        raise InputError(f"collection names repeated ({', '.join(names)}); give each collection its own name")
    old = old_documents(atlas)
    raws, corpora, known_ids, clashing_ids, copied_ids, atlas_copies = [], [], [], [], [], []
    for collection in collections:
        raws.append(join_side_tables(load_corpus(collection.path, encoding=encoding), collection))
        prepared = prepare_documents(raws[-1])
        same = old[old["collection"] == collection.name]
        kept, known, clashing, copied, copy_rows = split_known(same, prepared.documents.reset_index(drop=True), batch)
        clashing_ids += clashing
        copies = prepared.copies
        if len(copies):  # a copy of a paper already in the atlas is in the atlas too, and so is a copy of a copy
            of_known, of_copied = copies[COPY_COLUMN].isin(set(known)), copies[COPY_COLUMN].isin(set(copied))
            known += copies.loc[of_known, "doc_id"].astype(str).tolist()
            copied += copies.loc[of_copied, "doc_id"].astype(str).tolist()
            atlas_paper = dict(zip(copy_rows["doc_id"].astype(str), copy_rows[COPY_COLUMN]))
            copy_rows = pd.concat(
                [
                    copy_rows,
                    copies[of_copied].assign(**{COPY_COLUMN: copies.loc[of_copied, COPY_COLUMN].map(atlas_paper)}),
                ],
                ignore_index=True,
            )
            copies = copies[~of_known & ~of_copied].reset_index(drop=True)
        known_ids += known
        copied_ids += copied
        atlas_copies.append(copy_rows.assign(collection=collection.name, venue=collection.venue, year=collection.year))
        corpora.append(replace(prepared, documents=kept, copies=copies))
    merged = merge_collections(collections, corpora, reserved=set(old["doc_id"].astype(str)))
    for warning in merged.warnings:
        log.warning(warning)
    dropped, dropped_ids = dict(merged.dropped), {reason: list(ids) for reason, ids in merged.dropped_ids.items()}
    left_out = ((DROP_ALREADY_IN_ATLAS, known_ids), (DROP_ID_TAKEN, clashing_ids), (DROP_COPY_IN_ATLAS, copied_ids))
    for reason, ids in left_out:
        if ids:
            dropped[reason], dropped_ids[reason] = len(ids), ids
    documents = merged.documents.drop(columns=[LINK_COLUMN]).reset_index(drop=True)
    taken = set(old["doc_id"].astype(str))  # still taken after prefixing (a generated id added twice): renamed

    def rename(doc_id: str) -> str:
        return f"{doc_id}+added-{batch}" if doc_id in taken else doc_id

    documents["doc_id"] = [rename(doc_id) for doc_id in documents["doc_id"]]
    copies = merged.copies
    if len(copies):
        copies = copies.assign(**{COPY_COLUMN: [rename(doc_id) for doc_id in copies[COPY_COLUMN]]})
    copies = pd.concat([frame for frame in [copies, *atlas_copies] if len(frame)] or [copies], ignore_index=True)
    records = combined_raw(collections, raws, collections[0].path).records
    return NewPapers(
        documents,
        dropped,
        dropped_ids,
        copies,
        collections_manifest(collections, raws, corpora),
        dropped_table(records, merged.dropped_ids, merged.dropped_copies),
    )


def link_same_texts(documents: pd.DataFrame, texts: list[str]) -> pd.DataFrame:
    """``documents`` (the grown atlas: doc_id, collection, title, abstract) with ``same_text_ids`` set: per paper the
    ids of the papers of other collections with the same abstract (pipeline.ingest.collections.same_text_links, the
    build's rule, read off ``texts``: their model texts, one per row)."""
    from pipeline.ingest.collections import same_text_links

    linked = documents.copy()
    linked[LINK_COLUMN] = same_text_links(documents.assign(text=texts))
    return linked


def merged_entries(atlas: TopicCache, new_entries: list[CollectionEntry]) -> list[CollectionEntry]:
    """The manifest's ``collections`` after an add: the atlas's entries (:func:`atlas_entries`), then the new
    collections'; a new entry of a collection the atlas already has adds its documents to it and is listed under
    its ``added`` (path, SHA-256, documents)."""
    entries = [entry.copy() for entry in atlas_entries(atlas)]
    by_name = {entry["name"]: entry for entry in entries}
    for entry in new_entries:
        if entry["name"] in by_name:
            known = by_name[entry["name"]]
            known["documents"] = int(known.get("documents") or 0) + int(entry["documents"])
            known["added"] = [
                *known.get("added", []),
                {"path": entry["path"], "sha256": entry["sha256"], "documents": entry["documents"]},
            ]
        else:
            entries.append(entry.copy())
    return entries


def added_journeys(
    atlas: TopicCache,
    documents: pd.DataFrame,
    embeddings: np.ndarray,
    lists: Any,
    entries: list[CollectionEntry],
) -> tuple[pd.DataFrame, JourneySummary]:
    """journeys.parquet of the grown atlas and the manifest's ``journeys``: the atlas's links, plus the links of
    the build's rule (pipeline.journeys.links.journey_links: near neighbours of another collection at least
    ``journey_similarity`` similar, or the same normalised title) that involve a new paper.

    ``documents``: the grown atlas's rows (old, then new) with doc_id, title, collection; ``embeddings`` their
    vectors (unit rows); ``lists``: pipeline.geometry.grown_neighbours.NearestLists of the add (each new paper's
    nearest papers, each old paper's nearest new papers); ``entries``: the manifest's collections (their time
    order). As in the build, vectors of fewer than ``journey_min_dims`` dimensions link by titles only."""
    from pipeline.journeys.links import best_in_each_collection, collection_order, journey_links, journey_summary

    params = atlas.manifest.get("params", {})
    threshold = float(params.get("journey_similarity", 0.8))
    min_dims = int(params.get("journey_min_dims", 512))
    n, m = len(atlas.documents), len(documents) - len(atlas.documents)
    codes, _ = pd.factorize(documents["collection"].astype(str))
    by_abstract = embeddings.shape[1] >= min_dims
    if by_abstract:
        found = [
            best_in_each_collection(lists.new_indices, lists.new_scores, codes, np.arange(n, n + m)),
            best_in_each_collection(lists.old_indices + n, lists.old_scores, codes, np.arange(n)),
        ]
        candidates = tuple(np.concatenate(parts) for parts in zip(*found))
    else:
        empty = np.zeros(0, np.int64)
        candidates = (empty, empty, np.zeros(0))
    links = journey_links(documents, embeddings, candidates, threshold, collection_order(entries))  # type: ignore[arg-type]
    new_ids = set(documents["doc_id"].iloc[n:].astype(str))
    added = links[links["doc_id"].isin(new_ids) | links["other_id"].isin(new_ids)]
    combined = pd.concat([atlas.journeys, added], ignore_index=True) if len(atlas.journeys) else added
    order = collection_order(entries)
    combined = combined.drop_duplicates(["doc_id", "other_id"]).assign(
        _rank=lambda frame: frame["collection"].map(order), _other=lambda frame: frame["other_collection"].map(order)
    )
    combined = combined.sort_values(["_rank", "_other", "doc_id", "other_id"], kind="stable")
    combined = combined.drop(columns=["_rank", "_other"]).reset_index(drop=True)
    how = "the add's nearest papers and titles" if by_abstract else f"titles only (fewer than {min_dims} dimensions)"
    return combined, journey_summary(combined, threshold, how)
