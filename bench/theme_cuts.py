"""Other cuts of the same topics into themes, scored beside today's themes and random themes, on one or more caches.

    python -m bench.theme_cuts --cache /tmp/atlas-iclr2025 [--cache /tmp/atlas-iclr2024 ...] [--themes N]
        [--linkage ward|average] [--cap 0.15] [--k 15] [--random 20]

Per cache, the topics are grouped into as many themes as the cache has today (``--themes N``: N instead) in several
ways, and every grouping is scored with bench.theme_grouping's measures (its module docstring says what each row is):

- ``today``: the cache's own ``theme`` column (BERTopic's c-TF-IDF hierarchy cut by ``pipeline.topics.themes``);
- ``ward-representation``: agglomerative clustering (Ward 1963, ``scipy.cluster.hierarchy.linkage``; Müllner 2011's
  algorithms) of the topics' centroids in the atlas's document representation: the mean of the topic's papers' unit
  rows of ``embeddings.npy``, made unit length (:func:`bench.theme_grouping.topic_centroids`, the vectors the
  "topic centroids" rows use), Euclidean distance (for unit vectors d^2 = 2 - 2 cos, so monotone in cosine);
- ``ward-map``: the same on the topics' map positions: the median x, y of their papers (where the map puts the
  topic's label, topics.parquet ``x``, ``y``): what "sit together on the map" asks;
- ``combined``: the same on both blocks side by side, each block centred and scaled to a total variance of 1
  (:func:`standardised`), so the 2 map columns weigh as much as the representation's hundreds;
- ``umap5d`` is not run: a cache stores no 5D cluster-space coordinates (docs/cache-format.md), only x, y.

``--linkage average`` uses average linkage instead of Ward for the three (the columns are then named
``average-...``). The tree is cut by :func:`guarded_cut`, the **size guard**: from the root down, a theme holding more
than ``--cap`` (0.15) of the papers in topics is split first (the largest first), otherwise the merge of largest
height (which alone is the usual cut into k clusters, scipy's ``fcluster(criterion="maxclust")``). Ward weighs every
topic as one point, whatever its papers; the guard is what keeps a theme from swallowing the conference.

Printed per cache: one table (rows: the measures; columns: the cuts, **random themes** (today's theme sizes, topics
drawn at random, the mean of ``--random`` seeded draws, the same baseline as bench.theme_grouping) and the topics
themselves), then per cut each theme's papers, topics, map regions and its topics' labels (largest first) so a
reader can judge whether a theme reads like a conference session. The functions are pure (arrays in, arrays out).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from bench.theme_grouping import (
    K_NEIGHBOURS,
    OUTLIER,
    RANDOM_REPEATS,
    REGION_EPS_SCALE,
    ROWS,
    add_cache_options,
    cell_text,
    level_figures,
    map_spacing,
    neighbour_indices,
    pair_means,
    shuffled_themes,
    split_groups,
    theme_ids,
    themed_caches,
    topic_centroids,
    unit_rows,
)
from pipeline.topics.themes import SHARE_CAP, combined_features, cut_themes

LINKAGES = ("ward", "average")
TODAY = "today"
RANDOM = "random themes"
TOPICS = "topics"
# The extra row: the share of a paper's map neighbours in another topic of its own theme (theme share - topic share).
OTHER_TOPIC_ROW = ("knn_other_topic", "map: 15-NN in another topic of own theme", "{:.3f}")


def cut_names(method: str = "ward") -> tuple[str, str, str]:
    """The names of the three clustered cuts for a linkage ``method``: (representation, map, combined)."""
    return f"{method}-representation", f"{method}-map", "combined"


def map_centroids(points: np.ndarray, topics: Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(topic ids, positions): each real topic's median map position over its papers.

    ``points``: n x 2 (x, y); ``topics``: n topic ids (-1 left out). Returns ids sorted ascending (shape t, as
    :func:`bench.theme_grouping.topic_centroids`) and positions (t x 2, float64): the label positions of
    topics.parquet (docs/cache-format.md), robust to a few papers placed far from the rest.
    """
    labels = np.asarray(topics, dtype=np.int64)
    xy = np.asarray(points, dtype=np.float64)
    ids = np.unique(labels[labels != OUTLIER])
    if not len(ids):
        return ids, np.zeros((0, 2))
    return ids, np.stack([np.median(xy[labels == topic], axis=0) for topic in ids])


def topic_linkage(features: np.ndarray, method: str = "ward") -> np.ndarray:
    """scipy's agglomerative linkage matrix ((t - 1) x 4) of ``features`` (t x d, t >= 2), Euclidean distance;
    ``method`` "ward" (Ward 1963) or "average" (UPGMA)."""
    from scipy.cluster.hierarchy import linkage

    if method not in LINKAGES:
        raise ValueError(f"linkage {method!r}: one of {LINKAGES}")
    return linkage(np.asarray(features, dtype=np.float64), method=method, metric="euclidean")


def cut_topics(
    features: np.ndarray,
    sizes: Sequence[int] | np.ndarray,
    n_themes: int,
    method: str = "ward",
    cap: float = SHARE_CAP,
) -> np.ndarray:
    """A theme id per topic (t) for topics described by ``features`` (t x d) of ``sizes`` papers: the build's
    pipeline.topics.themes.cut_themes with the linkage ``method`` (one of LINKAGES). Raises ValueError for another
    method."""
    if method not in LINKAGES:
        raise ValueError(f"linkage {method!r}: one of {LINKAGES}")
    return cut_themes(features, sizes, n_themes, cap, method)


def with_themes(topics: pd.DataFrame, ids: np.ndarray, themes: np.ndarray) -> pd.DataFrame:
    """A copy of ``topics`` (a cache's topics table) whose ``theme`` is ``themes[i]`` for topic ``ids[i]`` (t each),
    -1 for the outlier topic and any topic not in ``ids``; its ``theme_label`` is dropped (the cut names nothing)."""
    theme_of = {int(topic): int(theme) for topic, theme in zip(ids, themes)}
    column = [theme_of.get(int(topic), OUTLIER) for topic in topics["topic"]]
    kept = topics.drop(columns=[name for name in ("theme", "theme_label") if name in topics])
    return kept.assign(theme=pd.Series(column, index=topics.index, dtype="int64"))


@dataclass(frozen=True)
class Atlas:
    """What every cut's scoring shares: papers' topics (n), unit vectors (n x d), map points (n x 2), their map
    neighbours with outliers (n x k) and without (m x k), the regions' DBSCAN eps, the reference classes (n, or
    None), the real topics' ids (t) and sizes (t, papers in ``topic_of``), centroids (t x d, unit) and map
    positions (t x 2)."""

    topic_of: np.ndarray
    unit: np.ndarray
    xy: np.ndarray
    neighbours: np.ndarray
    inner_neighbours: np.ndarray
    eps: float
    reference: pd.Series | None
    ids: np.ndarray
    sizes: np.ndarray
    centroids: np.ndarray
    positions: np.ndarray


def prepare(
    documents: pd.DataFrame, embeddings: np.ndarray, k: int = K_NEIGHBOURS, eps_scale: float = REGION_EPS_SCALE
) -> Atlas:
    """The :class:`Atlas` of one cache: ``documents`` (columns topic, x, y, primary_area when the corpus has it; n
    rows), ``embeddings`` (n x d, rows aligned); as bench.theme_grouping.measure computes them."""
    topic_of = documents["topic"].astype(int).to_numpy()
    xy = documents[["x", "y"]].to_numpy(dtype=np.float64)
    kept = topic_of != OUTLIER
    unit = unit_rows(embeddings)
    ids, centroids = topic_centroids(unit, topic_of)
    _, positions = map_centroids(xy, topic_of)
    return Atlas(
        topic_of=topic_of,
        unit=unit,
        xy=xy,
        neighbours=neighbour_indices(xy, k),
        inner_neighbours=neighbour_indices(xy[kept], k),
        eps=eps_scale * map_spacing(xy, k),
        reference=documents["primary_area"] if "primary_area" in documents else None,
        ids=ids,
        sizes=np.array([int((topic_of == topic).sum()) for topic in ids], dtype=np.int64),
        centroids=centroids,
        positions=positions,
    )


def cut_figures(atlas: Atlas, topics: pd.DataFrame) -> dict[str, float]:
    """bench.theme_grouping's theme figures (its ``measure``'s "themes") of the themes in ``topics`` (columns topic,
    theme): the papers' level figures and the topic centroids' pair means."""
    labels = theme_ids(atlas.topic_of, topics)
    figures = level_figures(
        labels, atlas.unit, atlas.xy, atlas.neighbours, atlas.inner_neighbours, atlas.eps, atlas.reference
    )
    centroid_pairs = pair_means(atlas.centroids, theme_ids(atlas.ids, topics))
    return figures | {f"centroid_{key}": float(value) for key, value in centroid_pairs.items()}


def clustered_cuts(
    atlas: Atlas, topics: pd.DataFrame, n_themes: int, method: str = "ward", cap: float = SHARE_CAP
) -> dict[str, pd.DataFrame]:
    """{cut name: ``topics`` with that cut's themes} for the representation, map and combined cuts (module
    docstring), each into ``n_themes`` themes."""
    representation, on_map, combined = cut_names(method)
    features = {
        representation: atlas.centroids,
        on_map: atlas.positions,
        combined: combined_features(atlas.centroids, atlas.positions),
    }
    return {
        name: with_themes(topics, atlas.ids, cut_topics(block, atlas.sizes, n_themes, method, cap))
        for name, block in features.items()
    }


def measure_cuts(
    atlas: Atlas,
    topics: pd.DataFrame,
    n_themes: int | None = None,
    method: str = "ward",
    cap: float = SHARE_CAP,
    random_repeats: int = RANDOM_REPEATS,
    seed: int = 0,
) -> tuple[dict[str, dict[str, float]], dict[str, pd.DataFrame]]:
    """(figures, cuts): {column: figures} for today, each clustered cut, random themes (with ``random_repeats``:
    the mean over :func:`bench.theme_grouping.shuffled_themes` of today's themes, seeded as theme_grouping) and the
    topics; and {cut: its topics table}. ``topics``: the cache's topics table with a ``theme`` column;
    ``n_themes``: default today's number of themes."""
    today_count = int(topics.loc[topics["topic"].astype(int) != OUTLIER, "theme"].nunique())
    cuts = {TODAY: topics} | clustered_cuts(atlas, topics, n_themes or today_count, method, cap)
    figures = {name: cut_figures(atlas, table) for name, table in cuts.items()}
    if random_repeats:
        rng = np.random.default_rng(seed)
        runs = [cut_figures(atlas, shuffled_themes(topics, rng)) for _ in range(random_repeats)]
        figures[RANDOM] = {key: float(np.mean([run[key] for run in runs])) for key in runs[0]}
    figures[TOPICS] = level_figures(
        atlas.topic_of, atlas.unit, atlas.xy, atlas.neighbours, atlas.inner_neighbours, atlas.eps, atlas.reference
    )
    for name, values in figures.items():
        if name != TOPICS:
            values[OTHER_TOPIC_ROW[0]] = values["knn_same"] - figures[TOPICS]["knn_same"]
    return figures, cuts


def table_rows() -> list[tuple[str, str, str]]:
    """bench.theme_grouping's rows with :data:`OTHER_TOPIC_ROW` after the map's share without outliers."""
    rows: list[tuple[str, str, str]] = []
    for row in ROWS:
        rows.append(row)
        if row[0] == "knn_same_without_outliers":
            rows.append(OTHER_TOPIC_ROW)
    return rows


def table(figures: dict[str, dict[str, float]], k: int = K_NEIGHBOURS) -> str:
    """The printed table: one row per measure, one column per entry of ``figures`` (in its order); "-" where a
    column has no such figure, "n/a" for nan."""
    columns = list(figures)
    widths = [max(13, len(column)) for column in columns]
    lines = [f"{'measure':44} " + " ".join(f"{column:>{width}}" for column, width in zip(columns, widths))]
    for key, title, form in table_rows():
        cells = " ".join(f"{cell_text(figures[column], key, form):>{width}}" for column, width in zip(columns, widths))
        lines.append(f"{title.replace('15-NN', f'{k}-NN'):44} {cells}")
    return "\n".join(lines)


def theme_lines(atlas: Atlas, name: str, topics: pd.DataFrame) -> list[str]:
    """The listing of one cut: per theme (by id) its papers, topics, map regions (bench.theme_grouping's
    split_groups) and its topics' labels with their papers, largest first; today's themes lead with their name."""
    regions = split_groups(atlas.xy, theme_ids(atlas.topic_of, topics), atlas.eps)
    real = topics[topics["topic"].astype(int) != OUTLIER]
    lines = [
        f"\n{name}: {real['theme'].nunique()} themes",
        f"{'theme':>5} {'papers':>7} {'topics':>6} {'regions':>7}  topics",
    ]
    for theme, members in real.groupby("theme", sort=True):
        ordered = members.sort_values(["size", "topic"], ascending=[False, True])
        labels = "; ".join(f"{label} ({int(size)})" for label, size in zip(ordered["label"], ordered["size"]))
        named = f"[{members['theme_label'].iloc[0]}] " if "theme_label" in members else ""
        lines.append(
            f"{int(theme):>5} {int(members['size'].sum()):>7,} {len(members):>6} {regions.get(int(theme), 0):>7}  "
            f"{named}{labels}"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_cache_options(parser)
    parser.add_argument("--themes", type=int, default=None, help="themes per cut (default: the cache's own count)")
    parser.add_argument("--linkage", choices=LINKAGES, default="ward", help="agglomerative linkage (default ward)")
    parser.add_argument(
        "--cap", type=float, default=SHARE_CAP, help="size guard: largest theme's share of papers (default 0.15)"
    )
    args = parser.parse_args()
    for folder, cache, topics in themed_caches(args.cache):
        documents = cache.documents
        atlas = prepare(documents, cache.embeddings(), k=args.k)
        figures, cuts = measure_cuts(atlas, topics, args.themes, args.linkage, args.cap, args.random)
        in_topics = int((documents["topic"] != OUTLIER).sum())
        print(
            f"\n{folder}: {len(documents):,} papers, {in_topics:,} in topics, {len(atlas.ids)} topics; cuts: "
            f"{args.linkage} linkage, size guard {args.cap:.0%} of the papers in topics; random themes: today's "
            f"sizes, {args.random} draws; regions: DBSCAN eps {atlas.eps:.3f}; umap5d: skipped (a cache stores no "
            "5D coordinates)"
        )
        print(table(figures, args.k))
        for name, cut in cuts.items():
            print("\n".join(theme_lines(atlas, name, cut)))


if __name__ == "__main__":
    main()
