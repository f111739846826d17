"""The decisions view: per-topic acceptance rate with Wilson intervals, decision mix, ratings, topics per class.

What the data can say (issue 40, items 1-2):

- Rates and ratings are read per collection. A collection whose decisions hold no rejection (accepted papers only,
  or only the acceptances known: analytics.ACCEPTED_ONLY) has no acceptance rate and is never pooled with one of
  full submissions (ICLR 2025); a selector picks the collection, and the page says which collection a rate covers
  and why the others are left out.
- Under a Decision filter no rate is drawn: the filter keeps some decisions only, so every topic would read 100 %
  (Oral) or 0 % (Reject). The page says so and counts the matching papers per topic and decision instead; the mix
  and the table count the same papers, and the rate chart (when drawn) names each topic with the same count.
- No matching paper: a message, not empty axes.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dashboard.display import plotly_escape
from dashboard.figures import decision_charts
from dashboard.state.shared_cache import shared
from dashboard.tables import analytics, paper_table
from dashboard.views.page import PLOTLY_CONFIG, Page, digest
from dashboard.views.scope import filters_active, show_scope
from pipeline.cache import TopicCache
from pipeline.ingest.decisions import DECISION_ORDER

COLLECTION_KEY = "decision_collection"
KIND_NAMES = {
    analytics.SUBMISSIONS: "submissions with their decisions",
    analytics.ACCEPTED_ONLY: "no rejection recorded: no rate",
}
RATE_COLUMNS = ["rank", "label", "size", "decided", "accepted", "rate", "rate_low", "rate_high", "withdrawn", "small"]
COUNT_COLUMNS = ["rank", "label", "size", *DECISION_ORDER, analytics.UNKNOWN]


@shared(max_entries=4, show_spinner=False)
def coverage_of(cache_key: tuple[str, int], _documents: pd.DataFrame) -> pd.DataFrame:
    """analytics.collection_coverage of the atlas's papers, once per cache."""
    return analytics.collection_coverage(_documents)


@shared(max_entries=16, show_spinner=False)
def collection_figures(
    cache_key: tuple[str, int],
    shown_key: str,
    collection: str | None,
    counts: bool,
    _papers: pd.DataFrame,
    _atlas: TopicCache,
) -> tuple[pd.DataFrame, dict[str, float], go.Figure | None, go.Figure]:
    """(table, the collection's whole rate, rate chart or None, mix chart) of the papers ``_papers`` of
    ``collection`` (named with the filters by ``shown_key``), per topic among them. ``counts``: no rate can be read
    (a decision filter, a collection of accepted papers only): ``analytics.count_table`` and the counts' chart.
    Made once per cache, view and collection, not on every run."""
    papers = analytics.in_collection(_papers, collection)
    topics = _atlas.topics[_atlas.topics["topic"].isin(papers["topic"].unique())]
    overall = analytics.overall_rate(analytics.in_collection(_atlas.documents, collection))
    if counts:
        table = analytics.count_table(papers, topics)
        return table, overall, None, decision_charts.decision_mix_figure(table, counts=True)
    table = analytics.acceptance_table(papers, topics)
    reference = "all its papers" if collection is None else f"all of {collection}"
    return (
        table,
        overall,
        decision_charts.acceptance_rate_figure(table, overall, reference),
        decision_charts.decision_mix_figure(table),
    )


def collection_options(coverage: pd.DataFrame, papers: pd.DataFrame) -> list[str | None]:
    """The collections with decisions among ``papers`` (the atlas's order); [None] for an atlas without
    collections whose papers carry decisions."""
    with_decisions = coverage[coverage["kind"] != analytics.NO_DECISIONS]
    if "collection" not in papers.columns:
        return [None] if len(with_decisions) else []
    present = set(papers["collection"].dropna())
    return [name for name in with_decisions["collection"] if name in present]


def default_collection(coverage: pd.DataFrame, options: list[str | None]) -> int:
    """Index in ``options`` of the last collection of full submissions (the latest, in the atlas's order), else 0."""
    kinds = dict(zip(coverage["collection"], coverage["kind"]))
    full = [index for index, name in enumerate(options) if kinds.get(name) == analytics.SUBMISSIONS]
    return full[-1] if full else 0


def coverage_row(coverage: pd.DataFrame, chosen: str | None) -> pd.Series:
    """The row of :func:`analytics.collection_coverage` of ``chosen`` (None: the atlas without collections)."""
    return coverage.iloc[0] if chosen is None else coverage[coverage["collection"] == chosen].iloc[0]


def coverage_note(coverage: pd.DataFrame, chosen: str | None) -> str:
    """Which collection the rates and ratings cover, and why each other collection is left out of them."""
    row = coverage_row(coverage, chosen)
    if row["kind"] == analytics.SUBMISSIONS:
        said = (
            f"Rates and ratings cover {chosen} only: its {int(row['papers']):,} submissions with their decisions "
            f"({int(row['accepted']):,} accepted of {int(row['decided']):,} decided, {row['rate']:.1%})."
        )
    else:
        said = (
            f"{chosen} records no rejected paper (accepted papers only, or only its acceptances known), so it has "
            "no acceptance rate: its papers are counted per topic and decision."
        )
    others = coverage[coverage["collection"] != chosen]
    accepted_only = others.loc[others["kind"] == analytics.ACCEPTED_ONLY, "collection"].tolist()
    submissions = others.loc[others["kind"] == analytics.SUBMISSIONS, "collection"].tolist()
    undecided = others.loc[others["kind"] == analytics.NO_DECISIONS, "collection"].tolist()
    if accepted_only:
        said += (
            f" Left out of every rate: {', '.join(accepted_only)} (no rejected paper recorded: accepted papers only, "
            "or only the acceptances known; pooled with full submissions they would read as near-certain "
            "acceptances)."
        )
    if submissions:
        said += f" {', '.join(submissions)}: rates of their own (another venue or year), chosen above, never pooled."
    if undecided:
        said += f" {', '.join(undecided)}: no decisions."
    return said


def render(page: Page) -> None:
    """Draw the decision analytics of the papers matching the filters (all of them when none is on), one collection
    at a time; their figures go into ``page.figures`` for the downloads."""
    atlas = page.atlas
    filtered = filters_active(page)
    papers = page.shown if filtered else atlas.documents
    coverage = coverage_of(page.cache_key, atlas.documents)
    options = collection_options(coverage, papers)
    if papers.empty:
        st.info("No paper matches the filters: no decision to count or rate.", icon="ℹ️")
    elif not options:
        st.info(f"None of the {len(papers):,} papers matching the filters has a decision.", icon="ℹ️")
    else:
        chosen = options[0]
        if len(coverage) > 1:
            kinds = dict(zip(coverage["collection"], coverage["kind"]))
            chosen = st.selectbox(
                "Collection",
                options,
                index=default_collection(coverage, options),
                format_func=lambda name: f"{name} ({KIND_NAMES[kinds[name]]})",
                key=COLLECTION_KEY,
                help="Acceptance rates and ratings are read per collection, never pooled across venues or years.",
            )
            st.caption(paper_table.markdown_escape(coverage_note(coverage, chosen)))
        render_collection(page, papers, coverage, chosen, filtered)
    per_class = atlas.topics_per_class
    if not per_class.empty:
        render_per_class(page, per_class)


def render_collection(
    page: Page, papers: pd.DataFrame, coverage: pd.DataFrame, chosen: str | None, filtered: bool
) -> None:
    """The charts, table and ratings of the collection ``chosen`` among ``papers``."""
    atlas = page.atlas
    kind = coverage_row(coverage, chosen)["kind"]
    decisions = list(page.view.decisions)
    counts = bool(decisions) or kind != analytics.SUBMISSIONS
    shown_key = digest(page.filter_key, sorted(page.selected)) if filtered else ""
    table, overall, rate_figure, mix_figure = collection_figures(
        page.cache_key, shown_key, chosen, counts, papers, atlas
    )
    scoped = analytics.in_collection(papers, chosen)
    of = "" if chosen is None else f" of {chosen}"
    if filtered:
        st.caption(
            paper_table.markdown_escape(
                f"The {len(scoped):,} papers matching the filters{of} ({int(table['decided'].sum()):,} decided), "
                "per topic."
            )
        )
    if decisions:
        st.info(
            paper_table.markdown_escape(
                f"No acceptance rate under the Decision filter ({', '.join(decisions)}): a rate needs every "
                "decision of a topic's papers, and the filter keeps these only, so each topic would read 100 % or "
                "0 %. The chart and the table count the matching papers per topic and decision; clear the Decision "
                "filter for the rates."
            ),
            icon="ℹ️",
        )
    elif kind != analytics.SUBMISSIONS and len(coverage) == 1:
        st.caption(
            "This atlas records no rejected paper (accepted papers only, or only the acceptances known), so it has no "
            "acceptance rate: the chart and the table count its papers per topic and decision."
        )
    if rate_figure is not None:
        reference = "the whole atlas's rate" if chosen is None else f"the rate of all of {chosen}"
        st.caption(
            paper_table.markdown_escape(
                f"Accepted = Oral + Spotlight + Poster; the rate is over decided papers. The line is {reference} "
                f"({overall['accepted']:,} of {overall['decided']:,}, {overall['rate']:.1%}); withdrawn papers have "
                "no decision and are counted separately. Topics are ranked by the lower end of the 95% Wilson "
                "interval, so a small topic cannot top the list by chance; hollow dots rest on fewer than 30 decided "
                "papers. Both charts name a topic with the same papers (n), the rate's hover with the decided ones."
            )
        )
        st.plotly_chart(rate_figure, theme=None, config=PLOTLY_CONFIG, key="acceptance-rate")
        page.figures["acceptance-rate"] = ("Acceptance rate per topic", rate_figure)
    st.plotly_chart(mix_figure, theme=None, config=PLOTLY_CONFIG, key="decision-mix")
    page.figures["decision-mix"] = (
        "Papers per topic and decision" if counts else "Decision mix per topic",
        mix_figure,
    )
    st.dataframe(
        table,
        hide_index=True,
        column_order=COUNT_COLUMNS if counts else RATE_COLUMNS,
        column_config={
            "label": st.column_config.TextColumn("Topic", width=300),
            "size": st.column_config.NumberColumn("Papers"),
            "rate": st.column_config.NumberColumn("Acceptance rate", format="percent"),
            "rate_low": st.column_config.NumberColumn("95% CI low", format="percent"),
            "rate_high": st.column_config.NumberColumn("95% CI high", format="percent"),
            "small": st.column_config.CheckboxColumn("Under 30 decided"),
        },
    )
    topics = atlas.topics
    if not analytics.rating_table(scoped, topics).empty:
        rating_figure = decision_charts.rating_figure(scoped, topics)
        if chosen is not None:
            rating_figure.update_layout(title=f"Reviewer ratings per topic, {plotly_escape(chosen)}")
        st.plotly_chart(rating_figure, theme=None, config=PLOTLY_CONFIG, key="ratings")
        page.figures["ratings"] = ("Reviewer ratings per topic", rating_figure)


def render_per_class(page: Page, per_class: pd.DataFrame) -> None:
    """BERTopic's topics per class: the terms of each decision class of a chosen topic."""
    topics = page.atlas.topics
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
    order = {decision: rank for rank, decision in enumerate(DECISION_ORDER)}
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
