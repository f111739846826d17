"""The Downloads view: the listed papers as CSV, every chart as HTML / PNG / SVG, the publication figure of the map
as PNG / SVG / PDF.

CSV and HTML are made in the server process when their button is clicked (pure Python, they cannot hang). Every
image is drawn by :mod:`dashboard.export.download_bytes` in a child process with a timeout, during the rerun that the
"Draw" button starts, under a spinner: a missing, failing or hung renderer ends as a message on the page within the
timeout, and the images it drew are offered as ready downloads (and the figure previewed) until the view changes.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dashboard import display
from dashboard.display import topic_labels
from dashboard.export import download_bytes, kaleido_images
from dashboard.figures import decision_charts, publication, structure_charts
from dashboard.state import resources, turns
from dashboard.state.shared_cache import shared
from dashboard.tables import paper_table
from dashboard.views import journey as journey_view
from dashboard.views import map as map_tab
from dashboard.views import structure as structure_view
from dashboard.views import topics as topics_view
from dashboard.views.page import LazyFigure, Page, digest
from pipeline.cache import TopicCache

CHART_FORMATS = ("png", "svg")
STATE_KEY = "downloads-images"  # session state: {job key: {"id": view id, "images": {...}} | {"id": ..., "error": str}}


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
    """The publication view of exactly the page's map (publication.view_of_map): the matching papers in their colours
    with every other paper grey beneath, labels of the level the map shows (the topics' when topics are filtered, as
    on the map; a drilled topic's subtopics, its papers coloured by them), highlights, a title naming the corpus, the
    drilled theme and topic and the colouring, and a caption naming the corpus, the build date and every filter."""
    atlas, view = page.atlas, page.view
    corpus = paper_table.corpus_name(atlas.manifest)
    labels = topic_labels(atlas.topics)
    theme = ""
    if view.theme is not None and "theme" in atlas.topics.columns:
        names = atlas.topics.loc[atlas.topics["theme"] == view.theme, "theme_label"]
        theme = str(names.iloc[0]) if len(names) else str(view.theme)
    drilled = "" if page.topic is None else labels.get(int(page.topic), str(page.topic))
    note = publication.filter_note(
        [labels.get(int(topic), str(topic)) for topic in view.topics],
        view.query,
        view.decisions,
        areas=view.areas,
        theme=theme,
        drilled_topic=drilled,
    )
    state = page.map_state
    if view.topics:  # the map labels the filtered topics by their own names
        state = dataclasses.replace(state, level="topics")
    matching, subtopics = page.matching, resources.subtopics(atlas)
    return publication.view_of_map(
        resources.listing(page.cache_key, atlas),
        matching,
        atlas.topics,
        state,
        title=publication.map_title(corpus, state, theme, drilled, subtopics),
        caption=publication.caption_text(atlas.manifest, corpus, len(matching), note),
        highlights=page.highlights,
        areas=page.areas,
        subtopics=subtopics,
    )


def render_page(page: Page) -> None:
    """The Downloads view of the page: the listed papers, the page's charts and the publication figure of its map
    (made once per cache and map view: resources.publication_view)."""
    view_key = digest(page.filter_key, page.map_state, page.highlights)
    map_view = resources.publication_view(page.cache_key, view_key, lambda: page_map_view(page))
    render(page.atlas, page.shown, page.figures, cache_key=page.cache_key, map_view=map_view, dropped=page.dropped)


def _drawn(job_key: str, current_id: str) -> dict[str, Any] | None:
    """What the last draw of ``job_key`` left ({"images": ...} or {"error": ...}), if it drew the current view."""
    entry = st.session_state.get(STATE_KEY, {}).get(job_key)
    return entry if entry and entry.get("id") == current_id else None


def _draw(job_key: str, current_id: str, make_images, what: str) -> None:
    """Run ``make_images()`` under a spinner and remember its images or its error message for this view."""
    store = st.session_state.setdefault(STATE_KEY, {})
    turns.PAGE.give_up()  # a child process draws: the other sessions' runs go on meanwhile
    with st.spinner(f"Drawing the {what} (at most {download_bytes.export_timeout_s():.0f} s)…"):
        try:
            store[job_key] = {"id": current_id, "images": make_images()}
        except download_bytes.ExportError as error:
            store[job_key] = {"id": current_id, "error": str(error)}
        except ValueError as error:  # an invalid view or format: a bug, but still a message, not a traceback
            store[job_key] = {"id": current_id, "error": f"The {what} cannot be drawn: {error}"}


def _image_buttons(
    columns: Sequence[Any], images: Mapping[str, bytes], stem: str, key: str, stretch: bool = True
) -> None:
    for column, (image_format, data) in zip(columns, images.items()):
        column.download_button(
            f"Save {image_format.upper()}",
            data=data,
            file_name=download_bytes.download_name(stem, image_format),
            mime=download_bytes.MIME_TYPES[image_format],
            on_click="ignore",
            key=f"{key}-save-{image_format}",
            width="stretch" if stretch else "content",
        )


def show_csv(
    cache_key: resources.CacheKey, atlas: TopicCache, shown: pd.DataFrame, dropped: pd.DataFrame | None = None
) -> None:
    """The CSV of the listed papers and of the dropped records the table lists (``dropped``: rows of
    resources.dropped_listing, or None), made once per listing and shared by sessions (resources.papers_csv says why
    it is not a deferred download)."""
    dropped = dropped if dropped is not None and len(dropped) else pd.DataFrame(columns=["doc_id"])
    also = (
        f", and the {len(dropped):,} records the build dropped that they list (no topic; the column dropped says why)"
        if len(dropped)
        else ""
    )
    st.markdown(
        f"**Papers as CSV** — the {len(shown):,} papers the table "
        f"lists (filters and map selection applied), with abstracts{also}."
    )
    ids = [*shown["doc_id"].astype(str), "dropped:", *dropped["doc_id"].astype(str)]
    listing_key = hashlib.sha256("\n".join(ids).encode()).hexdigest()
    st.download_button(
        "Download CSV",
        data=resources.papers_csv(cache_key, listing_key, atlas, shown, dropped),
        file_name=download_bytes.download_name(f"topic-atlas-papers-{Path(str(atlas.path)).name}", "csv"),
        mime="text/csv",
        on_click="ignore",
        key="csv",
    )


@shared(max_entries=2, show_spinner=False)
def share_file(cache_key: resources.CacheKey) -> bytes:
    """The one-file share page of the atlas (dashboard.export.share_page.share_html: 8.3 MB and 3-6 s for the whole
    ICLR 2025 conference), made once per cache folder and manifest time and shared by every session. Raises
    CacheError, AtlasError (the page's built script missing)."""
    from dashboard.export.share_page import share_html

    return share_html(cache_key[0])


def show_share(cache_key: resources.CacheKey, atlas: TopicCache) -> None:
    """The atlas as one HTML file to share (``topic-atlas share``): made when first asked for in a session, then
    offered at once (the bytes are cached per cache, so a rerun does not make them again)."""
    from pipeline.runtime.errors import AtlasError

    st.markdown(
        "**The atlas as one file** — one HTML file with the map, search, filters, every paper's abstract and a "
        "lasso list with CSV; it opens from disk with no network."
    )
    made = st.session_state.get("share-made") == cache_key
    if not made and not st.button("Make the share file", key="share-make"):
        return
    st.session_state["share-made"] = cache_key
    try:
        with st.spinner("Writing the share file…"):
            data = share_file(cache_key)
    except AtlasError as error:  # pipeline.cache.CacheError too
        st.error(f"The share file cannot be made: {error}")
        return
    st.download_button(
        f"Download the share file ({len(data) / 1e6:.1f} MB)",
        data=data,
        file_name=download_bytes.download_name(f"topic-atlas-{Path(str(atlas.path)).name}", "html"),
        mime="text/html",
        on_click="ignore",
        key="share-html",
    )


def literal(text: Any) -> str:
    """``text`` as Markdown that shows literally: every Markdown character escaped (paper_table.markdown_escape) and
    no bare address turned into a link (display.unlinked). For text from the corpus, its labels or the address."""
    return display.unlinked(paper_table.markdown_escape(text))


def caption_markdown(caption: str) -> str:
    """The line that shows the publication figure's caption on the page. The caption names the corpus (``build
    --name``), topic labels (``topic-atlas rename``) and the search (``?q=`` of a shared address), so it is shown
    literally (:func:`literal`): never a link with chosen text, never a remote image (issue 40, item 12)."""
    return "Caption: " + literal(caption)


def show_publication_figure(view: publication.MapView) -> None:
    """The publication figure of the map (drawn by matplotlib): one Draw button for PNG + SVG + PDF, then the three
    downloads and a preview, or the message saying why there is no figure."""
    st.markdown(
        "**Publication figure of the map** — exactly the papers, colours and labels on "
        "the map, with a title and a caption; PNG (300 dpi), SVG and PDF (vector text)."
    )
    st.caption(caption_markdown(view.caption))
    current = view.fingerprint
    if st.button("Draw the publication figure (PNG, SVG, PDF)", key="publication-draw", type="primary"):
        _draw(
            "publication",
            current,
            lambda: download_bytes.publication_images(view, publication.FORMATS),
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


def chart_row(name: str, figure: go.Figure | LazyFigure, key: str, images_possible: bool) -> None:
    """One chart: its name, then HTML at once and PNG and SVG drawn in a child process when "Draw PNG + SVG" is
    clicked, as buttons of their own width in a row that wraps (in columns of a fifth of the page "Draw PNG + SVG"
    was cut to "D…" at 900 px and "Draw PNG …" at 1280 px). A LazyFigure is built only for those downloads."""
    make = figure.make if isinstance(figure, LazyFigure) else lambda: figure
    current = figure.id if isinstance(figure, LazyFigure) else f"{id(figure)}-{len(figure.data)}"
    with st.container(key=f"chart-{key}"):
        st.markdown(f"**{literal(name)}**")
        buttons = st.container(horizontal=True, gap="small")
        buttons.download_button(
            "HTML",
            data=lambda: download_bytes.figure_html_bytes(make(), f"Topic Atlas: {name}"),
            file_name=download_bytes.download_name(f"topic-atlas-{key}", "html"),
            mime="text/html",
            on_click="ignore",
            key=f"{key}-html",
        )
        if buttons.button("Draw PNG + SVG", key=f"{key}-draw", disabled=not images_possible):
            _draw(
                key,
                current,
                lambda: download_bytes.figure_images(make(), CHART_FORMATS, f"PNG and SVG of “{name}”"),
                f"PNG and SVG of “{name}”",
            )
        drawn = _drawn(key, current)
        if drawn is None:
            return
        if "error" in drawn:
            st.error(drawn["error"])
            return
        _image_buttons([buttons] * len(drawn["images"]), drawn["images"], f"topic-atlas-{key}", key, stretch=False)


def page_charts(page: Page) -> dict[str, tuple[str, go.Figure | LazyFigure]]:
    """{key: (name, figure)} of every chart the page's tabs draw, for the Downloads tab (the other tabs do not run
    then): the cheap ones from the shared caches, the rest (the similarity heatmap needs the embeddings) built only
    when downloaded. Each as its tab would draw it now: the compared topics and the areas chart's choices from the
    session."""
    atlas, cache_key = page.atlas, page.cache_key
    documents, topics = atlas.documents, atlas.topics
    charts: dict[str, tuple[str, go.Figure | LazyFigure]] = {
        "map": ("Topic map", map_tab.lazy_figure_of(page)),
        "topic-sizes": ("Topic sizes", resources.size_figure(cache_key, topics)),
    }
    real = topics[topics["topic"] != display.OUTLIER_TOPIC].sort_values("size", ascending=False)
    compared = tuple(st.session_state.get(topics_view.COMPARED_KEY) or real["topic"].head(6).astype(int).tolist())
    charts["top-terms"] = ("Top terms", resources.terms_figure(cache_key, compared, topics))
    charts["topic-tree"] = ("Topic tree", resources.tree_figure(cache_key, topics))
    if len(real) >= structure_view.MIN_COMPARED_TOPICS:
        charts["topic-similarity"] = (
            "Topic similarity",
            LazyFigure(lambda: resources.similarity_figure(cache_key, atlas), f"similarity-{cache_key}"),
        )
    if page.areas:
        by = str(st.session_state.get("areas_by") or "theme")
        normalise = str(st.session_state.get("areas_normalise") or "theme")
        charts["topics-areas"] = (
            "Topics and primary areas",
            LazyFigure(
                lambda: structure_charts.area_share_figure(
                    structure_charts.area_crosstab(documents, topics, by), normalise
                ),
                f"areas-{cache_key}-{by}-{normalise}",
            ),
        )
    if resources.has_decisions(cache_key, documents):
        charts.update(decision_charts_of(cache_key, atlas))
    if "rating_mean" in documents.columns and documents["rating_mean"].notna().any():
        charts["ratings"] = (
            "Reviewer ratings per topic",
            LazyFigure(lambda: decision_charts.rating_figure(documents, topics), f"ratings-{cache_key}"),
        )
    return charts


def decision_charts_of(cache_key: tuple[str, int], atlas: TopicCache) -> dict[str, tuple[str, Any]]:
    """The Decisions tab's charts as it first draws them (no filter): the collection it picks by default, a rate only
    for a collection of full submissions (views.decisions), never one pooled across venues or years (issue 40)."""
    from dashboard.views import decisions

    coverage = decisions.coverage_of(cache_key, atlas.documents)
    options = decisions.collection_options(coverage, atlas.documents)
    if not options:
        return {}
    chosen = options[decisions.default_collection(coverage, options)] if len(coverage) > 1 else options[0]
    counts = decisions.coverage_row(coverage, chosen)["kind"] != decisions.analytics.SUBMISSIONS
    _, _, rate, mix = decisions.collection_figures(cache_key, "", chosen, counts, atlas.documents, atlas)
    of = "" if chosen is None else f" ({chosen})"
    charts = {"decision-mix": (f"Decision mix per topic{of}", mix)}
    if rate is not None:
        charts["acceptance-rate"] = (f"Acceptance rate per topic{of}", rate)
    return charts


def render(
    atlas: TopicCache,
    shown: pd.DataFrame,
    figures: Mapping[str, tuple[str, go.Figure | LazyFigure]],
    *,
    cache_key: resources.CacheKey,
    map_documents: pd.DataFrame | None = None,
    map_view: publication.MapView | None = None,
    filter_state: Mapping[str, Any] | None = None,
    dropped: pd.DataFrame | None = None,
) -> None:
    """The Downloads view.

    ``shown``: the papers the table lists (CSV); ``dropped``: the dropped records it lists after them (rows of
    resources.dropped_listing; None: none). ``cache_key``: the atlas's (folder, manifest mtime), so a CSV made
    before a rename or rebuild is not served after it. ``figures``: {key: (name, plotly figure or LazyFigure)} of
    the page's charts.
    The publication figure draws ``map_view`` when given (the map view's own points, labels and highlights), else
    the map of ``map_documents`` (default ``shown``) as the page colours it, captioned with ``filter_state``
    ({"topics", "query", "decisions"}).
    """
    download_bytes.warm_up()
    show_csv(cache_key, atlas, shown, dropped)
    show_share(cache_key, atlas)
    journey_view.render_download(atlas)  # the links between collections (issue 22)
    st.divider()
    view = (
        map_view
        if map_view is not None
        else current_map_view(
            atlas, shown if map_documents is None else map_documents, filter_note(atlas.topics, filter_state)
        )
    )
    with st.container(key="downloads-publication"):
        show_publication_figure(view)
    st.divider()
    st.markdown(
        "**Charts** — HTML is interactive and works offline (plotly.js "
        "inlined); PNG and SVG are drawn by Chromium when you ask."
    )
    images_possible = kaleido_images.image_export_available()
    if not images_possible:
        st.info(kaleido_images.CHROMIUM_MISSING)
    with st.container(key="downloads-charts"):  # one row per chart (tests/test_browser.py finds them so)
        for key, (name, figure) in figures.items():
            chart_row(name, figure, key, images_possible)
