"""The map view: colour, label level and theme controls, the map itself, what a click or lasso does, and the table
of contents under it (dashboard.views.contents), which drills the map into a theme or a topic.

A click on one point opens that paper (the sidebar shows it at once); a box or lasso narrows the papers table.
Both are kept in session state by the chart's selection callback, not read from the chart: the map's figure
changes when a paper is highlighted, which gives the chart a new widget id and forgets its selection, so the
page then draws the kept lasso selection itself (``selectedpoints``). A new lasso alone does not change the figure
(plotly draws it already): sending 11,672 points again and redrawing them costs the browser seconds.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterable

import streamlit as st

from dashboard.components import scatter
from dashboard.figures import plotly_map, topic_map
from dashboard.state import resources
from dashboard.tables import paper_table
from dashboard.views import contents as contents_view
from dashboard.views import quality_panel
from dashboard.views.page import MAP_CONFIG, LazyFigure, Page, digest
from pipeline.runtime.settings import settings

MAP_KEY = "map"
SELECTION_KEY = "map_selection"
GENERATION_KEY = "map_generation"
PAPER_KEY = "paper"
THEME_KEY = "theme"  # the "Drill into a theme" picker's value (and the address's ``theme``)
LEVEL_KEY = "level"  # the "Label" picker's value (and the address's ``level``)
TOPIC_KEY = "map_topic"  # the drilled topic (None: none); it holds only while its theme is the drilled one
LEVEL_SET_KEY = "_map_level_set"  # the session's first run has put the label level the address asks for


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


def level_options(page: Page) -> list[str]:
    """The label levels this cache offers (keys of topic_map.LEVELS): by zoom (the default, so it leaves the address
    bare), themes, topics, and subtopics when the cache has them."""
    return ["zoom", "themes", "topics"] + (["subtopics"] if resources.subtopics(page.atlas) is not None else [])


def settle_level(page: Page) -> None:
    """Put a label level this cache offers into the session and the page's view before the picker is drawn: on
    the session's first run the one the address names (url_state parsed it), later the picker's; by zoom for a level
    the cache lacks (subtopics in a cache built before them)."""
    options = level_options(page)
    if LEVEL_SET_KEY not in st.session_state:
        st.session_state[LEVEL_SET_KEY] = True
        st.session_state[LEVEL_KEY] = page.view.level
    if st.session_state.get(LEVEL_KEY) not in options:
        st.session_state[LEVEL_KEY] = "zoom"
    level = st.session_state[LEVEL_KEY]
    if page.view.level != level:
        page.view = dataclasses.replace(page.view, level=level)


def topic_theme(page: Page, topic: object) -> int | None:
    """The theme of ``topic`` in this cache (None: no such topic)."""
    themes = resources.topic_themes(page.cache_key, page.atlas.topics)
    return themes.get(int(topic)) if isinstance(topic, int) else None


def settle_drill(page: Page) -> None:
    """Narrow the page to the drilled topic (Page.drill_topic) while its theme is the drilled one; forget it
    otherwise (the theme picker moved on, or an address or a rebuild left a topic the cache lacks)."""
    topic = st.session_state.get(TOPIC_KEY)
    if topic is None or page.topic is not None:
        return
    if page.view.theme is None or topic_theme(page, topic) != page.view.theme:
        st.session_state[TOPIC_KEY] = None
        return
    inside, rest = resources.topic_parts(
        page.cache_key, digest(page.filter_key), int(topic), page.matching, page.context
    )
    page.drill_topic(int(topic), inside, rest)


def prepare(page: Page) -> None:
    """What the map tab settles before anything of the page is drawn: the label level and the drilled topic. The
    map tab runs first on every run (drawn or kept), so every view of the run sees the same page."""
    settle_level(page)
    settle_drill(page)


def drill(theme: int | None, topic: int | None = None, selection: Iterable[str] | None = None) -> None:
    """Drill the map (a callback: it runs before the script, so it may set the pickers' values): into ``theme``
    (None: the whole map) and ``topic`` of it, with ``selection`` as the map's selection (None: cleared)."""
    st.session_state[THEME_KEY] = theme
    st.session_state[TOPIC_KEY] = topic
    if selection:
        st.session_state[SELECTION_KEY] = sorted(selection)
    else:
        clear_selection()


def on_theme_pick() -> None:
    """The theme picker's callback: another theme (or the whole map) leaves the drilled topic."""
    st.session_state[TOPIC_KEY] = None


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
        level_options(page),
        format_func=topic_map.LEVELS.__getitem__,
        key=LEVEL_KEY,
        persist_state="session",
        help=LEVEL_HELP,
    )
    options = theme_options(page)
    columns[2].selectbox(
        "Drill into a theme",
        list(options),
        format_func=options.__getitem__,
        key=THEME_KEY,
        persist_state="session",
        on_change=on_theme_pick,
        placeholder=options[None],  # after "Whole map" (None set in the session): its name, not "Choose an option"
    )


LEVEL_HELP = (
    "By zoom: the themes (the 10-20 groups of topics that lie together in meaning and on the map) at first, "
    "their topics as you zoom in, "
    "then the topics' subtopics. Themes, Topics, Subtopics: that level only. Drilling into a theme starts at its "
    "topics, into a topic at its subtopics. The map's downloads label the first level."
)


def figure_of(page: Page) -> object:
    """The map of the page's view (cached per filters, view, highlights and selection)."""
    highlights = plotly_map.highlight_rows(page.atlas.documents, page.highlights)
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
        resources.subtopics(page.atlas),
        hovers_of(page),
    )


def hovers_of(page: Page) -> dict[str, str]:
    """The plotly maps' hover texts of the cache's papers (made once per cache, when a plotly map is first drawn)."""
    listing = resources.listing(page.cache_key, page.atlas)
    return resources.hover_texts_of(page.cache_key, listing, page.atlas.topics)


def lazy_figure_of(page: Page) -> LazyFigure:
    """The map of the page's view (as :func:`figure_of` draws it) made only when asked for: the Downloads tab lists
    it on every run, and a plotly map of 11,660 points per view and session cost 0.3-1 s and several MiB
    (bench/load.py); uncached, so nothing is kept for a view nobody downloads."""
    selected = drawn_selection(page)
    documents, matching, context, topics = page.atlas.documents, page.matching, page.context, page.atlas.topics
    highlights, state, areas = page.highlights, page.map_state, page.areas
    subtopics = resources.subtopics(page.atlas)

    def make() -> object:
        hovers = hovers_of(page)
        marked = plotly_map.highlight_rows(documents, highlights)
        return plotly_map.map_figure(
            resources.with_hover(matching, hovers, topics),
            topics,
            state,
            highlights={kind: resources.with_hover(rows, hovers, topics) for kind, rows in marked.items()},
            selected_ids=selected,
            context=None if context is None else resources.with_hover(context, hovers, topics),
            areas=areas,
            subtopics=subtopics,
        )

    content = repr((page.cache_key, page.filter_key, state, highlights, selected))
    return LazyFigure(make, "map-" + hashlib.sha256(content.encode()).hexdigest()[:16])


WEBGL_KEY = "map-webgl"
POINTS_SENT_KEY = "_map_points_sent"
TITLES_SENT_KEY = "_map_titles_sent"  # the cache whose points' titles this session has sent (after the first draw)
CLICK_UNDO_KEY = "_map_click_undo"  # (the latest click's seq, the paper open before it): what a double-click undoes
SHOWN_KEY = "_map_shown"  # the WebGL map has drawn in this session: the papers table below it is sent from then on
RENDERER_ENV = "ATLAS_MAP_RENDERER"  # "plotly": today's plotly map (for bench/dashboard.py); else the WebGL one


def use_webgl() -> bool:
    """Whether the page draws the WebGL component: its bundle is present and ATLAS_MAP_RENDERER is not "plotly"."""
    return settings().map_renderer != "plotly" and scatter.available()  # $ATLAS_MAP_RENDERER


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
        st.session_state[TITLES_SENT_KEY] = None


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
    """The map as the WebGL component: the points only when this session has not sent them for this cache, their
    titles (the hover's text, nine tenths of the bytes) once the map has drawn them (issue 42: 12.6 MB before the
    first paint at 154,761 papers, 1.1 MB without the titles)."""
    listing = resources.listing(page.cache_key, page.atlas)
    st.session_state["_map_listing"] = listing
    cache_key = f"{page.cache_key[0]}@{page.cache_key[1]}"
    points = titles = None
    if st.session_state.get(POINTS_SENT_KEY) != cache_key:
        points = resources.map_points(page.cache_key, listing, page.atlas.topics)
        st.session_state[POINTS_SENT_KEY] = cache_key
    if st.session_state.get(SHOWN_KEY) and st.session_state.get(TITLES_SENT_KEY) != cache_key:
        titles = resources.map_titles(page.cache_key, listing)
        st.session_state[TITLES_SENT_KEY] = cache_key
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
        resources.subtopics(page.atlas),
    )
    scatter.scatter(layers, cache_key, points, key=WEBGL_KEY, on_change=on_webgl_event, titles=titles)
    if points is not None and titles is None:
        # Made now, after the map's message has gone (1.5 s at 154,761 papers, once per cache): the run its first
        # draw makes, and a server warmed by one run of the page, find them made.
        resources.map_titles(page.cache_key, listing)


def render_kept(page: Page) -> None:
    """The map tab while another tab is open: its controls and the WebGL map only, at the same places as
    :func:`render` puts them, so the browser keeps the map's frame (hidden with its tab) and a switch back shows it
    without making the frame and drawing the points again (1.1-3.7 s on the whole conference). Nothing when the
    plotly map is drawn (it is remade either way)."""
    prepare(page)
    if use_webgl():
        render_controls(page)
        render_webgl(page)


def render(page: Page) -> object:
    """Draw the controls, the map (the WebGL component, or plotly when it cannot load) and the table of contents;
    returns the plotly map when that was drawn, else None (the Downloads tab builds it itself)."""
    prepare(page)
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
    if not table_waits_for_map():  # a dataframe, held back as the papers table is (table_waits_for_map says why)
        contents_view.render(page, drill)
    if figure is not None:
        page.figures["map"] = ("Topic map", figure)
    return figure
