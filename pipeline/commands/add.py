"""``topic-atlas add``: argument parsing and one call of :mod:`pipeline.operations.add`."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from pipeline import cache
from pipeline.ingest.collections import Collection, collection_from_path, read_collection_file
from pipeline.operations.add import AddResult, run_add
from pipeline.runtime.errors import InputError


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``add`` subcommand."""
    parser = subparsers.add_parser(
        "add",
        help="add new papers or whole collections to an atlas without refitting (old papers unchanged)",
        description="Place the papers of --input and/or of the collections of --collections into the atlas in "
        "--cache: topic by their nearest papers' vote, position among them; topic sizes, terms and representative "
        "papers are updated and the atlas is rewritten atomically. Papers that fit no topic are grouped into "
        "candidate new topics; says when a refit is due.",
    )
    parser.add_argument("--cache", type=Path, required=True, help="atlas (cache folder) built by `topic-atlas build`")
    parser.add_argument("--input", type=Path, default=None, help="new papers, in any format the build accepts")
    parser.add_argument(
        "--collections",
        type=Path,
        default=None,
        metavar="FILE",
        help="a TOML collection file, as for build (path, name, venue, year and side tables per collection): each "
        "collection is added, its papers keeping collection, venue and year",
    )
    parser.add_argument("--name", default=None, help='the collection of --input, e.g. "ICLR 2026" (default: its file)')
    parser.add_argument("--venue", default=None, help='the venue of --input, e.g. "ICLR" (default: from its file name)')
    parser.add_argument("--year", type=int, default=None, help="the year of --input (default: from its file name)")
    parser.add_argument(
        "--encoding", default=None, help="text encoding of the input (default: UTF-8, else Windows-1252 with a warning)"
    )
    parser.set_defaults(handler=_handle_add)


def _collections(args: argparse.Namespace) -> tuple[Path | None, list[Collection] | None]:
    """(the plain input file, the collections to add): --collections' entries, and --input as one more collection
    when --name, --venue or --year name it (else as plain papers, or as a collection named from its file when the
    atlas has collections: pipeline.operations.add.read_incoming)."""
    if args.input is None and args.collections is None:
        raise InputError("give --input FILE and/or --collections FILE")
    collections = read_collection_file(args.collections) if args.collections is not None else []
    named = args.name is not None or args.venue is not None or args.year is not None
    if args.input is None:
        if named:
            raise InputError("--name, --venue and --year describe --input; give --input FILE")
        return None, collections
    if not named:
        return args.input, collections or None
    path = args.input.expanduser().resolve()
    found = collection_from_path(path)
    venue = (args.venue or found.venue).strip()
    year = args.year if args.year is not None else found.year
    name = (args.name or (f"{venue} {year}" if year is not None else found.name)).strip()
    return None, [*collections, replace(found, name=name, venue=venue, year=year)]


def _handle_add(args: argparse.Namespace) -> int:
    source, collections = _collections(args)
    result = run_add(args.cache, source, args.encoding, collections=collections)
    print_report(result)
    return 0


def print_report(result: AddResult) -> None:
    """What the add did: papers added and skipped, topics they went to, how well they fit, the candidate new topics,
    why a refit is due, stage seconds."""
    report = result.report
    labels = {int(row.topic): row.label for row in cache.read_cache(result.cache_dir).topics.itertuples()}
    added_to = f" ({', '.join(report['collections'])})" if report.get("collections") else ""
    print(
        f"added {report['n_added']} papers{added_to} to {result.cache_dir} "
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
    candidates = report["candidates"]
    print(
        f"  candidate new topics (groups of at least {candidates['min_size']} of those papers): "
        f"{len(candidates['topics'])}, {candidates['n_papers']} papers"
    )
    for entry in candidates["topics"]:
        print(
            f"    - {entry['label']} ({entry['size']} papers; nearest topic {entry['nearest_topic']} "
            f"{labels.get(int(entry['nearest_topic']), '')}, similarity {entry['nearest_similarity']:.2f})"
        )
    inputs = "--collections FILE_OF_EVERY_COLLECTION" if result.manifest.get("collections") else "--input ALL_PAPERS"
    for reason in report["refit_reasons"]:
        print(
            f"  refit due: {reason}. Rebuild with: topic-atlas build "
            f"{inputs} --cache {result.cache_dir} (topic ids are kept)"
        )
    for warning in result.manifest.get("coverage", {}).get("warnings", []) if report.get("collections") else []:
        print(f"  - {warning}")
    print("  stage seconds: " + ", ".join(f"{stage} {seconds:.1f}" for stage, seconds in report["timings_s"].items()))
