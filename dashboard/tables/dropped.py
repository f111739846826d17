"""The records a build dropped while cleaning (placeholders, empty abstracts, copies of one withdrawal notice): one
row each for the page's build notes (issue 21, item 6), and, from the cache's ``dropped.parquet``
(pipeline.cache.TopicCache.dropped), rows of the paper table, its search and its CSV, marked "dropped: <reason>"
and without a topic (issue 40, item 9). They never reach the map, the topic sizes or the charts: the page keeps
them apart from its listing (dashboard.state.resources.listing) and adds them only to the tables it lists."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from dashboard.display import shorten
from dashboard.tables import paper_table

DROPPED_COLUMNS = ["id", "reason", "copy of"]
DROPPED_MARK = "dropped"  # the paper table's and the CSV's column saying "dropped: <reason>" (None for a paper)
COPY_GROUPS_SHOWN = 5  # texts the build notes' caption names, one "1 text × N copies" each
TEXT_CHARS = 60  # a copied text's length in that caption


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


def copies_sentence(dropped: pd.DataFrame, texts: Mapping[str, str] | None = None) -> str:
    """The build notes' caption on copies, one "1 text × N copies" per copied text: '14 of them are copies of 2
    texts: "This paper is withdrawn." (1 text × 12 copies); the abstract of p7 (1 text × 2 copies).' for the rows of
    :func:`dropped_records` that have a ``copy of``, largest groups first (COPY_GROUPS_SHOWN of them named, "and N
    more texts" after). ``texts``: {id: the text its record held} (the cache's dropped abstracts), quoted for a
    group whose first id it has; other groups are named by that id. "" when no row has a ``copy of``."""
    copies = dropped[dropped["copy of"] != ""]
    if copies.empty:
        return ""
    sizes = copies["copy of"].value_counts(sort=False)
    groups = sorted(sizes.items(), key=lambda item: -item[1])
    named = [f"{_text_name(str(first), texts or {})} (1 text × {count:,} {_copies(count)})" for first, count in groups]
    more = len(named) - COPY_GROUPS_SHOWN
    listed = "; ".join(named[:COPY_GROUPS_SHOWN]) + (f"; and {more:,} more texts" if more > 0 else "")
    noun = "text" if len(groups) == 1 else "texts"
    return f"{len(copies):,} of them are copies of {len(groups):,} {noun}: {listed}."


def _copies(count: int) -> str:
    return "copy" if count == 1 else "copies"


def _text_name(first_id: str, texts: Mapping[str, str]) -> str:
    """A copied text in the caption: quoted (shortened, one line) when ``texts`` has it, else "the abstract of ID"."""
    text = texts.get(first_id)
    if isinstance(text, str) and text.strip():
        return f'"{shorten(" ".join(text.split()), TEXT_CHARS)}"'
    return f"the abstract of {first_id}"


def dropped_texts(dropped: pd.DataFrame) -> dict[str, str]:
    """{doc_id: abstract} of the cache's dropped records (TopicCache.dropped; {} without the file), for
    :func:`copies_sentence`."""
    if dropped.empty or "abstract" not in dropped.columns:
        return {}
    return {
        str(doc_id): abstract
        for doc_id, abstract in zip(dropped["doc_id"], dropped["abstract"])
        if isinstance(abstract, str)
    }


def dropped_listing(dropped: pd.DataFrame) -> pd.DataFrame:
    """The cache's dropped records (TopicCache.dropped) as the paper table lists them: their own columns, ``copy_of``
    None unless the record is one of several copies of one dropped text (then the first copy's id), and
    DROPPED_MARK "dropped: <reason>". No topic, probability or position. Empty (no rows) for a cache without any."""
    if dropped.empty:
        return pd.DataFrame(columns=["doc_id", "title", "abstract", paper_table.COPY_COLUMN, DROPPED_MARK])
    copy_of = [value if isinstance(value, str) and value else None for value in dropped[paper_table.COPY_COLUMN]]
    return dropped.assign(
        doc_id=dropped["doc_id"].astype(str),
        **{
            paper_table.COPY_COLUMN: copy_of,
            DROPPED_MARK: [f"dropped: {reason}" for reason in dropped["reason"]],
        },
    ).reset_index(drop=True)


def matching_dropped(
    listing: pd.DataFrame,
    query: str = "",
    decisions: Sequence[str] = (),
    areas: Sequence[str] = (),
    collections: Sequence[str] = (),
    narrowed: bool = False,
) -> pd.DataFrame:
    """The rows of :func:`dropped_listing` that the page's filters keep: those whose title, abstract or keywords match
    ``query`` (paper_table.matches_query), with one of ``decisions``, ``areas`` and ``collections`` when given (a
    record without that column matches none). No rows when ``narrowed`` (a topic, theme or map selection chose the
    papers: a dropped record has no topic and no place on the map)."""
    if narrowed or listing.empty:
        return listing.iloc[:0]
    rows = paper_table.filter_documents(listing, None, query, list(decisions) or None)
    for column, wanted in (("primary_area", areas), ("collection", collections)):
        if wanted:
            rows = rows[rows[column].isin(list(wanted))] if column in rows.columns else rows.iloc[:0]
    return rows


def dropped_rows_table(rows: pd.DataFrame, topics: pd.DataFrame, links: bool, full: bool = False) -> pd.DataFrame:
    """``rows`` (of :func:`dropped_listing`) shaped as paper_table.papers_table shapes papers (``full``: the CSV's
    columns), with no topic: topic, topic_label, probability, theme and subtopic are None; copy_of and DROPPED_MARK
    as in ``rows``. Empty when ``rows`` is."""
    if rows.empty:
        return pd.DataFrame()
    placed = rows.assign(topic=paper_table.OUTLIER_TOPIC, probability=0.0)  # papers_table needs them; cleared below
    table = paper_table.papers_table(placed, topics, links=links, full=full)
    blank = [column for column in ("topic", "topic_label", "probability", "theme", "theme_label") if column in table]
    table[blank] = None
    table[paper_table.COPY_COLUMN] = rows[paper_table.COPY_COLUMN].tolist()
    table[DROPPED_MARK] = rows[DROPPED_MARK].tolist()
    return table


def with_dropped_rows(table: pd.DataFrame, dropped_rows: pd.DataFrame, first: bool = False) -> pd.DataFrame:
    """The papers ``table`` (paper_table.papers_table) and ``dropped_rows`` (:func:`dropped_rows_table`) as one
    table, index 0..n-1: the dropped rows after the papers (before them when ``first``: a search that found them),
    columns in PAPER_COLUMNS order with DROPPED_MARK after topic_label (None for the papers). ``table`` itself when
    there are no dropped rows."""
    if dropped_rows.empty:
        return table
    papers = _with_object_integers(table)
    rows = _with_object_integers(dropped_rows)
    rows = rows.astype(
        {column: papers[column].dtype for column in rows.columns if column in papers and rows[column].isna().all()}
    )
    combined = pd.concat([rows, papers] if first else [papers, rows], ignore_index=True)
    order = [column for column in paper_table.PAPER_COLUMNS if column in combined.columns]
    order.insert(order.index("topic_label") + 1, DROPPED_MARK)
    return combined[order + [column for column in combined.columns if column not in order]]


def _with_object_integers(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with its integer and boolean columns as Python objects, so a concatenated None stays None (a topic
    id stays 3, not 3.0)."""
    exact = {
        column: object
        for column in table.columns
        if pd.api.types.is_integer_dtype(table[column]) or pd.api.types.is_bool_dtype(table[column])
    }
    return table.astype(exact) if exact else table
