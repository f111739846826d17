"""``topic-atlas add``: new papers placed into an existing atlas without a refit.

The old papers keep their topics, coordinates and everything else the build gave them (their lists of similar
papers may gain new papers). Each new paper is embedded with the atlas's own encoder
(pipeline.operations.place.embed_queries) and placed by the rule of ``place``
(pipeline.operations.place.place_embeddings): the similarity-weighted topic vote of its 10 nearest atlas papers and the
weighted mean of their map positions (UMAP's own initialisation of new points). Then topic sizes, label positions,
representative papers, terms (pipeline.topics.update: BERTopic's c-TF-IDF with the saved vocabulary, as the build makes
them) and the topics per decision class are recomputed; topic labels, the hierarchy and the saved model stay as built.
The new atlas is written to a staging folder and swapped in atomically (pipeline.cache.staged_cache): a failed add
leaves the old atlas as it was.

Whole collections (a venue and a year each, with side tables) are read and matched against the atlas by
pipeline.operations.add_collections: their papers keep collection, venue and year, a copy of another collection's
paper is a paper of its own linked to it, the journeys and the coverage check are extended to them.

Candidate new topics (pipeline.topics.candidates): the new papers that fit no topic, or lie where most of their
nearest papers are new ones, grouped by UMAP and HDBSCAN, named by the build's namer, each beside its nearest topic
(candidates.parquet, the add's report).

When a refit is due: a new paper *does not fit* when it is placed in the outlier topic or its cosine similarity
to the nearest topic centroid is below what 95% of the fitted papers have to their own topic's centroid, both
measured where old and new papers are represented alike (pipeline.topics.candidate_space: an atlas's lexical block
fitted again on every text; against the atlas's own SVD a new text's projection looks typical, and of 1,500 ICLR
2025 papers added to 999 of them none fitted no topic, 131 now; 20 cooking abstracts fitted ML topics). If more
than REFIT_MISFIT_SHARE of the new papers do not fit (four times the 5% expected of papers like the fitted ones),
or the papers added since the build exceed REFIT_ADDED_SHARE of those it was fitted on, or a candidate new topic is
at least as large as the atlas's smallest topic (pipeline.topics.candidates.candidate_refit_reason), the command
says that a refit is due (``topic-atlas build`` into the same folder, which keeps the topic ids:
pipeline.topics.align).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from pipeline import cache
from pipeline.cache import (
    ADDED_AMONG_OUTLIERS,
    FIT_SIMILARITY_COLUMN,
    OUTLIER_REASON_COLUMN,
    OUTLIER_TOPIC,
    SUBTOPIC_COLUMN,
    TopicCache,
)
from pipeline.geometry.centroids import topic_centroids
from pipeline.geometry.grown_neighbours import NearestLists, nearest_lists
from pipeline.ingest.collections import LINK_COLUMN
from pipeline.operations import locking
from pipeline.operations.add_collections import (
    DROP_ALREADY_IN_ATLAS,
    DROP_COPY_IN_ATLAS,
    DROP_ID_TAKEN,
    NewPapers,
    split_known,
)
from pipeline.runtime.stages import StageTimer

if TYPE_CHECKING:
    from pipeline.cache.manifest import CollectionEntry, Coverage, JourneySummary
    from pipeline.represent.encoder_backends import EncoderLike

log = logging.getLogger(__name__)

FIT_QUANTILE = 0.05
REFIT_MISFIT_SHARE = 0.2
REFIT_ADDED_SHARE = 0.25
# The build's neighbour lists hold this many papers (BuildConfig.umap_n_neighbors): the journeys' candidates.
JOURNEY_NEIGHBOURS = 15


@dataclass
class AddResult:
    """What an add wrote: the cache folder, its manifest, and the entry it appended to ``manifest["add_history"]``."""

    cache_dir: Path
    manifest: cache.Manifest
    report: dict[str, Any]


def read_new_papers(input_path: Path, encoding: str | None) -> NewPapers:
    """Read and clean the new papers as a build does (pipeline.ingest.corpus, pipeline.ingest.clean): the documents
    with the build's columns plus ``text``, the dropped counts and ids per reason, and the dropped records as
    ``dropped.parquet`` lists them. Raises InputError for a bad file.
    """
    from pipeline.ingest.clean import dropped_table, prepare_documents
    from pipeline.ingest.corpus import load_corpus

    raw = load_corpus(input_path, encoding=encoding)
    prepared = prepare_documents(raw)
    for warning in prepared.warnings:
        log.warning(warning)
    return NewPapers(
        prepared.documents.reset_index(drop=True),
        dict(prepared.dropped),
        {reason: list(ids) for reason, ids in prepared.dropped_ids.items()},
        dropped_records=dropped_table(raw.records, prepared.dropped_ids, prepared.dropped_copies),
    )


def fit_check(
    embeddings: np.ndarray, topics: np.ndarray, new_embeddings: np.ndarray, new_topics: np.ndarray
) -> dict[str, Any]:
    """How well new papers fit the atlas's topics (see the module docstring).

    ``embeddings`` (n x dim, unit rows) and ``topics`` (n) are the atlas's; ``new_embeddings`` (m x dim) and
    ``new_topics`` (m) the placed papers'. Returns threshold (cosine to one's own topic centroid that 95% of the
    fitted papers reach), per-paper ``fits`` (bool, m) and ``similarity`` (float, m: cosine to the nearest topic
    centroid; -1 without topics), n_misfits and misfit_share.
    """
    ids = sorted(set(topics.tolist()) - {OUTLIER_TOPIC})
    if not ids:
        fits = np.zeros(len(new_topics), dtype=bool)
        share = 1.0 if len(fits) else 0.0
        return {
            "threshold": None,
            "fits": fits,
            "similarity": np.full(len(fits), -1.0),
            "n_misfits": len(fits),
            "misfit_share": share,
        }
    centroids = topic_centroids(embeddings, topics, ids)
    clustered = topics != OUTLIER_TOPIC
    own = np.einsum("ij,ij->i", embeddings[clustered], centroids[np.searchsorted(ids, topics[clustered])])
    threshold = float(np.quantile(own, FIT_QUANTILE))
    nearest = (new_embeddings @ centroids.T).max(axis=1) if len(new_embeddings) else np.zeros(0)
    fits = (nearest >= threshold) & (np.asarray(new_topics) != OUTLIER_TOPIC)
    misfits = int((~fits).sum())
    return {
        "threshold": round(threshold, 4),
        "fits": fits,
        "similarity": np.round(nearest.astype(float), 4),
        "n_misfits": misfits,
        "misfit_share": round(misfits / max(len(fits), 1), 4),
    }


def merged_neighbours(
    atlas: TopicCache, lists: NearestLists, new_ids: list[str], k: int
) -> tuple[list[list[str]], list[list[float]]]:
    """The ``k`` most cosine-similar other papers of every paper of the grown atlas (old rows first, then new):
    an old paper's list is its stored one merged with its nearest new papers, a new paper's its nearest of all
    papers (``lists``: :func:`nearest_lists` with at least ``k`` entries)."""
    all_ids = np.asarray(atlas.documents["doc_id"].astype(str).tolist() + list(new_ids), dtype=object)
    n = len(atlas.documents)
    ids, scores = [], []
    empty: list[list[str]] = [[] for _ in range(n)]  # a cache written before neighbour lists existed
    stored = zip(
        atlas.documents.get("neighbor_ids", pd.Series(empty)), atlas.documents.get("neighbor_scores", pd.Series(empty))
    )
    for row, (stored_ids, stored_scores) in enumerate(stored):
        candidates = list(zip(list(stored_scores), list(stored_ids))) + [
            (round(float(s), 4), new_ids[c]) for c, s in zip(lists.old_indices[row, :k], lists.old_scores[row, :k])
        ]
        candidates.sort(key=lambda pair: -pair[0])
        ids.append([doc_id for _, doc_id in candidates[:k]])
        scores.append([float(score) for score, _ in candidates[:k]])
    ids += [all_ids[row].tolist() for row in lists.new_indices[:, :k]]
    scores += [[round(float(value), 4) for value in row] for row in lists.new_scores[:, :k]]
    return ids, scores


def added_documents(
    atlas: TopicCache, new: pd.DataFrame, placed: pd.DataFrame, old: pd.DataFrame | None = None
) -> pd.DataFrame:
    """The atlas's documents table (or ``old``, the same rows with columns an add of collections fills) with the
    placed new papers appended: topic, topic_label, probability (the winning topic's share of the neighbours' vote),
    x, y from ``placed``; ``reassigned`` False; ``added`` True for them (False for papers fitted by a build, unless
    an earlier add placed them)."""
    rows = new.drop(columns=[column for column in ("text", "record") if column in new.columns]).copy()
    for column in ("topic", "topic_label", "probability", "x", "y"):
        rows[column] = placed[column].to_numpy()
    rows["reassigned"] = False
    rows["added"] = True
    if (
        OUTLIER_REASON_COLUMN in atlas.documents.columns
    ):  # the build's fit check (pipeline.topics.misfits) is not re-run
        rows[OUTLIER_REASON_COLUMN] = np.where(rows["topic"].to_numpy() == OUTLIER_TOPIC, ADDED_AMONG_OUTLIERS, "")
    if FIT_SIMILARITY_COLUMN in atlas.documents.columns and "topic_similarity" in placed.columns:
        rows[FIT_SIMILARITY_COLUMN] = placed["topic_similarity"].to_numpy(dtype=float)
    if SUBTOPIC_COLUMN in atlas.documents.columns:  # subtopics are cut by a build: an added paper joins none till then
        rows[SUBTOPIC_COLUMN] = -1
    if "word_pieces" in atlas.documents.columns:  # lengths are known for a build's papers only: unknown (0) here
        rows["word_pieces"], rows["truncated"] = 0, False
    old = (atlas.documents if old is None else old).copy()
    old["added"] = old["added"].fillna(False).astype(bool) if "added" in old.columns else False
    combined = pd.concat([old, rows], ignore_index=True)
    combined["topic"] = combined["topic"].astype(np.int64)
    if SUBTOPIC_COLUMN in combined.columns:
        combined[SUBTOPIC_COLUMN] = combined[SUBTOPIC_COLUMN].fillna(-1).astype(np.int64)
    return combined


def updated_topics(
    atlas: TopicCache, documents: pd.DataFrame, embeddings: np.ndarray, terms: dict[int, list], n_representative: int
) -> pd.DataFrame:
    """The atlas's topic table with sizes, terms, representative papers and label positions (median map position)
    recomputed over ``documents`` (the grown table; ``embeddings`` its rows). Ids, labels and any other column
    stay. A topic without terms keeps its old ones."""
    from pipeline.topics.model import representative_documents

    topic_of = documents["topic"].to_numpy()
    representatives = representative_documents(
        embeddings, topic_of, documents["doc_id"].astype(str).tolist(), n_representative
    )
    grouped = documents.groupby("topic")
    sizes, x, y = grouped.size(), grouped["x"].median(), grouped["y"].median()
    topics = atlas.topics.copy()
    topics["size"] = topics["topic"].map(sizes).fillna(0).astype(int)
    topics["top_terms"] = [
        terms.get(int(topic)) or list(old) for topic, old in zip(topics["topic"], topics["top_terms"])
    ]
    topics["representative_doc_ids"] = [representatives.get(int(topic), []) for topic in topics["topic"]]
    topics["x"] = topics["topic"].map(x).astype(float)
    topics["y"] = topics["topic"].map(y).astype(float)
    return topics


def add_lineage(atlas: TopicCache, documents: pd.DataFrame) -> tuple[dict[str, Any], pd.DataFrame]:
    """The lineage of an add (manifest record, per-paper table): every topic kept with its old papers, and the new
    papers flowing in from outside the previous atlas (previous_topic <NA>). ``documents``: old rows, then new."""
    from pipeline.topics.align import flow_table, largest_flows

    n_old = len(atlas.documents)
    previous = pd.array(
        atlas.documents["topic"].astype(int).tolist() + [pd.NA] * (len(documents) - n_old), dtype="Int64"
    )
    table = pd.DataFrame(
        {
            "doc_id": documents["doc_id"].astype(str),
            "title": documents["title"],
            "previous_topic": previous,
            "topic": pd.array(documents["topic"].astype(int), dtype="Int64"),
        }
    )
    flows = flow_table(
        pd.Series(atlas.documents["topic"].astype(int).to_numpy(), index=atlas.documents["doc_id"].astype(str)),
        pd.Series(documents["topic"].astype(int).to_numpy(), index=documents["doc_id"].astype(str)),
    )
    topics = []
    for topic, label in zip(atlas.topics["topic"].astype(int), atlas.topics["label"]):
        if topic == OUTLIER_TOPIC:
            continue
        in_topic = table["topic"] == topic
        topics.append(
            {
                "topic": topic,
                "label": str(label),
                "status": "kept",
                "previous_topic": topic,
                "split_from": None,
                "merged_from": [],
                "sources": [],
                "from": largest_flows(flows, topic, "topic", "previous_topic"),
                "n_papers": int(in_topic.sum()),
                "n_added": int((in_topic & table["previous_topic"].isna()).sum()),
                "carried_share": 1.0,
                "score": None,
            }
        )
    record = {
        "kind": "add",
        "previous": {
            key: atlas.manifest.get(key)
            for key in ("created_at", "input_path", "input_sha256", "n_documents", "n_topics")
        },
        "n_papers": {"shared": n_old, "same_topic": n_old, "added": len(documents) - n_old, "removed": 0},
        "previous_topics": {
            str(int(topic)): {"label": str(label), "size": int(size)}
            for topic, label, size in zip(atlas.topics["topic"], atlas.topics["label"], atlas.topics["size"])
        },
        "topics": topics,
        "gone": [],
        "splits": [],
        "merges": [],
    }
    return record, table


def read_atlas(cache_dir: Path) -> TopicCache:
    """The atlas to add to; TargetError (one line for the command line) when it cannot be read, holds a symbolic
    link (cache.check_no_links) or a malformed model vocabulary (cache.check_model_vocabulary: checked before any
    model file is loaded)."""
    from pipeline.runtime.errors import TargetError

    try:
        cache.check_no_links(cache_dir)
        atlas = cache.read_cache(cache_dir)
        cache.check_model_vocabulary(cache_dir)
        return atlas
    except cache.CacheError as error:
        raise TargetError(
            f"cannot add to {cache_dir}: {error.problem}; build an atlas there first with: {error.rebuild_command}"
        ) from error


def refit_reasons(report: dict[str, Any], n_added_total: int, n_fitted: int) -> list[str]:
    """Why a refit is due (empty when it is not): too many new papers fit no topic, or too many were added."""
    reasons = []
    if report["misfit_share"] > REFIT_MISFIT_SHARE:
        reasons.append(
            f"{report['n_misfits']} of {report['n_added']} new papers ({report['misfit_share']:.0%}) lie farther from "
            f"every topic than {1 - FIT_QUANTILE:.0%} of the fitted papers from their own (or among outliers); more "
            f"than {REFIT_MISFIT_SHARE:.0%} suggests topics the model does not have"
        )
    if n_added_total > REFIT_ADDED_SHARE * n_fitted:
        reasons.append(
            f"{n_added_total} papers have been added since the build "
            f"fitted {n_fitted}: more than {REFIT_ADDED_SHARE:.0%}"
        )
    return reasons


def grown_manifest(
    atlas: TopicCache, documents: pd.DataFrame, topics: pd.DataFrame, report: dict[str, Any], lineage: dict[str, Any]
) -> cache.Manifest:
    """The manifest of the grown atlas: counts updated, the add appended to ``add_history``, the lineage replaced.
    Build provenance (input, params, metrics, timings) stays: it describes the fit."""
    manifest = atlas.manifest.copy()
    manifest["n_documents_fitted"] = int(atlas.manifest.get("n_documents_fitted", atlas.manifest["n_documents"]))
    manifest["n_documents"] = len(documents)
    manifest["n_topics"] = int((topics["topic"] != OUTLIER_TOPIC).sum())
    manifest["outlier_fraction"] = round(float((documents["topic"] == OUTLIER_TOPIC).mean()), 4)
    manifest["add_history"] = [*atlas.manifest.get("add_history", []), report]
    manifest["lineage"] = lineage
    manifest["alignment"] = (
        f"{report['n_added']} papers added on {report['created_at'][:10]} "
        "without a refit (topic-atlas add); every topic kept its id"
    )
    n_added_total = len(documents) - manifest["n_documents_fitted"]
    note = (
        f"{n_added_total} of the {len(documents)} papers were placed by `add` without a refit (column `added`); topic "
        "terms, sizes and representative papers include them; the metrics and model/ describe the build's fit of "
        f"{manifest['n_documents_fitted']} papers"
    )
    manifest["notes"] = [text for text in atlas.manifest.get("notes", []) if "were placed by `add`" not in text] + [
        note
    ]
    return manifest


@dataclass
class Grown:
    """The atlas with the new papers placed (:func:`place_new`): ``documents`` (old rows, then new), ``embeddings``
    (float32, their rows), the new papers' ``placed`` rows (pipeline.operations.place.place_embeddings), the nearest
    lists (:func:`nearest_lists`), every paper's model text and, once :func:`find_candidates` has made it in the
    candidate space, the fit check (:func:`fit_check`); their tokens are made on first use and shared by the topics'
    terms and the candidates' space."""

    documents: pd.DataFrame
    embeddings: np.ndarray
    placed: pd.DataFrame
    lists: NearestLists
    texts: list[str]
    check: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def tokens(self) -> Any:
        """The texts' pipeline.text.tokens.TokenizedCorpus, made once."""
        from pipeline.text.tokens import tokenize

        return tokenize(self.texts)


def read_incoming(
    atlas: TopicCache, source: Path | None, collections: list[Any] | None, encoding: str | None
) -> NewPapers:
    """The papers to add, cleaned, without those already in the atlas: of ``collections`` (pipeline.operations
    .add_collections.read_collections), or of the file ``source``: as one more collection when the atlas has
    collections (named from the file, as a build of ``--input`` files names it), else as plain papers, exactly as
    before collections existed. Raises InputError (bad file) and CorpusTooSmallError (nothing new)."""
    from pipeline.ingest.collections import collection_from_path
    from pipeline.operations.add_collections import has_collections, read_collections
    from pipeline.runtime.errors import CorpusTooSmallError

    batch = len(atlas.manifest.get("add_history", [])) + 1
    if not collections and source is not None and has_collections(atlas):
        collections = [collection_from_path(source)]
    if collections:
        incoming = read_collections(atlas, collections, encoding, batch)
    else:
        if source is None:
            raise ValueError("run_add needs an input file or collections")
        incoming = read_new_papers(source, encoding)
        incoming.documents, known, clashing, copied, incoming.copies = split_known(
            atlas.documents, incoming.documents, batch
        )
        for reason, ids in ((DROP_ALREADY_IN_ATLAS, known), (DROP_ID_TAKEN, clashing), (DROP_COPY_IN_ATLAS, copied)):
            if ids:
                incoming.dropped[reason], incoming.dropped_ids[reason] = len(ids), ids
    if incoming.documents.empty:
        where = str(source) if source is not None else ", ".join(str(c.path) for c in collections or [])
        counts = "; ".join(f"{reason}: {count}" for reason, count in incoming.dropped.items())
        advice = (
            ". An id names one paper: give a paper whose text changed a new id, or rebuild with the new texts"
            if DROP_ID_TAKEN in incoming.dropped
            else ""
        )
        raise CorpusTooSmallError(f"{where}: no new papers to add ({counts or 'the file holds none'}){advice}")
    return incoming


def place_new(atlas: TopicCache, incoming: NewPapers, encoder: EncoderLike | None, timer: StageTimer) -> Grown:
    """Embed the new papers with the atlas's representation, place them by ``place``'s rule and
    find their nearest papers (stages ``embed``, ``place`` and ``neighbours`` of ``timer``)."""
    from pipeline.operations.add_collections import link_same_texts, old_documents
    from pipeline.operations.place import embed_queries, place_embeddings
    from pipeline.quality.evaluation import cache_texts

    new = incoming.documents
    params = atlas.manifest.get("params", {})
    k = int(params.get("n_neighbors_similar", 10))
    embeddings = atlas.embeddings()
    with timer.stage("embed"):
        new_embeddings = embed_queries(new["text"].tolist(), atlas, encoder=encoder)
    with timer.stage("neighbours"):
        lists = nearest_lists(embeddings, new_embeddings, max(k, JOURNEY_NEIGHBOURS))
    with timer.stage("place"):
        nearest = (lists.atlas_indices[:, :k], lists.atlas_scores[:, :k])
        placed = place_embeddings(atlas, new_embeddings, k, embeddings=embeddings, nearest=nearest)
        with_collections = "collection" in new.columns
        documents = added_documents(atlas, new, placed, old_documents(atlas) if with_collections else None)
        texts = cache_texts(documents)
        if with_collections:
            documents = link_same_texts(documents.drop(columns=[LINK_COLUMN], errors="ignore"), texts)
        documents["neighbor_ids"], documents["neighbor_scores"] = merged_neighbours(
            atlas, lists, new["doc_id"].astype(str).tolist(), k
        )
    all_embeddings = np.vstack([embeddings, new_embeddings.astype(np.float32)])
    return Grown(documents, all_embeddings, placed, lists, texts)


def describe_topics(atlas: TopicCache, grown: Grown) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the topic table, the topics per class) recomputed over the grown atlas: sizes, terms (pipeline.topics.update),
    representative papers and label positions; the per-class terms where the atlas has them."""
    from pipeline.topics.update import fit_fixed_topics, topic_terms, topics_per_class

    params = atlas.manifest.get("params", {})
    documents = grown.documents
    topic_model, mapping = fit_fixed_topics(
        grown.texts, grown.embeddings, documents["topic"].to_numpy(), atlas.path / cache.MODEL_DIR, params, grown.tokens
    )
    topics = updated_topics(
        atlas, documents, grown.embeddings, topic_terms(topic_model, mapping), int(params.get("n_representative", 5))
    )
    per_class = atlas.topics_per_class
    if not per_class.empty and "decision" in documents.columns:
        per_class = topics_per_class(
            topic_model,
            mapping,
            grown.texts,
            [value if isinstance(value, str) and value else None for value in documents["decision"]],
        )
    return topics, per_class


def find_candidates(atlas: TopicCache, grown: Grown, batch: int) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The candidate new topics of this add (pipeline.topics.candidates) and their summary for the report: the new
    papers that fit no topic or lie in new territory, with the papers of earlier adds that no candidate holds judged
    again beside them (pipeline.topics.candidates.waiting_rows). Those that lie within an earlier add's candidate
    join it (pipeline.topics.candidate_growth); the rest are grouped (the atlas's min_cluster_size the smallest
    group), and a group whose papers share less than those of every topic is set aside, its papers left waiting
    (pipeline.topics.candidate_cohesion). Each candidate is named by the build's namer over every paper and set
    beside its nearest topic. New territory, the groups and the nearest topics are found in
    pipeline.topics.candidate_space (old and new papers represented alike), and so is the fit check, which sets
    ``grown.check`` and the new papers' fit_similarity. Returns (candidates.parquet: the earlier adds' candidates,
    grown, then this add's; summary)."""
    from pipeline.operations.place import query_representation
    from pipeline.topics import candidate_cohesion as cohesion
    from pipeline.topics import candidate_growth as growth
    from pipeline.topics import candidates as rule
    from pipeline.topics.candidate_space import candidate_space

    params = atlas.manifest.get("params", {})
    n, topics = len(atlas.documents), atlas.documents["topic"].to_numpy()
    space = candidate_space(query_representation(atlas), grown.texts, grown.embeddings, params, grown.tokens)
    grown.check = fit_check(space[:n], topics, space[n:], grown.placed["topic"])
    if FIT_SIMILARITY_COLUMN in grown.documents.columns:
        grown.documents.loc[grown.documents.index[n:], FIT_SIMILARITY_COLUMN] = grown.check["similarity"]
    waiting = rule.waiting_rows(atlas.documents, atlas.candidates)
    pool = np.concatenate([waiting, np.arange(n, len(space), dtype=np.int64)])  # the papers judged, their rows
    misfits, territory, nearest_papers = _flags(space, n, grown, waiting, topics)
    fitted = atlas.manifest.get("n_documents_fitted", n)
    min_size = int(params.get("min_cluster_size") or max(3, round(np.sqrt(fitted) / 2)))
    old_rows = np.ones(n, dtype=bool)
    old_rows[waiting] = False  # the context of few flagged papers: the atlas's papers not judged again
    earlier = growth.earlier_candidates(space[:n], atlas.documents["doc_id"].astype(str).tolist(), atlas.candidates)
    joins = growth.joined_candidates(space[pool], nearest_papers, misfits | territory, earlier)
    groups = rule.group_flagged(
        space[pool],
        (misfits | territory) & (joins == rule.OUTLIER),
        min_size,
        params.get("min_samples"),
        int(params.get("random_state", 42)),
        float(params.get("max_cluster_share", 0.0)),
        context=space[:n][old_rows],
    )
    added = atlas.documents["added"].fillna(False).astype(bool).to_numpy() if "added" in atlas.documents else None
    floor = cohesion.cohesion_floor(space[:n], topics, None if added is None else ~added)
    loose = cohesion.loose_groups(space[pool], groups.labels, floor)
    set_aside = [{"size": int((groups.labels == group).sum()), "cohesion": value} for group, value in loose.items()]
    groups.labels = cohesion.without_groups(groups.labels, loose)
    members = np.full(len(space), rule.OUTLIER, dtype=np.int64)
    members[pool] = groups.labels
    titles = grown.documents["title"].fillna("").astype(str).tolist() if "title" in grown.documents else None
    existing = atlas.topics["label"].astype(str).tolist()
    first_id = int(atlas.candidates["candidate"].max()) + 1 if len(atlas.candidates) else 0
    unnamed = {group: f"Candidate {first_id + group}" for group in set(groups.labels.tolist()) - {rule.OUTLIER}}
    names, terms = rule.candidate_names(grown.texts, titles, members.tolist(), existing, unnamed)
    nearest = rule.nearest_topics(space[pool], groups.labels, space[:n], topics)
    judged = grown.documents.iloc[pool]
    table = rule.candidate_table(groups, judged, space[pool], names, terms, nearest, batch, first_id)
    updated, grew = growth.grown_candidates(atlas.candidates, earlier, joins, pool, space, grown.documents, topics)
    new_flags = slice(len(waiting), None)  # this add's own papers, after the waiting ones
    counts = int(misfits[new_flags].sum()), int(territory[new_flags].sum())
    report = rule.summary(
        table, groups, *counts, n_earlier=int((misfits | territory)[: len(waiting)].sum()), grown=grew
    )
    report.update(cohesion_floor=round(floor, 4) if np.isfinite(floor) else None, set_aside=set_aside)
    both = (
        pd.concat([updated, table], ignore_index=True)
        if len(updated) and len(table)
        else (table if len(table) else updated)
    )
    return both, report


def _flags(
    space: np.ndarray, n: int, grown: Grown, waiting: np.ndarray, topics: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(fit no topic, in new territory, nearest papers): bool arrays over the papers an add judges, the earlier adds'
    ``waiting`` rows (fit checked again in ``space`` against the same centroids) then this add's (``grown.check``),
    and each one's nearest papers of the grown atlas (int64, rows of ``space``, best first), which new territory
    reads and pipeline.topics.candidate_growth reads again. New territory counts the waiting papers as new as well;
    without any, the rows from ``n`` on are the new ones and the nearest lists are ``grown.lists`` when ``space`` is
    the atlas's own vectors."""
    from pipeline.topics import candidates as rule
    from pipeline.topics.candidate_space import new_paper_neighbours

    new_misfits = ~np.asarray(grown.check["fits"], dtype=bool)
    k = grown.lists.new_indices.shape[1]
    if not len(waiting):
        if space is grown.embeddings:
            nearest_new = grown.lists.new_indices, grown.lists.new_scores
        else:
            nearest_new = new_paper_neighbours(space, n, k)
        return new_misfits, rule.in_new_territory(*nearest_new, n), nearest_new[0]
    earlier = fit_check(space[:n], topics, space[waiting], topics[waiting])
    is_new = np.zeros(len(space), dtype=bool)
    is_new[waiting] = True
    is_new[n:] = True
    rows = np.flatnonzero(is_new)  # the waiting rows, then the new ones: pool's order
    nearest = new_paper_neighbours(space, n, k, rows=rows)
    territory = rule.in_new_territory(*nearest, n, is_new=is_new)
    return np.concatenate([~np.asarray(earlier["fits"], dtype=bool), new_misfits]), territory, nearest[0]


def add_report(
    atlas: TopicCache, source: Path | None, incoming: NewPapers, grown: Grown, candidates: dict[str, Any]
) -> dict[str, Any]:
    """The add's entry in ``manifest["add_history"]`` (without its timings): what was read, dropped, placed, how
    well it fits, the candidate new topics and whether a refit is due (:func:`refit_reasons`, then
    pipeline.topics.candidates.candidate_refit_reason)."""
    from pipeline.topics.candidates import candidate_refit_reason

    placed, check = grown.placed, grown.check
    report: dict[str, Any] = {
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "input_path": str(source) if source is not None else None,
        "collections": [entry["name"] for entry in incoming.entries],
        "n_added": len(incoming.documents),
        "n_skipped": sum(
            len(incoming.dropped_ids.get(why, [])) for why in (DROP_ALREADY_IN_ATLAS, DROP_ID_TAKEN, DROP_COPY_IN_ATLAS)
        ),
        "n_in_topics": int((placed["topic"] != OUTLIER_TOPIC).sum()),
        "dropped": incoming.dropped,
        "dropped_ids": incoming.dropped_ids,
        "fit_threshold": check["threshold"],
        "n_misfits": check["n_misfits"],
        "misfit_share": check["misfit_share"],
        "topics": {str(topic): int(count) for topic, count in placed["topic"].value_counts().sort_index().items()},
        "candidates": candidates,
    }
    n_fitted = int(atlas.manifest.get("n_documents_fitted", atlas.manifest["n_documents"]))
    report["refit_reasons"] = refit_reasons(report, len(grown.documents) - n_fitted, n_fitted)
    sizes = atlas.topics.loc[atlas.topics["topic"] != OUTLIER_TOPIC, "size"].astype(int).tolist()
    found_or_grown = candidates["topics"] + candidates.get("grown", [])
    reason = candidate_refit_reason(pd.DataFrame(found_or_grown, columns=["label", "size"]), sizes)
    if reason:
        report["refit_reasons"].append(reason)
    report["refit_due"] = bool(report["refit_reasons"])
    return report


def run_add(
    cache_dir: Path | str,
    input_path: Path | str | None = None,
    encoding: str | None = None,
    encoder: EncoderLike | None = None,
    collections: list[Any] | None = None,
) -> AddResult:
    """Add the papers of ``input_path`` and/or of ``collections`` (pipeline.ingest.collections.Collection) to the
    atlas in ``cache_dir`` without a refit (see the module docstring; for collections,
    pipeline.operations.add_collections).

    ``encoder`` may pass an already loaded encoder of the atlas's kind (tests, benchmarks). Returns an AddResult
    whose ``report`` has n_added, n_skipped, n_in_topics, dropped, dropped_ids, misfit_share, n_misfits,
    fit_threshold, candidates, refit_due, refit_reasons, timings_s. Raises TargetError (no readable atlas),
    InputError (bad file) or CorpusTooSmallError (no paper that is not already in the atlas); in each case nothing
    is written. TargetError also when another writer holds the atlas past pipeline.cache.LOCK_WAIT_S.
    """
    cache_dir = Path(cache_dir).expanduser().resolve()
    source = Path(input_path).expanduser().resolve() if input_path is not None else None
    if source is not None and collections:  # --input beside --collections: one more collection
        from pipeline.ingest.collections import collection_from_path

        collections, source = [*collections, collection_from_path(source)], source
    with locking.held(cache_dir):  # from reading the atlas to swapping in the grown one: no writer in between
        timer = StageTimer()
        with timer.stage("load"):
            atlas = read_atlas(cache_dir)
            incoming = read_incoming(atlas, source, collections, encoding)
        grown = place_new(atlas, incoming, encoder, timer)
        with timer.stage("topics"):
            topics, per_class = describe_topics(atlas, grown)
        with timer.stage("candidates"):
            batch = len(atlas.manifest.get("add_history", [])) + 1
            candidates, summary = find_candidates(atlas, grown, batch)
        report = add_report(atlas, source, incoming, grown, summary)
        lineage, lineage_rows = add_lineage(atlas, grown.documents)
        extras = collection_extras(atlas, incoming, grown, timer)
        report["timings_s"] = timer.seconds  # the manifest's copy has every stage but the write itself
        tables = GrownTables(grown.documents, topics, per_class, grown.embeddings, lineage, lineage_rows, candidates)
        with timer.stage("write"):
            write_grown_atlas(atlas, tables, report, extras, incoming.dropped_records)
        return AddResult(cache_dir, cache.read_manifest(cache_dir), report)


@dataclass
class GrownTables:
    """What an add writes: the grown documents, topics, per-class terms, embeddings, lineage (manifest record and
    per-paper table) and candidates.parquet's table (the earlier adds' candidates, grown, and this add's)."""

    documents: pd.DataFrame
    topics: pd.DataFrame
    per_class: pd.DataFrame
    embeddings: np.ndarray
    lineage: dict[str, Any]
    lineage_rows: pd.DataFrame
    candidates: pd.DataFrame


@dataclass
class CollectionKeys:
    """The manifest keys an add of collections replaces (:func:`record_added_collections`): the collections (the
    atlas's, then the new ones), the coverage check over every paper, the warnings (the atlas's without its old
    coverage warnings, then the new ones) and the journeys' summary."""

    collections: list[CollectionEntry]
    coverage: Coverage
    warnings: list[str]
    journeys: JourneySummary


@dataclass
class CollectionExtras:
    """An add of collections's other writes: the manifest keys it replaces (None for a plain add),
    journeys.parquet and copies.parquet (None: carried over unchanged)."""

    keys: CollectionKeys | None = None
    journeys: pd.DataFrame | None = None
    copies: pd.DataFrame | None = None


def record_added_collections(manifest: cache.Manifest, keys: CollectionKeys) -> None:
    """Set ``collections``, ``coverage``, ``warnings`` and ``journeys`` of ``manifest`` (in place, in this order)."""
    manifest["collections"] = keys.collections
    manifest["coverage"] = keys.coverage
    manifest["warnings"] = keys.warnings
    manifest["journeys"] = keys.journeys


def collection_extras(atlas: TopicCache, incoming: NewPapers, grown: Grown, timer: StageTimer) -> CollectionExtras:
    """For an add of collections: the manifest's collections (the atlas's, then the new ones), the coverage check
    rerun over every paper (pipeline.quality.coverage, as a build runs it; its warnings replace the atlas's), the
    journeys extended to the new papers (pipeline.operations.add_collections.added_journeys; stage ``journeys``
    of ``timer``) and the new copies appended (of new papers, and of atlas papers under new ids). For a plain add,
    the copies alone."""
    from pipeline.ingest.clean import copy_table

    copies = copy_table(incoming.copies, grown.documents) if len(incoming.copies) else pd.DataFrame()
    if len(atlas.copies) and len(copies):
        copies = pd.concat([atlas.copies, copies], ignore_index=True)
    if not incoming.entries:
        return CollectionExtras(copies=copies if len(copies) else None)
    from pipeline.operations.add_collections import added_journeys, merged_entries
    from pipeline.quality.coverage import coverage_report, load_crosswalk

    entries = merged_entries(atlas, incoming.entries)
    coverage = coverage_report(grown.documents, load_crosswalk())
    previous_coverage = atlas.manifest.get("coverage")
    old_warnings = set(previous_coverage.get("warnings", []) if previous_coverage else [])
    warnings = [text for text in atlas.manifest.get("warnings", []) if text not in old_warnings]
    for warning in coverage["warnings"]:
        log.warning(warning)
    with timer.stage("journeys"):
        journeys, summary = added_journeys(atlas, grown.documents, grown.embeddings, grown.lists, entries)
    keys = CollectionKeys(entries, coverage, warnings + coverage["warnings"], summary)
    return CollectionExtras(keys, journeys, copies if len(copies) else None)


def write_grown_atlas(
    atlas: TopicCache,
    tables: GrownTables,
    report: dict[str, Any],
    extras: CollectionExtras,
    dropped: pd.DataFrame | None = None,
) -> None:
    """Write the grown atlas into a staging folder beside the old one, carry over the model and every other file,
    and swap it in atomically (pipeline.cache.staged_cache); on any failure the old atlas stays as it was.
    candidates.parquet is ``tables.candidates``: the earlier adds' candidates and this one's; dropped.parquet the
    atlas's dropped records and ``dropped``, the ones this add's cleaning dropped
    (pipeline.ingest.clean.dropped_table)."""
    from pipeline.ingest.clean import joined_dropped

    manifest = grown_manifest(atlas, tables.documents, tables.topics, report, tables.lineage)
    if extras.keys is not None:
        record_added_collections(manifest, extras.keys)
    records = joined_dropped(atlas.dropped, dropped if dropped is not None else pd.DataFrame())
    with cache.staged_cache(atlas.path) as staging:
        cache.write_tables(
            staging,
            manifest,
            tables.documents,
            tables.topics,
            atlas.hierarchy,
            tables.embeddings,
            tables.per_class,
            tables.lineage_rows,
            copies=extras.copies,
            journeys=extras.journeys,
            candidates=tables.candidates,
            dropped=records if len(records) else None,
        )
        cache.carry_over(atlas.path, staging, skip=("metrics.json",))
