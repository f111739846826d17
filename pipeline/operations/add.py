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

When a refit is due: a new paper *does not fit* when it is placed in the outlier topic or its cosine similarity
to the nearest topic centroid is below what 95% of the fitted papers have to their own topic's centroid. If more
than REFIT_MISFIT_SHARE of the new papers do not fit (four times the 5% expected of papers like the fitted ones),
or the papers added since the build exceed REFIT_ADDED_SHARE of those it was fitted on, the command says that a
refit is due (``topic-atlas build`` into the same folder, which keeps the topic ids: pipeline.topics.align).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from pipeline import cache
from pipeline.cache import ADDED_AMONG_OUTLIERS, FIT_SIMILARITY_COLUMN, OUTLIER_REASON_COLUMN, OUTLIER_TOPIC, TopicCache
from pipeline.geometry.centroids import topic_centroids
from pipeline.operations import locking

if TYPE_CHECKING:
    from pipeline.represent.encoders import EncoderLike

log = logging.getLogger(__name__)

FIT_QUANTILE = 0.05
REFIT_MISFIT_SHARE = 0.2
REFIT_ADDED_SHARE = 0.25
DROP_ALREADY_IN_ATLAS = "already in the atlas"


@dataclass
class AddResult:
    """What an add wrote: the cache folder, its manifest, and the entry it appended to ``manifest["add_history"]``."""

    cache_dir: Path
    manifest: dict[str, Any]
    report: dict[str, Any]


def read_new_papers(
    input_path: Path, encoding: str | None
) -> tuple[pd.DataFrame, dict[str, int], dict[str, list[str]]]:
    """Read and clean the new papers as a build does (pipeline.ingest.corpus, pipeline.ingest.clean).

    Returns (documents with the build's columns plus ``text``, dropped counts, dropped ids).
    Raises InputError for a bad file.
    """
    from pipeline.ingest.clean import prepare_documents
    from pipeline.ingest.corpus import load_corpus

    prepared = prepare_documents(load_corpus(input_path, encoding=encoding))
    for warning in prepared.warnings:
        log.warning(warning)
    return (
        prepared.documents.reset_index(drop=True),
        dict(prepared.dropped),
        {reason: list(ids) for reason, ids in prepared.dropped_ids.items()},
    )


def split_known(atlas: TopicCache, new: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """(the new papers not yet in the atlas, ids of those already there). A paper is already there when its id is
    an atlas id, or its text is an atlas paper's (pipeline.topics.align.paper_keys). A generated ``row-N`` id that an
    atlas paper with other text holds is renamed ``row-N+added-K`` so ids stay unique."""
    from pipeline.topics.align import GENERATED_ID, paper_keys

    atlas_keys = set(paper_keys(atlas.documents))
    atlas_ids = set(atlas.documents["doc_id"].astype(str))
    keys = paper_keys(new)
    known = [
        key in atlas_keys or (str(doc_id) in atlas_ids and not GENERATED_ID.match(str(doc_id)))
        for key, doc_id in zip(keys, new["doc_id"])
    ]
    kept = new.loc[~np.asarray(known, dtype=bool)].copy()
    batch = len(atlas.manifest.get("add_history", [])) + 1
    kept["doc_id"] = [
        f"{doc_id}+added-{batch}" if str(doc_id) in atlas_ids else str(doc_id) for doc_id in kept["doc_id"]
    ]
    return kept.reset_index(drop=True), new.loc[np.asarray(known, dtype=bool), "doc_id"].astype(str).tolist()


def fit_check(
    embeddings: np.ndarray, topics: np.ndarray, new_embeddings: np.ndarray, new_topics: np.ndarray
) -> dict[str, Any]:
    """How well new papers fit the atlas's topics (see the module docstring).

    ``embeddings`` (n x dim, unit rows) and ``topics`` (n) are the atlas's; ``new_embeddings`` (m x dim) and
    ``new_topics`` (m) the placed papers'. Returns threshold (cosine to one's own topic centroid that 95% of the
    fitted papers reach), per-paper ``fits`` (bool, m), n_misfits and misfit_share.
    """
    ids = sorted(set(topics.tolist()) - {OUTLIER_TOPIC})
    if not ids:
        fits = np.zeros(len(new_topics), dtype=bool)
        return {"threshold": None, "fits": fits, "n_misfits": int(len(fits)), "misfit_share": 1.0 if len(fits) else 0.0}
    centroids = topic_centroids(embeddings, topics, ids)
    clustered = topics != OUTLIER_TOPIC
    own = np.einsum("ij,ij->i", embeddings[clustered], centroids[np.searchsorted(ids, topics[clustered])])
    threshold = float(np.quantile(own, FIT_QUANTILE))
    nearest = (new_embeddings @ centroids.T).max(axis=1) if len(new_embeddings) else np.zeros(0)
    fits = (nearest >= threshold) & (new_topics != OUTLIER_TOPIC)
    misfits = int((~fits).sum())
    return {
        "threshold": round(threshold, 4),
        "fits": fits,
        "n_misfits": misfits,
        "misfit_share": round(misfits / max(len(fits), 1), 4),
    }


def merged_neighbours(
    atlas: TopicCache, embeddings: np.ndarray, new_embeddings: np.ndarray, new_ids: list[str], k: int
) -> tuple[list[list[str]], list[list[float]]]:
    """The ``k`` most cosine-similar other papers of every paper of the grown atlas (old rows first, then new):
    an old paper's list is its stored one merged with the new papers, a new paper's is searched over all papers."""
    from pipeline.geometry.neighbors import top_k

    all_ids = np.asarray(atlas.documents["doc_id"].astype(str).tolist() + list(new_ids), dtype=object)
    n = len(atlas.documents)
    to_new = embeddings @ new_embeddings.T  # n x m
    best_new, best_new_scores = top_k(to_new, k)
    ids, scores = [], []
    empty: list[list[str]] = [[] for _ in range(n)]  # a cache written before neighbour lists existed
    stored = zip(
        atlas.documents.get("neighbor_ids", pd.Series(empty)), atlas.documents.get("neighbor_scores", pd.Series(empty))
    )
    for row, (stored_ids, stored_scores) in enumerate(stored):
        candidates = list(zip(list(stored_scores), list(stored_ids))) + [
            (round(float(s), 4), new_ids[c]) for c, s in zip(best_new[row], best_new_scores[row])
        ]
        candidates.sort(key=lambda pair: -pair[0])
        ids.append([doc_id for _, doc_id in candidates[:k]])
        scores.append([float(score) for score, _ in candidates[:k]])
    similarities = new_embeddings @ np.vstack([embeddings, new_embeddings]).T
    similarities[np.arange(len(new_ids)), n + np.arange(len(new_ids))] = -np.inf  # never oneself
    rows, values = top_k(similarities, k)
    ids += [all_ids[row].tolist() for row in rows]
    scores += [[round(float(value), 4) for value in row] for row in values]
    return ids, scores


def added_documents(atlas: TopicCache, new: pd.DataFrame, placed: pd.DataFrame) -> pd.DataFrame:
    """The atlas's documents table with the placed new papers appended: topic, topic_label, probability (the
    winning topic's share of the neighbours' vote), x, y from ``placed``; ``reassigned`` False; ``added`` True
    for them (False for papers fitted by a build, unless an earlier add placed them)."""
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
    if "word_pieces" in atlas.documents.columns:  # lengths are known for a build's papers only: unknown (0) here
        rows["word_pieces"], rows["truncated"] = 0, False
    old = atlas.documents.copy()
    old["added"] = old["added"].fillna(False).astype(bool) if "added" in old.columns else False
    combined = pd.concat([old, rows], ignore_index=True)
    combined["topic"] = combined["topic"].astype(np.int64)
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
    """The atlas to add to; TargetError (one line for the command line) when it cannot be read."""
    from pipeline.runtime.errors import TargetError

    try:
        return cache.read_cache(cache_dir)
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
) -> dict[str, Any]:
    """The manifest of the grown atlas: counts updated, the add appended to ``add_history``, the lineage replaced.
    Build provenance (input, params, metrics, timings) stays: it describes the fit."""
    manifest = dict(atlas.manifest)
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


def run_add(
    cache_dir: Path | str, input_path: Path | str, encoding: str | None = None, encoder: EncoderLike | None = None
) -> AddResult:
    """Add the papers of ``input_path`` to the atlas in ``cache_dir`` without a refit (see the module docstring).

    ``encoder`` may pass an already loaded encoder of the atlas's kind (tests, benchmarks). Returns an AddResult
    whose ``report`` has n_added, n_skipped, dropped, dropped_ids, misfit_share, n_misfits, fit_threshold,
    refit_due, refit_reasons, timings_s. Raises TargetError (no readable atlas), InputError (bad file) or
    CorpusTooSmallError (no paper that is not already in the atlas); in each case nothing is written. TargetError
    also when another writer holds the atlas past pipeline.cache.LOCK_WAIT_S.
    """
    from pipeline.operations.place import embed_queries, place_embeddings
    from pipeline.quality.metrics import cache_texts
    from pipeline.runtime.errors import CorpusTooSmallError
    from pipeline.topics.update import fit_fixed_topics, topic_terms, topics_per_class

    cache_dir, input_path = Path(cache_dir).expanduser().resolve(), Path(input_path).expanduser().resolve()
    with locking.held(cache_dir):  # from reading the atlas to swapping in the grown one: no writer in between
        timings: dict[str, float] = {}
        start = time.perf_counter()
        atlas = read_atlas(cache_dir)
        new, dropped, dropped_ids = read_new_papers(input_path, encoding)
        new, known = split_known(atlas, new)
        if known:
            dropped[DROP_ALREADY_IN_ATLAS], dropped_ids[DROP_ALREADY_IN_ATLAS] = len(known), known
        if new.empty:
            raise CorpusTooSmallError(
                f"{input_path}: no new papers to add "
                f"({'; '.join(f'{reason}: {count}' for reason, count in dropped.items()) or 'the file holds none'})"
            )
        timings["load"] = round(time.perf_counter() - start, 3)
        params = atlas.manifest.get("params", {})
        k = int(params.get("n_neighbors_similar", 10))
        embeddings = atlas.embeddings()
        step = time.perf_counter()
        new_embeddings = embed_queries(new["text"].tolist(), atlas, encoder=encoder)
        timings["embed"] = round(time.perf_counter() - step, 3)
        step = time.perf_counter()
        placed = place_embeddings(atlas, new_embeddings, k, embeddings=embeddings)
        check = fit_check(embeddings, atlas.documents["topic"].to_numpy(), new_embeddings, placed["topic"].to_numpy())
        documents = added_documents(atlas, new, placed)
        documents["neighbor_ids"], documents["neighbor_scores"] = merged_neighbours(
            atlas, embeddings, new_embeddings, new["doc_id"].astype(str).tolist(), k
        )
        all_embeddings = np.vstack([embeddings, new_embeddings.astype(np.float32)])
        timings["place"] = round(time.perf_counter() - step, 3)
        step = time.perf_counter()
        texts = cache_texts(documents)
        topic_model, mapping = fit_fixed_topics(
            texts, all_embeddings, documents["topic"].to_numpy(), atlas.path / cache.MODEL_DIR, params
        )
        topics = updated_topics(
            atlas, documents, all_embeddings, topic_terms(topic_model, mapping), int(params.get("n_representative", 5))
        )
        per_class = atlas.topics_per_class
        if not per_class.empty and "decision" in documents.columns:
            per_class = topics_per_class(
                topic_model,
                mapping,
                texts,
                [value if isinstance(value, str) and value else None for value in documents["decision"]],
            )
        timings["topics"] = round(time.perf_counter() - step, 3)
        report = {
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "input_path": str(input_path),
            "n_added": len(new),
            "n_skipped": len(known),
            "dropped": dropped,
            "dropped_ids": dropped_ids,
            "fit_threshold": check["threshold"],
            "n_misfits": check["n_misfits"],
            "misfit_share": check["misfit_share"],
            "topics": {str(topic): int(count) for topic, count in placed["topic"].value_counts().sort_index().items()},
        }
        n_fitted = int(atlas.manifest.get("n_documents_fitted", atlas.manifest["n_documents"]))
        report["refit_reasons"] = refit_reasons(report, len(documents) - n_fitted, n_fitted)
        report["refit_due"] = bool(report["refit_reasons"])
        lineage, lineage_rows = add_lineage(atlas, documents)
        report["timings_s"] = timings  # the manifest's copy has every stage but the write itself
        step = time.perf_counter()
        write_grown_atlas(atlas, documents, topics, per_class, all_embeddings, lineage, lineage_rows, report)
        timings["write"] = round(time.perf_counter() - step, 3)
        return AddResult(cache_dir, cache.read_manifest(cache_dir), report)


def write_grown_atlas(
    atlas: TopicCache,
    documents: pd.DataFrame,
    topics: pd.DataFrame,
    per_class: pd.DataFrame,
    embeddings: np.ndarray,
    lineage: dict[str, Any],
    lineage_rows: pd.DataFrame,
    report: dict[str, Any],
) -> None:
    """Write the grown atlas into a staging folder beside the old one, carry over the model and every other file,
    and swap it in atomically (pipeline.cache.staged_cache); on any failure the old atlas stays as it was."""
    manifest = grown_manifest(atlas, documents, topics, report, lineage)
    with cache.staged_cache(atlas.path) as staging:
        cache.write_tables(staging, manifest, documents, topics, atlas.hierarchy, embeddings, per_class, lineage_rows)
        cache.carry_over(atlas.path, staging, skip=("metrics.json",))
