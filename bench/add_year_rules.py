"""Rules that flag the added papers a candidate new topic is made of, compared (bench/add_year.py --rules).

Each rule flags some of the ICLR 2026 papers of the added atlas; the flagged papers are grouped as ``add`` groups
them (pipeline.topics.candidates.group_flagged, the atlas's min_cluster_size the smallest group) and each group is
matched to the refit's topics (bench.add_year.candidate_matches). The rules:

- ``fits no topic`` (pipeline.operations.add.fit_check): cosine to the nearest topic centroid below the 5% quantile
  of the fitted papers' similarity to their own topic's centroid, or placed among outliers;
- ``fits no topic, added papers' q0.10``: below the 10% quantile of the *added* papers' own nearest-centroid
  similarities;
- ``build's fit check``: below half the median of the topic papers' leave-one-out similarity
  (pipeline.topics.misfits, FIT_SHARE 0.5), as the build moves its own papers out of topics;
- ``new territory, odds X`` (pipeline.topics.candidates.in_new_territory): the odds of a new paper among its 15
  nearest papers of the grown atlas at least X times their odds in the whole grown atlas;
- ``either``: fits no topic, or in new territory at the default odds (what ``add`` flags);
- ``either, groups looser than every topic set aside``: as ``add`` then keeps its groups
  (pipeline.topics.candidate_cohesion: a group whose median leave-one-out cosine is below that of every topic of the
  fitted papers).

As ``add`` does, the fit checks, new territory and the grouping are all made in pipeline.topics.candidate_space (the
lexical block fitted again on old and new papers together). Two last rows show what ``add`` did before:
``either, the fit check in the atlas's vectors`` (until 2026-12-07 the fit check was made against the atlas's own
SVD, on which an added paper's projection looks typical) and ``either, in the atlas's vectors``, where everything is
found and grouped in the atlas's own vectors, as before the candidate space.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from pipeline.cache import TopicCache
from pipeline.geometry.centroids import median_fit_threshold, member_fit, topic_centroids
from pipeline.geometry.grown_neighbours import NearestLists, nearest_lists
from pipeline.operations.add import fit_check
from pipeline.topics.candidate_cohesion import cohesion_floor, loose_groups, without_groups
from pipeline.topics.candidates import NEIGHBOURS, NEW_TERRITORY_ODDS, group_flagged, in_new_territory

Rule = Callable[[], np.ndarray]


def nearest_similarity(embeddings: np.ndarray, topics: np.ndarray, new_embeddings: np.ndarray) -> np.ndarray:
    """Per new paper, the cosine similarity to its nearest topic centroid (float, m)."""
    ids = sorted(set(topics.tolist()) - {-1})
    return (new_embeddings @ topic_centroids(embeddings, topics, ids).T).max(axis=1)


def rules(old: np.ndarray, topics: np.ndarray, new: np.ndarray, placed: np.ndarray, lists: NearestLists) -> dict:
    """{name: flagged (bool, m)} for the rules of the module docstring. ``old`` (n x dim) and ``topics`` (n) are the
    fitted papers', ``new`` (m x dim) and ``placed`` (m) the added ones', ``lists`` their nearest papers."""
    misfit = ~fit_check(old, topics, new, placed)["fits"]
    similarity = nearest_similarity(old, topics, new)
    _, own = member_fit(old, topics)
    flagged = {
        "fits no topic (add's fit check)": misfit,
        "fits no topic, added papers' q0.10": similarity < np.quantile(similarity, 0.10),
        "build's fit check": similarity < median_fit_threshold(own[~np.isnan(own)], 0.5),
    }
    for odds in (2.0, 3.0, 4.0, 6.0):
        flagged[f"new territory, odds {odds:g}"] = in_new_territory(lists.new_indices, lists.new_scores, len(old), odds)
    territory = in_new_territory(lists.new_indices, lists.new_scores, len(old), NEW_TERRITORY_ODDS)
    flagged[f"either (add's: fits no topic, or new territory odds {NEW_TERRITORY_ODDS:g})"] = misfit | territory
    return flagged


def rules_table(added: TopicCache, matched: pd.DataFrame, topics: pd.DataFrame) -> pd.DataFrame:
    """Per rule: papers flagged, candidates, papers in them and their sizes, mean precision, candidates whose best
    refit topic is new, recall of the new refit topics (bench.add_year)."""
    from bench.add_year import bare_id
    from pipeline.operations.place import query_representation
    from pipeline.quality.evaluation import cache_texts
    from pipeline.topics.candidate_space import candidate_space

    documents = added.documents
    new_rows = documents["added"].to_numpy(dtype=bool) & (documents["collection"] == "ICLR 2026").to_numpy()
    old_rows = ~documents["added"].to_numpy(dtype=bool)
    params = added.manifest["params"]
    embeddings = added.embeddings()
    space = candidate_space(query_representation(added), cache_texts(documents), embeddings, params)
    old, new = embeddings[old_rows], embeddings[new_rows]
    placed, old_topics = documents.loc[new_rows, "topic"].to_numpy(), documents.loc[old_rows, "topic"].to_numpy()
    ids = documents.loc[new_rows, "doc_id"].map(bare_id).to_numpy()
    old_space, new_space = space[old_rows], space[new_rows]
    lists = nearest_lists(old_space, new_space, NEIGHBOURS)
    flagged = rules(old_space, old_topics, new_space, placed, lists)
    rows = [rule_row(name, mask, new_space, ids, params, matched, topics) for name, mask in flagged.items()]
    either = next(name for name in flagged if name.startswith("either"))
    floor = cohesion_floor(old_space, old_topics)
    name = "either, groups looser than every topic set aside (add's, from 2026-12-07)"
    rows.append(rule_row(name, flagged[either], new_space, ids, params, matched, topics, floor))
    atlas_fit = ~fit_check(old, old_topics, new, placed)["fits"]
    territory = in_new_territory(lists.new_indices, lists.new_scores, len(old), NEW_TERRITORY_ODDS)
    name = "either, the fit check in the atlas's vectors (before 2026-12-07)"
    rows.append(rule_row(name, atlas_fit | territory, new_space, ids, params, matched, topics))
    before = rules(old, old_topics, new, placed, nearest_lists(old, new, NEIGHBOURS))
    either = next(name for name in before if name.startswith("either"))
    rows.append(
        rule_row(
            "either, in the atlas's vectors (before candidate_space)", before[either], new, ids, params, matched, topics
        )
    )
    return pd.DataFrame(rows)


def rule_row(
    name: str,
    flagged: np.ndarray,
    vectors: np.ndarray,
    ids: np.ndarray,
    params: dict,
    matched: pd.DataFrame,
    topics: pd.DataFrame,
    floor: float | None = None,
) -> dict:
    """One row of :func:`rules_table`: the ``flagged`` ICLR 2026 papers (``ids``, m) grouped in ``vectors`` (m x dim,
    their rows) with the added atlas's ``params`` and matched to the refit's topics; with a ``floor``, the groups whose
    cohesion is below it set aside, as ``add`` sets them aside (pipeline.topics.candidate_cohesion)."""
    from bench.add_year import candidate_matches, recall

    groups = group_flagged(
        vectors,
        flagged,
        int(params["min_cluster_size"]),
        params.get("min_samples"),
        params["random_state"],
        float(params.get("max_cluster_share", 0.0)),
    )
    labels = groups.labels
    if floor is not None:
        labels = without_groups(labels, loose_groups(vectors, labels, floor))
    members = {int(group): ids[labels == group].tolist() for group in sorted(set(labels.tolist()) - {-1})}
    matches = candidate_matches(members, matched, topics)
    found, total = recall(matches, topics)
    new_found = (
        {str(best) for best, new in zip(matches["best refit topic"], matches["refit topic new"]) if new}
        if len(matches)
        else set()
    )
    return {
        "rule": name,
        "flagged": int(flagged.sum()),
        "candidates": len(members),
        "papers in them": int(sum(len(value) for value in members.values())),
        "mean precision": round(float(matches["precision"].mean()), 2) if len(matches) else None,
        "on a new refit topic": int(matches["refit topic new"].sum()) if len(matches) else 0,
        "recall of new topics": f"{found} of {total}",
        "found": ", ".join(sorted(new_found))[:60],
    }
