"""``topic-atlas rename``: argument parsing and one call of :meth:`topic_atlas.Atlas.label_topic`."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``rename`` subcommand."""
    parser = subparsers.add_parser(
        "rename",
        help="give a topic your own label (kept by aligned rebuilds)",
        description=(
            "Set the label of one topic of an atlas; rebuilds into "
            "the same folder keep it while the topic keeps its id."
        ),
    )
    parser.add_argument("--cache", type=Path, required=True, help="atlas (cache folder) built by `topic-atlas build`")
    parser.add_argument("--topic", type=int, required=True, help="topic id (as shown in the dashboard: 'id · label')")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--label", help="the new label")
    group.add_argument("--reset", action="store_true", help="go back to the label the topic had before it was renamed")
    parser.set_defaults(handler=_handle_rename)


def _handle_rename(args: argparse.Namespace) -> int:
    from topic_atlas.atlas import Atlas

    atlas = Atlas.open(args.cache)
    atlas.label_topic(args.topic, None if args.reset else args.label)
    label = atlas.topics.set_index("topic").loc[args.topic, "label"]
    print(
        f"topic {args.topic} of {args.cache} is now labelled {label!r}"
        + (" (its label before the rename)" if args.reset else "")
    )
    return 0
