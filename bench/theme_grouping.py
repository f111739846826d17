"""Do the themes hold together? The atlas's themes and topics measured side by side, on one or more caches.

    python -m bench.theme_grouping --cache /tmp/atlas-iclr2025 [--cache /tmp/atlas-iclr2024 ...] [--k 15] [--random 20]

Per cache, one table with a column for the themes, one for **random themes** (the baseline a cut should beat: every
theme keeps its number of topics, its topics drawn at random; the mean of ``--random`` seeded draws) and one for the
topics (papers in the outlier topic -1 are left out as papers everywhere; on the map they still count as neighbours,
of another group), then each theme's papers, topics, map regions and name:

- **groups**, **largest group's share**: themes (topics) and the share of the papers in topics that the largest holds;
- **cosine within / between**, in the atlas's own representation (``embeddings.npy``, rows made unit length):
  for the themes, over the topics' centroids (a topic's centroid is the mean of its papers' unit vectors, made unit
  length): the mean cosine over pairs of topics in one theme and over pairs in two themes; for both columns, over
  pairs of papers in one group and in two groups. Their ratio and difference. The group-level form of the
  within/between dispersion of cluster validity indices (Calinski & Harabasz 1974; Rousseeuw 1987's silhouette
  compares the same two distances per point); the paper-pair means are computed exactly from group sums
  (:func:`pair_means`), without the n x n matrix;
- **15-NN on the map in own group**: the share of a paper's 15 nearest papers on the 2D map (x, y) that are in its
  own theme (topic), the map's "kNN accuracy" of the groups themselves (Venna et al. 2010 use the same neighbourhood
  preservation idea; pipeline.quality.map_metrics's knn_accuracy_2d does it for a reference class); again with the
  outliers taken off the map (the issue's 0.856 and 0.821 on ICLR 2025 are this row); and the share expected by
  chance (:func:`chance_share`);
- **AMI with primary_area**: adjusted mutual information (Vinh, Epps & Bailey 2010, sklearn's
  ``adjusted_mutual_info_score``) of the papers' theme (topic) against the authors' own primary area, where the
  corpus has the column;
- **groups in 2+ map regions**: themes (topics) whose papers fall in two or more separate regions of the map: DBSCAN
  (Ester et al. 1996) on the group's own 2D points, ``eps`` = REGION_EPS_SCALE x the map's median distance from a
  paper to its 15th nearest paper, ``min_samples`` = REGION_MIN_SAMPLES; a region is a DBSCAN cluster holding at
  least REGION_MIN_SHARE of the group's papers. One colour in several distant parts of the map.

The functions are pure (arrays in, numbers out), so tests and other benchmarks can call them.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

OUTLIER = -1
K_NEIGHBOURS = 15
# A region: DBSCAN on the group's own map points, eps a multiple of the map's typical spacing (median distance to the
# 15th nearest paper, any group), min_samples points; counted when it holds this share of the group's papers.
REGION_EPS_SCALE = 3.0
REGION_MIN_SAMPLES = 5
REGION_MIN_SHARE = 0.10
# The baseline: themes of the same numbers of topics, their topics drawn at random, this many times (seeded).
RANDOM_REPEATS = 20


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """``vectors`` (n x d) with each non-zero row scaled to length 1 (all-zero rows stay zero), float64."""
    matrix = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)


def topic_centroids(embeddings: np.ndarray, topics: Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(topic ids, centroids): each real topic's centroid, the mean of its papers' unit vectors made unit length.

    ``embeddings``: n x d, one row per paper; ``topics``: n topic ids (-1 left out). Returns ids sorted ascending
    (shape t) and centroids (t x d, float64, unit rows).
    """
    labels = np.asarray(topics, dtype=np.int64)
    unit = unit_rows(embeddings)
    ids = np.unique(labels[labels != OUTLIER])
    centroids = np.stack([unit[labels == topic].mean(axis=0) for topic in ids]) if len(ids) else unit[:0]
    return ids, unit_rows(centroids)


def pair_means(vectors: np.ndarray, groups: Sequence[int] | np.ndarray) -> dict[str, float]:
    """Mean cosine similarity over pairs of rows in one group and over pairs in two different groups.

    ``vectors``: n x d (made unit length here); ``groups``: n group ids, every row counted (filter outliers before).
    Exact, in O(n d): the sum of the cosines over all unordered pairs of a set S of unit vectors is
    (|sum S|^2 - |S|) / 2, so within = sum_g (|s_g|^2 - n_g) / sum_g n_g (n_g - 1) and between = (|s|^2 -
    sum_g |s_g|^2) / (n^2 - sum_g n_g^2), with s_g the sum of group g's vectors and s of all (zero rows counted as
    rows of cosine 0). Returns {within, between, difference (within - between), ratio (within / between),
    within_pairs, between_pairs}; a mean without pairs is nan.
    """
    unit = unit_rows(vectors)
    labels = np.asarray(groups)
    if len(labels) != len(unit):
        raise ValueError(f"{len(labels)} group ids for {len(unit)} rows")
    squares = (unit * unit).sum(axis=1)  # 1 for a unit row, 0 for a zero row
    total = unit.sum(axis=0)
    within_sum = 0.0
    group_square_sums = 0.0
    within_pairs = 0
    sizes_squared = 0
    for group in np.unique(labels):
        members = labels == group
        count = int(members.sum())
        summed = unit[members].sum(axis=0)
        group_square = float(summed @ summed)
        within_sum += group_square - float(squares[members].sum())
        group_square_sums += group_square
        within_pairs += count * (count - 1)
        sizes_squared += count * count
    between_pairs = len(labels) ** 2 - sizes_squared
    within = within_sum / within_pairs if within_pairs else float("nan")
    between = (float(total @ total) - group_square_sums) / between_pairs if between_pairs else float("nan")
    return {
        "within": within,
        "between": between,
        "difference": within - between,
        "ratio": within / between if between else float("nan"),
        "within_pairs": within_pairs // 2,
        "between_pairs": between_pairs // 2,
    }


def neighbour_indices(points: np.ndarray, k: int = K_NEIGHBOURS) -> np.ndarray:
    """Each point's ``k`` nearest other points (Euclidean; sklearn's NearestNeighbors, the query point left out):
    n x min(k, n - 1) row indices, nearest first."""
    from sklearn.neighbors import NearestNeighbors

    xy = np.asarray(points, dtype=np.float64)
    k = min(k, len(xy) - 1)
    if k < 1:
        return np.zeros((len(xy), 0), dtype=np.int64)
    return NearestNeighbors(n_neighbors=k).fit(xy).kneighbors(return_distance=False)


def same_share(neighbours: np.ndarray, groups: Sequence[int] | np.ndarray, outlier: int = OUTLIER) -> float:
    """Mean over the rows not in ``outlier`` of the share of their ``neighbours`` (n x k indices) with their group id
    (a neighbour in ``outlier`` is never of the same group). nan without such rows or neighbours."""
    labels = np.asarray(groups)
    counted = labels != outlier
    if not counted.any() or not neighbours.shape[1]:
        return float("nan")
    return float((labels[neighbours] == labels[:, None])[counted].mean())


def knn_same_share(
    points: np.ndarray,
    groups: Sequence[int] | np.ndarray,
    k: int = K_NEIGHBOURS,
    outlier: int = OUTLIER,
    outliers_as_neighbours: bool = True,
) -> float:
    """Mean over papers not in ``outlier`` of the share of their ``k`` nearest other papers (Euclidean, on
    ``points``, n x 2) that have their group id. Papers in ``outlier`` are not counted as papers; with
    ``outliers_as_neighbours`` they are neighbours like any other (never of the same group), without it they are
    taken off the map first. nan without papers.
    """
    labels = np.asarray(groups)
    xy = np.asarray(points, dtype=np.float64)
    if not outliers_as_neighbours:
        xy, labels = xy[labels != outlier], labels[labels != outlier]
    return same_share(neighbour_indices(xy, k), labels, outlier)


def chance_share(groups: Sequence[int] | np.ndarray, outlier: int = OUTLIER) -> float:
    """The own-group share of neighbours drawn at random from all papers, averaged over the papers in groups:
    sum_g n_g^2 / (n m), n_g the group's papers, n all papers (outliers included, never a group), m the papers in
    groups."""
    labels = np.asarray(groups)
    counted = labels[labels != outlier]
    if not len(counted):
        return float("nan")
    _, counts = np.unique(counted, return_counts=True)
    return float(((counts / len(labels)) ** 2).sum() / (len(counted) / len(labels)))


def reference_ami(groups: Sequence[int] | np.ndarray, reference: Sequence[object], outlier: int = OUTLIER) -> float:
    """Adjusted mutual information of ``groups`` against ``reference`` (e.g. primary_area), over the papers not in
    ``outlier`` whose reference is not null (sklearn.metrics.adjusted_mutual_info_score, arithmetic normalisation;
    Vinh, Epps & Bailey 2010). nan with fewer than two such papers."""
    from sklearn.metrics import adjusted_mutual_info_score

    labels = np.asarray(groups)
    classes = pd.Series(list(reference), dtype=object)
    kept = (labels != outlier) & classes.notna().to_numpy()
    if kept.sum() < 2:
        return float("nan")
    return float(adjusted_mutual_info_score(classes[kept].astype(str).to_numpy(), labels[kept]))


def map_spacing(points: np.ndarray, k: int = K_NEIGHBOURS) -> float:
    """The map's typical spacing: the median over papers of the distance to their ``k``-th nearest other paper."""
    from sklearn.neighbors import NearestNeighbors

    xy = np.asarray(points, dtype=np.float64)
    k = min(k, len(xy) - 1)
    if k < 1:
        return float("nan")
    distances, _ = NearestNeighbors(n_neighbors=k).fit(xy).kneighbors()
    return float(np.median(distances[:, -1]))


def map_regions(
    points: np.ndarray,
    eps: float,
    min_samples: int = REGION_MIN_SAMPLES,
    min_share: float = REGION_MIN_SHARE,
) -> int:
    """How many separate regions of the map one group's papers (``points``, m x 2) fall in: DBSCAN clusters
    (``eps``, ``min_samples``; Ester et al. 1996) holding at least ``min_share`` of the m papers. 0 for a group
    too scattered for any such cluster."""
    from sklearn.cluster import DBSCAN

    xy = np.asarray(points, dtype=np.float64)
    if not len(xy):
        return 0
    found = DBSCAN(eps=eps, min_samples=min_samples).fit_predict(xy)
    _, counts = np.unique(found[found != -1], return_counts=True)
    return int((counts >= min_share * len(xy)).sum())


def split_groups(
    points: np.ndarray,
    groups: Sequence[int] | np.ndarray,
    eps: float,
    min_samples: int = REGION_MIN_SAMPLES,
    min_share: float = REGION_MIN_SHARE,
    outlier: int = OUTLIER,
) -> dict[int, int]:
    """{group: its regions (:func:`map_regions`)} for every group but ``outlier``; ``points`` n x 2, ``groups`` n."""
    xy = np.asarray(points, dtype=np.float64)
    labels = np.asarray(groups)
    return {
        int(group): map_regions(xy[labels == group], eps, min_samples, min_share)
        for group in np.unique(labels)
        if group != outlier
    }


def largest_share(groups: Sequence[int] | np.ndarray, outlier: int = OUTLIER) -> float:
    """The largest group's share of the papers not in ``outlier``; nan without any."""
    labels = np.asarray(groups)
    counted = labels[labels != outlier]
    if not len(counted):
        return float("nan")
    return float(np.unique(counted, return_counts=True)[1].max() / len(counted))


def theme_ids(topic_of: Sequence[int] | np.ndarray, topics: pd.DataFrame) -> np.ndarray:
    """Each paper's theme id from its topic id (n) and the topics table (columns topic, theme); -1 for the outlier
    topic and for a topic the table lacks."""
    theme_by_topic = {int(topic): int(theme) for topic, theme in zip(topics["topic"], topics["theme"])}
    return np.array(
        [theme_by_topic.get(int(topic), OUTLIER) if int(topic) != OUTLIER else OUTLIER for topic in topic_of],
        dtype=np.int64,
    )


def level_figures(
    labels: np.ndarray,
    unit: np.ndarray,
    xy: np.ndarray,
    neighbours: np.ndarray,
    inner_neighbours: np.ndarray,
    eps: float,
    reference: pd.Series | None,
) -> dict[str, float]:
    """The figures of one grouping of the papers (``labels``, n, -1 outliers): ``unit`` n x d unit vectors, ``xy``
    n x 2 map points, ``neighbours`` (n x k) on the whole map and ``inner_neighbours`` (m x k, indices among the m
    papers not in -1) on the map without outliers, ``eps`` the regions' DBSCAN radius, ``reference`` n classes or
    None."""
    kept = labels != OUTLIER
    papers = pair_means(unit[kept], labels[kept])
    regions = split_groups(xy, labels, eps)
    return {
        "groups": float(len(np.unique(labels[kept]))),
        "largest_share": largest_share(labels),
        "paper_within": papers["within"],
        "paper_between": papers["between"],
        "paper_difference": papers["difference"],
        "paper_ratio": papers["ratio"],
        "knn_same": same_share(neighbours, labels),
        "knn_same_without_outliers": same_share(inner_neighbours, labels[kept]),
        "knn_chance": chance_share(labels),
        "ami_primary_area": reference_ami(labels, reference) if reference is not None else float("nan"),
        "split_groups": float(sum(count >= 2 for count in regions.values())),
        "region_eps": eps,
    }


def shuffled_themes(topics: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """``topics`` with its real topics' theme ids shuffled: every theme keeps its number of topics, its topics drawn
    at random (the baseline a cut of the hierarchy should beat)."""
    real = (topics["topic"].astype(int) != OUTLIER).to_numpy()
    themes = topics["theme"].to_numpy().copy()
    themes[real] = rng.permutation(themes[real])
    return topics.assign(theme=themes)


def measure(
    documents: pd.DataFrame,
    topics: pd.DataFrame,
    embeddings: np.ndarray,
    k: int = K_NEIGHBOURS,
    eps_scale: float = REGION_EPS_SCALE,
    random_repeats: int = 0,
    seed: int = 0,
) -> dict[str, dict[str, float]]:
    """Every measure of the module docstring for one atlas: {"themes": {...}, "topics": {...}}, and with
    ``random_repeats`` also "random themes": the mean of each theme figure over that many :func:`shuffled_themes`.

    ``documents``: columns topic, x, y (and primary_area when the corpus has it), one row per paper; ``topics``: columns
    topic, theme (a cache's topics table); ``embeddings``: n x d, rows aligned with ``documents``.
    """
    topic_of = documents["topic"].astype(int).to_numpy()
    xy = documents[["x", "y"]].to_numpy(dtype=np.float64)
    kept = topic_of != OUTLIER
    unit = unit_rows(embeddings)
    eps = eps_scale * map_spacing(xy, k)
    neighbours, inner_neighbours = neighbour_indices(xy, k), neighbour_indices(xy[kept], k)
    reference = documents["primary_area"] if "primary_area" in documents else None
    ids, centroids = topic_centroids(unit, topic_of)

    def themes_of(table: pd.DataFrame) -> dict[str, float]:
        figures = level_figures(theme_ids(topic_of, table), unit, xy, neighbours, inner_neighbours, eps, reference)
        centroid_pairs = pair_means(centroids, theme_ids(ids, table))
        return figures | {f"centroid_{key}": float(value) for key, value in centroid_pairs.items()}

    result = {
        "themes": themes_of(topics),
        "topics": level_figures(topic_of, unit, xy, neighbours, inner_neighbours, eps, reference),
    }
    if random_repeats:
        rng = np.random.default_rng(seed)
        runs = [themes_of(shuffled_themes(topics, rng)) for _ in range(random_repeats)]
        result["random themes"] = {key: float(np.mean([run[key] for run in runs])) for key in runs[0]}
    return result


ROWS = (
    ("groups", "groups (themes | topics)", "{:.0f}"),
    ("largest_share", "largest group's share of papers in topics", "{:.3f}"),
    ("centroid_within", "topic centroids: cosine within a theme", "{:.3f}"),
    ("centroid_between", "topic centroids: cosine between themes", "{:.3f}"),
    ("centroid_ratio", "topic centroids: within / between", "{:.2f}"),
    ("centroid_difference", "topic centroids: within - between", "{:.3f}"),
    ("centroid_within_pairs", "topic centroids: pairs within | between", "{:.0f}"),
    ("paper_within", "papers: cosine within a group", "{:.3f}"),
    ("paper_between", "papers: cosine between groups", "{:.3f}"),
    ("paper_ratio", "papers: within / between", "{:.2f}"),
    ("paper_difference", "papers: within - between", "{:.3f}"),
    ("knn_same", "map: 15-NN share in own group", "{:.3f}"),
    ("knn_same_without_outliers", "map: the same, outliers off the map", "{:.3f}"),
    ("knn_chance", "map: own-group share by chance", "{:.3f}"),
    ("ami_primary_area", "AMI with primary_area", "{:.3f}"),
    ("split_groups", "groups in 2+ map regions", "{:.0f}"),
)


def cell_text(column: dict[str, float], key: str, form: str) -> str:
    """One cell of a printed table: ``column[key]`` in ``form``; the pair counts as "within | between"; "-" where
    the column has no such figure, "n/a" for nan."""
    value = column.get(key)
    if key == "centroid_within_pairs" and value is not None:
        return f"{value:.0f} | {column['centroid_between_pairs']:.0f}"
    if value is None:
        return "-"
    return "n/a" if np.isnan(value) else form.format(value)


def table(figures: dict[str, dict[str, float]], k: int = K_NEIGHBOURS) -> str:
    """The printed table of :func:`measure`'s figures: one row per measure, one column per level (themes, random
    themes when measured, topics)."""
    levels = [level for level in ("themes", "random themes", "topics") if level in figures]
    lines = [f"{'measure':44} " + " ".join(f"{level:>13}" for level in levels)]
    for key, title, form in ROWS:
        cells = " ".join(f"{cell_text(figures[level], key, form):>13}" for level in levels)
        lines.append(f"{title.replace('15-NN', f'{k}-NN'):44} {cells}")
    return "\n".join(lines)


def add_cache_options(parser: argparse.ArgumentParser) -> None:
    """The options every theme benchmark takes: --cache (repeatable), --k and --random."""
    parser.add_argument("--cache", type=Path, action="append", required=True, help="a cache folder (repeatable)")
    parser.add_argument("--k", type=int, default=K_NEIGHBOURS, help="neighbours on the map (default 15)")
    parser.add_argument(
        "--random", type=int, default=RANDOM_REPEATS, help="random themes to average (default 20; 0: none)"
    )


def themed_caches(folders: list[Path]) -> Iterator[tuple[Path, Any, pd.DataFrame]]:
    """(folder, its TopicCache, its topics with their themes) per folder; a cache built before themes gets the
    build's own theme cut (pipeline.topics.themes.assign_themes). Raises CacheError for a folder that is no cache."""
    from pipeline.cache import read_cache
    from pipeline.topics.themes import assign_themes, has_themes

    for folder in folders:
        atlas = read_cache(folder)
        yield folder, atlas, atlas.topics if has_themes(atlas.topics) else assign_themes(atlas.topics, atlas.hierarchy)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_cache_options(parser)
    args = parser.parse_args()
    for folder, atlas, topics in themed_caches(args.cache):
        documents = atlas.documents
        figures = measure(documents, topics, atlas.embeddings(), k=args.k, random_repeats=args.random)
        in_topics = int((documents["topic"] != OUTLIER).sum())
        print(
            f"\n{folder}: {len(documents):,} papers, {in_topics:,} in topics; regions: DBSCAN eps "
            f"{figures['themes']['region_eps']:.3f} ({REGION_EPS_SCALE:g} x median {args.k}th-neighbour distance), "
            f"min_samples {REGION_MIN_SAMPLES}, >= {REGION_MIN_SHARE:.0%} of the group's papers"
        )
        print(table(figures, args.k))
        labels = theme_ids(documents["topic"].to_numpy(), topics)
        regions = split_groups(documents[["x", "y"]].to_numpy(), labels, figures["themes"]["region_eps"])
        real = topics[topics["topic"] != OUTLIER]
        print(f"\n{'theme':>5} {'papers':>7} {'topics':>6} {'regions':>7}  name")
        for theme, members in real.groupby("theme", sort=True):
            print(
                f"{int(theme):>5} {int(members['size'].sum()):>7,} {len(members):>6} {regions.get(int(theme), 0):>7}  "
                f"{members['theme_label'].iloc[0]}"
            )


if __name__ == "__main__":
    main()
