"""Bytes for the dashboard's downloads: the filtered papers as CSV, figures as HTML, PNG and SVG.

PNG and SVG go through kaleido 1.x, which drives a Chromium-family browser. kaleido (through choreographer's
``get_browser_path``) takes the browser from the ``BROWSER_PATH`` environment variable when it is set, else
searches PATH for Chrome/Chromium names; :func:`ensure_browser_path` points it at Debian's ``/usr/bin/chromium``.
"""

from __future__ import annotations

import csv
import html
import io
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dashboard.charts import topic_labels
from dashboard.filters import COPY_COLUMN, as_text_list, corpus_uses_openreview_ids, openreview_link

DEBIAN_CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_MISSING = "PNG/SVG export needs Chromium: apt-get install chromium"
IMAGE_FORMATS = ("png", "svg")
# OWASP "CSV Injection": cells starting with these characters are read as formulas by spreadsheet programs.
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
LIST_SEPARATOR = "; "


class ImageExportUnavailable(RuntimeError):
    """PNG/SVG export cannot run: no Chromium-family browser for kaleido. The message says what to install."""


def neutralise_formula(value: str) -> str:
    """``value`` with a leading single quote when it starts with = + - @ tab or carriage return (OWASP CSV injection)."""
    return "'" + value if value.startswith(FORMULA_PREFIXES) else value


def _csv_cell(value: Any) -> Any:
    """One cell for the CSV writer: text neutralised, lists joined, missing values empty, numbers as they are."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, str):
        return neutralise_formula(value)
    if isinstance(value, (list, tuple, np.ndarray)):
        return neutralise_formula(LIST_SEPARATOR.join(as_text_list(value)))
    return value


def csv_bytes(table: pd.DataFrame) -> bytes:
    """``table`` as UTF-8 CSV bytes (header row, no index, RFC 4180 quoting, "\\n" line ends).

    Text cells and headers that a spreadsheet would run as a formula get a leading single quote; list cells
    are joined with "; "; None/NaN become empty cells; numbers are written as numbers.
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([neutralise_formula(str(column)) for column in table.columns])
    for row in table.itertuples(index=False, name=None):
        writer.writerow([_csv_cell(value) for value in row])
    return buffer.getvalue().encode("utf-8")


def export_table(documents: pd.DataFrame, topics: pd.DataFrame, links: bool | None = None) -> pd.DataFrame:
    """The filtered papers as a flat table for CSV export, one row per document, columns

    doc_id, title, abstract, topic, topic_label, probability, then when present decision, keywords ("; "-joined),
    authors, primary_area, copy_of (for copies listed by dashboard.filters.with_copies), truncated, and link
    (OpenReview URL, only for a corpus of OpenReview ids: ``links``, None = decided from these ids).
    """
    labels = topic_labels(topics)
    table = pd.DataFrame(
        {
            "doc_id": documents["doc_id"].astype(str).tolist(),
            "title": [value if isinstance(value, str) else None for value in documents["title"]],
            "abstract": [value if isinstance(value, str) else None for value in documents["abstract"]],
            "topic": documents["topic"].astype(int).tolist(),
            "topic_label": [labels.get(int(topic), str(topic)) for topic in documents["topic"]],
            "probability": documents["probability"].astype(float).round(4).tolist(),
        }
    )
    for column in ("decision", "authors", "primary_area"):
        if column in documents.columns:
            table[column] = [value if isinstance(value, str) else None for value in documents[column]]
    if "keywords" in documents.columns:
        table.insert(table.columns.get_loc("topic_label") + 1, "keywords", [LIST_SEPARATOR.join(as_text_list(value)) for value in documents["keywords"]])
    if COPY_COLUMN in documents.columns and documents[COPY_COLUMN].notna().any():
        table[COPY_COLUMN] = [value if isinstance(value, str) else None for value in documents[COPY_COLUMN]]
    if "truncated" in documents.columns and documents["truncated"].fillna(False).astype(bool).any():
        table["truncated"] = documents["truncated"].fillna(False).astype(bool).tolist()
    enabled = corpus_uses_openreview_ids(table["doc_id"]) if links is None else links
    urls = [openreview_link(doc_id, enabled) for doc_id in table["doc_id"]]
    if any(urls):
        table["link"] = urls
    return table


def figure_html_bytes(figure: go.Figure, title: str = "Topic Atlas") -> bytes:
    """A standalone HTML page of ``figure`` with plotly.js inlined (works offline), as UTF-8 bytes (about 5 MB)."""
    page = figure.to_html(include_plotlyjs=True, full_html=True, config={"displaylogo": False})
    return page.replace("<head>", f"<head><title>{html.escape(title)}</title>", 1).encode("utf-8")


def ensure_browser_path() -> str | None:
    """Point kaleido at a browser: set ``BROWSER_PATH`` to /usr/bin/chromium when it is unset and that file exists.

    Returns the browser path kaleido will use (an existing file), or None when there is none.
    """
    configured = os.environ.get("BROWSER_PATH")
    if not configured and DEBIAN_CHROMIUM.is_file():
        os.environ["BROWSER_PATH"] = configured = str(DEBIAN_CHROMIUM)
    if configured:
        return configured if Path(configured).is_file() else None
    try:
        from choreographer.browsers.chromium import Chromium

        return Chromium.find_browser(skip_local=False)
    except Exception:  # choreographer missing or its search failing both mean: no browser we can name
        return None


def image_export_available() -> bool:
    """True when a Chromium-family browser is there for kaleido (see :func:`ensure_browser_path`)."""
    return ensure_browser_path() is not None


def figure_image_bytes(figure: go.Figure, image_format: str, width: int = 1400, height: int | None = None, scale: float = 1.0) -> bytes:
    """``figure`` rendered by kaleido as PNG or SVG bytes, ``width`` x ``height`` CSS pixels (height: the figure's own, else 800).

    Raises ValueError for another format, and ImageExportUnavailable (message: "PNG/SVG export needs Chromium:
    apt-get install chromium") when no browser is found or kaleido cannot start it.
    """
    image_format = image_format.lower()
    if image_format not in IMAGE_FORMATS:
        raise ValueError(f"image format must be one of {IMAGE_FORMATS}, not {image_format!r}")
    if ensure_browser_path() is None:
        raise ImageExportUnavailable(CHROMIUM_MISSING)
    height = height or figure.layout.height or 800
    try:
        return figure.to_image(format=image_format, width=width, height=height, scale=scale)
    except Exception as error:
        if type(error).__name__ == "ChromeNotFoundError" or "Chrome" in str(error) and "install" in str(error):
            raise ImageExportUnavailable(f"{CHROMIUM_MISSING} ({error})") from error
        raise


def download_name(stem: str, extension: str) -> str:
    """A safe download file name: ``stem`` reduced to letters, digits, "-" and "_", plus ".extension"."""
    safe = "".join(character if character.isalnum() or character in "-_" else "-" for character in stem).strip("-") or "topic-atlas"
    return f"{safe}.{extension}"

