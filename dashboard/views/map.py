"""The map view: colour, label level and theme controls, the map itself, and what a click or lasso does.

A click on one point opens that paper (the sidebar shows it at once); a box or lasso narrows the papers table.
Both are kept in session state by the chart's selection callback, not read from the chart: the map's figure
changes when a paper is highlighted, which gives the chart a new widget id and forgets its selection, so the
page then draws the kept lasso selection itself (``selectedpoints``). A new lasso alone does not change the figure
(plotly draws it already): sending 11,672 points again and redrawing them costs the browser seconds.
"""

from __future__ import annotations

import hashlib
import os

import streamlit as st

from dashboard.components import scatter
from dashboard.figures import topic_map
from dashboard.state import resources
from dashboard.tables import paper_table
from dashboard.views import quality_panel
from dashboard.views.page import MAP_CONFIG, LazyFigure, Page, digest

MAP_KEY = "map"
SELECTION_KEY = "map_selection"
GENERATION_KEY = "map_generation"
PAPER_KEY = "paper"


def map_key() -> str:
    """The chart's widget key: a new one after "Clear selection", so plotly forgets the lasso it draws."""
    return f"{MAP_KEY}-{st.session_state.get(GENERATION_KEY, 0)}"


def on_map_select() -> None:
    """The chart's selection callback: a box or lasso keeps its papers, a single clicked point opens its paper,
    an empty selection (a double click) forgets the lasso."""
    event = st.session_state.get(map_key()) or {}
    selection = event.get("selection", {}) if hasattr(event, "get") else {}
    points = selection.get("points", []) or []
    doc_ids = paper_table.selected_doc_ids(points)
    if selection.get("box") or selection.get("lasso"):
        st.session_state[SELECTION_KEY] = sorted(doc_ids)
    elif len(points) == 1 and doc_ids:
        st.session_state[PAPER_KEY] = next(iter(doc_ids))
    elif not points:
        st.session_state[SELECTION_KEY] = []


def clear_selection() -> None:
    """Forget the map's box or lasso selection, and give the chart a fresh widget."""
    st.session_state[SELECTION_KEY] = []
    st.session_state[GENERATION_KEY] = st.session_state.get(GENERATION_KEY, 0) + 1


def drawn_selection(page: Page) -> tuple[str, ...]:
    """The selection the figure itself draws: the current one whenever the figure changes for another reason (or
    the selection is cleared), else the one drawn before, so a new lasso alone leaves the figure as it is."""
    base = (page.cache_key, page.filter_key, page.map_state, page.highlights)
    current = tuple(sorted(page.selected))
    if st.session_state.get("_map_base") != base or not current:
        st.session_state["_map_base"] = base
        st.session_state["_map_drawn"] = current
    return st.session_state["_map_drawn"]


def theme_options(page: Page) -> dict[int | None, str]:
    """{theme id: name (papers)} for the drill-down picker, None first ("All themes"), made once per cache."""
    return resources.theme_choices(page.cache_key, page.atlas.topics)


def colour_options(page: Page) -> list[str]:
    """The colour modes this corpus offers: theme and topic, decision and primary area when it has them."""
    options = ["theme", "topic"]
    if resources.decision_choices(page.cache_key, page.atlas.documents):
        options.append("decision")
    if page.areas:
        options.append("primary_area")
    if resources.collection_choices(page.cache_key, page.atlas.documents)[0]:
        options += ["venue", "year"]  # an atlas of several collections
    return options


def render_controls(page: Page) -> None:
    """Colour mode, label level and the drilled theme, on one row above the map."""
    columns = st.columns([3, 3, 5])  # at 900 px with the sidebar open, [2, 2, 5] cut "Themes" and wrapped labels
    columns[0].selectbox(
        "Colour points by",
        colour_options(page),
        format_func=topic_map.COLOUR_MODES.__getitem__,
        key="colour",
        persist_state="session",
    )
    columns[1].selectbox(
        "Label",
        list(topic_map.LEVELS),
        format_func=topic_map.LEVELS.__getitem__,
        key="level",
        persist_state="session",
        help=(
            "Themes: the 10-20 groups cut from the topic hierarchy. "
            "Topics: every topic. Drilling into a theme labels its topics."
        ),
    )
    options = theme_options(page)
    columns[2].selectbox(
        "Drill into a theme", list(options), format_func=options.__getitem__, key="theme", persist_state="session"
    )


def figure_of(page: Page) -> object:
    """The map of the page's view (cached per filters, view, highlights and selection)."""
    highlights = topic_map.highlight_rows(page.atlas.documents, page.highlights)
    view_key = (page.filter_key, page.highlights)
    return resources.map_figure(
        page.cache_key,
        view_key,
        page.map_state,
        page.matching,
        page.context,
        highlights,
        drawn_selection(page),
        page.atlas.topics,
        page.areas,
    )


def lazy_figure_of(page: Page) -> LazyFigure:
    """The map of the page's view (as :func:`figure_of` draws it) made only when asked for: the Downloads tab lists
    it on every run, and a plotly map of 11,660 points per view and session cost 0.3-1 s and several MiB
    (bench/load.py); uncached, so nothing is kept for a view nobody downloads."""
    selected = drawn_selection(page)
    documents, matching, context, topics = page.atlas.documents, page.matching, page.context, page.atlas.topics
    highlights, state, areas = page.highlights, page.map_state, page.areas

    def make() -> object:
        return topic_map.map_figure(
            matching,
            topics,
            state,
            highlights=topic_map.highlight_rows(documents, highlights),
            selected_ids=selected,
            context=context,
            areas=areas,
        )

    content = repr((page.cache_key, page.filter_key, state, highlights, selected))
    return LazyFigure(make, "map-" + hashlib.sha256(content.encode()).hexdigest()[:16])


WEBGL_KEY = "map-webgl"
POINTS_SENT_KEY = "_map_points_sent"
CLICK_UNDO_KEY = "_map_click_undo"  # (the latest click's seq, the paper open before it): what a double-click undoes
SHOWN_KEY = "_map_shown"  # the WebGL map has drawn in this session: the papers table below it is sent from then on
RENDERER_ENV = "ATLAS_MAP_RENDERER"  # "plotly": today's plotly map (for bench/dashboard.py); else the WebGL one


def use_webgl() -> bool:
    """Whether the page draws the WebGL component: its bundle is present and ATLAS_MAP_RENDERER is not "plotly"."""
    return os.environ.get(RENDERER_ENV, "webgl") != "plotly" and scatter.available()


def on_webgl_event() -> None:
    """The component's callback: a click opens its paper at once, a double-click takes back what its first click
    opened (the paper shown before it comes back), a lasso keeps its papers, "need_points" resends them, "shown"
    (the map's first draw) lets the papers table come. Positions index the cache's listing (the points the browser
    keeps)."""
    event = st.session_state.get(WEBGL_KEY)
    if isinstance(event, dict) and event.get("kind") == "shown":
        st.session_state[SHOWN_KEY] = True
    listing = st.session_state.get("_map_listing")
    if not isinstance(event, dict) or listing is None:
        return
    doc_ids = listing["doc_id"].astype(str).to_numpy()
    if event.get("kind") == "click" and 0 <= int(event.get("index", -1)) < len(doc_ids):
        st.session_state[CLICK_UNDO_KEY] = (event.get("seq"), st.session_state.get(PAPER_KEY))
        st.session_state[PAPER_KEY] = str(doc_ids[int(event["index"])])
    elif event.get("kind") == "double_click":
        undo = st.session_state.pop(CLICK_UNDO_KEY, None)
        if undo is not None and undo[0] == event.get("cancels"):  # else that click never reached the page
            st.session_state[PAPER_KEY] = undo[1]
    elif event.get("kind") == "lasso":
        positions = [int(i) for i in event.get("indices") or [] if 0 <= int(i) < len(doc_ids)]
        st.session_state[SELECTION_KEY] = sorted({str(doc_ids[i]) for i in positions})
    elif event.get("kind") == "need_points":
        st.session_state[POINTS_SENT_KEY] = None


def table_waits_for_map() -> bool:
    """Whether the papers table is held back on this run: the WebGL map is drawn and has not told this session that
    it has drawn. The table's dataframe made the browser load and run about 1.5 MB of Streamlit's grid code before
    it made the map's frame, 0.35-0.45 s of a fresh page's first paint (bench/map_compare.py); the table sits below
    the map, under the fold at 900 x 1000 to 1920 x 1080, and comes with the rerun the map's "shown" event makes."""
    return use_webgl() and not st.session_state.get(SHOWN_KEY)


def show_table_now() -> None:
    """The held-back table's button: send it without waiting for the map (a browser whose map never reports)."""
    st.session_state[SHOWN_KEY] = True


def render_webgl(page: Page) -> None:
    """The map as the WebGL component: the points only when this session has not sent them for this cache."""
    listing = resources.listing(page.cache_key, page.atlas)
    st.session_state["_map_listing"] = listing
    cache_key = f"{page.cache_key[0]}@{page.cache_key[1]}"
    points = None
    if st.session_state.get(POINTS_SENT_KEY) != cache_key:
        points = resources.map_points(page.cache_key, listing, page.atlas.topics)
        st.session_state[POINTS_SENT_KEY] = cache_key
    layers = resources.map_layers_of(
        page.cache_key,
        digest(page.filter_key, page.highlights, sorted(page.selected)),
        page.map_state,
        listing,
        page.matching,
        page.atlas.topics,
        page.areas,
        tuple(page.view.topics),
        page.highlights,
        tuple(sorted(page.selected)),
    )
    scatter.scatter(layers, cache_key, points, key=WEBGL_KEY, on_change=on_webgl_event)


def render_kept(page: Page) -> None:
    """The map tab while another tab is open: its controls and the WebGL map only, at the same places as
    :func:`render` puts them, so the browser keeps the map's frame (hidden with its tab) and a switch back shows it
    without making the frame and drawing the points again (1.1-3.7 s on the whole conference). Nothing when the
    plotly map is drawn (it is remade either way)."""
    if use_webgl():
        render_controls(page)
        render_webgl(page)


def render(page: Page) -> object:
    """Draw the controls and the map (the WebGL component, or plotly when it cannot load); returns the plotly map
    when that was drawn, else None (the Downloads tab builds it itself)."""
    render_controls(page)
    figure = None
    if use_webgl():
        render_webgl(page)
    else:
        figure = figure_of(page)
        st.plotly_chart(
            figure,
            on_select=on_map_select,
            selection_mode=("points", "box", "lasso"),
            key=map_key(),
            theme=None,
            config=MAP_CONFIG,
        )
    left, right = st.columns([5, 2], vertical_alignment="center")  # [5, 1] cut "Clear selection" at 900 px
    if page.selected:
        left.caption(f"{len(page.shown):,} papers selected on the map; the table lists only them.")
    else:
        hint = (
            "No map selection: the table lists every paper matching the filters. Lasso (or Shift+drag) papers "
            "on the map to list only them."
            if figure is None
            else "No map selection: the table lists every paper matching the filters. "
            "Click a point to read its paper; drag to pan, scroll to zoom, double-click "
            "to zoom out; the lasso and box in the chart's toolbar select papers."
        )
        left.caption(
            hint
            + (
                " " + quality_panel.faithfulness_note(page.atlas.manifest["metrics"])
                if page.atlas.manifest.get("metrics")
                else ""
            )
        )
    right.button("Clear selection", on_click=clear_selection, disabled=not page.selected, width="stretch")
    if figure is not None:
        page.figures["map"] = ("Topic map", figure)
    return figure
