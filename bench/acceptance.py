"""Per-topic acceptance on a cache with decisions: the topics with the highest and the lowest acceptance rate.

    python bench/acceptance.py --cache /tmp/atlas-titles [--n 5] [--min-decided 30]

Uses the dashboard's own analytics (dashboard.tables.analytics): accepted = Oral + Spotlight + Poster over decided
papers (withdrawn excluded and shown apart), 95 % Wilson intervals; only topics with at least --min-decided
decided papers are ranked, so a tiny topic cannot take a top place by chance.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from dashboard.tables.analytics import acceptance_table, extremes, overall_rate  # noqa: E402
from pipeline.cache import read_cache  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, required=True, help="cache folder of a corpus with a decision column")
    parser.add_argument("--n", type=int, default=5, help="topics at each end (default 5)")
    parser.add_argument(
        "--min-decided", type=int, default=30, help="decided papers a topic needs to be ranked (default 30)"
    )
    args = parser.parse_args()
    atlas = read_cache(args.cache)
    table = acceptance_table(atlas.documents, atlas.topics)
    overall = overall_rate(atlas.documents)
    print(
        f"{args.cache}: {overall['accepted']:,} accepted of {overall['decided']:,} decided = {overall['rate']:.1%} "
        f"(95% CI {overall['rate_low']:.1%}-{overall['rate_high']:.1%}); {len(table)} topics"
    )
    highest, lowest = extremes(table, args.n, args.min_decided)
    for title, rows in (("highest", highest), ("lowest", lowest)):
        print(f"\n{args.n} topics with the {title} acceptance rate (at least {args.min_decided} decided papers):")
        print(f"  {'topic':<52} {'accepted':>8} {'decided':>8} {'rate':>6}  95% Wilson CI   withdrawn")
        for row in rows.itertuples():
            print(
                f"  {row.label[:52]:<52} {row.accepted:>8} {row.decided:>8} {row.rate:>6.1%}  "
                f"{row.rate_low:.1%}-{row.rate_high:.1%}   {row.withdrawn:>6}"
            )


if __name__ == "__main__":
    main()
