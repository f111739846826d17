"""``topic-atlas evaluate``: argument parsing and one call of :mod:`pipeline.quality.metrics`."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from pipeline.quality.metrics import METRICS_FILE, evaluate_cache, format_table


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
    import sys

    from pipeline.cache import CacheError, read_cache

    try:
        topic_cache = read_cache(args.cache)
    except CacheError as error:  # its message says what is wrong and how to rebuild
        print(f"error: {error}", file=sys.stderr)
        return 2
    metrics = evaluate_cache(topic_cache)
    target = Path(args.cache) / METRICS_FILE
    target.write_text(json.dumps(metrics, indent=2), encoding="utf-8")
    print(format_table(metrics))
    print(f"written to {target}")
    return 0
