"""Topic Atlas: the Streamlit page over one topic cache. Layout, navigation and the view's address only; each
view lives in dashboard.views, figures and tables come from pure builders cached in dashboard.state.resources.

Run: ``streamlit run dashboard/app.py -- --cache DIR``. The cache folder is ``--cache``, else the ``ATLAS_CACHE``
environment variable, else ``caches/default`` under the repository root (what ``make run`` builds).
Corpus text (titles, abstracts, keywords, labels) is shown as plain text: st.text, dataframes, or escaped Markdown.
The view (filters, colour, label level, drilled theme, chosen paper, open tab) lives in the address
(dashboard.state.url_state), so copying it reproduces the view.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from dashboard import display
from dashboard.figures import topic_map
from dashboard.state import resources, turns, url_state
from dashboard.tables import collections, paper_table
from dashboard.tables import dropped as dropped_table
from dashboard.views import changes as changes_view
from dashboard.views import decisions as decisions_view
from dashboard.views import downloads as downloads_view
from dashboard.views import edit as edit_view
from dashboard.views import find as find_view
from dashboard.views import map as map_tab
from dashboard.views import papers as papers_view
from dashboard.views import selection as selection_view
from dashboard.views import structure as structure_view
from dashboard.views import topics as topics_view
from dashboard.views import trends as trends_view
from dashboard.views import venues as venues_view
from dashboard.views.page import Page, filter_key_of
from pipeline.cache import CacheError, CacheReplaced, TopicCache, manifest_identity
from pipeline.runtime.console import counted
from pipeline.runtime.paths import PROJECT_ROOT
from pipeline.runtime.settings import settings

DEFAULT_CACHE = PROJECT_ROOT / "caches" / "default"
MAP_TAB, TOPICS_TAB, STRUCTURE_TAB, FIND_TAB, DECISIONS_TAB, DOWNLOADS_TAB, CHANGES_TAB = (
    "Map and papers",
    "Topics",
    "Structure",
    "Find and place",
    "Decisions",
    "Downloads",
    "What changed",
)
TRENDS_TAB, VENUES_TAB = "Trends", "Venues"  # atlases of several collections (issue 22)
RESTORED_KEY = "_view_restored"


def cache_dir_setting(argv: list[str]) -> Path:
    """The cache folder: ``--cache DIR`` among the script arguments, else $ATLAS_CACHE, else caches/default."""
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument("--cache", type=Path, default=None)
    try:
        known, _ = parser.parse_known_args(argv)
    except SystemExit:  # "--cache" without a value: fall back as if absent
        known = argparse.Namespace(cache=None)
    if known.cache:
        return known.cache.expanduser()
    return settings().cache or DEFAULT_CACHE  # $ATLAS_CACHE, ~ expanded (pipeline.runtime.settings)


def manifest_mtime_ns(cache_dir: Path) -> int:
    """The identity of the cache's manifest file as one number (pipeline.cache.manifest_identity: inode, size,
    mtime), -1 when it is missing: part of the load cache key, so a replaced cache is read again."""
    identity = manifest_identity(cache_dir)
    return -1 if identity is None else hash(identity)


def show_cache_error(error: CacheError) -> None:
    """The page for an unreadable cache: what is wrong and the command that rebuilds it; stops the script."""
    st.title("Topic Atlas")
    st.error(
        f"The topic cache cannot be opened: {paper_table.markdown_escape(error.problem)}.  \n"
        f"Folder: {paper_table.markdown_escape(error.cache_dir)}"
    )
    st.markdown("Build (or rebuild) it from a corpus file with:")
    st.code(error.rebuild_command, language="bash")
    st.stop()


PAGE_STYLE = """<style>
[data-testid="stMainBlockContainer"] { padding-top: 2.2rem; padding-bottom: 2rem; }
[data-testid="stMainBlockContainer"] h1 { font-size: 1.9rem; padding: 0 0 0.1rem 0; }
/* The tab bar wraps onto a second line where the window is narrow (900 px with the sidebar open cut "Downloads"
   behind a scroll arrow). */
[data-testid="stTabs"] [role="tablist"] { flex-wrap: wrap; row-gap: 0.25rem; }
/* Streamlit's header bar (60 px) is opaque white once the sidebar is closed and hid the top of the title. */
[data-testid="stHeader"] { background: transparent; }
/* The paper's drawer shows at once: Streamlit slides a dialog in over 0.3 s, which came on top of every click's
   wait for its paper (bench/map_compare.py times the click until the drawer has drawn). */
.stDialog, .stDialog > div { animation: none !important; }
</style>"""


def header_line(atlas: TopicCache, n_matching: int, n_papers: int | None = None) -> str:
    """The one-line summary under the title: corpus, build date, papers, topics, themes, outliers, matching.
    ``n_papers``: the papers the page lists (the modelled documents and their listed copies; default: the
    documents), so that "matching the filters" never exceeds it."""
    manifest = atlas.manifest
    created = str(manifest.get("created_at", ""))[:10]
    n_themes = atlas.topics.loc[atlas.topics["theme"] != topic_map.OUTLIER_THEME, "theme"].nunique()
    n_papers = int(manifest["n_documents"]) if n_papers is None else n_papers
    return (
        f"{paper_table.corpus_name(manifest)} · built {created} · {counted(n_papers, 'paper')} · "
        f"{counted(int(manifest['n_topics']), 'topic')} in {counted(int(n_themes), 'theme')} · "
        f"{float(manifest['outlier_fraction']):.1%} outliers · {n_matching:,} matching the filters"
    )


def show_header(atlas: TopicCache, n_matching: int, n_papers: int | None = None) -> None:
    """Title and one summary line (see header_line), the no-topics notice; the build notes go to the sidebar's foot."""
    st.html(PAGE_STYLE)
    st.title("Topic Atlas")
    # The corpus name (``build --name``) is shown literally: Markdown escaped, no bare address a link (issue 40).
    st.caption(
        display.unlinked(paper_table.markdown_escape(header_line(atlas, n_matching, n_papers))),
        help="Cache folder: " + display.unlinked(paper_table.markdown_escape(atlas.path)),
    )
    manifest = atlas.manifest
    if paper_table.no_topics_found(manifest):
        st.warning(
            display.unlinked(paper_table.markdown_escape(paper_table.no_topics_message(manifest)))
            + " The map shows every paper in grey."
        )
    coverage = manifest.get("coverage")
    for warning in (coverage.get("warnings") if coverage else None) or []:  # a collection with a hole (issue 22)
        st.warning(display.unlinked(paper_table.markdown_escape(str(warning))))
    messages = paper_table.build_messages(manifest)
    if messages:
        # The notes are made only while open: the dropped records' table anywhere on a fresh page made the browser
        # load Streamlit's grid code before the map's frame (bench/map_compare.py), and the notes' lines were
        # elements of every run of every session (bench/server_cpu.py).
        notes = st.sidebar.expander(f"Build notes and warnings ({len(messages)})", key="build_notes", on_change="rerun")
        if notes.open is not False:
            with notes:
                for message in messages:
                    st.text("• " + message)
                show_dropped(manifest, atlas.dropped)


def show_dropped(manifest: Mapping[str, Any], records: pd.DataFrame | None = None) -> None:
    """The ids the build dropped, with their reasons and which are copies of one text, "1 text × N copies" per text
    (dashboard.tables.dropped; ``records``: the cache's dropped records, TopicCache.dropped, whose texts it quotes)."""
    dropped = dropped_table.dropped_records(manifest)
    if dropped.empty:
        return
    texts = dropped_table.dropped_texts(records) if records is not None else {}
    st.caption(f"Dropped records ({len(dropped):,}). " + dropped_table.copies_sentence(dropped, texts))
    st.dataframe(dropped, hide_index=True, width="stretch", height=min(35 * (len(dropped) + 1) + 3, 300))


def tab_names(atlas: TopicCache, cache_key: tuple[str, int]) -> list[str]:
    """The tabs this cache gets: Decisions only with decisions, What changed only with a lineage and its view."""
    names = [MAP_TAB, TOPICS_TAB, STRUCTURE_TAB, FIND_TAB]
    if resources.has_decisions(cache_key, atlas.documents):
        names.append(DECISIONS_TAB)
    if resources.has_collections(cache_key, atlas.documents):
        names += [TRENDS_TAB, VENUES_TAB]
    names.append(DOWNLOADS_TAB)
    if changes_view.available(atlas):
        names.append(CHANGES_TAB)
    return names


def view_choices(atlas: TopicCache, cache_key: tuple[str, int], tabs: list[str]) -> url_state.Choices:
    """What an address may ask of this cache."""
    documents, topics = atlas.documents, atlas.topics
    doc_ids = resources.doc_id_set(cache_key, resources.listing(cache_key, atlas))
    collection_names, years = resources.collection_choices(cache_key, documents)
    colours = (
        ["theme", "topic"]
        + (["decision"] if resources.decision_choices(cache_key, documents) else [])
        + (["primary_area"] if resources.area_choices(cache_key, documents) else [])
        + (["venue", "year"] if collection_names else [])
    )
    return url_state.Choices(
        topics=frozenset(int(topic) for topic in topics["topic"]),
        themes=frozenset(int(theme) for theme in topics["theme"] if int(theme) != topic_map.OUTLIER_THEME),
        decisions=frozenset(resources.decision_choices(cache_key, documents)),
        areas=frozenset(resources.area_choices(cache_key, documents)),
        collections=frozenset(collection_names),
        years=frozenset(years),
        colours=tuple(colours),
        tabs=tuple(tabs),
        is_paper=doc_ids.__contains__,
    )


def restore_view(choices: url_state.Choices) -> str | None:
    """On a session's first run, put the address's view into the widgets' session state. Returns the tab the
    address opened the session on (the same on every later run: it is the tab widget's default)."""
    if RESTORED_KEY not in st.session_state:
        view = url_state.from_query({key: st.query_params.get_all(key) for key in st.query_params}, choices)
        for key, value in url_state.to_session(view).items():
            if key != "tab" and value is not None:
                st.session_state[key] = value
        st.session_state[RESTORED_KEY] = view.tab
    return st.session_state[RESTORED_KEY]


def publish_view(first_tab: str) -> None:
    """Write the session's view into the address (only when it changed, so the browser history stays quiet)."""
    view = url_state.from_session(st.session_state)
    if view.tab == first_tab:
        view = url_state.ViewState(**{**view.__dict__, "tab": None})
    wanted = url_state.to_query(view)
    current = {
        key: (st.query_params.get_all(key) if isinstance(wanted.get(key), list) else st.query_params.get(key))
        for key in st.query_params
    }
    if current != wanted:
        st.query_params.from_dict(wanted)


def sidebar_filters(atlas: TopicCache, cache_key: tuple[str, int]) -> None:
    """The sidebar's filter widgets (their values are read back from session state)."""
    with st.sidebar:
        st.header("Filters")
        options = resources.topic_choices(cache_key, atlas.topics)
        st.multiselect("Topics", list(options), format_func=options.__getitem__, key="topics", placeholder="All topics")
        # Word forms match (paper_table.query_pattern): said in the placeholder, not a help icon, whose button would
        # share the input's label.
        st.text_input(
            "Search titles, abstracts and keywords", key="query", placeholder="e.g. LLM agent (finds LLM agents too)"
        )
        decisions = resources.decision_choices(cache_key, atlas.documents)
        if decisions:
            st.multiselect("Decision", decisions, key="decisions", placeholder="All decisions")
        areas = resources.area_choices(cache_key, atlas.documents)
        if areas:
            st.multiselect(
                "Primary area",
                areas,
                format_func=lambda area: display.shorten(area, 60),
                key="areas",
                placeholder="All primary areas",
            )
        collection_filters(atlas, cache_key)


def collection_filters(atlas: TopicCache, cache_key: tuple[str, int]) -> None:
    """An atlas of several collections: the collection filter (venue and year) and the year drawn over the rest."""
    names, years = resources.collection_choices(cache_key, atlas.documents)
    if names:
        st.multiselect("Collection (venue and year)", names, key="collections", placeholder="All collections")
    if years:
        st.selectbox(
            "Highlight a year on the map",
            [None, *years],
            format_func=lambda year: "No (every year in colour)" if year is None else f"{year} (other years grey)",
            key="highlight_year",
        )


def selected_papers(
    view: url_state.ViewState, atlas: TopicCache, cache_key: tuple[str, int]
) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """(papers that pass the filters and the drilled theme, the other filtered papers around a drilled theme or
    None)."""
    papers = resources.listing(cache_key, atlas)
    # Unfiltered, the page's papers are the shared listing itself (nothing on the page mutates it), not a copy
    # of its 11,660 rows per rerun and session.
    filtered = bool(view.topics) or bool(view.decisions)
    matching = paper_table.filter_documents(papers, view.topics, "", view.decisions) if filtered else papers
    query = (view.query or "").strip()
    if query:  # the search's matches are shared by every rerun and session (resources.query_matches)
        found = resources.query_matches(cache_key, query, resources.search_text(cache_key, papers))
        matching = matching[found.reindex(matching.index, fill_value=False).to_numpy()]
    if view.areas:
        matching = matching[matching["primary_area"].isin(view.areas)]
    matching = collections.in_collections(matching, view.collections)
    if view.theme is None:
        return matching, None
    in_theme = (matching["theme"] == view.theme).to_numpy()
    return matching[in_theme], matching[~in_theme]


def build_page(atlas: TopicCache, cache_key: tuple[str, int]) -> Page:
    """The run's Page: filters applied, map selection, search hits and highlights."""
    view = url_state.from_session(st.session_state)
    matching, context = selected_papers(view, atlas, cache_key)
    kept = set(st.session_state.get(map_tab.SELECTION_KEY) or [])
    selected = kept & set(matching["doc_id"].astype(str)) if kept else set()
    shown = matching[matching["doc_id"].astype(str).isin(selected)] if selected else matching
    hits = find_view.search_hits(atlas, cache_key, matching, view.find, filter_key_of(view))
    papers = resources.listing(cache_key, atlas)
    paper = view.paper if view.paper in resources.doc_id_set(cache_key, papers) else None
    similar = resources.similar_ids(cache_key, paper, papers) if paper is not None else ()
    highlights = topic_map.Highlights(search=tuple(hits["doc_id"].astype(str)), chosen=paper, similar=similar)
    narrowed = bool(view.topics) or view.theme is not None or bool(selected)
    dropped = dropped_table.matching_dropped(
        resources.dropped_listing(cache_key, atlas), view.query, view.decisions, view.areas, view.collections, narrowed
    )
    return Page(
        atlas,
        cache_key,
        view,
        matching,
        context,
        selected,
        shown,
        resources.area_choices(cache_key, atlas.documents),
        hits,
        highlights,
        dropped=dropped,
    )


def downloads_figures(page: Page) -> None:
    """Put every chart of the page into ``page.figures`` for the Downloads tab (the other tabs do not run then)."""
    for key, chart in downloads_view.page_charts(page).items():
        page.figures.setdefault(key, chart)
    if changes_view.available(page.atlas):
        page.figures.setdefault("changes-flow", (changes_view.FLOW_NAME, changes_view.flow_figure(page.atlas)))


def render_changes(page: Page) -> None:
    """The "What changed" view (dashboard.views.changes); its figures join the page's for the downloads."""
    page.figures.update(changes_view.render(page.atlas))


def open_tab(tab: Any) -> bool:
    """Whether a tab runs this time: the open one only, when Streamlit tracks tabs (else every tab)."""
    return tab.open is not False


def main() -> None:
    """Build the page."""
    st.set_page_config(page_title="Topic Atlas", page_icon="🗺️", layout="wide")
    cache_dir = cache_dir_setting(sys.argv[1:])
    cache_key = (str(cache_dir.resolve()), manifest_mtime_ns(cache_dir))
    try:
        atlas = resources.load_cache(*cache_key)
    except CacheError as error:
        show_cache_error(error)
        return
    names = tab_names(atlas, cache_key)
    first_tab = restore_view(view_choices(atlas, cache_key, names))
    sidebar_filters(atlas, cache_key)
    page = build_page(atlas, cache_key)
    map_tab.prepare(page)  # the drilled topic narrows the page before the header counts it and any view draws it
    if page.view.paper:
        papers_view.paper_dialog(page, page.view.paper)
    show_header(atlas, len(page.matching), len(resources.listing(cache_key, atlas)))
    tabs = dict(
        zip(names, st.tabs(names, key="tab", on_change="rerun", default=first_tab if first_tab in names else None))
    )
    with tabs[MAP_TAB]:
        if open_tab(tabs[MAP_TAB]):
            map_tab.render(page)
            selection_view.render(page)
            papers_view.render(page)
        else:
            map_tab.render_kept(page)
    with tabs[TOPICS_TAB]:
        if open_tab(tabs[TOPICS_TAB]):
            topics_view.render(page)
    with tabs[STRUCTURE_TAB]:
        if open_tab(tabs[STRUCTURE_TAB]):
            structure_view.render(page)
    with tabs[FIND_TAB]:
        if open_tab(tabs[FIND_TAB]):
            find_view.render(page, lambda: map_tab.figure_of(page))
    if DECISIONS_TAB in tabs:
        with tabs[DECISIONS_TAB]:
            if open_tab(tabs[DECISIONS_TAB]):
                decisions_view.render(page)
    for name, view in ((TRENDS_TAB, trends_view), (VENUES_TAB, venues_view)):
        if name in tabs:
            with tabs[name]:
                if open_tab(tabs[name]):
                    view.render(page)
    with tabs[DOWNLOADS_TAB]:
        if open_tab(tabs[DOWNLOADS_TAB]):
            downloads_figures(page)
            downloads_view.render_page(page)
    if CHANGES_TAB in tabs:
        with tabs[CHANGES_TAB]:
            if open_tab(tabs[CHANGES_TAB]):
                render_changes(page)
    with st.sidebar:
        edit_view.render(page)  # merge, split, delete, move, rename, undo: pipeline.operations.edit, then a rerun
    publish_view(names[0])


try:
    with turns.PAGE.turn():  # one session's run at a time, in the order they came (dashboard.state.turns says why)
        main()
except CacheReplaced:  # a writer published a new version mid-run (its embeddings were read): run again on it
    st.rerun()
