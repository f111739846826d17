"""``topic-atlas add``: argument parsing and one call of :meth:`topic_atlas.Atlas.add`."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pipeline.cache import Manifest
    from pipeline.operations.add import AddResult


def year_argument(text: str) -> int:
    """``--year``'s value: a whole number from 1500 to 2999, as a year column is read (pipeline.ingest.corpus);
    argparse says what is wrong otherwise."""
    try:
        year = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a year; give a whole number such as 2025") from None
    if not 1500 <= year <= 2999:
        raise argparse.ArgumentTypeError(f"{year} is not a year of a paper; give one from 1500 to 2999")
    return year


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
    parser.add_argument(
        "--year", type=year_argument, default=None, help="the year of --input (default: from its file name)"
    )
    parser.add_argument(
        "--encoding", default=None, help="text encoding of the input (default: UTF-8, else Windows-1252 with a warning)"
    )
    parser.set_defaults(handler=_handle_add)


def _handle_add(args: argparse.Namespace) -> int:
    from topic_atlas.atlas import Atlas

    atlas = Atlas.open(args.cache)
    result = atlas.add(args.input, args.collections, args.name, args.venue, args.year, args.encoding)
    print_report(result, {int(row.topic): row.label for row in atlas.topics.itertuples()})
    return 0


def print_report(result: AddResult, labels: dict[int, str]) -> None:
    """What the add did: papers added and skipped, topics they went to (``labels``: {topic id: label} of the grown
    atlas), how well they fit, the candidate new topics, why a refit is due, stage seconds."""
    report = result.report
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
    threshold = report["fit_threshold"]
    print(
        f"  {report['n_misfits']} of {report['n_added']} new papers ({report['misfit_share']:.0%}) "
        + (
            f"fit no topic well (cosine to the nearest topic centroid below {threshold})"
            if threshold is not None
            else "fit no topic: the atlas has no topics, only outliers"
        )
    )
    candidates = report["candidates"]
    earlier = candidates.get("n_flagged_earlier", 0)
    print(
        f"  {candidates['n_new_territory']} new papers lie in new territory (their nearest papers are new papers "
        "too); candidate new topics, groups of at least "
        f"{candidates['min_size']} of the papers that fit no topic well or lie in new territory"
        + (f" (with {earlier} such papers of earlier adds that no candidate holds)" if earlier else "")
        + f": {len(candidates['topics'])} ({candidates['n_papers']} papers)"
    )
    for entry in candidates["topics"]:
        nearest = int(entry["nearest_topic"])
        print(
            f"    - {entry['label']} ({entry['size']} papers; "
            + (
                f"nearest topic {nearest} {labels.get(nearest, '')}, similarity {entry['nearest_similarity']:.2f})"
                if nearest != -1 and entry["nearest_similarity"] is not None
                else "no topic to set it beside)"
            )
        )
    for entry in candidates.get("set_aside", []):
        print(
            f"    - set aside: a group of {entry['size']} papers that share less than the papers of any topic "
            f"(cohesion {entry['cohesion']:.2f}, the loosest topic's {candidates['cohesion_floor']:.2f}); "
            "they wait for the next add"
        )
    for entry in candidates.get("grown", []):
        print(
            f"    - {entry['label']}, a candidate of an earlier add: {entry['joined']} paper"
            f"{'s' if entry['joined'] != 1 else ''} joined it "
            f"({entry['size']} papers now)"
        )
    inputs = rebuild_inputs(result.manifest)
    for reason in report["refit_reasons"]:
        print(
            f"  refit due: {reason}. Rebuild with: topic-atlas build "
            f"{inputs} --cache {result.cache_dir} (topic ids are kept)"
        )
    for warning in result.manifest.get("coverage", {}).get("warnings", []) if report.get("collections") else []:
        print(f"  - {warning}")
    print("  stage seconds: " + ", ".join(f"{stage} {seconds:.1f}" for stage, seconds in report["timings_s"].items()))


def rebuild_inputs(manifest: Manifest) -> str:
    """The input flags of the build that would refit this atlas with every paper it holds: the collection file it
    was built from (to which the added collections belong), else each collection's file and each file added to one
    with --input, else ALL_PAPERS."""
    entries = manifest.get("collections") or []
    if str(manifest["input_path"]).endswith(".toml"):
        return f"--collections {manifest['input_path']} (with the collections added since)"
    paths = [entry["path"] for entry in entries] + [
        item["path"] for entry in entries for item in entry.get("added", [])
    ]
    if paths:
        return " ".join(f"--input {path}" for path in dict.fromkeys(paths))
    # one file: several --input files would each be a collection, and a paper repeated across them one per file
    return "--input ALL_PAPERS (one file holding the first input and every file added since)"
