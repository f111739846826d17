"""``topic-atlas edit {merge,split,delete,move,rename,undo,log,replay}``: argument parsing and one call of
:class:`topic_atlas.Atlas` each (``merge``, ``split``, ``delete_topic``, ``move``, ``rename``, ``undo``, ``edits``,
``replay``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from pipeline.runtime.errors import InputError


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``edit`` subcommand and its actions."""
    parser = subparsers.add_parser(
        "edit",
        help="fix an atlas's topics without a refit: merge, split, delete, move papers, rename, undo, log",
        description="Edit the topics of an atlas in place of a refit: the changed topics' terms, names, subtopics "
        "and the hierarchy are recomputed, the atlas rewritten atomically under its writer lock, and each edit "
        "recorded in the atlas's edit log (edits.jsonl), from which `undo` goes back one edit at a time.",
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

    def action(name: str, help_text: str) -> argparse.ArgumentParser:
        sub = actions.add_parser(name, help=help_text, description=help_text)
        sub.add_argument("--cache", type=Path, required=True, help="atlas (cache folder) built by `topic-atlas build`")
        if name != "log":
            sub.add_argument("--by", default=None, help="who edits, for the log (default: $USER)")
        return sub

    merge = action("merge", "merge two or more topics into the largest of them")
    merge.add_argument("--topics", type=int, nargs="+", required=True, metavar="ID", help="topic ids, e.g. 3 7")
    split = action("split", "split a topic into k by k-means of its papers' vectors")
    split.add_argument("--topic", type=int, required=True, help="topic id")
    split.add_argument(
        "--k", type=int, default=None, help="how many topics it becomes (2 or more; default: as many as its subtopics)"
    )
    delete = action("delete", "delete a topic: its papers become outliers, or go to their nearest topics")
    delete.add_argument("--topic", type=int, required=True, help="topic id")
    delete.add_argument(
        "--to-nearest", action="store_true", help="move each paper to the remaining topic nearest it (centroids)"
    )
    move = action("move", "move papers (by id) to a topic")
    move.add_argument("--ids", required=True, help="paper ids joined by commas: a,b,c")
    move.add_argument("--to", type=int, required=True, help="topic id (-1: make them outliers)")
    rename = action("rename", "label a theme, topic or subtopic")
    rename.add_argument("--level", choices=("theme", "topic", "subtopic"), default="topic", help="default: topic")
    rename.add_argument("--id", type=int, required=True, help="its id (as the page and `edit log` show it)")
    rename.add_argument("--label", required=True, help="the new label")
    action("undo", "undo the last edit not undone yet")
    replay = action("replay", "make the edits of another version's log again (e.g. after a rebuild), by their papers")
    replay.add_argument("--log", type=Path, required=True, help="an edits.jsonl saved from the atlas before")
    action("log", "list the atlas's edits")
    parser.set_defaults(handler=_handle_edit)


def _handle_edit(args: argparse.Namespace) -> int:
    from topic_atlas.atlas import Atlas

    atlas = Atlas.open(args.cache)
    if args.action == "log":
        table = atlas.edits()
        if table.empty:
            print(f"{args.cache} has no edits")
        for row in table.itertuples():
            undone = " (undone)" if row.undone else ""
            print(f"{row.id:>3}  {row.at}  {row.by or '-'}  {row.op}: {row.summary}{undone}")
        return 0
    if args.action == "replay":
        for report in atlas.replay(args.log, by=args.by):
            print(f"{report['id']:>3}  {report['op']}: {report['status']} ({report['note']})")
        return 0
    if args.action == "merge":
        entry = atlas.merge(args.topics, by=args.by)
    elif args.action == "split":
        entry = atlas.split(args.topic, args.k, by=args.by)
    elif args.action == "delete":
        entry = atlas.delete_topic(args.topic, to_nearest=args.to_nearest, by=args.by)
    elif args.action == "move":
        ids = [part.strip() for part in str(args.ids).split(",") if part.strip()]
        if not ids:
            raise InputError("--ids is empty; give paper ids joined by commas: a,b,c")
        entry = atlas.move(ids, args.to, by=args.by)
    elif args.action == "rename":
        entry = atlas.rename(args.level, args.id, args.label, by=args.by)
    else:
        entry = atlas.undo(by=args.by)
    print(f"edit {entry['id']} of {args.cache}: {entry['summary']}")
    return 0
