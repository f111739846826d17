"""The topics view: topic sizes, top terms and representative papers of chosen topics, and the map's quality."""

from __future__ import annotations

import streamlit as st

from dashboard import display
from dashboard.state import resources
from dashboard.tables import paper_table
from dashboard.tables.topic_names import topic_names_table
from dashboard.views import quality_panel
from dashboard.views.page import PLOTLY_CONFIG, Page
from dashboard.views.scope import show_scope

DEFAULT_TERM_TOPICS = 6
COMPARED_KEY = "compared_topics"


def render(page: Page) -> None:
    """Sizes, the compared topics' terms and representative papers, then "How good is this map?"."""
    atlas, cache_key = page.atlas, page.cache_key
    real_topics = atlas.topics[atlas.topics["topic"] != display.OUTLIER_TOPIC].sort_values("size", ascending=False)
    show_scope(page, "topic sizes and terms describe the model; the topics filtered to are compared below.")
    sizes = resources.size_figure(cache_key, atlas.topics)
    st.plotly_chart(sizes, theme=None, config=PLOTLY_CONFIG)
    page.figures["topic-sizes"] = ("Topic sizes", sizes)
    st.subheader("Topic names")
    st.dataframe(
        topic_names_table(atlas.topics),
        hide_index=True,
        column_config={
            "label": st.column_config.TextColumn("Name", width=240),
            "subtitle": st.column_config.TextColumn("Set apart by", width=320),
            "theme_label": st.column_config.TextColumn("Theme", width=200),
            "terms": st.column_config.TextColumn("Top terms (c-TF-IDF)", width=320),
        },
    )
    options = paper_table.topic_options(real_topics)
    preselected = [topic for topic in page.view.topics if topic in options] or list(options)[:DEFAULT_TERM_TOPICS]
    st.subheader("Top terms and representative papers")
    if COMPARED_KEY not in st.session_state or page.view.topics:  # the sidebar's topics, else the user's last choice
        st.session_state[COMPARED_KEY] = preselected
    compared = st.multiselect(
        "Topics to compare", list(options), format_func=options.__getitem__, key=COMPARED_KEY, persist_state="session"
    )
    terms = resources.terms_figure(cache_key, tuple(compared), atlas.topics)
    page.figures["top-terms"] = ("Top terms", terms)
    if real_topics.empty:
        st.info("There are no topics to describe: every paper is an outlier.")
    else:
        st.caption("Bars are c-TF-IDF weights: how distinctive each term is of the topic.")
        st.plotly_chart(terms, theme=None, config=PLOTLY_CONFIG)
        st.markdown("**Representative papers** (closest to each topic's mean embedding)")
        st.dataframe(
            resources.representatives_table(cache_key, tuple(compared), atlas),
            hide_index=True,
            column_order=["topic_label", "title", "link"],
            column_config={
                "topic_label": st.column_config.TextColumn("Topic", width=260),
                "title": st.column_config.TextColumn("Title", width=600),
                "link": st.column_config.LinkColumn("OpenReview", display_text="open ↗", width=100),
            },
        )
    quality_panel.render(st, atlas.manifest)
