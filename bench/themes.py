"""How the topic hierarchy is cut into themes: the build's cut (the theme with the most papers split first) against
the usual dendrogram cut (the merge of largest distance split first), on one cache.

    python bench/themes.py --cache /tmp/atlas-full-static [--themes 10]

Prints, per cut, each theme's papers, topics and name, and the largest theme's share of the papers.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from pipeline.cache import read_cache  # noqa: E402
from pipeline.topics.themes import MergeNode, cut_tree, merge_tree, theme_count, theme_name  # noqa: E402


def distance_cut(tree: dict[frozenset[int], MergeNode], n_themes: int) -> list[frozenset[int]]:
    """The usual cut of a dendrogram into ``n_themes`` clusters: split the merge of largest distance first."""
    themes = [max(tree, key=len)]
    while len(themes) < n_themes and any(theme in tree for theme in themes):
        widest = max((theme for theme in themes if theme in tree), key=lambda theme: tree[theme].distance)
        themes.remove(widest)
        themes.extend(tree[widest].children)
    return themes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument(
        "--themes", type=int, default=None, help="themes to cut (default: the build's count for the cache's topics)"
    )
    args = parser.parse_args()
    atlas = read_cache(args.cache)
    real = atlas.topics[atlas.topics["topic"] != -1]
    sizes = dict(zip(real["topic"].astype(int), real["size"].astype(int)))
    labels = dict(zip(real["topic"].astype(int), real["label"].astype(str)))
    n_themes = args.themes or theme_count(len(sizes))
    tree = merge_tree(atlas.hierarchy)
    total = sum(sizes.values())
    print(f"{args.cache}: {total:,} papers in {len(sizes)} topics, {n_themes} themes")
    for name, themes in (
        ("most papers first (the build)", cut_tree(tree, sizes, n_themes)),
        ("largest distance first", distance_cut(tree, n_themes)),
    ):
        papers = sorted(((sum(sizes[topic] for topic in theme), theme) for theme in themes), key=lambda item: -item[0])
        print(f"\n{name}: largest theme {papers[0][0] / total:.0%} of the papers, smallest {papers[-1][0]:,} papers")
        for count, theme in papers:
            print(
                f"  {count:6,} papers {len(theme):3} topics  "
                f"{theme_name([(labels[topic], sizes[topic]) for topic in theme])}"
            )


if __name__ == "__main__":
    main()
