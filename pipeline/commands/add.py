"""``topic-atlas add``: argument parsing and one call of :mod:`pipeline.operations.add`."""

from __future__ import annotations

import argparse
from pathlib import Path

from pipeline import cache
from pipeline.operations.add import run_add


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``add`` subcommand."""
    parser = subparsers.add_parser(
        "add",
        help="add new papers to an atlas without refitting (topics and map positions of the old papers unchanged)",
        description="Place the papers of --input into the atlas in --cache: topic by their nearest papers' vote, "
        "position among them; topic sizes, terms and representative papers are updated and the atlas is rewritten "
        "atomically. Says when a refit is due.",
    )
    parser.add_argument("--cache", type=Path, required=True, help="atlas (cache folder) built by `topic-atlas build`")
    parser.add_argument("--input", type=Path, required=True, help="new papers, in any format the build accepts")
    parser.add_argument(
        "--encoding", default=None, help="text encoding of the input (default: UTF-8, else Windows-1252 with a warning)"
    )
    parser.set_defaults(handler=_handle_add)


def _handle_add(args: argparse.Namespace) -> int:
    result = run_add(args.cache, args.input, args.encoding)
    report = result.report
    labels = {int(row.topic): row.label for row in cache.read_cache(result.cache_dir).topics.itertuples()}
    print(
        f"added {report['n_added']} papers to {result.cache_dir} "
        f"({result.manifest['n_documents']} papers now); skipped: "
        + (", ".join(f"{reason} {count}" for reason, count in report["dropped"].items()) or "none")
    )
    print(
        "  topics: "
        + ", ".join(
            f"{topic} {labels.get(int(topic), '')} ({count})"
            for topic, count in sorted(report["topics"].items(), key=lambda item: -item[1])
        )
    )
    print(
        f"  {report['n_misfits']} of {report['n_added']} new papers ({report['misfit_share']:.0%}) "
        f"fit no topic well (cosine to the nearest topic centroid below {report['fit_threshold']})"
    )
    for reason in report["refit_reasons"]:
        print(
            f"  refit due: {reason}. Rebuild with: topic-atlas build "
            f"--input ALL_PAPERS --cache {result.cache_dir} (topic ids are kept)"
        )
    print("  stage seconds: " + ", ".join(f"{stage} {seconds:.1f}" for stage, seconds in report["timings_s"].items()))
    return 0
