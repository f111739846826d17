"""The records a build dropped while cleaning, one row each, for the page's build notes (issue 21, item 6)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

DROPPED_COLUMNS = ["id", "reason", "copy of"]


def dropped_records(manifest: Mapping[str, Any]) -> pd.DataFrame:
    """Every id in the manifest's ``dropped_ids`` ({reason: [id, ...]}) as a row: ``id``, ``reason`` and ``copy of``,
    the first id of its group when the manifest's ``dropped_copies`` ({reason: [[id, ...], ...]}) lists it among the
    copies of one text (the first id itself included), or the id of the paper it duplicates (the manifest's
    ``duplicate_of``: such a copy is listed on the page with that paper), else "". Rows keep the manifest's order;
    an empty frame with those columns when nothing was dropped. Never raises on a manifest without these keys (older
    caches)."""
    first_of = {str(copy): str(kept) for copy, kept in (manifest.get("duplicate_of") or {}).items()}
    for groups in (manifest.get("dropped_copies") or {}).values():
        for group in groups:
            for doc_id in group:
                first_of[str(doc_id)] = str(group[0])
    rows = [
        (str(doc_id), str(reason), first_of.get(str(doc_id), ""))
        for reason, ids in (manifest.get("dropped_ids") or {}).items()
        for doc_id in ids
    ]
    return pd.DataFrame(rows, columns=DROPPED_COLUMNS)


def copies_sentence(dropped: pd.DataFrame) -> str:
    """ "4 of them are copies of 2 texts (same text, one row each)." for the rows of :func:`dropped_records` that have
    a ``copy of``; "" when none do."""
    copies = dropped[dropped["copy of"] != ""]
    if copies.empty:
        return ""
    texts = copies["copy of"].nunique()
    noun = "text" if texts == 1 else "texts"
    return f"{len(copies):,} of them are copies of {texts:,} {noun} (the same text, one row each)."
