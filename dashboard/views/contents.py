"""The table of contents under the map: themes, their topics and the topics' subtopics, each with its papers that
pass the sidebar filters; a row chosen drills the map.

What a choice does (the page says it above the table):

- "All papers (the whole map)", or the "Whole map" button: the whole map, the map's selection cleared;
- a theme: the map drilled into it, as "Drill into a theme" does (which then shows it): its papers in colour and
  framed, labelled by its topics; the papers table lists them;
- a topic: the map drilled into the topic: its papers in colour and framed, the rest grey, labelled by its
  subtopics; the papers table lists the topic's papers;
- a subtopic: the map drilled into its topic, and the subtopic's papers selected on the map, so the papers table
  lists them ("Clear selection" lists the whole topic again).

"Up one level" goes from a topic to its theme and from a theme to the whole map. The map view owns the drill's
state (dashboard.views.map.drill); this view draws the table and calls it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import pandas as pd
import streamlit as st

from dashboard.state import resources
from dashboard.tables.paper_table import markdown_escape
from dashboard.views.page import Page, digest

Drill = Callable[..., None]  # dashboard.views.map.drill(theme, topic=None, selection=None)
# The longest names (44 characters, two indents in) whole, and the count beside them at 900 px with the sidebar
# open (440 px for the table); wider windows share the rest between both columns.
CONTENTS_NAME_PX = 330
CONTENTS_HEIGHT_PX = 388  # ten rows and the header: the papers table's heading stays near the fold at 1000 px
SUBTOPIC_KEY = "_contents_subtopic"  # (subtopic, its doc_ids) chosen last: marked while the selection is within it
HOW_TO = (
    "Click a theme or a topic to drill the map into it (its papers framed, labelled one level deeper, and listed "
    "below); a subtopic drills into its topic and selects its papers on the map. Counts are the papers matching "
    "the filters."
)


def filters_digest(page: Page) -> str:
    """The sidebar's filters, without the drill: the contents' counts depend on these alone."""
    view = page.view
    return digest(page.cache_key, view.topics, view.query.strip(), view.decisions, view.areas, view.collections)


def chosen_subtopic(page: Page) -> int | None:
    """The subtopic chosen last, while the map's selection is within its papers (else None)."""
    kept = st.session_state.get(SUBTOPIC_KEY)
    if not kept or not page.selected or not page.selected <= kept[1]:
        return None
    return int(kept[0])


def on_choose(key: str, rows: list[int], tree: pd.DataFrame, drill: Drill, page: Page) -> None:
    """The table's selection callback: drill the map to the chosen row (see the module's docstring)."""
    event = st.session_state.get(key)
    selection = event.selection if event is not None else {}
    # A click on a name selects its cell (single-cell mode: a row's box would be a second, smaller target).
    chosen = [int(cell[0]) for cell in selection.get("cells") or []] + list(selection.get("rows") or [])
    if not chosen or not 0 <= chosen[0] < len(rows):
        return  # the chosen cell clicked again: its drill stays
    st.session_state[SUBTOPIC_KEY] = None
    if rows[chosen[0]] < 0:
        drill(None)
        return
    level, theme, topic, subtopic = (
        int(value) for value in tree.loc[rows[chosen[0]], ["level", "theme", "topic", "subtopic"]]
    )
    if level == 2:
        listing = resources.listing(page.cache_key, page.atlas)
        ids = resources.subtopic_ids(page.cache_key, subtopic, listing)
        st.session_state[SUBTOPIC_KEY] = (subtopic, frozenset(ids))
        drill(theme, topic, ids)
    else:
        drill(theme, topic if level == 1 else None)


def up_one_level(page: Page, drill: Drill) -> None:
    """The "Up one level" button's callback: a topic to its theme, a theme to the whole map."""
    drill(page.view.theme if page.topic is not None else None)


def breadcrumb(page: Page, tree: pd.DataFrame) -> str:
    """Where the map is, as Markdown: "Whole map", or "Whole map › theme", or "Whole map › theme › topic"."""
    parts = ["Whole map"]
    for level, key, column in ((0, page.view.theme, "theme"), (1, page.topic, "topic")):
        if key is None:
            continue
        names = tree.loc[(tree["level"] == level) & (tree[column] == key), "name"]
        if len(names):
            parts.append(markdown_escape(str(names.iloc[0])))
    return " › ".join(parts)


def render_heading(page: Page, tree: pd.DataFrame, drill: Drill) -> None:
    """Where the map is, "Up one level" and "Whole map", and what a choice does: three short rows, since the
    breadcrumb of a drilled topic fills the row at 900 px."""
    drilled = page.view.theme is not None
    st.markdown(f"**Contents** · the map shows: {breadcrumb(page, tree)}")
    with st.container(horizontal=True, vertical_alignment="center"):
        st.button("Up one level", on_click=up_one_level, args=(page, drill), disabled=not drilled, width="content")
        st.button("Whole map", on_click=drill, args=(None,), disabled=not drilled, width="content")
    st.caption(HOW_TO)


def render(page: Page, drill: Drill) -> None:
    """The table of contents of the page's cache (nothing for a cache without topics). Per rerun: cached lookups
    and the Arrow table's send (resources.contents_tree, contents_counts, contents_table)."""
    tree = resources.contents_tree(page.cache_key, page.atlas)
    if tree.empty:
        return
    filters = filters_digest(page)
    counts = resources.contents_counts(page.cache_key, filters, tree, (page.matching, page.context))
    total = len(page.matching) + (len(page.context) if page.context is not None else 0)
    drilled = (page.view.theme, page.topic, chosen_subtopic(page))
    table, rows = resources.contents_table(page.cache_key, filters, tree, counts, total, drilled)
    render_heading(page, tree, drill)
    key = "contents-" + digest(filters, drilled)  # a new table per drill: no stale row stays chosen
    st.dataframe(
        table,
        key=key,
        on_select=partial(on_choose, key, rows, tree, drill, page),
        selection_mode="single-cell",
        hide_index=True,
        width="stretch",
        height=CONTENTS_HEIGHT_PX,
        column_config={
            "Contents": st.column_config.TextColumn("Contents", width=CONTENTS_NAME_PX),
            # A number, not a bar: a ProgressColumn hid its number under 150 px, the room it has at 900 px
            "Papers": st.column_config.NumberColumn("Papers", help="Papers matching the filters", format="localized"),
        },
    )
