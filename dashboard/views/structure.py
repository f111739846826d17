"""The structure view: the topic tree (its nodes filter the map and the table), how topics relate, and, for
corpora with a primary area, topics against primary areas and the papers that sit between areas."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import pandas as pd
import streamlit as st

from dashboard import display
from dashboard.figures import structure_charts
from dashboard.state import resources
from dashboard.tables import paper_table
from dashboard.views.page import PLOTLY_CONFIG, Page
from dashboard.views.scope import show_scope

TREE_KEY = "topic-tree"
TREE_GENERATION_KEY = "_topic_tree_generation"
MIN_COMPARED_TOPICS = 2
AREA_BOX = "topics-areas-box"  # the areas chart's container, which scrolls sideways when narrower than the chart


def tree_key() -> str:
    """The tree's widget key: a new one after each click, so the next run draws the whole tree again (plotly's
    treemap zooms into a clicked block by itself, which collapsed the tree into one theme)."""
    return f"{TREE_KEY}-{st.session_state.get(TREE_GENERATION_KEY, 0)}"


def on_tree_select(topics: pd.DataFrame) -> None:
    """The tree's callback: a theme drills the map into it, a topic filters to it, the root clears both; the tree
    itself is drawn whole again (:func:`tree_key`). ``topics``: the cache's topics table (to find a theme's
    topics)."""
    event = st.session_state.get(tree_key()) or {}
    st.session_state[TREE_GENERATION_KEY] = st.session_state.get(TREE_GENERATION_KEY, 0) + 1
    points = (event.get("selection", {}) if hasattr(event, "get") else {}).get("points", []) or []
    node = (points[0].get("id") or points[0].get("customdata")) if points else None
    if node is None:
        return
    kind, members = structure_charts.node_topics(str(node), topics)
    if kind == "all":
        st.session_state["theme"], st.session_state["topics"] = None, []
    elif kind == "theme":
        st.session_state["theme"], st.session_state["topics"] = int(str(node).split(":")[1]), []
    else:
        st.session_state["topics"] = members


def shortened_caption(shortened: Sequence[str]) -> str:
    """The caption naming the tree's topics and themes shown in short: their names (corpus-made or renamed by
    ``topic-atlas rename``) shown literally, Markdown escaped and no bare address a link (issue 40, item 12)."""
    return "Named in short or not at all in the smaller blocks (hover a block to read it): " + display.unlinked(
        paper_table.markdown_escape(" · ".join(shortened))
    )


def render(page: Page) -> None:
    """Draw the tree, the similarity heatmap and the primary-area views; their figures go into ``page.figures``."""
    atlas, cache_key = page.atlas, page.cache_key
    show_scope(page, "the tree and the heatmaps place every topic; a click in the tree sets the filters.")
    st.subheader("The topic tree")
    st.caption(
        "The themes cut from BERTopic's topic hierarchy, then their topics; areas are paper counts. Click a theme to "
        "drill the map and the table into it, a topic to filter to it; the sidebar and the map clear them."
    )
    tree = resources.tree_figure(cache_key, atlas.topics)
    st.plotly_chart(
        tree,
        on_select=partial(on_tree_select, atlas.topics),
        selection_mode=("points",),
        key=tree_key(),
        theme=None,
        config=PLOTLY_CONFIG,
    )
    shortened = resources.shortened_tree_names_of(cache_key, atlas.topics)
    if shortened:
        st.caption(shortened_caption(shortened))
    page.figures["topic-tree"] = ("Topic tree", tree)
    st.subheader("How topics relate")
    st.caption(
        "Cosine similarity of the topics' mean embeddings (the corpus mean "
        "removed), topics in the tree's order; each theme is an outlined block."
    )
    n_topics = int((atlas.topics["topic"] != display.OUTLIER_TOPIC).sum())
    if n_topics < MIN_COMPARED_TOPICS:
        st.info(f"Similarities need at least two topics; this atlas has {n_topics}.")
    else:
        similarity = resources.similarity_figure(cache_key, atlas)
        st.plotly_chart(similarity, theme=None, config=PLOTLY_CONFIG, key="topic-similarity")
        page.figures["topic-similarity"] = ("Topic similarity", similarity)
    if page.areas:
        render_areas(page)


def render_areas(page: Page) -> None:
    """Themes (or topics) x primary areas, and per area the papers whose similar papers mostly carry another area."""
    atlas, cache_key = page.atlas, page.cache_key
    st.subheader("Topics and primary areas")
    columns = st.columns(2)
    by = columns[0].radio(
        "Columns",
        ["theme", "topic"],
        format_func={"theme": "Themes", "topic": "Topics"}.__getitem__,
        horizontal=True,
        key="areas_by",
        persist_state="session",
    )
    normalise = columns[1].radio(
        "Shares",
        ["theme", "area"],
        horizontal=True,
        key="areas_normalise",
        persist_state="session",
        format_func={
            "theme": "of each theme's papers: which areas it draws from",
            "area": "of each area's papers: which themes hold it",
        }.__getitem__,
    )
    areas = resources.area_figure(cache_key, by, normalise, atlas)
    # Narrower than its columns need (900 px with the sidebar open), the chart keeps its width and scrolls sideways
    # instead of printing headers and percentages over each other (Streamlit names a keyed container st-key-KEY).
    min_width = structure_charts.area_chart_min_width(len(areas.data[0].x))
    st.html(
        f"<style>.st-key-{AREA_BOX} {{ overflow-x: auto; }} "
        f".st-key-{AREA_BOX}-inner {{ min-width: {min_width}px; }}</style>"
    )
    with st.container(key=AREA_BOX), st.container(key=f"{AREA_BOX}-inner"):
        st.plotly_chart(areas, theme=None, config=PLOTLY_CONFIG, key="topics-areas")
    page.figures["topics-areas"] = ("Topics and primary areas", areas)
    between, summary = resources.between_areas(cache_key, atlas)
    st.subheader("Papers between areas")
    st.caption(
        "Papers most of whose 10 most similar papers carry one and the same other primary area: submitted to one area, "
        "written like another. Worth a second look when assigning reviewers."
    )
    st.dataframe(
        summary,
        hide_index=True,
        column_order=["primary_area", "papers", "between", "share", "leans_to"],
        column_config={
            "primary_area": st.column_config.TextColumn("Primary area", width=380),
            "papers": "Papers",
            "between": "Between areas",
            "share": st.column_config.NumberColumn("Share", format="percent"),
            "leans_to": st.column_config.TextColumn("Most lean to", width=380),
        },
    )
    chosen = st.selectbox(
        "Area",
        page.areas,
        key="between_area",
        persist_state="session",
        format_func=lambda area: f"{area} ({int((between['primary_area'] == area).sum())})",
    )
    rows = between[between["primary_area"] == chosen]
    table = rows.assign(link=[paper_table.openreview_link(doc_id) for doc_id in rows["doc_id"]])
    st.dataframe(
        table,
        hide_index=True,
        column_order=["title", "neighbour_area", "other_share", "topic_label", "link"],
        column_config={
            "title": st.column_config.TextColumn("Title", width=420),
            "neighbour_area": st.column_config.TextColumn("Its similar papers' area", width=300),
            "other_share": st.column_config.NumberColumn("Of its neighbours", format="percent"),
            "topic_label": "Topic",
            "link": st.column_config.LinkColumn("OpenReview", display_text="open ↗"),
        },
    )
