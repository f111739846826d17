"""Filtering the documents table and shaping the tables the dashboard shows. Pure pandas, no Streamlit.

Cells of list columns (keywords, neighbor_ids, ...) arrive from Parquet as numpy arrays, lists or None;
:func:`as_text_list` reads any of them.

Copies (papers whose abstract another paper of the corpus already has: pipeline.ingest.clean) are not in the cache's
documents table but in its ``copies`` table; :func:`with_copies` lists them beside the documents, at their kept
paper's topic and position with a ``copy_of`` column, so the table, the search and the CSV export find every input
id. OpenReview links are made only for corpora whose ids are OpenReview forum ids (:func:`corpus_uses_openreview_ids`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from dashboard.display import (
    OUTLIER_LABEL,
    OUTLIER_TOPIC,
    as_text_list,
    document_heading,
    hover_texts,
    shorten,
    topic_labels,
    unlinked,
)
from pipeline.cache import (
    ADDED_AMONG_OUTLIERS,
    CLUSTER_DISSOLVED,
    FIT_SIMILARITY_COLUMN,
    FITS_NO_TOPIC,
    NO_DENSE_CLUSTER,
    OUTLIER_REASON_COLUMN,
)
from pipeline.config import corpus_display_name
from pipeline.ingest.decisions import DECISION_ORDER
from pipeline.ingest.readable import readable_text, readable_title

OPENREVIEW_FORUM_URL = "https://openreview.net/forum?id={}"
# OpenReview forum ids: 8 to 14 characters of letters, digits, "_" and "-" (e.g. "rUxr9Ll5FQ").
_OPENREVIEW_ID = re.compile(r"[A-Za-z0-9_-]{8,14}")
_GENERATED_ID = re.compile(r"row-\d+")
# Columns whose values are OpenReview forum ids by name (pipeline.ingest.corpus: the manifest's id_column).
OPENREVIEW_ID_COLUMNS = ("openreview_id", "forum", "forum_id")
# A corpus's ids are taken for OpenReview forum ids when this share of them have the shape and mix upper- and
# lower-case letters, as random forum ids do (11,576 of the 11,672 ICLR 2025 ids, 99.2%; "doc000001" never does).
OPENREVIEW_ID_SHARE = 0.9
COPY_COLUMN = "copy_of"
LIST_SEPARATOR = "; "  # between the items of a list cell (keywords, ...) in a table or a CSV
TABLE_TITLE_CHARS = 100


def is_openreview_id(doc_id: Any) -> bool:
    """True when ``doc_id`` looks like an OpenReview forum id: 8-14 of [A-Za-z0-9_-], not a generated ``row-N``,
    and not only lower-case letters or only digits (words and row numbers are not forum ids)."""
    if not isinstance(doc_id, str) or not _OPENREVIEW_ID.fullmatch(doc_id) or _GENERATED_ID.fullmatch(doc_id):
        return False
    return not (doc_id.isdigit() or (doc_id.isalpha() and doc_id.islower()))


def corpus_uses_openreview_ids(doc_ids: Iterable[Any], id_column: str | None = None) -> bool:
    """True when a corpus's ids are OpenReview forum ids, so that links to openreview.net make sense.

    ``id_column`` (the manifest's ``id_column``: the file's column the ids came from), when given, decides by name:
    ``openreview_id`` / ``forum`` / ``forum_id`` mean yes. Otherwise at least OPENREVIEW_ID_SHARE of the ids must
    look like forum ids (:func:`is_openreview_id`) with both upper- and lower-case letters: ids such as
    ``doc000001``, ``p01`` or ``paper-12`` never do.
    """
    if id_column and str(id_column).strip().lower() in OPENREVIEW_ID_COLUMNS:
        return True
    ids = [str(doc_id) for doc_id in doc_ids if not _GENERATED_ID.fullmatch(str(doc_id))]  # row-N: no id was given
    if not ids:
        return False
    shaped = sum(
        1
        for doc_id in ids
        if is_openreview_id(doc_id) and any(c.isupper() for c in doc_id) and any(c.islower() for c in doc_id)
    )
    return shaped >= OPENREVIEW_ID_SHARE * len(ids)


def links_enabled(manifest: Mapping[str, Any], documents: pd.DataFrame) -> bool:
    """:func:`corpus_uses_openreview_ids` for a cache: by the manifest's ``id_column`` when it records one, else
    by all the cache's ids. The page computes it once and passes it as ``links=`` to the table functions."""
    return corpus_uses_openreview_ids(documents["doc_id"], manifest.get("id_column"))


def openreview_link(doc_id: Any, links: bool = True) -> str | None:
    """``https://openreview.net/forum?id=<doc_id>`` when ``links`` (the corpus uses OpenReview ids) and the id looks
    like an OpenReview forum id, else None."""
    return OPENREVIEW_FORUM_URL.format(doc_id) if links and is_openreview_id(doc_id) else None


def _links(documents: pd.DataFrame, links: bool | None) -> bool:
    return corpus_uses_openreview_ids(documents["doc_id"]) if links is None else links


def with_copies(documents: pd.DataFrame, copies: pd.DataFrame, topics: pd.DataFrame | None = None) -> pd.DataFrame:
    """``documents`` followed by the ``copies`` (pipeline.cache.TopicCache.copies), with a ``copy_of`` column
    (None for documents, the kept paper's id for copies), for the tables, the search and the CSV export.

    A copy carries its own id, title, abstract and metadata and its kept paper's topic, topic_label, probability,
    x and y; list columns the copies lack (neighbor_ids ...) are taken from the kept paper. When ``documents`` has a
    ``hover`` column (display.with_hover_texts), the copies get theirs (needs ``topics``). Returns ``documents``
    itself, with ``copy_of`` added, when there are no copies.
    """
    if copies is None or copies.empty:
        return documents if COPY_COLUMN in documents.columns else documents.assign(**{COPY_COLUMN: None})
    kept = documents.set_index(documents["doc_id"].astype(str))
    extra = copies.copy()
    for column in documents.columns:
        if column not in extra.columns and column != "hover":
            extra[column] = [kept[column].get(str(original)) for original in extra[COPY_COLUMN]]
    if "hover" in documents.columns and topics is not None:
        extra["hover"] = hover_texts(extra, topic_labels(topics))
    combined = pd.concat(
        [
            documents.assign(**{COPY_COLUMN: None}),
            extra[[column for column in extra.columns if column in documents.columns or column == COPY_COLUMN]],
        ],
        ignore_index=True,
    )
    return combined


def search_haystack(documents: pd.DataFrame) -> pd.Series:
    """Per document, its title, abstract and keywords joined by newlines (missing parts empty) and lower-cased, index
    aligned: what :func:`matches_query` searches (``lowered=True``), made once per cache by the page."""
    parts = []
    for column in ("title", "abstract"):
        if column in documents.columns:
            parts.append(documents[column].map(lambda value: value if isinstance(value, str) else ""))
    if "keywords" in documents.columns:
        parts.append(documents["keywords"].map(lambda value: "\n".join(as_text_list(value))))
    if not parts:
        return pd.Series("", index=documents.index, dtype=object)
    haystack = parts[0]
    for part in parts[1:]:
        haystack = haystack + "\n" + part
    return haystack.str.lower()


MIN_STEM_CHARS = 3


def query_pattern(query: str) -> str:
    r"""A regular expression for a text search that matches word forms: each word of ``query`` (runs of letters and
    digits; anything else only separates them) loses a plural "s" (not "ss", and only past 3 characters) and may
    then go on ("agent" -> agent, agents, agentic); consecutive words may be joined by any non-word characters
    (spaces, "-", "/"). "LLM agents" -> ``LLM\w*\W+agent\w*``. A query without words matches literally."""
    words = re.findall(r"\w+", query)
    if not words:
        return re.escape(query)
    stems = [
        word[:-1]
        if len(word) > MIN_STEM_CHARS and word.lower().endswith("s") and not word.lower().endswith("ss")
        else word
        for word in words
    ]
    return r"\W+".join(re.escape(stem) + r"\w*" for stem in stems)


def matches_query(texts: pd.Series, query: str, lowered: bool = False) -> pd.Series:
    """Boolean Series: which ``texts`` match :func:`query_pattern` of ``query`` (case-insensitive). The regular
    expression runs only on texts that hold the query's longest stem as a plain substring (a fast pre-filter);
    ``lowered``: the texts are lower-cased already (:func:`search_haystack`), so the pre-filter is a plain
    substring test rather than a case-folding one (0.09-0.12 s against 0.18 s over 99,423 papers' texts)."""
    stems = re.findall(r"\w+", re.sub(r"\\[wW][*+]", " ", query_pattern(query)))
    longest = max(stems, key=len) if stems else query
    if lowered:
        candidates = texts.str.contains(longest.lower(), regex=False).fillna(False).astype(bool)
    else:
        candidates = texts.str.contains(longest, case=False, regex=False).fillna(False).astype(bool)
    pattern = re.compile(query_pattern(query), re.IGNORECASE)
    found = np.zeros(len(texts), dtype=bool)
    found[candidates.to_numpy()] = [bool(pattern.search(str(text))) for text in texts[candidates]]
    return pd.Series(found, index=texts.index)


def filter_documents(
    documents: pd.DataFrame,
    topics: Iterable[int] | None = None,
    query: str = "",
    decisions: Iterable[str] | None = None,
    selected_ids: Iterable[str] | None = None,
    haystack: pd.Series | None = None,
) -> pd.DataFrame:
    """Rows of ``documents`` that pass every non-empty filter; an empty or None filter keeps everything.

    - ``topics``: topic ids to keep (``-1`` = outliers).
    - ``query``: case-insensitive, matching word forms (:func:`query_pattern`: "LLM agent" finds "LLM agents",
      "LLMs agents" and "llm-agent"; surrounding blanks ignored) in the title, abstract or a keyword.
    - ``decisions``: decision values to keep; without a ``decision`` column no row matches a non-empty list.
    - ``selected_ids``: doc_ids to keep (a map selection); a copy (``copy_of`` column) is kept with its paper.
    - ``haystack``: :func:`search_haystack` of ``documents`` or of a table they are rows of (same index), computed
      once by the caller to make repeated searches fast; computed here when None.

    ``documents`` needs columns doc_id and topic (title, abstract, keywords, decision are used when present).
    Returns a new DataFrame with the original index and columns, in the original order.
    """
    keep = pd.Series(True, index=documents.index)
    topic_list = [int(topic) for topic in topics] if topics is not None else []
    if topic_list:
        keep &= documents["topic"].isin(topic_list)
    query = (query or "").strip()
    if query:
        texts = search_haystack(documents) if haystack is None else haystack.reindex(documents.index, fill_value="")
        keep &= matches_query(texts, query, lowered=True)
    decision_list = [str(decision) for decision in decisions] if decisions is not None else []
    if decision_list:
        keep &= documents["decision"].isin(decision_list) if "decision" in documents.columns else False
    id_set = {str(doc_id) for doc_id in selected_ids} if selected_ids is not None else set()
    if id_set:
        chosen = documents["doc_id"].astype(str).isin(id_set)
        if COPY_COLUMN in documents.columns:  # a copy goes with its paper (a map selection holds the paper's id)
            chosen |= documents[COPY_COLUMN].astype(str).isin(id_set)
        keep &= chosen
    return documents[keep].copy()


def selected_doc_ids(points: Iterable[Mapping[str, Any]]) -> set[str]:
    """doc_ids of the points of a plotly selection event (each point's ``customdata``: a doc_id or a list starting with
    one)."""
    ids: set[str] = set()
    for point in points or []:
        data = point.get("customdata") if isinstance(point, Mapping) else None
        if isinstance(data, (list, tuple)):
            data = data[0] if data else None
        if data is not None:
            ids.add(str(data))
    return ids


def topic_options(topics: pd.DataFrame) -> dict[int, str]:
    """{topic id: option text} for a topic picker, largest topics first, outliers last as "Outliers (N)".

    Topic texts read "id · label (size)", with the labels every view shows (display.topic_labels). ``topics`` needs
    columns topic, label, size.
    """
    options: dict[int, str] = {}
    labels = topic_labels(topics)
    ordered = topics.sort_values(["size", "topic"], ascending=[False, True])
    for topic, size in zip(ordered["topic"], ordered["size"]):
        if int(topic) != OUTLIER_TOPIC:
            options[int(topic)] = f"{int(topic)} · {shorten(labels[int(topic)], 60)} ({int(size)})"
    for topic, size in zip(ordered["topic"], ordered["size"]):
        if int(topic) == OUTLIER_TOPIC:
            options[OUTLIER_TOPIC] = f"{OUTLIER_LABEL} ({int(size)})"
    return options


def decision_options(documents: pd.DataFrame) -> list[str]:
    """Decision values present in ``documents`` (empty without a decision column), in review order
    (Oral, Spotlight, Poster, Reject, Withdrawn, Desk Rejected), any other values after them alphabetically."""
    if "decision" not in documents.columns:
        return []
    present = {value for value in documents["decision"] if isinstance(value, str) and value.strip()}
    return [value for value in DECISION_ORDER if value in present] + sorted(present - set(DECISION_ORDER))


# The papers table's columns, in this order; each mode keeps those it has (see papers_table).
PAPER_COLUMNS = (
    "doc_id",
    "title",
    "abstract",
    "collection",
    "venue",
    "year",
    "theme",
    "theme_label",
    "topic",
    "topic_label",
    "subtopic",
    "subtopic_label",
    "keywords",
    "probability",
    "decision",
    "authors",
    "primary_area",
    COPY_COLUMN,
    "truncated",
    "link",
)
# Metadata columns the download keeps whenever the documents have them, and the page only when a row has a value.
METADATA_COLUMNS = ("keywords", "decision", "authors", "primary_area")
# The collection columns of an atlas of several collections (or a file with venues and years): in every download of
# an atlas that has them, so a row's venue and year can be told (issue 40, item 6: the six-collection CSV had none).
COLLECTION_COLUMNS = ("collection", "venue", "year")
NO_SUBTOPIC = -1  # a paper without a subtopic (pipeline.cache: an outlier, or its topic is too small to have any)


def _text_cells(documents: pd.DataFrame, column: str) -> list[str | None]:
    return [value if isinstance(value, str) else None for value in documents[column]]


def _metadata_cells(documents: pd.DataFrame, full: bool) -> dict[str, list[Any]]:
    """{column: cells} of the METADATA_COLUMNS the table keeps (see :func:`papers_table`); keywords "; "-joined."""
    cells: dict[str, list[Any]] = {}
    for column in METADATA_COLUMNS:
        if column not in documents.columns or (column == "authors" and not full):
            continue
        if column == "keywords":
            values: list[Any] = [LIST_SEPARATOR.join(as_text_list(value)) for value in documents[column]]
        else:
            values = _text_cells(documents, column)
        if full or any(isinstance(value, str) and value.strip() for value in values):
            cells[column] = values
    return cells


def _collection_cells(documents: pd.DataFrame) -> dict[str, list[Any]]:
    """{column: cells} of the COLLECTION_COLUMNS the documents have: names as text, years as int (None when
    missing: a nullable Int64 NA would be written "<NA>")."""
    cells: dict[str, list[Any]] = {}
    for column in COLLECTION_COLUMNS:
        if column not in documents.columns:
            continue
        if column == "year":
            cells[column] = [None if pd.isna(value) else int(value) for value in documents[column]]
        else:
            cells[column] = [None if pd.isna(value) else str(value) for value in documents[column]]
    return cells


def _theme_cells(documents: pd.DataFrame, topics: pd.DataFrame) -> dict[str, list[Any]]:
    """{"theme": ids, "theme_label": names} per document by its topic's theme (the topics' theme columns; the
    dashboard gives every atlas them, pipeline.topics.themes for older caches); {} when ``topics`` has none. A topic
    the topics table lacks is in the outlier theme (-1)."""
    if "theme" not in topics.columns or "theme_label" not in topics.columns:
        return {}
    theme_of = dict(zip(topics["topic"].astype(int), topics["theme"].astype(int)))
    name_of = dict(zip(topics["theme"].astype(int), topics["theme_label"]))
    themes = [theme_of.get(int(topic), -1) for topic in documents["topic"]]
    return {
        "theme": themes,
        "theme_label": [name if isinstance(name := name_of.get(theme), str) else None for theme in themes],
    }


def _subtopic_cells(documents: pd.DataFrame, subtopics: pd.DataFrame | None) -> dict[str, list[Any]]:
    """{"subtopic": ids, "subtopic_label": names} per document (its ``subtopic`` column; -1 and no name for a paper
    without one) when the atlas has subtopics (``subtopics``: TopicCache.subtopics with rows), else {}."""
    if subtopics is None or subtopics.empty:
        return {}
    name_of = dict(zip(subtopics["subtopic"].astype(int), subtopics["label"]))
    column = documents["subtopic"] if "subtopic" in documents.columns else pd.Series(NO_SUBTOPIC, index=documents.index)
    ids = [NO_SUBTOPIC if pd.isna(value) else int(value) for value in column]
    return {
        "subtopic": ids,
        "subtopic_label": [name if isinstance(name := name_of.get(subtopic), str) else None for subtopic in ids],
    }


def relevance_order(documents: pd.DataFrame, query: str = "") -> pd.DataFrame:
    """``documents`` by relevance within their filter: with a text search, the papers whose title matches it
    (:func:`query_pattern`, word forms) before those matched only in the abstract or keywords; within each, the
    paper's topic-membership probability (BERTopic's), highest first; ties in ``documents`` order. Without a
    ``probability`` column only the title rule applies."""
    keys = []
    if query.strip() and "title" in documents.columns:
        keys.append(~matches_query(documents["title"].fillna("").astype(str), query))  # False (a title match) first
    if "probability" in documents.columns:
        keys.append(-documents["probability"].astype(float).fillna(0.0))
    if not keys:
        return documents
    order = pd.DataFrame({f"key{index}": key.to_numpy() for index, key in enumerate(keys)})
    return documents.iloc[order.sort_values(list(order.columns), kind="stable").index.to_numpy()]


def papers_table(
    documents: pd.DataFrame,
    topics: pd.DataFrame,
    links: bool | None = None,
    full: bool = False,
    subtopics: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The papers as a flat table, one row per document in ``documents`` order, index 0..n-1: the one builder of
    the page's tables (papers, search hits) and, with ``full``, of the CSV download.

    Columns, in PAPER_COLUMNS order, bracketed ones only when the documents have them:

    - page (``full`` False): doc_id, title (the title, else the abstract's first 100 characters; LaTeX made
      readable by pipeline.ingest.readable.readable_title), topic (int), topic_label (display.topic_labels),
      [keywords], [decision], [primary_area], [copy_of], [truncated], [link];
    - download (``full`` True): doc_id, title (as written, None when missing), abstract, [collection], [venue],
      [year], [theme, theme_label], topic, topic_label, [subtopic, subtopic_label], [keywords], probability (rounded
      to 4 decimals), [decision], [authors], [primary_area], [copy_of], [truncated], [link]: every column a user
      filters or colours the map by, so each row's collection, venue and year, theme and subtopic can be told.

    collection, venue and year come with an atlas whose documents have them (several collections, or a file with
    venues and years); theme and theme_label (the topic's theme: ``topics``' theme columns) when ``topics`` has
    them; subtopic and subtopic_label (the documents' ``subtopic`` column, -1 and no name for a paper without one)
    when ``subtopics`` (TopicCache.subtopics) has rows.

    keywords are "; "-joined. The metadata columns (keywords, decision, authors, primary_area) are in a download
    whenever ``documents`` has them, so every download of a corpus has the same columns; on the page only when some
    row has a value. copy_of (the id of the paper a copy repeats, see :func:`with_copies`), truncated (True for a
    paper only partly embedded) and link (OpenReview forum URL or None; ``links``: see :func:`links_enabled`,
    None = decided from these ids) appear in both when some row has one. ``documents`` needs doc_id, title,
    abstract, topic (and probability for a download); ``topics`` needs topic and label.
    """
    labels = topic_labels(topics)
    cells: dict[str, list[Any]] = {
        "doc_id": documents["doc_id"].astype(str).tolist(),
        "title": _text_cells(documents, "title")
        if full
        else [
            document_heading(title, abstract, TABLE_TITLE_CHARS)
            for title, abstract in zip(documents["title"], documents["abstract"])
        ],
        "topic": documents["topic"].astype(int).tolist(),
        "topic_label": [labels.get(int(topic), str(topic)) for topic in documents["topic"]],
        **_metadata_cells(documents, full),
    }
    if full:
        cells["abstract"] = _text_cells(documents, "abstract")
        cells["probability"] = documents["probability"].astype(float).round(4).tolist()
        cells.update(_collection_cells(documents))
        cells.update(_theme_cells(documents, topics))
        cells.update(_subtopic_cells(documents, subtopics))
    if COPY_COLUMN in documents.columns and documents[COPY_COLUMN].notna().any():
        cells[COPY_COLUMN] = _text_cells(documents, COPY_COLUMN)
    if "truncated" in documents.columns and documents["truncated"].fillna(False).astype(bool).any():
        cells["truncated"] = documents["truncated"].fillna(False).astype(bool).tolist()
    enabled = _links(documents, links)
    urls = [openreview_link(doc_id, enabled) for doc_id in cells["doc_id"]]
    if any(urls):
        cells["link"] = urls
    return pd.DataFrame({column: cells[column] for column in PAPER_COLUMNS if column in cells})


def paper_details(
    documents: pd.DataFrame,
    topics: pd.DataFrame,
    doc_id: str,
    links: bool | None = None,
    window: int | None = None,
    fit_check: Mapping[str, Any] | None = None,
) -> dict[str, Any] | None:
    """One paper's fields for the detail view, all plain (unescaped) text, or None for an unknown doc_id.

    Keys: doc_id, title (or None), abstract (or None; markup rendered for reading:
    pipeline.ingest.readable.readable_text),
    abstract_as_written, topic, topic_label, decision (or None), keywords (list), authors (or None), link (or None),
    copy_of (the id of the paper this one repeats, or None), copies (ids of this paper's copies),
    embedding_note (None, or a sentence saying the paper was longer than the encoder's window of ``window``
    word pieces, e.g. the manifest's embedding_cache.max_seq_length, and only its beginning was embedded),
    outlier_note (None, or why the paper is an outlier: :func:`outlier_note`, with ``fit_check`` the manifest's
    fit_check).
    """
    rows = documents[documents["doc_id"].astype(str) == str(doc_id)]
    if rows.empty:
        return None
    row = rows.iloc[0]

    def text(column: str) -> str | None:
        value = row.get(column)
        return value if isinstance(value, str) and value.strip() else None

    abstract = text("abstract")
    return {
        "doc_id": str(row["doc_id"]),
        "title": readable_title(title) if (title := text("title")) else None,
        "abstract": readable_text(abstract) if abstract else None,
        "abstract_as_written": abstract,
        "topic": int(row["topic"]),
        "topic_label": topic_labels(topics).get(int(row["topic"]), f"Topic {int(row['topic'])}"),
        "decision": text("decision"),
        "keywords": as_text_list(row.get("keywords")),
        "authors": text("authors"),
        "link": openreview_link(row["doc_id"], _links(documents, links)),
        "copy_of": text(COPY_COLUMN),
        "copies": as_text_list(row.get("duplicate_ids")),
        "embedding_note": embedding_note(row.get("word_pieces"), row.get("truncated"), window),
        "outlier_note": outlier_note(row.get(OUTLIER_REASON_COLUMN), row.get(FIT_SIMILARITY_COLUMN), fit_check),
    }


def outlier_note(reason: Any, similarity: Any, fit_check: Mapping[str, Any] | None = None) -> str | None:
    """Why a paper is in the outlier topic, in plain words, from the cache's outlier_reason and fit_similarity
    columns (pipeline.cache) and the manifest's fit_check (its threshold and share_of_median); None for a paper in a
    topic, an unknown reason or a cache without the column."""
    if reason == FITS_NO_TOPIC:
        found = f" is {float(similarity):.2f}" if isinstance(similarity, (float, np.floating)) else ""
        threshold, share = (fit_check or {}).get("threshold"), (fit_check or {}).get("share_of_median")
        needed = "far below what the topics' papers typically reach"
        if isinstance(threshold, (int, float)) and isinstance(share, (int, float)):
            needed = (
                f"below the {threshold:.2f} the build asks for ({share:.0%} of what the topics' papers typically reach)"
            )
        return (
            f"Fits no topic: its similarity to the nearest topic{found}, {needed}, so the build took it out of the "
            "topic its cluster gave it."
        )
    return {
        NO_DENSE_CLUSTER: "An outlier: it is in no dense cluster, and no topic is near enough for it to join one.",
        CLUSTER_DISSOLVED: "An outlier: its cluster was not kept as a topic, since its papers share almost no words.",
        ADDED_AMONG_OUTLIERS: "Added later among outliers: its nearest papers are in no topic.",
    }.get(reason if isinstance(reason, str) else "")


def embedding_note(word_pieces: Any, truncated: Any, window: int | None = None) -> str | None:
    """ "Longer than the embedding model's window: only the first 256 of its 412 word pieces were embedded ..." for a
    truncated paper (cache columns word_pieces, truncated), else None."""
    if not (isinstance(truncated, (bool, np.bool_)) and truncated):
        return None
    length = int(word_pieces) if isinstance(word_pieces, (int, np.integer)) and word_pieces > 0 else None
    part = (
        f"only the first {window} of its {length:,} word pieces were" if window and length else "only its beginning was"
    )
    return (
        f"Longer than the embedding model's window: {part} embedded, so its place on the map "
        "and its similar papers rest on that part (its topic's terms use the whole text)."
    )


def known_papers(documents: pd.DataFrame, doc_ids: Iterable[str]) -> list[tuple[str, pd.Series]]:
    """(doc_id, row) for each of ``doc_ids`` that ``documents`` holds, in the given order (unknown ids skipped;
    of repeated ids in ``documents`` the first row is used)."""
    wanted = list(doc_ids)
    ids = documents["doc_id"].astype(str)
    asked = ids.isin(set(wanted)).to_numpy()
    by_id = documents[asked].set_index(ids[asked])  # the few rows asked for, not an index over every paper (15 ms)
    by_id = by_id[~by_id.index.duplicated()]
    return [(doc_id, by_id.loc[doc_id]) for doc_id in wanted if doc_id in by_id.index]


def similar_papers(
    documents: pd.DataFrame, topics: pd.DataFrame, doc_id: str, links: bool | None = None
) -> pd.DataFrame:
    """The nearest papers of ``doc_id`` from its neighbor_ids / neighbor_scores cells, most similar first.

    Returns columns title, topic_label, similarity, link (link only when some neighbour has an OpenReview id);
    empty when the corpus has no neighbour columns or the paper is unknown.
    """
    columns = ["title", "topic_label", "similarity"]
    if "neighbor_ids" not in documents.columns:
        return pd.DataFrame(columns=columns)
    rows = documents[documents["doc_id"].astype(str) == str(doc_id)]
    if rows.empty:
        return pd.DataFrame(columns=columns)
    neighbour_ids = as_text_list(rows.iloc[0]["neighbor_ids"])
    scores_cell = rows.iloc[0].get("neighbor_scores")
    scores = (
        [float(score) for score in scores_cell]
        if scores_cell is not None and not isinstance(scores_cell, float)
        else []
    )
    scores += [float("nan")] * (len(neighbour_ids) - len(scores))
    labels = topic_labels(topics)
    enabled = _links(documents, links)
    score_of = dict(zip(neighbour_ids, scores))
    records = []
    for neighbour, other in known_papers(documents, neighbour_ids):
        score = score_of[neighbour]
        records.append(
            {
                "title": document_heading(other["title"], other["abstract"], TABLE_TITLE_CHARS),
                "topic_label": labels.get(int(other["topic"]), str(other["topic"])),
                "similarity": round(score, 3),
                "link": openreview_link(neighbour, enabled),
            }
        )
    table = pd.DataFrame(records, columns=columns + ["link"])
    return table if table["link"].notna().any() else table[columns]


def representative_papers(
    documents: pd.DataFrame, topics: pd.DataFrame, topic_ids: Iterable[int], links: bool | None = None
) -> pd.DataFrame:
    """Representative papers of the chosen topics, from each topic's representative_doc_ids, in topic order.

    Returns columns topic, topic_label, title (title, else abstract start), link (only when some id is an OpenReview
    id).
    """
    labels = topic_labels(topics)
    enabled = _links(documents, links)
    chosen = [int(topic) for topic in topic_ids]
    records = []
    for topic in chosen:
        rows = topics[topics["topic"] == topic]
        if rows.empty:
            continue
        for doc_id, other in known_papers(documents, as_text_list(rows.iloc[0]["representative_doc_ids"])):
            records.append(
                {
                    "topic": topic,
                    "topic_label": labels.get(topic, str(topic)),
                    "title": document_heading(other["title"], other["abstract"], TABLE_TITLE_CHARS),
                    "link": openreview_link(doc_id, enabled),
                }
            )
    table = pd.DataFrame(records, columns=["topic", "topic_label", "title", "link"])
    return table if table["link"].notna().any() else table.drop(columns="link")


def corpus_name(manifest: Mapping[str, Any]) -> str:
    """The corpus's name for people: the manifest's ``corpus_name`` (``topic-atlas build --name``), else, for caches
    built before it, one derived from ``input_path`` (pipeline.config.corpus_display_name:
    "…/iclr2025_abstracts.parquet" -> "ICLR 2025")."""
    name = str(manifest.get("corpus_name") or "").strip()
    return name or corpus_display_name(str(manifest.get("input_path") or ""))


def no_topics_found(manifest: Mapping[str, Any]) -> bool:
    """True when the build found no topic: n_topics is 0 or a note starts with "No topics found"."""
    notes = list(manifest.get("notes") or [])
    return int(manifest.get("n_topics") or 0) == 0 or any(str(note).startswith("No topics found") for note in notes)


def no_topics_message(manifest: Mapping[str, Any]) -> str:
    """What the page says when a build found no topic: the build's own note (it knows why: every paper an outlier
    for HDBSCAN, or clusters of papers on unrelated subjects, pipeline.topics.membership), else a generic sentence."""
    for note in manifest.get("notes") or []:
        if str(note).startswith("No topics found"):
            return str(note)
    return (
        "No topics were found: every paper is in the outlier group. "
        "Rebuild with a smaller --min-cluster-size or a larger corpus."
    )


def build_messages(manifest: Mapping[str, Any]) -> list[str]:
    """The manifest's notes, warnings and dropped-record counts as plain sentences, for the build-notes expander."""
    messages = [str(note) for note in manifest.get("notes") or []]
    messages += [str(warning) for warning in manifest.get("warnings") or [] if str(warning) not in messages]
    dropped = manifest.get("dropped") or {}
    if dropped:
        messages.append(
            "Records dropped while cleaning: " + ", ".join(f"{reason}: {count}" for reason, count in dropped.items())
        )
    return messages


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$&:^=])")


def markdown_escape(text: Any) -> str:
    """``text`` on one line with every Markdown-significant character backslash-escaped, for Streamlit
    widgets whose labels or bodies are Markdown (st.error, st.caption ...): shows literally, never as markup, math
    or a link (a bare address is broken by display.unlinked's invisible word joiners)."""
    return unlinked(_MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(str(text).split())))
