"""A venue's submissions downloaded from OpenReview into a corpus file that :meth:`topic_atlas.Atlas.build` reads
(``ta.fetch_venue``; ``topic-atlas fetch``). The only step that needs internet; the requests, retries and the
resumable parts folder are :mod:`pipeline.ingest.openreview`'s.
"""

from __future__ import annotations

import os
from pathlib import Path

from pipeline.ingest.openreview import (
    DEFAULT_BACKOFF_S,
    DEFAULT_BASEURL,
    DEFAULT_MAX_RETRIES,
    DEFAULT_PAGE_SIZE,
    make_client,
)
from pipeline.ingest.openreview import (
    fetch_venue as fetch_notes,
)
from pipeline.runtime.errors import AtlasError


def fetch_venue(
    venue: str,
    out: Path | str,
    page_size: int = DEFAULT_PAGE_SIZE,
    max_retries: int = DEFAULT_MAX_RETRIES,
    backoff_s: float = DEFAULT_BACKOFF_S,
    baseurl: str = DEFAULT_BASEURL,
    username: str | None = None,
    password: str | None = None,
) -> Path:
    """Download every submission of the OpenReview venue ``venue`` (API v2, e.g. "ICLR.cc/2025/Conference") into the
    Parquet file ``out`` and return its path: title, abstract, keywords, primary area, authors, decision, ratings.
    An interrupted download resumes from ``out``'s parts folder when called again with the same arguments.

    ``page_size``: submissions per request; ``max_retries`` and ``backoff_s`` (seconds): urllib3's Retry on HTTP 429
    and 5xx. ``username`` and ``password`` (default: $OPENREVIEW_USERNAME, $OPENREVIEW_PASSWORD; public data needs
    none). Raises AtlasError for a username without a password, a missing openreview-py, an unreachable host, a
    refused login or a failed request."""
    username = username or os.environ.get("OPENREVIEW_USERNAME") or None
    password = password or os.environ.get("OPENREVIEW_PASSWORD") or None
    if username and not password:
        raise AtlasError("--username needs a password: pass --password or set OPENREVIEW_PASSWORD")
    client = make_client(baseurl, username, password)
    return fetch_notes(client, venue, Path(out), page_size=page_size, max_retries=max_retries, backoff_s=backoff_s)
