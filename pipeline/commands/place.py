"""``topic-atlas place``: argument parsing and one call of :mod:`pipeline.operations.place`."""

from __future__ import annotations

import argparse
from pathlib import Path

from pipeline.operations.place import place_file


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``place`` subcommand."""
    parser = subparsers.add_parser(
        "place",
        help="place new papers on an existing map (topic, 2D position, nearest papers) without refitting",
        description=(
            "Assign each document of NEW_FILE a topic, map coordinates and its "
            "nearest papers in an existing cache. The cache is not modified."
        ),
    )
    parser.add_argument("--cache", type=Path, required=True, help="cache folder built by `topic-atlas build`")
    parser.add_argument("--input", type=Path, required=True, help="new documents, in any format the build accepts")
    parser.add_argument("--out", type=Path, required=True, help="output Parquet file (.parquet) or CSV (.csv)")
    parser.add_argument(
        "--encoding", default=None, help="text encoding of the input (default: UTF-8, else Windows-1252 with a warning)"
    )
    parser.add_argument(
        "--neighbors", type=int, default=10, help="nearest cached papers per new document (default: 10)"
    )
    parser.set_defaults(handler=_handle_place)


def _handle_place(args: argparse.Namespace) -> int:
    from pipeline.runtime.console import counted
    from pipeline.runtime.errors import TargetError

    out = args.out.expanduser().resolve()
    if out.suffix.lower() not in (".parquet", ".csv"):
        raise TargetError(f"{out}: --out must end in .parquet or .csv")
    if out.exists() and out.is_dir():
        raise TargetError(f"{out} is a folder; give a file name")
    if args.cache.expanduser().resolve() in out.parents:
        raise TargetError(f"{out} is inside the cache folder, which place never modifies; write it elsewhere")
    placed = place_file(args.cache, args.input, args.encoding, args.neighbors)
    out.parent.mkdir(parents=True, exist_ok=True)
    temporary = out.with_name(f".{out.name}.partial")
    if out.suffix.lower() == ".csv":
        placed.assign(
            neighbor_ids=placed["neighbor_ids"].map(";".join),
            neighbor_scores=placed["neighbor_scores"].map(lambda s: ";".join(map(str, s))),
        ).to_csv(temporary, index=False)
    else:
        placed.to_parquet(temporary, index=False)
    temporary.replace(out)
    counts = placed["topic_label"].value_counts()
    print(
        f"placed {counted(len(placed), 'document')} into {out}; topics: "
        + ", ".join(f"{label} ({count})" for label, count in counts.items())
    )
    for row in placed[~placed["fits"]].itertuples():
        print(
            f"  - {row.doc_id} fits no topic: its similarity to the nearest topic is {row.topic_similarity:.2f}, below "
            f"the {row.fit_threshold:.2f} that 99% of the topics' own papers reach"
        )
    return 0
