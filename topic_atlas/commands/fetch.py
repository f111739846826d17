"""``topic-atlas fetch``: argument parsing and one call of :func:`topic_atlas.fetching.fetch_venue`."""

from __future__ import annotations

import argparse
from typing import Any

from pipeline.ingest.decisions import DECISION_ORDER
from pipeline.ingest.openreview import (
    DEFAULT_BACKOFF_S,
    DEFAULT_BASEURL,
    DEFAULT_MAX_RETRIES,
    DEFAULT_PAGE_SIZE,
    MAX_PAGE_SIZE,
)


def run(args: argparse.Namespace) -> int:
    """Handler of ``topic-atlas fetch``; returns the exit code (0 on success)."""
    import pyarrow.parquet as pq

    from topic_atlas.fetching import fetch_venue

    out = fetch_venue(
        args.venue,
        args.out,
        page_size=args.page_size,
        max_retries=args.max_retries,
        backoff_s=args.backoff,
        baseurl=args.baseurl,
        username=args.username,
        password=args.password,
    )

    decisions = pq.read_table(out, columns=["decision"]).column("decision").to_pylist()
    counts = ", ".join(f"{name} {decisions.count(name)}" for name in DECISION_ORDER)
    print(f"wrote {len(decisions)} submissions of {args.venue} to {out} ({counts}, undecided {decisions.count(None)})")
    return 0


def register(subparsers: Any) -> None:
    """Add the ``fetch`` subcommand to the ``topic-atlas`` parser (see topic_atlas/cli.py)."""
    parser = subparsers.add_parser(
        "fetch",
        help="download a venue's submissions from OpenReview into a Parquet corpus (needs internet)",
        description=(
            "Download all submissions of an OpenReview venue (API v2) with title, abstract, keywords, primary area, "
            "authors, decision and public review ratings into a Parquet file that `build --input` reads. "
            "Interrupted runs resume from PATH.parts/ when rerun with the same arguments."
        ),
    )
    parser.add_argument("--venue", required=True, help="OpenReview venue id, e.g. ICLR.cc/2025/Conference")
    parser.add_argument("--out", required=True, metavar="PATH", help="output Parquet file, e.g. data/iclr2025.parquet")
    parser.add_argument(
        "--page-size",
        type=int,
        default=DEFAULT_PAGE_SIZE,
        metavar="N",
        help=f"submissions per request, 1..{MAX_PAGE_SIZE} (default {DEFAULT_PAGE_SIZE}; "
        "a resumed fetch keeps the size it started with)",
    )
    parser.add_argument(
        "--max-retries",
        type=int,
        default=DEFAULT_MAX_RETRIES,
        metavar="N",
        help=f"retries per request on HTTP 429 and 5xx, with exponential backoff (default {DEFAULT_MAX_RETRIES})",
    )
    parser.add_argument(
        "--backoff",
        type=float,
        default=DEFAULT_BACKOFF_S,
        metavar="SECONDS",
        help="backoff factor of urllib3's Retry: the first retry comes at once, retry n waits SECONDS * 2**(n-1), "
        f"at most 120 s; a Retry-After header wins (default {DEFAULT_BACKOFF_S:g})",
    )
    parser.add_argument("--baseurl", default=DEFAULT_BASEURL, help=f"OpenReview API v2 URL (default {DEFAULT_BASEURL})")
    parser.add_argument(
        "--username",
        default=None,
        help="OpenReview login, optional: public data needs none (default: $OPENREVIEW_USERNAME)",
    )
    parser.add_argument(
        "--password", default=None, help="OpenReview password, optional (default: $OPENREVIEW_PASSWORD)"
    )
    parser.set_defaults(handler=run)
