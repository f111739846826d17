"""Filtering the documents table and shaping the tables the dashboard shows. Pure pandas, no Streamlit.

Cells of list columns (keywords, neighbor_ids, ...) arrive from Parquet as numpy arrays, lists or None;
:func:`as_text_list` reads any of them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dashboard.charts import OUTLIER_LABEL, OUTLIER_TOPIC, document_heading, shorten, topic_labels

OPENREVIEW_FORUM_URL = "https://openreview.net/forum?id={}"
# OpenReview forum ids: 8 to 14 characters of letters, digits, "_" and "-" (e.g. "rUxr9Ll5FQ").
_OPENREVIEW_ID = re.compile(r"[A-Za-z0-9_-]{8,14}")
_GENERATED_ID = re.compile(r"row-\d+")
DECISION_ORDER = ("Oral", "Spotlight", "Poster", "Reject", "Withdrawn", "Desk Rejected")
TABLE_TITLE_CHARS = 100


def as_text_list(value: Any) -> list[str]:
    """A list cell as a list of non-empty strings: accepts list, tuple, numpy array, a single string or None/NaN."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, (list, tuple, np.ndarray, pd.Series)):
        return [str(item) for item in value if item is not None and str(item).strip()]
    if isinstance(value, float) and np.isnan(value):
        return []
    return [str(value)]


def is_openreview_id(doc_id: Any) -> bool:
    """True when ``doc_id`` looks like an OpenReview forum id: 8-14 of [A-Za-z0-9_-], not a generated ``row-N``,
    and not only lower-case letters or only digits (words and row numbers are not forum ids)."""
    if not isinstance(doc_id, str) or not _OPENREVIEW_ID.fullmatch(doc_id) or _GENERATED_ID.fullmatch(doc_id):
        return False
    return not (doc_id.isdigit() or (doc_id.isalpha() and doc_id.islower()))


def openreview_link(doc_id: Any) -> str | None:
    """``https://openreview.net/forum?id=<doc_id>`` when the id looks like an OpenReview forum id, else None."""
    return OPENREVIEW_FORUM_URL.format(doc_id) if is_openreview_id(doc_id) else None


def search_haystack(documents: pd.DataFrame) -> pd.Series:
    """Per document, its title, abstract and keywords joined by newlines (missing parts empty), index aligned."""
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
    return haystack


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
    - ``query``: case-insensitive plain substring (no regex; surrounding blanks ignored) of title, abstract or a keyword.
    - ``decisions``: decision values to keep; without a ``decision`` column no row matches a non-empty list.
    - ``selected_ids``: doc_ids to keep (a map selection).
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
        keep &= texts.str.contains(query, case=False, regex=False).fillna(False).astype(bool)
    decision_list = [str(decision) for decision in decisions] if decisions is not None else []
    if decision_list:
        keep &= documents["decision"].isin(decision_list) if "decision" in documents.columns else False
    id_set = {str(doc_id) for doc_id in selected_ids} if selected_ids is not None else set()
    if id_set:
        keep &= documents["doc_id"].astype(str).isin(id_set)
    return documents[keep].copy()


def selected_doc_ids(points: Iterable[Mapping[str, Any]]) -> set[str]:
    """doc_ids of the points of a plotly selection event (each point's ``customdata``: a doc_id or a list starting with one)."""
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

    Topic texts read "id · label (size)". ``topics`` needs columns topic, label, size.
    """
    options: dict[int, str] = {}
    ordered = topics.sort_values(["size", "topic"], ascending=[False, True])
    for topic, label, size in zip(ordered["topic"], ordered["label"], ordered["size"]):
        if int(topic) != OUTLIER_TOPIC:
            options[int(topic)] = f"{int(topic)} · {shorten(label, 60)} ({int(size)})"
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


def _label_column(documents: pd.DataFrame, labels: Mapping[int, str]) -> list[str]:
    return [labels.get(int(topic), str(topic)) for topic in documents["topic"]]


def drilldown_table(documents: pd.DataFrame, topics: pd.DataFrame) -> pd.DataFrame:
    """The papers table: one row per document, index 0..n-1, columns

    doc_id, title (the title, else the abstract's first 100 characters), topic (id), topic_label, then when the
    corpus has them: decision, keywords ("; "-joined), link (OpenReview forum URL or None).
    """
    labels = topic_labels(topics)
    table = pd.DataFrame(
        {
            "doc_id": documents["doc_id"].astype(str).tolist(),
            "title": [document_heading(title, abstract, TABLE_TITLE_CHARS) for title, abstract in zip(documents["title"], documents["abstract"])],
            "topic": documents["topic"].astype(int).tolist(),
            "topic_label": _label_column(documents, labels),
        }
    )
    if decision_options(documents):
        table["decision"] = [value if isinstance(value, str) else None for value in documents["decision"]]
    if "keywords" in documents.columns and documents["keywords"].map(lambda value: bool(as_text_list(value))).any():
        table["keywords"] = ["; ".join(as_text_list(value)) for value in documents["keywords"]]
    links = [openreview_link(doc_id) for doc_id in table["doc_id"]]
    if any(links):
        table["link"] = links
    return table


def paper_details(documents: pd.DataFrame, topics: pd.DataFrame, doc_id: str) -> dict[str, Any] | None:
    """One paper's fields for the detail view, all plain (unescaped) text, or None for an unknown doc_id.

    Keys: doc_id, title (or None), abstract (or None), topic, topic_label, decision (or None), keywords (list),
    authors (or None), link (or None).
    """
    rows = documents[documents["doc_id"].astype(str) == str(doc_id)]
    if rows.empty:
        return None
    row = rows.iloc[0]

    def text(column: str) -> str | None:
        value = row.get(column)
        return value if isinstance(value, str) and value.strip() else None

    return {
        "doc_id": str(row["doc_id"]),
        "title": text("title"),
        "abstract": text("abstract"),
        "topic": int(row["topic"]),
        "topic_label": topic_labels(topics).get(int(row["topic"]), str(row["topic"])),
        "decision": text("decision"),
        "keywords": as_text_list(row.get("keywords")),
        "authors": text("authors"),
        "link": openreview_link(row["doc_id"]),
    }


def known_papers(documents: pd.DataFrame, doc_ids: Iterable[str]) -> list[tuple[str, pd.Series]]:
    """(doc_id, row) for each of ``doc_ids`` that ``documents`` holds, in the given order (unknown ids skipped;
    of repeated ids in ``documents`` the first row is used)."""
    by_id = documents.set_index(documents["doc_id"].astype(str))
    by_id = by_id[~by_id.index.duplicated()]
    return [(doc_id, by_id.loc[doc_id]) for doc_id in doc_ids if doc_id in by_id.index]


def similar_papers(documents: pd.DataFrame, topics: pd.DataFrame, doc_id: str) -> pd.DataFrame:
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
    scores = [float(score) for score in scores_cell] if scores_cell is not None and not isinstance(scores_cell, float) else []
    scores += [float("nan")] * (len(neighbour_ids) - len(scores))
    labels = topic_labels(topics)
    score_of = dict(zip(neighbour_ids, scores))
    records = []
    for neighbour, other in known_papers(documents, neighbour_ids):
        score = score_of[neighbour]
        records.append(
            {
                "title": document_heading(other["title"], other["abstract"], TABLE_TITLE_CHARS),
                "topic_label": labels.get(int(other["topic"]), str(other["topic"])),
                "similarity": round(score, 3),
                "link": openreview_link(neighbour),
            }
        )
    table = pd.DataFrame(records, columns=columns + ["link"])
    return table if table["link"].notna().any() else table[columns]


def representative_papers(documents: pd.DataFrame, topics: pd.DataFrame, topic_ids: Iterable[int]) -> pd.DataFrame:
    """Representative papers of the chosen topics, from each topic's representative_doc_ids, in topic order.

    Returns columns topic, topic_label, title (title, else abstract start), link (only when some id is an OpenReview id).
    """
    labels = topic_labels(topics)
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
                    "link": openreview_link(doc_id),
                }
            )
    table = pd.DataFrame(records, columns=["topic", "topic_label", "title", "link"])
    return table if table["link"].notna().any() else table.drop(columns="link")


def corpus_name(manifest: Mapping[str, Any]) -> str:
    """A short name of the corpus: "<folder>/<file>" of the manifest's input_path (e.g. "iclr2025/papers.parquet")."""
    path = Path(str(manifest.get("input_path") or "corpus"))
    return f"{path.parent.name}/{path.name}" if path.parent.name else path.name


def no_topics_found(manifest: Mapping[str, Any]) -> bool:
    """True when the build found no topic: n_topics is 0 or a note starts with "No topics found"."""
    notes = list(manifest.get("notes") or [])
    return int(manifest.get("n_topics") or 0) == 0 or any(str(note).startswith("No topics found") for note in notes)


def build_messages(manifest: Mapping[str, Any]) -> list[str]:
    """The manifest's notes, warnings and dropped-record counts as plain sentences, for the build-notes expander."""
    messages = [str(note) for note in manifest.get("notes") or []]
    messages += [str(warning) for warning in manifest.get("warnings") or [] if str(warning) not in messages]
    dropped = manifest.get("dropped") or {}
    if dropped:
        messages.append("Records dropped while cleaning: " + ", ".join(f"{reason}: {count}" for reason, count in dropped.items()))
    return messages


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$&:^=])")


def markdown_escape(text: Any) -> str:
    """``text`` on one line with every Markdown-significant character backslash-escaped, for Streamlit
    widgets whose labels or bodies are Markdown (st.error, st.caption ...): shows literally, never as markup or math."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))
