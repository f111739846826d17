"""``topic-atlas share``: argument parsing and one call of :meth:`topic_atlas.Atlas.write_share` (the dashboard's
map as one HTML file, dashboard.export.share_page)."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``share`` subcommand."""
    parser = subparsers.add_parser(
        "share",
        help="write the atlas as one HTML file to share (map, search, filters, papers; opens offline)",
        description=(
            "Write one self-contained HTML file of an atlas: the map with labels by zoom, search over titles and "
            "abstracts, filters, each paper with its abstract, a lasso that lists papers with a CSV download. It "
            "opens from disk with no network. --folder writes index.html and data files for static hosting instead."
        ),
    )
    parser.add_argument("--cache", type=Path, required=True, help="atlas (cache folder) built by `topic-atlas build`")
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--out", type=Path, help="the HTML file to write, e.g. atlas.html")
    target.add_argument("--folder", type=Path, help="a folder to write index.html and data/*.bin into")
    parser.set_defaults(handler=_handle_share)


def _handle_share(args: argparse.Namespace) -> int:
    """Write the share file (``--out``) or folder (``--folder``) and say what was written. An unreadable cache
    (CacheError) or a target that cannot be written (TargetError) ends in one line (topic_atlas.cli.run_guarded)."""
    from topic_atlas.atlas import Atlas

    if args.out is not None:
        result = Atlas.open(args.cache).write_share(args.out)
    else:
        result = Atlas.open(args.cache).write_share(args.folder, folder=True)
    what = "file" if args.out is not None else "folder (serve it over http)"
    print(f"wrote {result.path}: {result.papers:,} papers, {result.bytes / 1e6:.1f} MB, one {what}")
    return 0
