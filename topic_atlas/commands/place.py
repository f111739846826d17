"""``topic-atlas place``: argument parsing and one call of :meth:`topic_atlas.Atlas.place_file`."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``place`` subcommand."""
    parser = subparsers.add_parser(
        "place",
        help="place new papers on an existing map (topic, 2D position, nearest papers) without refitting",
        description=(
            "Assign each document of the --input file a topic, map coordinates and its "
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
    from topic_atlas.atlas import Atlas

    placed = Atlas.open(args.cache).place_file(args.input, args.out, args.encoding, args.neighbors)
    counts = placed["topic_label"].value_counts()
    print(
        f"placed {counted(len(placed), 'document')} into {args.out.expanduser().resolve()}; topics: "
        + ", ".join(f"{label} ({count})" for label, count in counts.items())
    )
    for row in placed[~placed["fits"]].itertuples():
        print(
            f"  - {row.doc_id} fits no topic: its similarity to the nearest topic is {row.topic_similarity:.2f}, below "
            f"the {row.fit_threshold:.2f} that 99% of the topics' own papers reach"
        )
    return 0
