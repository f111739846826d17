"""Bytes for the dashboard's downloads: the filtered papers as CSV (the table of
dashboard.tables.paper_table.papers_table), figures as HTML, PNG, SVG and PDF, with timeouts.

PNG, SVG and PDF of plotly charts go through kaleido 1.x, which drives a Chromium-family browser. kaleido takes the
browser from the ``BROWSER_PATH`` environment variable when it is set, else searches PATH for Chrome/Chromium
names; :func:`ensure_browser_path` sets ``BROWSER_PATH`` to Debian's ``/usr/bin/chromium`` or the first browser on
PATH (dashboard.export.kaleido_images.find_browser). Publication figures (:mod:`dashboard.figures.publication`) are
drawn by matplotlib (:mod:`dashboard.export.publication_images`), which needs no browser.

The page never renders an image in its own process. :func:`run_render_job` runs each render in a child process
forked from a render server that imported the renderers once (:mod:`dashboard.export.render_process`), waits at most the
export timeout (``ATLAS_EXPORT_TIMEOUT_S``, default 30 s), and on expiry kills the child and every process it
started (a hung Chromium included). A missing renderer, a hang and a failure each raise an :class:`ExportError` whose
message is meant for the page; the script thread is back within the timeout, and no server thread is ever left waiting.
"""

from __future__ import annotations

import csv
import html
import io
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio

from dashboard.display import as_text_list
from dashboard.export.errors import ExportError, ExportFailed, ExportTimedOut, ImageExportUnavailable  # noqa: F401 - raised to the page
from dashboard.export.kaleido_images import CHROMIUM_MISSING, IMAGE_FORMATS, ensure_browser_path
from dashboard.tables.paper_table import LIST_SEPARATOR
from pipeline.runtime.settings import settings

if TYPE_CHECKING:
    from dashboard.figures.publication import MapView

MIME_TYPES = {
    "csv": "text/csv",
    "html": "text/html",
    "png": "image/png",
    "svg": "image/svg+xml",
    "pdf": "application/pdf",
}
EXPORT_TIMEOUT_ENV = "ATLAS_EXPORT_TIMEOUT_S"
# A whole-conference publication figure takes 3-8 s on two busy cores (matplotlib; plotly and kaleido 15-35 s,
# bench/publication.py); the first job of a server also waits for the fork server's imports. Hence the default
# timeout of 30 s (pipeline.runtime.settings.DEFAULT_EXPORT_TIMEOUT_S): a message within 30 s.
# OWASP "CSV Injection": cells starting with these characters are read as formulas by spreadsheet programs.
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def neutralise_formula(value: str) -> str:
    """``value`` with a leading single quote when it starts with = + - @ tab or carriage return (OWASP CSV
    injection)."""
    return "'" + value if value.startswith(FORMULA_PREFIXES) else value


def _csv_text(value: str) -> str:
    """A text cell for the CSV writer: neutralised (:func:`neutralise_formula`), then every line break ("\\r\\n" or a
    lone "\\r") written as "\\n".

    The writer quotes a field only when it holds a delimiter, a quote or a character of its line terminator ("\\n"):
    a lone "\\r" was written unquoted, and a reader (Python's csv, pandas, a spreadsheet) ends the row there, so the
    text after it, e.g. "=HYPERLINK(...)", became the first, unneutralised cell of a new row (issue 40, item 13).
    As "\\n" the break is quoted and stays inside its cell; the lines of a cell are left as written (an abstract's
    "- item" lines are no formula: only a cell's start is)."""
    return neutralise_formula(value).replace("\r\n", "\n").replace("\r", "\n")


def _csv_cell(value: Any) -> Any:
    """One cell for the CSV writer: text neutralised, lists joined, missing values empty, numbers as they are."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, str):
        return _csv_text(value)
    if isinstance(value, (list, tuple, np.ndarray)):
        return _csv_text(LIST_SEPARATOR.join(as_text_list(value)))
    return value


def csv_bytes(table: pd.DataFrame) -> bytes:
    """``table`` as UTF-8 CSV bytes (header row, no index, RFC 4180 quoting, "\\n" line ends).

    Text cells and headers that a spreadsheet would run as a formula get a leading single quote, and their line
    breaks are written as "\\n" inside quotes (:func:`_csv_text`); list cells are joined with "; "; None/NaN become
    empty cells; numbers are written as numbers.
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([_csv_text(str(column)) for column in table.columns])
    for row in table.itertuples(index=False, name=None):
        writer.writerow([_csv_cell(value) for value in row])
    return buffer.getvalue().encode("utf-8")


def _resolved_template(figure: go.Figure) -> dict[str, Any]:
    """``figure`` as a plotly dict whose layout template is a dict: a figure made with ``_validate=False`` (the
    map, for speed) keeps a template *name* ("plotly_white"), on which ``plotly.io.to_html`` raises
    ``AttributeError: 'str' object has no attribute 'get'``. The name is looked up in ``plotly.io.templates``."""
    figure_dict = figure.to_dict()
    layout = figure_dict.setdefault("layout", {})
    template = layout.get("template")
    if isinstance(template, str):
        layout["template"] = pio.templates[template].to_plotly_json()
    return figure_dict


def figure_html_bytes(figure: go.Figure, title: str = "Topic Atlas") -> bytes:
    """A standalone HTML page of ``figure`` with plotly.js inlined (works offline), as UTF-8 bytes (about 5 MB).
    Any plotly figure, validated or not (see :func:`_resolved_template`)."""
    page = pio.to_html(
        _resolved_template(figure), include_plotlyjs=True, full_html=True, config={"displaylogo": False}, validate=False
    )
    return page.replace("<head>", f"<head><title>{html.escape(title)}</title>", 1).encode("utf-8")


def download_name(stem: str, extension: str) -> str:
    """A safe download file name: ``stem`` reduced to letters, digits, "-" and "_", plus ".extension"."""
    safe = (
        "".join(character if character.isalnum() or character in "-_" else "-" for character in stem).strip("-")
        or "topic-atlas"
    )
    return f"{safe}.{extension}"


# --- rendering in a child process, with a timeout ---------------------------------------------------------------


def export_timeout_s() -> float:
    """The export timeout in seconds: $ATLAS_EXPORT_TIMEOUT_S when it is a positive number, else 30."""
    return settings().export_timeout_s  # pipeline.runtime.settings


def warm_up() -> None:
    """Start the render server in the background (after the page's first paint), so the first export does not
    wait for its imports (see :func:`dashboard.export.render_process.warm_up`)."""
    from dashboard.export import render_process

    render_process.warm_up()


def run_render_job(job: dict[str, Any], write_inputs, what: str, timeout_s: float | None = None) -> dict[str, bytes]:
    """Run one render job in a child process with at most ``timeout_s`` seconds (default :func:`export_timeout_s`)
    and return {format: bytes}; see :func:`dashboard.export.render_process.run_job`. Raises ExportError subclasses."""
    from dashboard.export import render_process

    return render_process.run_job(job, write_inputs, what, export_timeout_s() if timeout_s is None else timeout_s)


def figure_images(
    figure: go.Figure,
    formats: Iterable[str],
    what: str,
    width: int = 1400,
    height: int | None = None,
    timeout_s: float | None = None,
) -> dict[str, bytes]:
    """A plotly ``figure`` as {format: bytes} for each of ``formats`` (png, svg, pdf), drawn by kaleido in a child
    process with a timeout (:func:`run_render_job`). Raises ValueError for an unknown format, and ExportError."""
    formats = [str(image_format).lower() for image_format in formats]
    unknown = [image_format for image_format in formats if image_format not in IMAGE_FORMATS]
    if unknown:
        raise ValueError(f"image formats must be among {IMAGE_FORMATS}, not {unknown}")
    browser = ensure_browser_path()
    if browser is None:
        raise ImageExportUnavailable(CHROMIUM_MISSING)
    job = {
        "kind": "figure",
        "formats": formats,
        "browser_path": browser,
        "width": int(width),
        "height": int(height or figure.layout.height or 800),
    }
    text = figure.to_json()
    return run_render_job(
        job, lambda folder: (folder / "figure.json").write_text(text, encoding="utf-8"), what, timeout_s
    )


def publication_images(view: MapView, formats: Iterable[str], timeout_s: float | None = None) -> dict[str, bytes]:
    """The publication figure of ``view`` as {format: bytes} (png, svg, pdf), drawn by matplotlib
    (:mod:`dashboard.export.publication_images`) in a child process with a timeout. Raises ValueError for an invalid
    view or format, and ExportError."""
    from dashboard.figures import publication

    formats = [publication.checked_format(image_format) for image_format in formats]
    publication.check_view(view)
    job = {"kind": "publication", "formats": formats, "browser_path": None, "width": 0, "height": 0}
    return run_render_job(job, lambda folder: publication.save_view(view, folder), "publication figure", timeout_s)
