"""Documents longer than the encoder's window: named, with their lengths, and marked in the cache.

A transformer encoder reads only the first ``max_seq_length`` word pieces of a text (256 for all-MiniLM-L6-v2);
the rest does not shape the document's embedding (c-TF-IDF still reads all of it). The build lists which
documents were cut and by how much, and the cache keeps per document its length in word pieces and whether it
was truncated (columns ``word_pieces`` and ``truncated``), so the dashboard can say so on the paper's page.
"""

from __future__ import annotations

from collections.abc import Sequence


def truncated_flags(token_counts: Sequence[int], window: int) -> list[bool]:
    """Per document, True when its length in word pieces exceeds ``window``. Empty counts (an encoder that does not
    report lengths) give all False."""
    return [int(count) > window for count in token_counts]


def truncation_warning(
    doc_ids: Sequence[str], token_counts: Sequence[int], window: int | None, shown: int = 10
) -> str | None:
    """A warning naming the truncated documents, longest first, with their lengths, or None when none is (always None
    when ``window`` is None: a representation without a window, such as the lexical one, truncates nothing).

    e.g. "3 documents are longer than the embedding model's window of 256 word pieces; only their beginning was
    embedded (c-TF-IDF still uses the whole text): p7 (912 word pieces), p2 (400), p9 (260)".
    """
    if window is None:
        return None
    long = sorted(
        ((int(count), doc_id) for doc_id, count in zip(doc_ids, token_counts) if int(count) > window),
        key=lambda pair: (-pair[0], pair[1]),
    )
    if not long:
        return None
    listed = ", ".join(
        f"{doc_id} ({count:,} word pieces)" if position == 0 else f"{doc_id} ({count:,})"
        for position, (count, doc_id) in enumerate(long[:shown])
    )
    more = f" and {len(long) - shown} more" if len(long) > shown else ""
    return (
        f"{len(long)} documents are longer than the embedding model's window of {window} word pieces; only their "
        f"beginning was embedded (c-TF-IDF still uses the whole text): {listed}{more}"
    )
