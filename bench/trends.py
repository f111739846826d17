"""Trends across the collections of an atlas: the fastest-growing and fading themes between two collections, with
intervals and the denominator, and each venue's most over-represented themes in a year.

    python -m bench.trends --cache caches/all-venues [--from "ICLR 2024"] [--to "ICLR 2026"] [--year 2025]
        [--level theme|topic] [--common-areas] [--n 5]

Uses the page's own tables (dashboard.tables.trends): shares of each collection's papers with 95% Wilson
intervals, the share ratio with Katz's log interval; ``--common-areas`` counts only the papers whose primary area
(by the crosswalk) exists in both collections, numerator and denominator alike.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from dashboard.tables import trends
from pipeline.cache import read_cache
from pipeline.quality.coverage import canonical_areas, load_crosswalk


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, required=True, help="cache folder of an atlas of several collections")
    parser.add_argument("--from", dest="earlier", default="ICLR 2024")
    parser.add_argument("--to", dest="later", default="ICLR 2026")
    parser.add_argument("--year", type=int, default=2025, help="year of the venue comparison (default 2025)")
    parser.add_argument("--level", choices=("theme", "topic"), default="theme")
    parser.add_argument("--common-areas", action="store_true", help="only primary areas present in both collections")
    parser.add_argument("--n", type=int, default=5)
    args = parser.parse_args()
    atlas = read_cache(args.cache)
    documents, topics = atlas.documents, atlas.topics
    if args.level == "theme":
        documents = documents.assign(theme=documents["topic"].map(topics.set_index("topic")["theme"]).fillna(-1))
        labels = dict(zip(topics["theme"], topics["theme_label"]))
    else:
        labels = dict(zip(topics["topic"], topics["label"]))
    pair = [args.earlier, args.later]
    mask = documents["collection"].isin(pair)
    denominator = f"all papers of {args.earlier} and of {args.later}"
    if args.common_areas:
        mask &= trends.common_area_mask(documents, pair, canonical_areas(documents, load_crosswalk()))
        denominator = f"the papers in primary areas present in both ({int(mask.sum()):,})"
    shares = trends.collection_shares(documents, args.level, mask)
    changes = trends.share_changes(shares, args.earlier, args.later, args.level)
    changes.insert(1, "label", changes[args.level].map(labels).str.slice(0, 48))
    print(f"denominator: {denominator}; sizes: {shares.groupby('collection')['denominator'].first().to_dict()}")
    columns = ["label", "papers_earlier", "papers_later", "share_earlier", "share_later", "ratio", "ratio_low"]
    columns += ["ratio_high", "p_value", "status"]
    with pd.option_context("display.width", 220, "display.float_format", "{:.4g}".format):
        print(f"\nfastest-growing {args.level}s {args.earlier} -> {args.later}:")
        print(changes[columns].head(args.n).to_string(index=False))
        print(f"\nfading {args.level}s:")
        print(changes[columns].tail(args.n).iloc[::-1].to_string(index=False))
        venue_shares, accepted_only = trends.venue_shares(documents, args.year, args.level)
        lifted = trends.over_represented(venue_shares, args.level, args.n)
        lifted.insert(1, "label", lifted[args.level].map(labels).str.slice(0, 48))
        print(f"\nmost over-represented per venue, {args.year} ({'accepted papers only' if accepted_only else 'all'}):")
        print(lifted.drop(columns=[args.level]).to_string(index=False))


if __name__ == "__main__":
    main()
