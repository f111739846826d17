"""Candidate new topics: the added papers the atlas has no topic for, grouped, named and described (``add``).

``topic-atlas add`` places new papers into the atlas's topics without a refit (pipeline.operations.add). Two kinds
of new paper may belong to a topic the atlas lacks:

- a paper that *fits no topic*: placed among the outliers, or its cosine similarity to the nearest topic centroid
  below what 95% of the atlas's topic papers have to their own topic's centroid (pipeline.operations.add.fit_check);
- a paper *in new territory* (:func:`in_new_territory`): most of its nearest papers of the grown atlas are new ones,
  the odds of a new paper among them at least NEW_TERRITORY_ODDS times the odds in the grown atlas as a whole. A
  subject that grew into a topic of its own sits there (on ICLR 2026 added to 2024-2025: reasoning with chains of
  thought, speculative decoding, mixture of experts), while its papers still lie near an existing topic's centroid
  and so fit one: of 17,097 ICLR 2026 papers, 432 fit no topic and none of their groups matched a new topic of the
  refit (docs/decisions/candidate-topics.md).

New territory is judged, and the flagged papers grouped, in pipeline.topics.candidate_space: the atlas's lexical
block fitted again on old and new papers together, since a paper projected onto an SVD fitted without it looks more
typical than the papers it was fitted on, and the added papers then crowd together wherever they lie.

Stray papers of either kind are many; only a subject comes in groups. So the flagged papers are clustered as the
build clusters documents (BERTopic's default recipe, Grootendorst 2022: UMAP to CLUSTER_DIMENSIONS dimensions on
their cosine neighbour lists, pipeline.geometry.umap_layout, then HDBSCAN, pipeline.geometry.cluster), and each
cluster of at least the atlas's own ``min_cluster_size`` papers (the smallest dense group its build accepts as a
topic) is a *candidate topic*. Each is named by the build's phrase namer (pipeline.topics.naming.names: a phrase its
papers write and the rest of the atlas does not, never an existing topic's name) and described by its size, its
terms (the phrases the namer ranks highest for it), its representative papers (nearest its centroid) and the
existing topic whose centroid is nearest its own, with that cosine similarity.

A refit is due (:func:`candidate_refit_reason`) when a candidate holds at least as many papers as the atlas's
smallest topic: a group the build would have kept as a topic of its own had it seen those papers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from pipeline.geometry.centroids import topic_centroids
from pipeline.schema import CANDIDATE_COLUMNS
from pipeline.schema import OUTLIER_TOPIC as OUTLIER

# The clustering space of the candidates: as the build's (pipeline.config.BuildConfig.umap_n_components).
CLUSTER_DIMENSIONS = 5
NEIGHBOURS = 15
# From this many flagged papers (enough for UMAP's graph of NEIGHBOURS neighbours) they are laid out by UMAP before
# HDBSCAN; below it, HDBSCAN on the vectors. Raw text vectors separate groups poorly: 14 cooking abstracts among 24
# flagged papers of a small atlas had a median cosine of 0.39 to each other and 0.39 to their nearest other paper,
# HDBSCAN on the vectors found no group (any min_samples of 2-3; 4-5 split them off), and HDBSCAN after UMAP found
# the 14 at UMAP seeds 42, 7 and 2026 (tests/test_add_collections.py's atlas on tfidf-svd; it was 30, and nothing was
# grouped there).
MIN_FOR_UMAP = NEIGHBOURS + 1
# Few flagged papers: below this many, no candidate size cap applies (a subject may be most of them), and when they
# form no group alone they are clustered again among a sample of the atlas's own papers (the context: at least
# CONTEXT_MIN of them and CONTEXT_PER_FLAGGED per flagged paper, or all), a cluster counting when flagged papers are at
# least half of it and split again alone when it holds two subjects (:func:`grouped_in_context`). Alone, a subject that
# is most of the flagged papers is HDBSCAN's root, which it never returns: 14 cooking abstracts among 20 flagged
# papers formed no candidate at any of 20 UMAP seeds; 20 cooking and 20 law abstracts among 43 flagged, none at two
# seeds of three, and the cap took 20 cooking abstracts away among 65 off-subject papers
# (docs/decisions/candidate-topics.md). From this size on the flagged papers of a real add are many subjects, and a
# context four times their number would cost much.
CONTEXT_BELOW = 500
CONTEXT_MIN = 300
CONTEXT_PER_FLAGGED = 4
# A new paper is in new territory when the odds of a new paper among its nearest papers are at least this many times
# the odds in the whole grown atlas: 3 from bench/add_year.py --rules (docs/decisions/candidate-topics.md).
NEW_TERRITORY_ODDS = 3.0
REPRESENTATIVES = 5
TERMS = 10
# A candidate's name is written by at least this share of its papers, as a subtopic's (pipeline.topics.subtopics
# .MIN_NAME_COVERAGE): at the namer's default 3%, "Model context protocol (MCP) and agents" named 391 agent
# benchmark papers, one of 8 of whose titles wrote MCP (FIT 2); at 15% it is "LLM agents" (FIT 4). Of 17 candidates
# 4 were renamed, FIT 2.00 -> 2.75, no loss (round 40, docs/decisions/candidate-topics.md).
NAME_COVERAGE = 0.15


@dataclass
class CandidateGroups:
    """Flagged new papers grouped into candidate topics (:func:`group_flagged`).

    Attributes
    ----------
    labels : int64, m (one per new paper): its candidate (0..k-1), or -1 (not flagged, or a stray).
    min_size : the smallest group kept (the atlas's min_cluster_size).
    n_flagged : how many of the m papers were flagged (fit no topic, or in new territory).
    method : how they were clustered ("umap+hdbscan", "umap+hdbscan among N of the atlas's papers", "hdbscan" or
        "none: ...").
    """

    labels: np.ndarray
    min_size: int
    n_flagged: int
    method: str


def cluster_space(vectors: np.ndarray, random_state: int) -> tuple[np.ndarray, str]:
    """The space the misfits are clustered in: UMAP (cosine, CLUSTER_DIMENSIONS dimensions, min_dist 0, as the build's
    clustering space) on their own neighbour lists, or the vectors themselves below MIN_FOR_UMAP papers.
    ``vectors``: float32, m x dim, unit rows. Returns (points float32 m x d, method)."""
    if len(vectors) < MIN_FOR_UMAP:
        return vectors.astype(np.float32), "hdbscan"
    from pipeline.geometry.neighbors import cosine_knn
    from pipeline.geometry.umap_layout import umap_layout

    k = min(NEIGHBOURS, len(vectors) - 2)  # UMAP takes at most n - 1 neighbours, each paper itself among them
    indices, similarities = cosine_knn(vectors.astype(np.float32), k + 1)
    points = umap_layout(vectors, indices, similarities, CLUSTER_DIMENSIONS, k + 1, 0.0, random_state)
    return points, "umap+hdbscan"


def in_new_territory(
    new_indices: np.ndarray,
    new_scores: np.ndarray,
    n_old: int,
    odds: float = NEW_TERRITORY_ODDS,
    is_new: np.ndarray | None = None,
) -> np.ndarray:
    """Per new paper, whether it lies where the atlas had few papers (module docstring): the share of new papers
    among its nearest papers is at least s, where s / (1 - s) = ``odds`` x p / (1 - p) and p is the share of new
    papers in the grown atlas.

    ``new_indices``, ``new_scores``: int64 and float, m x k, each new paper's nearest other papers of the grown atlas
    (rows of the old papers 0..``n_old``-1, then the new ones; pipeline.geometry.grown_neighbours.NearestLists);
    entries with a score of -inf (itself, in a tiny atlas) do not count. ``is_new``: bool, one per row of the grown
    atlas, which rows count as new (an earlier add's papers still waiting for a candidate count too,
    :func:`waiting_rows`); None: the rows from ``n_old`` on. Returns bool, m."""
    m = len(new_indices)
    if not m:
        return np.zeros(0, dtype=bool)
    base = m / (m + n_old) if is_new is None else float(np.mean(is_new))
    if base >= 1.0:
        return np.zeros(m, dtype=bool)
    target = odds * base / (1.0 - base)
    share_needed = target / (1.0 + target)
    counted = np.isfinite(new_scores)
    neighbour_is_new = new_indices >= n_old if is_new is None else is_new[new_indices]
    new_share = (neighbour_is_new & counted).sum(axis=1) / np.maximum(counted.sum(axis=1), 1)
    return new_share >= share_needed


def waiting_rows(documents: pd.DataFrame, candidates: pd.DataFrame) -> np.ndarray:
    """int64: the rows of an atlas's ``documents`` that an earlier add brought (column ``added``) and that no
    candidate of ``candidates`` (candidates.parquet) holds. An add judges them again beside its own papers, so that a
    subject that arrives over several adds, each bringing fewer of its papers than a candidate needs, forms one
    (pipeline.operations.add.find_candidates). Empty for an atlas no add grew, and after a rebuild."""
    if "added" not in documents.columns:
        return np.zeros(0, dtype=np.int64)
    grouped = {str(doc_id) for ids in candidates.get("doc_ids", pd.Series(dtype=object)) for doc_id in ids}
    added = documents["added"].fillna(False).astype(bool).to_numpy()
    listed = documents["doc_id"].astype(str).isin(grouped).to_numpy()
    return np.flatnonzero(added & ~listed).astype(np.int64)


def group_flagged(
    vectors: np.ndarray,
    flagged: np.ndarray,
    min_size: int,
    min_samples: int | None,
    random_state: int,
    max_cluster_share: float = 0.0,
    context: np.ndarray | None = None,
) -> CandidateGroups:
    """Cluster the flagged new papers (``flagged`` True: they fit no topic, or lie in new territory) into candidate
    topics (module docstring).

    Parameters
    ----------
    vectors : float32, m x dim, unit rows: the new papers' embeddings.
    flagged : bool, m.
    min_size : the smallest candidate (HDBSCAN's min_cluster_size; the atlas's resolved ``min_cluster_size``).
    min_samples : HDBSCAN's min_samples (the atlas's), or None.
    random_state : UMAP's seed (the atlas's), so an add gives the same candidates every time.
    max_cluster_share : no candidate may hold more than this share of the flagged papers (the atlas's
        ``max_cluster_share``, pipeline.geometry.cluster.hdbscan_clusters; 0 = no cap), from CONTEXT_BELOW flagged
        papers on, and below it among the atlas's papers (:func:`grouped_in_context`). Without it HDBSCAN's "eom"
        kept one candidate of 4,085 of 4,159 flagged ICLR 2026 papers (bench/add_year.py --rules, 2026-12-07);
        capped at the build's half, 11 candidates. Below, a subject may be most of the flagged papers (a group of 34
        of 65 flagged off-subject abstracts, 20 cooking ones among them, was capped away;
        docs/decisions/candidate-topics.md).
    context : float32, c x dim, unit rows: the atlas's own papers in the same space as ``vectors``; fewer than
        CONTEXT_BELOW flagged papers that form no group alone are clustered again among a sample of them
        (:func:`grouped_in_context`). None: alone only.

    Returns :class:`CandidateGroups`; candidate ids 0..k-1 by decreasing size.
    """
    from pipeline.geometry.cluster import hdbscan_clusters

    chosen = np.flatnonzero(np.asarray(flagged, dtype=bool))
    labels = np.full(len(flagged), OUTLIER, dtype=np.int64)
    min_size = max(2, int(min_size))
    if len(chosen) < min_size:
        return CandidateGroups(labels, min_size, len(chosen), f"none: {len(chosen)} flagged, fewer than {min_size}")
    samples = min(min_samples or min_size, min_size)
    few = len(chosen) < CONTEXT_BELOW  # few flagged papers: a subject may be most of them, so no cap
    points, method = cluster_space(vectors[chosen], random_state)
    found, _ = hdbscan_clusters(points, min_size, samples, "eom", 0.0 if few else max_cluster_share)
    if (found == OUTLIER).all() and context is not None and len(context) and few:
        found, method = grouped_in_context(vectors[chosen], context, min_size, samples, random_state, max_cluster_share)
    sizes = pd.Series(found[found != OUTLIER]).value_counts()
    order = {int(group): rank for rank, group in enumerate(sorted(sizes.index, key=lambda g: (-sizes[g], g)))}
    labels[chosen] = [order.get(int(group), OUTLIER) for group in found]
    return CandidateGroups(labels, min_size, len(chosen), method)


def grouped_in_context(
    flagged: np.ndarray,
    context: np.ndarray,
    min_size: int,
    min_samples: int,
    random_state: int,
    max_cluster_share: float = 0.0,
) -> tuple[np.ndarray, str]:
    """Few flagged papers clustered among the atlas's own (CONTEXT_BELOW): ``flagged`` (float32, m x dim) with a
    sample of ``context`` (c x dim; max(CONTEXT_MIN, CONTEXT_PER_FLAGGED x m) rows drawn with ``random_state``, or all)
    laid out and clustered as :func:`cluster_space` and HDBSCAN do, no cluster over ``max_cluster_share`` of the
    points (the atlas's, as its build capped its own clusters: uncapped, 14 cooking abstracts among 300 ICLR papers
    were one cluster of 303; docs/decisions/candidate-topics.md); a cluster whose flagged members number at least
    ``min_size`` and are at least half of it is a group. The atlas's papers give the flagged ones something to stand
    out from: alone, a subject that is most of them is HDBSCAN's root and is never returned.

    Returns (int64 m: a group 0.. per flagged paper, or -1; the method)."""
    from pipeline.geometry.cluster import hdbscan_clusters

    count = len(flagged)
    size = min(len(context), max(CONTEXT_MIN, CONTEXT_PER_FLAGGED * count))
    drawn = np.sort(np.random.default_rng(random_state).choice(len(context), size, replace=False))
    points, method = cluster_space(np.vstack([flagged, context[drawn]]).astype(np.float32), random_state)
    found, _ = hdbscan_clusters(points, min_size, min_samples, "eom", max_cluster_share)
    groups = np.full(count, OUTLIER, dtype=np.int64)
    for cluster in sorted(set(found[:count].tolist()) - {OUTLIER}):
        members = np.flatnonzero(found[:count] == cluster)
        if len(members) < min_size or 2 * len(members) < (found == cluster).sum():
            continue
        parts = _split_alone(flagged[members], min_size, min_samples, random_state)
        for part in sorted(set(parts.tolist()) - {OUTLIER}):
            groups[members[parts == part]] = groups.max(initial=OUTLIER) + 1
    return groups, f"{method} among {size} of the atlas's papers"


def _split_alone(members: np.ndarray, min_size: int, min_samples: int, random_state: int) -> np.ndarray:
    """A group found among the atlas's papers, split when, clustered alone, it holds two subjects or more of
    ``min_size`` each (two subjects the atlas lacks lie near each other beside it: 20 cooking and 18 law abstracts
    were one cluster among 300 ICLR papers and two alone). ``members``: float32, g x dim. Returns int64, g: a part
    0.. per member (all 0 when it does not split), or -1 for a member of none of two or more parts."""
    whole = np.zeros(len(members), dtype=np.int64)
    if len(members) < 2 * min_size:
        return whole
    from pipeline.geometry.cluster import hdbscan_clusters

    points, _ = cluster_space(members, random_state)
    parts, _ = hdbscan_clusters(points, min_size, min_samples, "eom")
    return parts if len(set(parts.tolist()) - {OUTLIER}) >= 2 else whole


def nearest_topics(
    vectors: np.ndarray, labels: np.ndarray, topic_vectors: np.ndarray, topics: np.ndarray
) -> tuple[dict[int, int], dict[int, float]]:
    """Per candidate, the existing topic whose centroid is nearest its centroid, and that cosine similarity.

    ``vectors`` (m x dim) and ``labels`` (int m, -1 none) are the new papers'; ``topic_vectors`` (n x dim) and
    ``topics`` (int n, -1 outlier) the atlas's fitted papers; all rows unit length (pipeline.geometry.centroids).
    Returns ({candidate: topic id}, {candidate: similarity rounded to 4 places}); empty without topics."""
    ids = sorted(set(np.asarray(topics).tolist()) - {OUTLIER})
    groups = sorted(set(labels.tolist()) - {OUTLIER})
    if not ids or not groups:
        return {}, {}
    similarity = topic_centroids(vectors, labels, groups) @ topic_centroids(topic_vectors, topics, ids).T
    best = similarity.argmax(axis=1)
    return (
        {group: int(ids[column]) for group, column in zip(groups, best)},
        {group: round(float(similarity[row, column]), 4) for row, (group, column) in enumerate(zip(groups, best))},
    )


def candidate_names(
    texts: Sequence[str],
    titles: Sequence[str] | None,
    members: Sequence[int],
    taken: Sequence[str],
    fallback: dict[int, str],
) -> tuple[dict[int, Any], dict[int, list[list[Any]]]]:
    """({candidate: pipeline.topics.naming.names.Name}, {candidate: its TERMS best phrases as written, with their
    scores}): the build's phrase namer over every paper of the grown atlas (``texts``, ``titles`` one per paper;
    ``members`` the candidate of each paper, -1 for the rest, which count in each phrase's precision), written by at
    least NAME_COVERAGE of its papers, never one of ``taken`` (the existing topics' labels); ``fallback`` where no
    phrase qualifies. The terms are the phrases the namer ranks (its documents in the candidate times the share of
    all its documents there), so they can hold words the atlas's saved vocabulary lacks."""
    from pipeline.topics.naming.names import choose_names, ranked_phrases
    from pipeline.topics.naming.phrase_counts import count_phrases

    wanted = [int(member) for member in members]
    if not any(member != OUTLIER for member in wanted):
        return {}, {}
    counts = count_phrases(list(texts), list(titles) if titles is not None else None)
    names = choose_names(counts, wanted, taken=list(taken), fallback=fallback, min_coverage=NAME_COVERAGE)
    terms = {
        group: [[counts.written.get(key, key), round(score, 4)] for key, score, _ in ranked[:TERMS]]
        for group, ranked in ranked_phrases(counts, wanted).items()
    }
    return names, terms


def candidate_table(
    groups: CandidateGroups,
    new: pd.DataFrame,
    vectors: np.ndarray,
    names: dict[int, Any],
    terms: dict[int, list[list[Any]]],
    nearest: tuple[dict[int, int], dict[int, float]],
    batch: int,
    first_id: int = 0,
) -> pd.DataFrame:
    """candidates.parquet's rows for one add (pipeline.schema.CANDIDATE_COLUMNS): per candidate its id
    (``first_id`` + its rank), the add's ``batch`` (1-based position in manifest["add_history"]), name and subtitle
    (``names``), size, terms (``terms``: [[phrase, score], ...]), its papers' ids (most typical first), the
    REPRESENTATIVES most typical (nearest its centroid), the nearest existing topic and its similarity
    (``nearest``: :func:`nearest_topics`) and its median map position. ``new``: the new papers (doc_id, x, y), rows
    as ``vectors`` and ``groups.labels``."""
    rows = []
    for group in sorted(set(groups.labels.tolist()) - {OUTLIER}):
        members = np.flatnonzero(groups.labels == group)
        centroid = topic_centroids(vectors, groups.labels, [group])[0]
        typical = members[np.argsort(-(vectors[members] @ centroid), kind="stable")]
        ids = new["doc_id"].astype(str).to_numpy()[typical].tolist()
        name = names.get(group)
        rows.append(
            {
                "candidate": first_id + group,
                "batch": batch,
                "label": name.name if name is not None else f"Candidate {first_id + group}",
                "subtitle": ", ".join(name.subtitle) if name is not None else "",
                "size": len(members),
                "top_terms": [[str(term), float(weight)] for term, weight in terms.get(group, [])[:TERMS]],
                "doc_ids": ids,
                "representative_doc_ids": ids[:REPRESENTATIVES],
                "nearest_topic": nearest[0].get(group, OUTLIER),
                "nearest_similarity": nearest[1].get(group, float("nan")),
                "x": float(np.median(new["x"].to_numpy(dtype=float)[members])),
                "y": float(np.median(new["y"].to_numpy(dtype=float)[members])),
            }
        )
    return pd.DataFrame(rows, columns=CANDIDATE_COLUMNS)


def candidate_refit_reason(candidates: pd.DataFrame, topic_sizes: Sequence[int]) -> str | None:
    """Why the candidates make a refit due, or None: some candidate holds at least as many papers as the atlas's
    smallest topic (``topic_sizes``: the fitted topics' sizes, outliers excluded), so a build that saw its papers
    would likely have kept it as a topic of its own."""
    if candidates.empty or not len(topic_sizes):
        return None
    smallest = int(min(topic_sizes))
    large = candidates[candidates["size"] >= smallest]
    if large.empty:
        return None
    shown = "; ".join(f"'{row.label}' ({row.size})" for row in large.head(5).itertuples())
    return (
        f"{len(large)} candidate new topic{'s' if len(large) != 1 else ''} (added papers that fit no topic or lie "
        f"where few of the atlas's papers are, grouped) {'are' if len(large) != 1 else 'is'} at least as large as the "
        f"atlas's smallest topic ({smallest} papers): {shown}"
    )


def summary(
    candidates: pd.DataFrame,
    groups: CandidateGroups,
    n_misfits: int,
    n_new_territory: int,
    n_earlier: int = 0,
    grown: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    """The add_history entry's ``candidates``: the rule's figures (this add's papers that fit no topic, its papers
    in new territory, the papers flagged: either, ``n_earlier`` of them brought by earlier adds and still in no
    candidate), one line per candidate this add found and one per earlier candidate that flagged papers joined
    (``grown``: {candidate, label, joined, size}, pipeline.topics.candidate_growth.grown_candidates)."""
    return {
        "min_size": groups.min_size,
        "n_misfits": n_misfits,
        "n_new_territory": n_new_territory,
        "new_territory_odds": NEW_TERRITORY_ODDS,
        "n_flagged": groups.n_flagged,
        "n_flagged_earlier": n_earlier,
        "method": groups.method,
        "n_papers": int(candidates["size"].sum()) if not candidates.empty else 0,
        "topics": [
            {
                "candidate": int(row.candidate),
                "label": str(row.label),
                "size": int(row.size),
                "nearest_topic": int(row.nearest_topic),
                # None, not NaN, without a topic: JSON has no NaN (a bare NaN fails JSON.parse and jq)
                "nearest_similarity": float(row.nearest_similarity) if np.isfinite(row.nearest_similarity) else None,
            }
            for row in candidates.itertuples()
        ],
        "n_joined": int(sum(entry["joined"] for entry in grown)),
        "grown": [dict(entry) for entry in grown],
    }
