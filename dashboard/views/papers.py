"""The papers view: the drill-down table under the map, and the chosen paper in the sidebar.

The chosen paper (a click on the map, a row of the table, a similar paper, or ``?paper=`` in the address) opens in
a drawer at the window's right (:func:`paper_dialog`), at once and wide enough to read: title, topic and theme,
decision, primary area, authors, keywords, abstract, and its most similar papers. Corpus text is shown as written:
plain text (st.text and dataframes), and the abstract as Markdown whose every character is escaped but its math,
which KaTeX typesets (display.markdown_with_math).
"""

from __future__ import annotations

from functools import partial

import pandas as pd
import streamlit as st

from dashboard import display
from dashboard.state import resources
from dashboard.tables.dropped import DROPPED_MARK
from dashboard.views import journey as journey_view
from dashboard.views import map as map_view
from dashboard.views.page import Page, digest

PAPER_KEY = "paper"
# The drawer's width: an abstract at about 90 characters a line, the map still in sight on its left ("large" took
# 1,260 of 1,500 px and hid the map, its red star and its rings).
PANEL_WIDTH_PX = 560
# Rows the table sends at first: the whole conference's 11,660 rows were 2.8 of the 4 MB a fresh page received
# (bench/dashboard.py); the first 500 in the table's order are the most typical papers, and "Show all" sends the rest.
FIRST_ROWS = 500
TABLE_HEIGHT_PX = 420


def table_key(page: Page) -> str:
    """The table's widget key: a new one whenever its rows change, so a row selection never points elsewhere."""
    return "papers-" + digest(page.cache_key, page.filter_key, sorted(page.selected))


def on_row_select(key: str, doc_ids: list[str]) -> None:
    """The table's selection callback: the chosen row's paper opens in the sidebar."""
    event = st.session_state.get(key)
    rows = event.selection.rows if event is not None else []
    if rows and 0 <= rows[0] < len(doc_ids):
        st.session_state[PAPER_KEY] = doc_ids[rows[0]]


def render(page: Page) -> None:
    """The table of the papers shown (filters, drilled theme and map selection applied), one row selectable."""
    key = table_key(page)
    links = resources.links(page.cache_key, page.atlas)
    table = resources.papers_table(page.cache_key, key, page.shown, page.atlas.topics, links, page.view.query)
    if len(page.dropped):  # the records the build dropped, marked, no topic (dashboard.tables.dropped)
        table = resources.papers_with_dropped(page.cache_key, key, table, page.dropped, links, bool(page.view.query))
    st.subheader(f"Papers ({len(table) - len(page.dropped):,})" + dropped_note(len(page.dropped)))
    st.caption(
        (
            "Papers whose title matches the search first, then the most typical of their topic"
            if page.view.query
            else "Most typical of their topic first"
        )
        + " (BERTopic's membership probability); the math in a title reads as text (τ, ℝᵈ, x²)."
        + dropped_order_note(len(page.dropped), bool(page.view.query))
    )
    if map_view.table_waits_for_map():
        with st.container(height=TABLE_HEIGHT_PX, border=True):
            st.caption(f"The table of these {len(table):,} papers comes once the map has drawn.")
            st.button("Show the table now", key=f"{key}-now", on_click=map_view.show_table_now)
        return
    column_config = {
        "title": st.column_config.TextColumn("Title", width=420),
        "topic_label": st.column_config.TextColumn("Topic", width=190),
        "decision": st.column_config.TextColumn("Decision", width=90),
        "primary_area": st.column_config.TextColumn("Primary area", width=200),
        "link": st.column_config.LinkColumn("OpenReview", display_text="open ↗", width=95),
        "keywords": st.column_config.TextColumn("Keywords", width=260),
        "copy_of": st.column_config.TextColumn(
            "Copy of",
            width=110,
            help="This paper's abstract is another paper's (a duplicate): it shares that paper's topic and place. "
            "For a dropped record: the first of the records holding the same dropped text.",
        ),
        DROPPED_MARK: st.column_config.TextColumn(
            "Dropped",
            width=200,
            help="The build could not model this record (why is said): it has no topic and no place on the map.",
        ),
        "truncated": st.column_config.CheckboxColumn(
            "Cut", width=50, help="Longer than the encoder's window: only its beginning was embedded."
        ),
    }
    order = [
        column
        for column in (
            "title",
            "topic_label",
            DROPPED_MARK,
            "decision",
            "primary_area",
            "link",
            "keywords",
            "copy_of",
            "truncated",
        )
        if column in table.columns
    ]
    rows = first_rows(table, key)
    st.dataframe(
        resources.table_arrow(page.cache_key, f"{key}-{len(rows)}", rows),  # converted once (not per rerun)
        column_config=column_config,
        column_order=order,
        hide_index=True,
        on_select=partial(on_row_select, key, rows["doc_id"].tolist()),
        selection_mode="single-row",
        key=key,
        height=TABLE_HEIGHT_PX,
    )
    st.caption("Choose a row, or click a point on the map, to read the paper.")
    if len(rows) < len(table):
        note, more = st.columns([3, 1], vertical_alignment="center")
        note.caption(
            f"The first {len(rows):,} of {len(table):,} in this order; sorting a column sorts these. The CSV in "
            "Downloads holds all of them."
        )
        more.button(
            f"Show all {len(table):,}", key=f"{key}-show-all", on_click=partial(show_all_rows, key), width="stretch"
        )


def dropped_note(n_dropped: int) -> str:
    """The subheader's " and N dropped records" ("" for none)."""
    if not n_dropped:
        return ""
    return f" and {n_dropped:,} dropped record" + ("" if n_dropped == 1 else "s")


def dropped_order_note(n_dropped: int, searched: bool) -> str:
    """The caption's sentence on where the dropped records are listed ("" for none)."""
    if not n_dropped:
        return ""
    where = "first" if searched else "after the papers"
    return (
        f" The records the build dropped (placeholders, empty or withdrawn abstracts) come {where}, marked in the "
        "Dropped column: they have no topic and no place on the map."
    )


def first_rows(table: pd.DataFrame, key: str) -> pd.DataFrame:
    """``table``'s first FIRST_ROWS rows, or all of them once "Show all" was clicked for this table (``key``: a new
    filter or selection is a new table, which starts short again)."""
    return table if st.session_state.get(f"{key}-all") else table.head(FIRST_ROWS)


def show_all_rows(key: str) -> None:
    """The "Show all" button's callback: table ``key`` sends every row from now on."""
    st.session_state[f"{key}-all"] = True


def close_paper() -> None:
    """Close the paper panel."""
    st.session_state[PAPER_KEY] = None


@st.dialog("Chosen paper", width=PANEL_WIDTH_PX, position="right", on_dismiss=close_paper)
def paper_dialog(page: Page, doc_id: str) -> None:
    """The chosen paper in a wide drawer at the window's right (st.dialog): wide enough to read an abstract, where
    the sidebar's column was 240 px. A dialog reruns alone (a fragment), so when a choice inside it changed the
    paper (a similar paper, "Close"), the whole page runs again to follow: the map's rings and the address.
    Closing it (its X, Esc, a click outside) forgets the paper."""
    if st.session_state.get(PAPER_KEY) != doc_id:
        st.rerun()
    render_paper(page, doc_id)


def render_paper(page: Page, doc_id: str) -> None:
    """The chosen paper's panel (inside :func:`paper_dialog`)."""
    atlas = page.atlas
    papers, links = resources.listing(page.cache_key, atlas), resources.links(page.cache_key, atlas)
    embedding_cache = atlas.manifest.get("embedding_cache")
    window = embedding_cache.get("max_seq_length") if embedding_cache else None
    details, row, similar = resources.paper_panel(
        page.cache_key, str(doc_id), papers, atlas.topics, links, window, atlas.manifest.get("fit_check")
    )
    if details is None or row is None:
        render_dropped_paper(page, doc_id)
        return
    with st.container(border=True, key="paper-panel"):
        top = st.columns([3, 2], vertical_alignment="center")
        top[0].caption("Chosen paper (red star on the map)")
        top[1].button("Close", key="close-paper", on_click=close_paper, width="stretch")
        st.text(details["title"] or "(no title)")
        topic = (
            f"{details['topic']} · {details['topic_label']}"
            if details["topic"] != display.OUTLIER_TOPIC
            else details["topic_label"]
        )
        theme = atlas.topics.loc[atlas.topics["topic"] == details["topic"], "theme_label"]
        st.caption("Topic")
        st.text(
            topic + (f"  (theme: {theme.iloc[0]})" if len(theme) and details["topic"] != display.OUTLIER_TOPIC else "")
        )
        if details["outlier_note"]:
            st.caption(details["outlier_note"])
        facts = [
            ("Decision", details["decision"]),
            ("Primary area", row.get("primary_area") if isinstance(row.get("primary_area"), str) else None),
        ]
        for name, value in facts:
            if value:
                st.caption(name)
                st.text(value)
        if details["authors"]:
            st.caption("Authors")
            st.text(details["authors"])
        if details["keywords"]:
            st.caption("Keywords")
            st.text("; ".join(details["keywords"]))
        if details["copy_of"]:
            st.caption("Duplicate")
            st.text(f"The same abstract as {details['copy_of']}: this copy shares its topic and place on the map.")
        elif details["copies"]:
            st.caption("Copies")
            st.text("The same abstract is also in: " + ", ".join(details["copies"]))
        journey_view.render_paper_journey(page, str(doc_id))  # the same work in other collections (issue 22)
        st.caption("Abstract")
        if details["abstract_as_written"]:  # as written, its math typeset by KaTeX (display.markdown_with_math)
            st.container(key="paper-abstract").markdown(display.markdown_with_math(details["abstract_as_written"]))
        else:
            st.text("(no abstract)")
        if details.get("embedding_note"):
            st.caption(details["embedding_note"])
        if details["link"]:
            st.link_button("Open on OpenReview", details["link"])
    if not similar.empty:
        known = resources.doc_id_set(page.cache_key, papers)
        neighbour_ids = [other for other in display.as_text_list(row.get("neighbor_ids")) if other in known]
        st.caption(
            "Similar papers (rings on the map; cosine similarity of the abstracts' embeddings). Choose one to open it."
        )
        key = f"similar-{doc_id}"
        st.dataframe(
            similar,
            hide_index=True,
            on_select=partial(on_row_select, key, neighbour_ids),
            selection_mode="single-row",
            key=key,
            column_order=["title", "similarity"],
            column_config={
                "title": st.column_config.TextColumn("Title"),
                "similarity": st.column_config.NumberColumn("Sim.", format="%.2f", width=50),
            },
        )


def render_dropped_paper(page: Page, doc_id: str) -> None:
    """A record the build dropped (a row of the table marked dropped), in the paper panel: its title, why it was
    dropped, the first copy of its text, its abstract as given. Nothing for an id that is not one."""
    rows = resources.dropped_listing(page.cache_key, page.atlas)
    found = rows[rows["doc_id"] == str(doc_id)]
    if found.empty:
        return
    row = found.iloc[0]
    with st.container(border=True, key="paper-panel"):
        top = st.columns([3, 2], vertical_alignment="center")
        top[0].caption("Dropped record (not on the map)")
        top[1].button("Close", key="close-paper", on_click=close_paper, width="stretch")
        st.text(row["title"] if isinstance(row["title"], str) and row["title"].strip() else "(no title)")
        st.caption("Dropped by the build")
        st.text(f"{row[DROPPED_MARK]}: it has no topic and no place on the map.")
        if isinstance(row["copy_of"], str) and row["copy_of"]:
            st.caption("Copies")
            st.text(f"One of several records with the same text; the first is {row['copy_of']}.")
        st.caption("Abstract as given")
        abstract = row["abstract"]
        st.text(abstract if isinstance(abstract, str) and abstract.strip() else "(no abstract)")
