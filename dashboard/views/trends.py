"""The Trends view (an atlas of several collections): each theme's or topic's share of every collection's papers
with intervals, the denominator named, what grows, fades or is new between two collections, and acceptance per
collection (tables: dashboard/tables/trends.py; figures: dashboard/figures/trend_charts.py)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from dashboard.display import topic_labels
from dashboard.figures import trend_charts
from dashboard.tables import paper_table, trends
from dashboard.tables.collections import collection_options, year_holes
from dashboard.views.page import PLOTLY_CONFIG, Page
from pipeline.ingest.years import holes_sentence
from pipeline.quality.coverage import canonical_areas, load_crosswalk

GROUP_NAMES = {"theme": "Theme", "topic": "Topic"}


def percent(label: str, help: str | None = None) -> Any:
    """A column of shares in [0, 1] shown as percentages."""
    return st.column_config.NumberColumn(label, format="percent", help=help)


def named_columns(group: str) -> dict[str, Any]:
    """The name and id columns of a table of themes or topics: "Theme" (its label) and "Theme id"."""
    name = GROUP_NAMES.get(group, group.capitalize())
    return {
        "label": st.column_config.TextColumn(name, width="large"),
        group: st.column_config.NumberColumn(f"{name} id", format="%d", width="small"),
    }


def changes_columns(group: str, first: str, last: str) -> tuple[list[str], dict[str, Any]]:
    """The changes table's columns (trends.share_changes plus ``label`` and ``p_text``) in order, and their
    headers and formats: names first, the id last."""
    order = [
        "label",
        "status",
        "papers_earlier",
        "papers_later",
        "share_earlier",
        "share_later",
        "ratio",
        "ratio_low",
        "ratio_high",
        "p_text",
        "later_fraction",
        group,
    ]
    config = {
        **named_columns(group),
        "status": st.column_config.TextColumn("Change", help="growing, fading, new or steady"),
        "papers_earlier": st.column_config.NumberColumn(f"Papers {first}", format="%d"),
        "papers_later": st.column_config.NumberColumn(f"Papers {last}", format="%d"),
        "share_earlier": percent(f"Share {first}"),
        "share_later": percent(f"Share {last}"),
        "ratio": st.column_config.NumberColumn(
            "Share ratio", format="%.2f", help=f"share in {last} / share in {first}"
        ),
        "ratio_low": st.column_config.NumberColumn("Ratio (95% low)", format="%.2f"),
        "ratio_high": st.column_config.NumberColumn("Ratio (95% high)", format="%.2f"),
        "p_text": st.column_config.TextColumn("p-value", help="two-sided, pooled two-proportion z-test"),
        "later_fraction": percent(
            f"Of its papers, in {last}", help=f"its papers in {last} over its papers in both, not scaled by size"
        ),
    }
    return order, config


def acceptance_columns(group: str, acceptance: pd.DataFrame) -> tuple[list[str], dict[str, Any]]:
    """The acceptance table's columns (trends.acceptance_by_collection plus ``label``) in order, with headers."""
    order = ["label", "collection", "submissions", "accepted", "unknown", "rate", "rate_low", "rate_high"]
    order += ["rating_mean"] if "rating_mean" in acceptance.columns else []
    config = {
        **named_columns(group),
        "collection": st.column_config.TextColumn("Collection"),
        "submissions": st.column_config.NumberColumn("Submissions", format="%d"),
        "accepted": st.column_config.NumberColumn("Accepted", format="%d"),
        "unknown": st.column_config.NumberColumn("No decision", format="%d"),
        "rate": percent("Acceptance"),
        "rate_low": percent("Acceptance (95% low)"),
        "rate_high": percent("Acceptance (95% high)"),
        "rating_mean": st.column_config.NumberColumn("Mean rating", format="%.2f"),
    }
    return [*order, group], config


def grouped(page: Page, level: str) -> tuple[pd.DataFrame, dict[int, str], str]:
    """The atlas's documents with the group column (``theme`` or ``topic``), its labels, and the column's name."""
    documents, topics = page.atlas.documents, page.atlas.topics
    if level == "theme" and "theme" in topics.columns:
        themes = topics.set_index("topic")["theme"]
        labels = dict(zip(topics["theme"], topics["theme_label"]))
        return documents.assign(theme=documents["topic"].map(themes).fillna(-1).astype(int)), labels, "theme"
    return documents, topic_labels(topics), "topic"


ALL_VENUES = "All venues, per year"


def _year(name: str) -> int | None:
    """The year a collection's name ends with, None when none."""
    last = name.rsplit(" ", 1)[-1]
    return int(last) if last.isdigit() else None


def _year_name(year: object) -> str | None:
    """A year as the pooled collection's name ("2019"), None when missing or unreadable."""
    try:
        return str(int(float(str(year))))
    except ValueError:
        return None


def show_holes(page: Page, venue: str) -> None:
    """A warning naming the years the chosen venue (every venue, pooled) has no paper in, between its first and last:
    a hole in the data, not a trend (dashboard.tables.collections.year_holes)."""
    holes = year_holes(page.atlas.documents)
    if venue != ALL_VENUES:
        holes = {venue: holes[venue]} if venue in holes else {}
    if holes:
        st.warning(paper_table.markdown_escape(holes_sentence(holes)), icon="⚠️")


def render(page: Page) -> None:
    """Draw the Trends view; its figure goes into ``page.figures`` for the downloads."""
    names = collection_options(page.atlas.documents)  # venue by venue, years in order
    left, right = st.columns(2)
    level = left.radio("Group by", ["theme", "topic"], horizontal=True, key="trend_level")
    venues = sorted({name.split(" ")[0] for name in names})
    pooled = len(venues) > 1 and len({_year(name) for name in names} - {None}) > 1
    venue = right.selectbox("Venue", venues + ([ALL_VENUES] if pooled else []), key="trend_venue")
    # on a line of its own: in a third of the page its label was cut to "Only primary …" at 900 px
    common = st.toggle("Only primary areas present in every year", key="trend_common_areas")
    documents, labels, group = grouped(page, level)
    if venue == ALL_VENUES:  # one collection a year: every venue's papers of that year
        documents = documents.assign(collection=documents["year"].map(_year_name))
        chosen = sorted({name for name in documents["collection"].dropna()})
        st.caption(
            "Every venue pooled per year: a year's share mixes the venues of that year, and a venue missing from a "
            "year (a hole the coverage warnings name) moves every share of that year."
        )
    else:
        chosen = [name for name in names if name.split(" ")[0] == venue]
    show_holes(page, venue)
    mask = documents["collection"].isin(chosen)
    denominator = f"all papers of each {venue} collection" if venue != ALL_VENUES else "all papers of each year"
    if common and "primary_area" in documents.columns:
        areas = canonical_areas(documents, load_crosswalk())
        mask &= trends.common_area_mask(documents, chosen, areas)
        denominator = f"the {venue} papers in primary areas present in every year ({int(mask.sum()):,} papers)"
    shares = trends.collection_shares(documents, group, mask)
    st.caption(
        f"Denominator: {denominator}. Coverage warnings at the top of the page name collections with holes; "
        "a share there is not a trend."
    )
    figure = trend_charts.small_multiples(shares, labels, group, denominator)
    st.plotly_chart(figure, theme=None, config=PLOTLY_CONFIG, key="trend-multiples")
    page.figures["trend-multiples"] = ("Shares per collection", figure)
    if len(chosen) >= 2:
        earlier, later = st.columns(2)
        first = earlier.selectbox("From", chosen, index=0, key="trend_from")
        last = later.selectbox("To", chosen, index=len(chosen) - 1, key="trend_to")
        if first != last:
            changes = trends.share_changes(shares, first, last, group)
            changes.insert(1, "label", changes[group].map(labels))
            st.caption(
                "Share ratio (to / from) with Katz's 95% interval; growing: the interval above 1, fading: below 1, "
                "new: share at least doubled (mostly the later collection's, once both are scaled to one size), "
                "interval above 1."
            )
            changes["p_text"] = changes["p_value"].map(trends.p_value_text)
            order, config = changes_columns(group, first, last)
            st.dataframe(changes, hide_index=True, column_order=order, column_config=config, key="trend-changes")
    acceptance = trends.acceptance_by_collection(documents[documents["collection"].isin(chosen)], group)
    if not acceptance.empty and venue != ALL_VENUES:  # never pooled across venues (issue 40, item 1)
        acceptance.insert(1, "label", acceptance[group].map(labels))
        st.caption(
            "Acceptance = accepted / all submissions, 95% Wilson interval. An unknown decision (ICLR 2024 and 2026: "
            "rejected and withdrawn cannot be told apart) is a submission, never a reject."
        )
        order, config = acceptance_columns(group, acceptance)
        st.dataframe(acceptance, hide_index=True, column_order=order, column_config=config, key="trend-acceptance")
