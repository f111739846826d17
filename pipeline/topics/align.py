"""Topic identity across builds: match a new fit's topics to the previous atlas's, renumber, record the lineage.

A rebuild into a folder that already holds an atlas keeps that atlas's topic ids. Each new topic is scored
against each old topic on three signals, all in [0, 1]:

- ``papers``: Jaccard overlap of the two topics' papers, counted over the papers both builds hold
  (:func:`paper_keys` says when two rows are the same paper);
- ``centroid``: cosine similarity of the topics' mean embeddings, both computed from the *new* build's embeddings
  (the old topic's centroid from its papers that are still in the corpus), so the signal is comparable even when
  the encoder or the document representation changed; rescaled so that the average similarity of two unrelated
  topics of the new build scores 0 (topics of one conference are all alike: their raw cosines sit around 0.5-0.8);
- ``terms``: cosine similarity of the topics' c-TF-IDF term weights (top terms), which needs no shared papers.

``score = 0.6 papers + 0.2 centroid + 0.2 terms``. The one-to-one assignment maximising the total score is found
with ``scipy.optimize.linear_sum_assignment`` (the Hungarian method, Kuhn 1955); a pair below the floor (0.3) is no
match. A matched topic keeps the old id and the old label (or the user's, see :mod:`pipeline.operations.rename`); every
other topic gets a fresh id above every id the atlas has ever used (``manifest["topic_ids_ever_used"]``), so an
old link can never point at a different topic. Outlier topic -1 stays -1.

Splits and merges are read from the shared papers: new topic B is a *part* of old topic A when it holds at least
10% of A's papers and A supplies at least half of B's; A *split* when it has two or more parts holding together at
least half of its papers. The reverse is a *merge*: two or more old topics each supplying at least 10% of B and
each sitting mostly (at least half) in B, together at least half of B. (On the 951 abstracts, min_cluster_size
15 -> 25 absorbs old topics of 21 and 23 papers, 95% each, into topics where they are 17-19% of the papers: a 20%
threshold called those "gone"; 10% calls them merges.)

The renumbering is applied to every table that carries topic ids (pipeline.schema.TOPIC_ID_COLUMNS, the hierarchy's
leaves and merged nodes, the per-topic metrics), and the manifest records the lineage, the ids ever used and the
mapping from atlas ids to the saved BERTopic model's own ids (``model_topic_ids``).
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from pipeline.cache import OUTLIER_TOPIC, CacheError, Manifest, TopicCache, read_cache
from pipeline.cache.manifest import LabelOverride

log = logging.getLogger(__name__)

# pipeline.ingest.corpus names rows of a file without an id column "row-N" (and repeats "ID#N"): such ids say nothing
# about which paper a row is, so those papers are recognised by their text instead.
GENERATED_ID = re.compile(r"^row-\d+(#\d+)?$")


@dataclass(frozen=True)
class AlignConfig:
    """Parameters of topic matching (see the module docstring).

    Weights and floor were set from the score distributions of rebuilds of the 951 ICLR abstracts with
    min_cluster_size 15 -> 10 and 15 -> 25 (static encoder): every pair the assignment matched scored 0.41 or more,
    the best unmatched pair 0.39 (half of a split), unrelated pairs under 0.2. bench/stability.py measures the
    outcome on the whole conference; the weights have not been swept.
    """

    weight_papers: float = 0.6
    weight_centroid: float = 0.2
    weight_terms: float = 0.2
    floor: float = 0.3
    n_terms: int = 25
    part_min_share: float = 0.1
    part_min_purity: float = 0.5
    split_min_total: float = 0.5


@dataclass
class TopicMatch:
    """The outcome of :func:`match_topics`, in the new fit's own topic ids.

    Attributes
    ----------
    pairs : one row per (old, new) pair of real topics: old, new, n_shared, share_of_old, share_of_new, papers,
        centroid, terms, score.
    matches : {new fit id: old atlas id} for the matched topics.
    splits : {old id: [new fit ids that are its parts]} for old topics that split.
    merges : {new fit id: [old ids it merged]} for new topics that are merges.
    """

    pairs: pd.DataFrame
    matches: dict[int, int] = field(default_factory=dict)
    splits: dict[int, list[int]] = field(default_factory=dict)
    merges: dict[int, list[int]] = field(default_factory=dict)


@dataclass
class AtlasTables:
    """The tables of one atlas before they are written (pipeline.cache.write_tables), with its manifest.

    ``lineage`` is the per-paper lineage table (pipeline.schema.LINEAGE_COLUMNS) or None.
    """

    documents: pd.DataFrame
    topics: pd.DataFrame
    hierarchy: pd.DataFrame
    topics_per_class: pd.DataFrame | None
    manifest: Manifest
    lineage: pd.DataFrame | None = None


def paper_keys(documents: pd.DataFrame) -> list[str]:
    """One identity key per document row: ``id:<doc_id>`` for ids the corpus gave, ``text:<sha1>`` of the title and
    abstract (:func:`text_key`) for generated ``row-N`` ids."""
    keys = []
    for doc_id, title, abstract in zip(documents["doc_id"], documents["title"], documents["abstract"]):
        if GENERATED_ID.match(str(doc_id)):
            keys.append("text:" + hashlib.sha1(text_key(title, abstract).encode("utf-8")).hexdigest())
        else:
            keys.append(f"id:{doc_id}")
    return keys


def text_key(title: Any, abstract: Any) -> str:
    """A paper's title and abstract as two copies of one text share them: lower-case letters and digits
    (pipeline.ingest.clean.duplicate_key); a missing title or abstract counts as empty."""
    from pipeline.ingest.clean import duplicate_key, join_title_abstract

    text = join_title_abstract(title if isinstance(title, str) else "", abstract if isinstance(abstract, str) else "")
    return duplicate_key(text or "")


def _unit_rows(matrix: np.ndarray) -> np.ndarray:
    return matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)


def term_similarity(
    old_terms: dict[int, list], new_terms: dict[int, list], old_ids: list[int], new_ids: list[int], n_terms: int
) -> np.ndarray:
    """Cosine similarity of c-TF-IDF term weights, old x new (len(old_ids) x len(new_ids)), over each topic's
    first ``n_terms`` [term, weight] pairs; 0 where a topic has no terms."""
    vocabulary: dict[str, int] = {}
    for terms in list(old_terms.values()) + list(new_terms.values()):
        for term, _ in list(terms)[:n_terms]:
            vocabulary.setdefault(str(term), len(vocabulary))

    def vectors(terms_of: dict[int, list], ids: list[int]) -> np.ndarray:
        matrix = np.zeros((len(ids), max(1, len(vocabulary))))
        for row, topic in enumerate(ids):
            for term, weight in list(terms_of.get(topic, []))[:n_terms]:
                matrix[row, vocabulary[str(term)]] = max(float(weight), 0.0)
        return _unit_rows(matrix)

    return vectors(old_terms, old_ids) @ vectors(new_terms, new_ids).T


def centroid_similarity(
    old_members: list[np.ndarray], new_members: list[np.ndarray], embeddings: np.ndarray
) -> np.ndarray:
    """Rescaled cosine similarity of topic centroids, old x new, all computed from ``embeddings`` (n x dim, the new
    build's) by row indices. 0 for an old topic without a paper in the new corpus; ``(cos - b) / (1 - b)`` clipped
    to [0, 1], with ``b`` the mean cosine between distinct new topics (0 when there is one new topic)."""
    if not old_members or not new_members:
        return np.zeros((len(old_members), len(new_members)))
    dim = embeddings.shape[1]
    old = np.vstack([embeddings[rows].mean(axis=0) if len(rows) else np.zeros(dim) for rows in old_members])
    new = _unit_rows(np.vstack([embeddings[rows].mean(axis=0) for rows in new_members]))
    raw = _unit_rows(old) @ new.T
    among_new = new @ new.T
    baseline = float(among_new[~np.eye(len(new), dtype=bool)].mean()) if len(new) > 1 else 0.0
    scaled = np.clip((raw - baseline) / max(1.0 - baseline, 1e-6), 0.0, 1.0)
    scaled[[not len(rows) for rows in old_members], :] = 0.0
    return scaled


def _parts(shares: np.ndarray, purities: np.ndarray, config: AlignConfig) -> list[np.ndarray]:
    """Per row: the columns that are its parts (share >= part_min_share and purity >= part_min_purity), when at
    least two parts hold together split_min_total of the row; else an empty array."""
    result = []
    for share_row, purity_row in zip(shares, purities):
        parts = np.flatnonzero((share_row >= config.part_min_share) & (purity_row >= config.part_min_purity))
        result.append(
            parts
            if len(parts) >= 2 and share_row[parts].sum() >= config.split_min_total
            else np.zeros(0, dtype=np.int64)
        )
    return result


def match_topics(
    old_topics: pd.Series,
    new_topics: pd.Series,
    embeddings: np.ndarray,
    old_terms: dict[int, list],
    new_terms: dict[int, list],
    config: AlignConfig = AlignConfig(),
) -> TopicMatch:
    """Match the new fit's topics to the previous atlas's.

    Parameters
    ----------
    old_topics : int topic per paper of the previous atlas, indexed by paper key (:func:`paper_keys`).
    new_topics : int topic per paper of the new fit, indexed by paper key, in the row order of ``embeddings``.
    embeddings : float, n_new x dim: the new build's document embeddings (any dimension).
    old_terms, new_terms : {topic: [[term, c-TF-IDF weight], ...]}, best first.
    config : weights, floor and split/merge thresholds.

    Returns a TopicMatch. The outlier topic -1 takes part in no match, split or merge.
    """
    old_ids = sorted(set(old_topics.tolist()) - {OUTLIER_TOPIC})
    new_ids = sorted(set(new_topics.tolist()) - {OUTLIER_TOPIC})
    shared = old_topics.index.intersection(new_topics.index)
    crossed = pd.crosstab(old_topics.loc[shared], new_topics.loc[shared]) if len(shared) else pd.DataFrame()
    counts = (
        crossed.reindex(index=old_ids, columns=new_ids, fill_value=0).to_numpy(dtype=float)
        if len(old_ids) and len(new_ids)
        else np.zeros((len(old_ids), len(new_ids)))
    )
    old_sizes = old_topics.loc[shared].value_counts().reindex(old_ids, fill_value=0).to_numpy(dtype=float)
    new_sizes = new_topics.loc[shared].value_counts().reindex(new_ids, fill_value=0).to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        share_of_old = np.nan_to_num(counts / old_sizes[:, None])
        share_of_new = np.nan_to_num(counts / new_sizes[None, :])
        papers = np.nan_to_num(counts / (old_sizes[:, None] + new_sizes[None, :] - counts))
    row_of = pd.Series(np.arange(len(new_topics)), index=new_topics.index)
    shared_old = old_topics.loc[shared]
    old_members = [row_of.loc[shared_old.index[shared_old.to_numpy() == topic]].to_numpy() for topic in old_ids]
    new_members = [np.flatnonzero(new_topics.to_numpy() == topic) for topic in new_ids]
    centroid = centroid_similarity(old_members, new_members, np.asarray(embeddings, dtype=np.float64))
    terms = term_similarity(old_terms, new_terms, old_ids, new_ids, config.n_terms)
    score = config.weight_papers * papers + config.weight_centroid * centroid + config.weight_terms * terms
    grid_old, grid_new = np.meshgrid(old_ids, new_ids, indexing="ij")
    pairs = pd.DataFrame(
        {
            "old": grid_old.ravel(),
            "new": grid_new.ravel(),
            "n_shared": counts.ravel().astype(int),
            "share_of_old": share_of_old.ravel(),
            "share_of_new": share_of_new.ravel(),
            "papers": papers.ravel(),
            "centroid": centroid.ravel(),
            "terms": terms.ravel(),
            "score": score.ravel(),
        }
    )
    match = TopicMatch(pairs)
    if len(old_ids) and len(new_ids):
        from scipy.optimize import linear_sum_assignment

        rows, columns = linear_sum_assignment(score, maximize=True)
        match.matches = {new_ids[c]: old_ids[r] for r, c in zip(rows, columns) if score[r, c] >= config.floor}
        for row, parts in enumerate(_parts(share_of_old, share_of_new, config)):
            if len(parts):
                match.splits[old_ids[row]] = [new_ids[c] for c in parts]
        for column, parts in enumerate(_parts(share_of_new.T, share_of_old.T, config)):
            if len(parts):
                match.merges[new_ids[column]] = [old_ids[r] for r in parts]
    return match


def assign_ids(new_ids: list[int], matches: dict[int, int], ever_used: set[int]) -> dict[int, int]:
    """{new fit id: atlas id}: a matched topic takes its old id, any other a fresh one above every id in
    ``ever_used`` and every matched id, in increasing fit-id order; -1 stays -1."""
    mapping = {OUTLIER_TOPIC: OUTLIER_TOPIC} if OUTLIER_TOPIC in new_ids else {}
    next_id = max([*ever_used, *matches.values(), OUTLIER_TOPIC]) + 1
    for topic in sorted(set(new_ids) - {OUTLIER_TOPIC}):
        if topic in matches:
            mapping[topic] = matches[topic]
        else:
            mapping[topic] = next_id
            next_id += 1
    return mapping


def flow_table(old_topics: pd.Series, new_topics: pd.Series) -> pd.DataFrame:
    """Papers per (previous_topic, topic) over the union of both builds' papers (Series indexed by paper key, ids in
    the same id space). Columns previous_topic, topic (nullable Int64: <NA> = not in that build), n_papers."""
    joined = pd.concat([old_topics.rename("previous_topic"), new_topics.rename("topic")], axis=1, join="outer")
    joined = joined.astype("Int64")
    counts = joined.groupby(["previous_topic", "topic"], dropna=False).size().rename("n_papers").reset_index()
    return (
        counts.astype({"previous_topic": "Int64", "topic": "Int64", "n_papers": int})
        .sort_values(["previous_topic", "topic"])
        .reset_index(drop=True)
    )


def largest_flows(
    flows: pd.DataFrame, topic: int, side: str, other: str, min_share: float = 0.05, most: int = 6
) -> list[dict[str, Any]]:
    """The largest flows of one topic on ``side`` ("topic" or "previous_topic"): [{topic, n_papers, share}],
    share of the topic's papers on that side; those under ``min_share`` are left out (at most ``most``)."""
    rows = flows[flows[side] == topic]
    total = rows["n_papers"].sum()
    result: list[dict[str, Any]] = []
    for value, count in rows.sort_values("n_papers", ascending=False)[[other, "n_papers"]].itertuples(index=False):
        if total and count / total >= min_share and len(result) < most:
            result.append(
                {
                    "topic": None if pd.isna(value) else int(value),
                    "n_papers": int(count),
                    "share": round(float(count / total), 4),
                }
            )
    return result


def topic_status(fit_id: int, match: TopicMatch) -> str:
    """ "merged", "split", "kept" or "new" for one new topic (merged before split before kept)."""
    if fit_id in match.merges:
        return "merged"
    if any(fit_id in parts for parts in match.splits.values()):
        return "split"
    return "kept" if fit_id in match.matches else "new"


def lineage_record(
    match: TopicMatch,
    mapping: dict[int, int],
    flows: pd.DataFrame,
    labels: dict[int, str],
    previous: TopicCache,
    config: AlignConfig,
) -> dict[str, Any]:
    """The manifest's ``lineage``: per new topic its status and sources, per gone old topic where its papers went.

    ``flows`` is :func:`flow_table` in atlas ids; ``labels`` the new atlas's labels; ``previous`` the old atlas.
    Shares in ``from`` are of the new topic's papers, in ``to`` of the old topic's; topic None = not in that build.
    """
    pair = match.pairs.set_index(["old", "new"]) if len(match.pairs) else None
    atlas_of = {fit: atlas for fit, atlas in mapping.items()}
    topics = []
    for fit_id, atlas_id in sorted(mapping.items(), key=lambda item: item[1]):
        if atlas_id == OUTLIER_TOPIC:
            continue
        old = match.matches.get(fit_id)
        sources = match.merges.get(fit_id) or [old_id for old_id, parts in match.splits.items() if fit_id in parts]
        carried_share: float | None = None
        score: float | None = None
        if old is not None and pair is not None:  # a matched topic always has its pair row
            carried_share = round(float(pair.loc[(old, fit_id), "share_of_old"]), 4)
            score = round(float(pair.loc[(old, fit_id), "score"]), 4)
        entry = {
            "topic": atlas_id,
            "label": labels[atlas_id],
            "status": topic_status(fit_id, match),
            "previous_topic": old,
            "split_from": next((old_id for old_id, parts in match.splits.items() if fit_id in parts), None),
            "merged_from": sorted(match.merges.get(fit_id, [])),
            "sources": sorted(set(sources)),
            "from": largest_flows(flows, atlas_id, "topic", "previous_topic"),
            "n_papers": int(flows.loc[flows["topic"] == atlas_id, "n_papers"].sum()),
            "n_added": int(flows.loc[(flows["topic"] == atlas_id) & flows["previous_topic"].isna(), "n_papers"].sum()),
            "carried_share": carried_share,
            "score": score,
        }
        topics.append(entry)
    kept_old = set(match.matches.values())
    previous_topics = previous.topics[previous.topics["topic"] != OUTLIER_TOPIC]
    gone = []
    for old_id, label, size in zip(previous_topics["topic"], previous_topics["label"], previous_topics["size"]):
        if int(old_id) in kept_old:
            continue
        merged_into = [atlas_of[fit] for fit, olds in match.merges.items() if int(old_id) in olds]
        split_into = [atlas_of[fit] for fit in match.splits.get(int(old_id), [])]
        fate = "merged" if merged_into else "split" if split_into else "dissolved"
        gone.append(
            {
                "topic": int(old_id),
                "label": str(label),
                "n_papers": int(size),
                "fate": fate,
                "into": merged_into or split_into,
                "to": largest_flows(flows, int(old_id), "previous_topic", "topic"),
            }
        )
    shared = flows.dropna(subset=["previous_topic", "topic"])
    return {
        "kind": "rebuild",
        "previous": {
            key: previous.manifest.get(key)
            for key in ("created_at", "input_path", "input_sha256", "n_documents", "n_topics")
        },
        "method": asdict(config),
        "n_papers": {
            "shared": int(shared["n_papers"].sum()),
            "same_topic": int(shared.loc[shared["previous_topic"] == shared["topic"], "n_papers"].sum()),
            "added": int(flows.loc[flows["previous_topic"].isna(), "n_papers"].sum()),
            "removed": int(flows.loc[flows["topic"].isna(), "n_papers"].sum()),
        },
        "previous_topics": {
            str(int(t)): {"label": str(label), "size": int(s)}
            for t, label, s in zip(previous.topics["topic"], previous.topics["label"], previous.topics["size"])
        },
        "topics": topics,
        "gone": gone,
        "splits": [
            {"topic": old_id, "into": sorted(atlas_of[fit] for fit in parts)}
            for old_id, parts in sorted(match.splits.items())
        ],
        "merges": [
            {"topic": atlas_of[fit], "from": sorted(olds)}
            for fit, olds in sorted(match.merges.items(), key=lambda item: atlas_of[item[0]])
        ],
    }


_NO_KEYWORDS = re.compile(r"^Topic (-?\d+) \(no keywords\)$")
_TOPIC_SUFFIX = re.compile(r" \(topic (-?\d+)\)$")


def final_labels(mapping: dict[int, int], fit_labels: dict[int, str], kept_labels: dict[int, str]) -> dict[int, str]:
    """{atlas id: label}. ``kept_labels`` ({atlas id: label}, the old or user-given labels of matched topics) win;
    other topics take the fit's label, with a fit id written in it ("Topic 7 (no keywords)", "... (topic 7)")
    rewritten to the atlas id, and " (topic N)" added where it would repeat a kept label."""
    labels = {atlas: kept_labels[atlas] for atlas in mapping.values() if atlas in kept_labels}
    used = set(labels.values())
    for fit, atlas in sorted(mapping.items(), key=lambda item: item[1]):
        if atlas in labels:
            continue
        label = _NO_KEYWORDS.sub(f"Topic {atlas} (no keywords)", fit_labels[fit])
        label = _TOPIC_SUFFIX.sub(f" (topic {atlas})", label)
        if label in used:
            label = f"{label} (topic {atlas})"
        labels[atlas] = label
        used.add(label)
    return labels


def renumber_hierarchy(
    hierarchy: pd.DataFrame, mapping: dict[int, int], labels: dict[int, str], first_node_id: int
) -> pd.DataFrame:
    """The merge tree (pipeline.schema.HIERARCHY_COLUMNS) with leaves renumbered by ``mapping`` (fit id -> atlas id)
    and named by ``labels``, and merged nodes renumbered ``first_node_id``, ``first_node_id + 1``, ... in their
    original order, so they stay distinct from every topic id (BERTopic numbers them after the largest topic id)."""
    if hierarchy.empty:
        return hierarchy.copy()
    node_ids = pd.unique(
        pd.concat([hierarchy[column] for column in ("parent_id", "child_left_id", "child_right_id")]).astype(int)
    )
    internal = sorted(int(node) for node in node_ids if int(node) not in mapping)
    renumbered = {**mapping, **{node: first_node_id + rank for rank, node in enumerate(internal)}}
    tree = hierarchy.copy()
    for column in ("parent_id", "child_left_id", "child_right_id"):
        tree[column] = tree[column].astype(int).map(renumbered).astype(int)
    for side in ("child_left", "child_right"):
        is_leaf = hierarchy[f"{side}_id"].astype(int).isin(list(mapping)).to_numpy()
        tree[f"{side}_name"] = [
            labels.get(node, name) if leaf else name
            for node, name, leaf in zip(tree[f"{side}_id"], tree[f"{side}_name"], is_leaf)
        ]
    tree["topics"] = tree["topics"].map(lambda members: [int(mapping[int(member)]) for member in members])
    return tree


def renumber_tables(
    tables: AtlasTables, mapping: dict[int, int], labels: dict[int, str], first_node_id: int
) -> AtlasTables:
    """Apply ``mapping`` (fit id -> atlas id) and ``labels`` (atlas id -> label) to every table that carries topic
    ids: documents (topic, topic_label), topics (topic, label; sorted by id), hierarchy, topics per class, and the
    per-topic metrics of the manifest (``metrics["npmi_by_topic"]``). Other columns (e.g. theme ids) are left as
    they are. Raises KeyError when a table holds a topic id that ``mapping`` lacks."""

    def mapped(values: pd.Series) -> pd.Series:
        return values.astype(int).map(lambda topic: mapping[int(topic)]).astype(np.int64)

    documents = tables.documents.copy()
    documents["topic"] = mapped(documents["topic"])
    if "topic_label" in documents.columns:
        documents["topic_label"] = documents["topic"].map(labels)
    topics = tables.topics.copy()
    topics["topic"] = mapped(topics["topic"])
    topics["label"] = topics["topic"].map(labels)
    topics = topics.sort_values("topic").reset_index(drop=True)
    per_class = tables.topics_per_class
    if per_class is not None and not per_class.empty:
        per_class = per_class.assign(topic=mapped(per_class["topic"]))
    manifest = tables.manifest.copy()
    metrics = manifest.get("metrics")
    if isinstance(metrics, dict) and isinstance(metrics.get("npmi_by_topic"), dict):
        metrics = dict(metrics)
        metrics["npmi_by_topic"] = {
            str(mapping[int(topic)]): value for topic, value in metrics["npmi_by_topic"].items()
        }
        manifest["metrics"] = metrics
    hierarchy = renumber_hierarchy(tables.hierarchy, mapping, labels, first_node_id)
    return AtlasTables(documents, topics, hierarchy, per_class, manifest, tables.lineage)


def lineage_table(
    previous: TopicCache, previous_keys: list[str], documents: pd.DataFrame, keys: list[str]
) -> pd.DataFrame:
    """Per paper of either build: doc_id, title, previous_topic, topic (Int64, <NA> = not in that build);
    new papers first in ``documents`` order, then the removed ones in the old order."""
    old = pd.DataFrame(
        {
            "key": previous_keys,
            "doc_id": previous.documents["doc_id"].astype(str),
            "title": previous.documents["title"],
            "previous_topic": previous.documents["topic"],
        }
    )
    new = pd.DataFrame(
        {
            "key": keys,
            "doc_id": documents["doc_id"].astype(str),
            "title": documents["title"],
            "topic": documents["topic"],
        }
    )
    old, new = old.drop_duplicates("key"), new.drop_duplicates("key")
    joined = new.merge(old[["key", "previous_topic"]], on="key", how="left")
    removed = old[~old["key"].isin(new["key"])].assign(topic=pd.NA)
    table = pd.concat([joined, removed], ignore_index=True)[["doc_id", "title", "previous_topic", "topic"]]
    return table.astype({"doc_id": str, "previous_topic": "Int64", "topic": "Int64"})


def read_previous(cache_dir: Path | None) -> tuple[TopicCache | None, str | None]:
    """(the atlas in ``cache_dir``, None), or (None, why there is none to align to: absent or unreadable)."""
    if cache_dir is None or not (Path(cache_dir) / "manifest.json").is_file():
        return None, None
    try:
        return read_cache(cache_dir), None
    except CacheError as error:
        return None, f"the previous atlas in {cache_dir} cannot be read ({error.problem}); topics were numbered afresh"


def _terms_of(topics: pd.DataFrame) -> dict[int, list]:
    return {int(topic): list(terms) for topic, terms in zip(topics["topic"], topics["top_terms"])}


def _ever_used(manifest: Manifest, topics: pd.DataFrame) -> set[int]:
    """Topic ids an atlas has ever used: its manifest's list, else (an older cache) its present topics."""
    recorded = manifest.get("topic_ids_ever_used")
    present = {int(topic) for topic in topics["topic"]} - {OUTLIER_TOPIC}
    return {int(topic) for topic in recorded} | present if isinstance(recorded, list) else present


def _number_afresh(
    tables: AtlasTables, problem: str | None, no_align: bool
) -> tuple[AtlasTables, dict[int, int], set[int], dict[str, LabelOverride]]:
    """The model's own ids (no previous atlas, an unreadable one, or --no-align): (tables, mapping, ever used,
    overrides)."""
    fit_labels = dict(zip(tables.topics["topic"].astype(int), tables.topics["label"]))
    mapping = {topic: topic for topic in sorted(fit_labels)}
    manifest = tables.manifest.copy()
    if problem:
        manifest["warnings"] = [*manifest.get("warnings", []), problem]
        log.warning(problem)
    manifest["alignment"] = problem or (
        "not aligned (--no-align): topic ids start afresh" if no_align else "first build of this atlas"
    )
    first_node = max([*mapping, OUTLIER_TOPIC]) + 1
    return renumber_tables(replace(tables, manifest=manifest), mapping, fit_labels, first_node), mapping, set(), {}


def _align_to(
    previous: TopicCache, tables: AtlasTables, embeddings: np.ndarray, config: AlignConfig
) -> tuple[AtlasTables, dict[int, int], set[int], dict[str, LabelOverride]]:
    """Match, renumber and record the lineage against ``previous``: (tables, mapping, ever used, overrides)."""
    keys, previous_keys = paper_keys(tables.documents), paper_keys(previous.documents)
    unique, previous_unique = ~pd.Index(keys).duplicated(), ~pd.Index(previous_keys).duplicated()
    old_topics = pd.Series(previous.documents["topic"].astype(int).to_numpy(), index=previous_keys)[previous_unique]
    new_topics = pd.Series(tables.documents["topic"].astype(int).to_numpy(), index=keys)[unique]
    match = match_topics(
        old_topics,
        new_topics,
        np.asarray(embeddings)[unique],
        _terms_of(previous.topics),
        _terms_of(tables.topics),
        config,
    )
    ever_used = _ever_used(previous.manifest, previous.topics)
    fit_labels = dict(zip(tables.topics["topic"].astype(int), tables.topics["label"]))
    mapping = assign_ids(sorted(fit_labels), match.matches, ever_used)
    old_labels = dict(zip(previous.topics["topic"].astype(int), previous.topics["label"]))
    kept = {old: old_labels[old] for old in match.matches.values()}
    overrides = {
        key: value for key, value in (previous.manifest.get("label_overrides") or {}).items() if int(key) in kept
    }
    kept.update({int(key): value["label"] for key, value in overrides.items()})
    labels = final_labels(mapping, fit_labels, kept)
    first_node = max([*ever_used, *mapping.values(), OUTLIER_TOPIC]) + 1
    aligned = renumber_tables(replace(tables, manifest=tables.manifest.copy()), mapping, labels, first_node)
    flows = flow_table(old_topics, pd.Series(aligned.documents["topic"].astype(int).to_numpy(), index=keys)[unique])
    lineage = lineage_record(match, mapping, flows, labels, previous, config)
    aligned.manifest["lineage"] = lineage
    aligned.lineage = lineage_table(previous, previous_keys, aligned.documents, keys)
    counts = pd.Series([entry["status"] for entry in lineage["topics"]], dtype=object).value_counts().to_dict()
    aligned.manifest["alignment"] = (
        f"aligned to the atlas of {previous.manifest.get('created_at')}: "
        + ", ".join(f"{counts.get(s, 0)} {s}" for s in ("kept", "split", "merged", "new"))
        + (
            f", {len(lineage['gone'])} gone; {lineage['n_papers']['same_topic']} "
            f"of {lineage['n_papers']['shared']} shared papers kept their topic id"
        )
    )
    log.info(aligned.manifest["alignment"])
    left_added, left_fitted, n_fitted = papers_left_out(previous, previous_keys, set(keys))
    notes = []
    if left_added:
        notes.append(
            f"{left_added} papers added to the previous atlas with `add` are not in this build's input, so they left "
            "the atlas; add them again (topic-atlas add) or put them in the input"
        )
        aligned.manifest["alignment"] += f"; {left_added} papers added with `add` left"
    if left_fitted:
        source = Path(str(previous.manifest.get("input_path") or "its input")).name
        notes.append(
            f"{left_fitted} of the {n_fitted} papers the previous atlas was built "
            f"from ({source}) are not among this build's papers (not in its input, or dropped by its cleaning), so "
            "they left the atlas"
        )
        aligned.manifest["alignment"] += f"; {left_fitted} papers of the previous input left"
    for note in notes:
        log.warning(note)
    if notes:
        aligned.manifest["warnings"] = [*aligned.manifest.get("warnings", []), *notes]
    return aligned, mapping, ever_used, overrides


def papers_left_out(previous: TopicCache, previous_keys: list[str], keys: set[str]) -> tuple[int, int, int]:
    """(added, fitted, n_fitted): how many of ``previous``'s papers have no key among the new build's ``keys``
    (:func:`paper_keys`), among those an ``add`` brought (documents column ``added``: a rebuild from the original
    input leaves them out) and among those its own build fitted (a rebuild from another file, or a smaller one,
    leaves them out); and how many it fitted."""
    documents = previous.documents
    added = (
        documents["added"].fillna(False).astype(bool).to_numpy()
        if "added" in documents.columns
        else np.zeros(len(documents), dtype=bool)
    )
    missing = np.array([key not in keys for key in previous_keys], dtype=bool)
    return int((missing & added).sum()), int((missing & ~added).sum()), int((~added).sum())


def align_to_previous(
    cache_dir: Path | None, tables: AtlasTables, embeddings: np.ndarray, config: AlignConfig = AlignConfig()
) -> AtlasTables:
    """The one renumbering step of a build, just before its cache is written.

    ``tables`` hold the new fit with the model's own topic ids; ``embeddings`` (n x dim) are the new build's, in the
    row order of ``tables.documents``. When ``cache_dir`` holds a readable atlas the topics are matched to it
    (:func:`match_topics`), renumbered (:func:`renumber_tables`) and the lineage recorded; otherwise (``cache_dir``
    None for ``--no-align``, no atlas yet, or an unreadable one) the model's ids are kept and a new lineage begins.
    Either way the manifest gains ``topic_ids_ever_used``, ``model_topic_ids`` ({atlas id: model id}),
    ``label_overrides`` (user renames carried over) and ``alignment`` (what was done, in a sentence).
    """
    previous, problem = read_previous(cache_dir)
    if previous is None:
        aligned, mapping, ever_used, overrides = _number_afresh(tables, problem, no_align=cache_dir is None)
    else:
        aligned, mapping, ever_used, overrides = _align_to(previous, tables, embeddings, config)
    present = {atlas for atlas in mapping.values() if atlas != OUTLIER_TOPIC}
    aligned.manifest["topic_ids_ever_used"] = sorted(ever_used | present)
    aligned.manifest["model_topic_ids"] = {
        str(atlas): int(fit) for fit, atlas in sorted(mapping.items(), key=lambda item: item[1])
    }
    aligned.manifest["label_overrides"] = overrides
    return aligned
