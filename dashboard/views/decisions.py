"""The decisions view: per-topic acceptance rate with Wilson intervals, decision mix, ratings, topics per class."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dashboard.figures import decision_charts
from dashboard.state import resources
from dashboard.tables import analytics, paper_table
from dashboard.views.page import PLOTLY_CONFIG, Page, digest
from dashboard.views.scope import filters_active, show_scope


def filtered_figures(page: Page) -> tuple[pd.DataFrame, dict[str, float], go.Figure, go.Figure]:
    """Acceptance table and charts of the papers the filters and the map selection leave (``page.shown``), per topic
    among them; the reference rate stays the whole atlas's, so a filtered topic is read against the conference.
    Made once per cache, filters and selection (resources.shown_decision_figures), not on every run."""
    shown_key = digest(page.filter_key, sorted(page.selected))
    return resources.shown_decision_figures(page.cache_key, shown_key, page.shown, page.atlas)


def render(page: Page) -> None:
    """Draw the decision analytics of the papers matching the filters (all of them when none is on); their figures go
    into ``page.figures`` for the downloads."""
    atlas = page.atlas
    filtered = filters_active(page)
    documents = page.shown if filtered else atlas.documents
    topics = atlas.topics
    table, overall, rate_figure, mix_figure = (
        filtered_figures(page) if filtered else resources.decision_figures(page.cache_key, atlas)
    )
    if filtered:
        st.caption(
            f"The {len(page.shown):,} papers matching the filters ({int(table['decided'].sum()):,} decided), per topic."
        )
    st.caption(
        "Accepted = Oral + Spotlight + Poster; the rate is over decided papers. The line is the whole atlas's rate "
        f"({overall['accepted']:,} of {overall['decided']:,}, {overall['rate']:.1%}); withdrawn papers have no "
        "decision and are counted separately. Topics are ranked by the lower end of the 95% Wilson interval, so a "
        "small topic cannot top the list by chance; hollow dots rest on fewer than 30 decided papers."
    )
    st.plotly_chart(rate_figure, theme=None, config=PLOTLY_CONFIG, key="acceptance-rate")
    st.plotly_chart(mix_figure, theme=None, config=PLOTLY_CONFIG, key="decision-mix")
    st.dataframe(
        table,
        hide_index=True,
        column_order=[
            "rank",
            "label",
            "size",
            "decided",
            "accepted",
            "rate",
            "rate_low",
            "rate_high",
            "withdrawn",
            "small",
        ],
        column_config={
            "label": st.column_config.TextColumn("Topic", width=300),
            "rate": st.column_config.NumberColumn("Acceptance rate", format="percent"),
            "rate_low": st.column_config.NumberColumn("95% CI low", format="percent"),
            "rate_high": st.column_config.NumberColumn("95% CI high", format="percent"),
            "small": st.column_config.CheckboxColumn("Under 30 decided"),
        },
    )
    page.figures.update(
        {
            "acceptance-rate": ("Acceptance rate per topic", rate_figure),
            "decision-mix": ("Decision mix per topic", mix_figure),
        }
    )
    if not analytics.rating_table(documents, topics).empty:
        rating_figure = decision_charts.rating_figure(documents, topics)
        st.plotly_chart(rating_figure, theme=None, config=PLOTLY_CONFIG, key="ratings")
        page.figures["ratings"] = ("Reviewer ratings per topic", rating_figure)
    per_class = atlas.topics_per_class
    if not per_class.empty:
        st.subheader("What each class of paper talks about, per topic")
        show_scope(page, "the terms per class are computed by the build over each whole topic.")
        st.caption(
            "BERTopic's topics per class: the topic's c-TF-IDF terms among its "
            "orals, posters, rejects… (averaged with the topic's overall terms)."
        )
        options = paper_table.topic_options(topics[topics["topic"].isin(per_class["topic"])])
        chosen = st.selectbox(
            "Topic", list(options), format_func=options.__getitem__, key="class_topic", persist_state="session"
        )
        rows = per_class[per_class["topic"] == chosen]
        order = {decision: rank for rank, decision in enumerate(analytics.DECISION_ORDER)}
        rows = rows.assign(order=rows["class"].map(order)).sort_values("order")
        st.dataframe(
            rows.assign(terms=rows["terms"].map(", ".join)),
            hide_index=True,
            column_order=["class", "frequency", "terms"],
            column_config={
                "class": "Decision",
                "frequency": "Papers",
                "terms": st.column_config.TextColumn("Top terms", width=700),
            },
        )
