"""The Downloads view: the listed papers as CSV, every chart as HTML / PNG / SVG, the publication figure of the map
as PNG / SVG / PDF.

CSV and HTML are made in the server process when their button is clicked (pure Python, they cannot hang). Every
image is drawn by :mod:`dashboard.export.download_bytes` in a child process with a timeout, during the rerun that the
"Draw" button starts, under a spinner: a missing, failing or hung renderer ends as a message on the page within the
timeout, and the images it drew are offered as ready downloads (and the figure previewed) until the view changes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dashboard.display import topic_labels
from dashboard.export import download_bytes, kaleido_images
from dashboard.figures import decision_charts, publication, topic_map
from dashboard.tables import paper_table
from dashboard.views.page import Page
from pipeline.cache import TopicCache

CHART_FORMATS = ("png", "svg")
RENDERER_NAMES = {
    "datamapplot": "DataMapPlot (labels placed around the clusters; no browser needed)",
    "plotly": "plotly (the page's own look; needs Chromium)",
}
STATE_KEY = "downloads-images"  # session state: {job key: {"id": view id, "images": {...}} | {"id": ..., "error": str}}


def view_id(view: publication.MapView) -> str:
    """A short fingerprint of everything a publication figure shows (points, legend, title, caption)."""
    digest = hashlib.sha256()
    digest.update(
        pd.util.hash_pandas_object(view.points[list(publication.POINT_COLUMNS)], index=False).to_numpy().tobytes()
    )
    digest.update(repr((view.legend, view.title, view.caption)).encode("utf-8"))
    return digest.hexdigest()[:16]


def filter_note(topics: pd.DataFrame, state: Mapping[str, Any] | None) -> str:
    """One line naming the filters of ``state`` ({"topics": ids, "query": str, "decisions": [...]}, any key may be
    missing), with topic ids written as their labels. A box/lasso selection is no filter of the map (it narrows
    the table only), so it is not named."""
    state = dict(state or {})
    labels = topic_labels(topics)
    names = [labels.get(int(topic), str(topic)) for topic in state.get("topics") or []]
    return publication.filter_note(names, str(state.get("query") or ""), state.get("decisions") or [])


def current_map_view(atlas: TopicCache, documents: pd.DataFrame, note: str) -> publication.MapView:
    """The MapView of the map the page shows today: ``documents`` (the papers on the map) coloured as the map's
    "Colour points by" choice says, labelled by topic, with a title and a caption (corpus, build date, filters)."""
    corpus = paper_table.corpus_name(atlas.manifest)
    colour_by = str(st.session_state.get("colour_by") or "Topic")
    caption = publication.caption_text(atlas.manifest, corpus, len(documents), note)
    title = f"Topic map of {corpus}" + (" by decision" if colour_by == "Decision" else "")
    return publication.map_view_from_documents(
        documents,
        atlas.topics,
        colour_by=colour_by,
        decision_colours=decision_charts.DECISION_COLOURS,
        title=title,
        caption=caption,
    )


def page_map_view(page: Page) -> publication.MapView:
    """The publication view of exactly the page's map: its papers (and the grey context around a drilled theme),
    colours, labels of the current level and highlights (dashboard.figures.topic_map), with a title and a caption naming
    the corpus, the build date and every filter."""
    atlas, view = page.atlas, page.view
    corpus = paper_table.corpus_name(atlas.manifest)
    labels = topic_labels(atlas.topics)
    theme = ""
    if view.theme is not None and "theme" in atlas.topics.columns:
        names = atlas.topics.loc[atlas.topics["theme"] == view.theme, "theme_label"]
        theme = str(names.iloc[0]) if len(names) else str(view.theme)
    note = publication.filter_note(
        [labels.get(int(topic), str(topic)) for topic in view.topics],
        view.query,
        view.decisions,
        areas=view.areas,
        theme=theme,
    )
    points = topic_map.publication_points(
        page.matching, atlas.topics, page.map_state, page.highlights, page.context, page.areas
    )
    legend = topic_map.legend_entries(page.matching, atlas.topics, page.map_state, page.areas)
    title = f"Topic map of {corpus}, coloured by {page.map_state.colour_by.lower()}"
    return publication.MapView(
        points, legend, title, publication.caption_text(atlas.manifest, corpus, len(page.matching), note)
    )


def render_page(page: Page) -> None:
    """The Downloads view of the page: the listed papers, the page's charts and the publication figure of its map."""
    render(page.atlas, page.shown, page.figures, map_view=page_map_view(page))


def _drawn(job_key: str, current_id: str) -> dict[str, Any] | None:
    """What the last draw of ``job_key`` left ({"images": ...} or {"error": ...}), if it drew the current view."""
    entry = st.session_state.get(STATE_KEY, {}).get(job_key)
    return entry if entry and entry.get("id") == current_id else None


def _draw(job_key: str, current_id: str, make_images, what: str) -> None:
    """Run ``make_images()`` under a spinner and remember its images or its error message for this view."""
    store = st.session_state.setdefault(STATE_KEY, {})
    with st.spinner(f"Drawing the {what} (at most {download_bytes.export_timeout_s():.0f} s)…"):
        try:
            store[job_key] = {"id": current_id, "images": make_images()}
        except download_bytes.ExportError as error:
            store[job_key] = {"id": current_id, "error": str(error)}
        except ValueError as error:  # an invalid view or format: a bug, but still a message, not a traceback
            store[job_key] = {"id": current_id, "error": f"The {what} cannot be drawn: {error}"}


def _image_buttons(columns: Sequence[Any], images: Mapping[str, bytes], stem: str, key: str) -> None:
    for column, (image_format, data) in zip(columns, images.items()):
        column.download_button(
            f"Save {image_format.upper()}",
            data=data,
            file_name=download_bytes.download_name(stem, image_format),
            mime=download_bytes.MIME_TYPES[image_format],
            on_click="ignore",
            key=f"{key}-save-{image_format}",
            width="stretch",
        )


def show_csv(atlas: TopicCache, shown: pd.DataFrame) -> None:
    """The CSV of the listed papers, made when the button is clicked."""
    st.markdown(
        f"**Papers as CSV** — the {len(shown):,} papers the table "
        "lists (filters and map selection applied), with abstracts."
    )
    st.download_button(
        "Download CSV",
        data=lambda: download_bytes.csv_bytes(
            paper_table.papers_table(
                shown, atlas.topics, links=paper_table.links_enabled(atlas.manifest, atlas.documents), full=True
            )
        ),
        file_name=download_bytes.download_name(f"topic-atlas-papers-{Path(str(atlas.path)).name}", "csv"),
        mime="text/csv",
        on_click="ignore",
        key="csv",
    )


def show_publication_figure(view: publication.MapView) -> None:
    """The publication figure of the map: renderer choice, one Draw button for PNG + SVG + PDF, then the three
    downloads and a preview, or the message saying why there is no figure."""
    st.markdown(
        "**Publication figure of the map** — exactly the papers, colours and labels on "
        "the map, with a title and a caption; PNG (300 dpi), SVG and PDF (vector text)."
    )
    st.caption(f"Caption: {view.caption}")
    renderer = st.radio(
        "Drawn by",
        list(RENDERER_NAMES),
        format_func=RENDERER_NAMES.__getitem__,
        key="publication-renderer",
        horizontal=True,
    )
    current = f"{view_id(view)}-{renderer}"
    if st.button("Draw the publication figure (PNG, SVG, PDF)", key="publication-draw", type="primary"):
        _draw(
            "publication",
            current,
            lambda: download_bytes.publication_images(view, publication.FORMATS, renderer),
            "publication figure",
        )
    drawn = _drawn("publication", current)
    if drawn is None:
        return
    if "error" in drawn:
        st.error(drawn["error"])
        return
    _image_buttons(st.columns(3), drawn["images"], "topic-atlas-map", "publication")
    st.image(drawn["images"]["png"], caption="Preview of the PNG", width=900)


def chart_row(name: str, figure: go.Figure, key: str, images_possible: bool) -> None:
    """One chart: HTML at once, PNG and SVG drawn in a child process when "Draw PNG + SVG" is clicked."""
    columns = st.columns([3, 1, 1, 1, 1], vertical_alignment="center")
    columns[0].markdown(f"**{paper_table.markdown_escape(name)}**")
    columns[1].download_button(
        "HTML",
        data=lambda: download_bytes.figure_html_bytes(figure, f"Topic Atlas: {name}"),
        file_name=download_bytes.download_name(f"topic-atlas-{key}", "html"),
        mime="text/html",
        on_click="ignore",
        key=f"{key}-html",
        width="stretch",
    )
    current = f"{id(figure)}-{len(figure.data)}"
    if columns[2].button("Draw PNG + SVG", key=f"{key}-draw", disabled=not images_possible, width="stretch"):
        _draw(
            key,
            current,
            lambda: download_bytes.figure_images(figure, CHART_FORMATS, f"PNG and SVG of “{name}”"),
            f"PNG and SVG of “{name}”",
        )
    drawn = _drawn(key, current)
    if drawn is None:
        return
    if "error" in drawn:
        st.error(drawn["error"])
        return
    _image_buttons(columns[3:], drawn["images"], f"topic-atlas-{key}", key)


def render(
    atlas: TopicCache,
    shown: pd.DataFrame,
    figures: Mapping[str, tuple[str, go.Figure]],
    *,
    map_documents: pd.DataFrame | None = None,
    map_view: publication.MapView | None = None,
    filter_state: Mapping[str, Any] | None = None,
) -> None:
    """The Downloads view.

    ``shown``: the papers the table lists (CSV). ``figures``: {key: (name, plotly figure)} of the page's charts.
    The publication figure draws ``map_view`` when given (the map view's own points, labels and highlights), else
    the map of ``map_documents`` (default ``shown``) as the page colours it, captioned with ``filter_state``
    ({"topics", "query", "decisions"}).
    """
    download_bytes.warm_up()
    show_csv(atlas, shown)
    st.divider()
    view = (
        map_view
        if map_view is not None
        else current_map_view(
            atlas, shown if map_documents is None else map_documents, filter_note(atlas.topics, filter_state)
        )
    )
    show_publication_figure(view)
    st.divider()
    st.markdown(
        "**Charts** — HTML is interactive and works offline (plotly.js "
        "inlined); PNG and SVG are drawn by Chromium when you ask."
    )
    images_possible = kaleido_images.image_export_available()
    if not images_possible:
        st.info(kaleido_images.CHROMIUM_MISSING)
    for key, (name, figure) in figures.items():
        chart_row(name, figure, key, images_possible)
