"""The Venues view (an atlas of several collections): for one year, each theme's or topic's share at each venue
with intervals, and the most over-represented ones per venue; accepted with accepted when a venue publishes only
its accepted papers (dashboard/tables/trends.py)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.figures import trend_charts
from dashboard.tables import trends
from dashboard.views import journey as journey_view
from dashboard.views.page import PLOTLY_CONFIG, Page
from dashboard.views.trends import grouped, named_columns, percent


def comparable_year(documents: pd.DataFrame, years: list[int]) -> int:
    """The position in ``years`` of the latest year with two collections or more, the Venues view's first choice
    (the latest year, ICLR 2026 alone in the six-collection atlas, opened on "nothing to compare"); else the
    latest."""
    counts = documents.dropna(subset=["year"]).groupby("year")["collection"].nunique()
    comparable = [position for position, year in enumerate(years) if counts.get(year, 0) >= 2]
    return comparable[-1] if comparable else max(len(years) - 1, 0)


def render(page: Page) -> None:
    """Draw the Venues view; its figure goes into ``page.figures``."""
    documents = page.atlas.documents
    years = sorted(int(year) for year in documents["year"].dropna().unique())
    left, right = st.columns(2)
    year = left.selectbox("Year", years, index=comparable_year(documents, years), key="venue_year")
    level = right.radio("Group by", ["theme", "topic"], horizontal=True, key="venue_level")
    grouped_documents, labels, group = grouped(page, level)
    shares, accepted_only = trends.venue_shares(grouped_documents, year, group)
    if shares["collection"].nunique() < 2:
        st.info(f"Only one collection in {year}: nothing to compare.")
    else:
        compare_venues(page, shares, accepted_only, labels, group, year)
    journey_view.render_rejects(page, grouped_documents, labels, group)


def compare_venues(
    page: Page, shares: pd.DataFrame, accepted_only: bool, labels: dict[int, str], group: str, year: int
) -> None:
    """The venues of one year compared: shares with intervals, and the most over-represented groups per venue."""
    st.caption(
        "Accepted papers only, at every venue: a venue that publishes only its accepted papers (NeurIPS and ICML "
        "here, or every venue of a file of proceedings) is compared with the others' accepted papers."
        if accepted_only
        else "All submissions at every venue."
    )
    figure = trend_charts.venue_bars(
        shares, labels, group, f"Share of each venue's {year} papers, 95% Wilson intervals"
    )
    st.plotly_chart(figure, theme=None, config=PLOTLY_CONFIG, key="venue-bars")
    page.figures["venue-bars"] = (f"Venues {year}", figure)
    lifted = trends.over_represented(shares, group)
    if not lifted.empty:
        lifted.insert(1, "label", lifted[group].map(labels))
        st.caption("Most over-represented per venue: share there over the share at the other venues of the year.")
        st.dataframe(
            lifted,
            hide_index=True,
            column_order=[
                "label",
                "collection",
                "papers",
                "share",
                "share_low",
                "share_high",
                "share_elsewhere",
                "lift",
                group,
            ],
            column_config={
                **named_columns(group),
                "collection": st.column_config.TextColumn("Venue"),
                "papers": st.column_config.NumberColumn("Papers", format="%d"),
                "share": percent("Share"),
                "share_low": percent("Share (95% low)"),
                "share_high": percent("Share (95% high)"),
                "share_elsewhere": percent("Share at the other venues"),
                "lift": st.column_config.NumberColumn(
                    "Lift", format="%.2f", help="share at this venue / share at the other venues"
                ),
            },
            key="venue-lifted",
        )
