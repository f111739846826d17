"""``topic-atlas evaluate``: argument parsing and one call of :meth:`topic_atlas.Atlas.evaluate`."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``evaluate`` subcommand."""
    parser = subparsers.add_parser(
        "evaluate",
        help="score a cache: topic coherence and diversity, outliers, map faithfulness, agreement with decisions",
        description=(
            "Compute the quality metrics of a cache folder, write them to CACHE/metrics.json and print a table."
        ),
    )
    parser.add_argument("--cache", type=Path, required=True, help="cache folder written by `topic-atlas build`")
    parser.set_defaults(handler=_handle_evaluate)


def _handle_evaluate(args: argparse.Namespace) -> int:
    from pipeline.quality.evaluation import METRICS_FILE
    from pipeline.quality.metric_table import format_table
    from topic_atlas.atlas import Atlas

    atlas = Atlas.load(args.cache)  # an unreadable atlas: CacheError, one line (topic_atlas.cli.run_guarded)
    metrics = atlas.evaluate()
    print(format_table(metrics))
    print(f"written to {Path(args.cache) / METRICS_FILE}")
    return 0
