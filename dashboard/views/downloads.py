"""The downloads view: the listed papers as CSV, each chart as HTML, PNG and SVG.

(Helper "export" replaces this module with publication figures of the current view; this is today's Downloads
tab moved out of the page.)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import plotly.graph_objects as go
import streamlit as st

from dashboard import export
from dashboard.views.page import Page


def _image_maker(figure: go.Figure, image_format: str) -> Callable[[], bytes]:
    return lambda: export.figure_image_bytes(figure, image_format)


def download_row(name: str, figure: go.Figure, images: bool, key: str) -> None:
    """HTML, PNG and SVG download buttons for one figure; bytes are made only when a button is clicked."""
    columns = st.columns([2, 1, 1, 1], vertical_alignment="center")
    columns[0].markdown(f"**{name}**")
    columns[1].download_button("HTML", data=lambda: export.figure_html_bytes(figure, f"Topic Atlas: {name}"), file_name=export.download_name(f"topic-atlas-{key}", "html"), mime="text/html", on_click="ignore", key=f"{key}-html", width="stretch")
    for column, image_format, mime in ((columns[2], "png", "image/png"), (columns[3], "svg", "image/svg+xml")):
        column.download_button(
            image_format.upper(), data=_image_maker(figure, image_format), file_name=export.download_name(f"topic-atlas-{key}", image_format),
            mime=mime, on_click="ignore", key=f"{key}-{image_format}", disabled=not images, width="stretch",
        )


def render(page: Page) -> None:
    """CSV of the papers the table lists, then a row of buttons per figure in ``page.figures``."""
    atlas, shown = page.atlas, page.shown
    st.markdown(f"**Papers as CSV** — the {len(shown):,} papers the table lists (filters and map selection applied), with abstracts.")
    st.download_button(
        "Download CSV", data=lambda: export.csv_bytes(export.export_table(shown, atlas.topics)),
        file_name=export.download_name(f"topic-atlas-papers-{Path(str(atlas.path)).name}", "csv"), mime="text/csv", on_click="ignore", key="csv",
    )
    st.divider()
    st.markdown("**Charts** — HTML is interactive and works offline (plotly.js inlined); PNG and SVG are drawn by Chromium when you click.")
    images = export.image_export_available()
    if not images:
        st.info(export.CHROMIUM_MISSING)
    for key, (name, figure) in page.figures.items():
        download_row(name, figure, images, key)
