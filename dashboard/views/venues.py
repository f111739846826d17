"""The Venues view (an atlas of several collections): for one year, each theme's or topic's share at each venue
with intervals, and the most over-represented ones per venue; accepted with accepted when a venue publishes only
its accepted papers (dashboard/tables/trends.py)."""

from __future__ import annotations

import streamlit as st

from dashboard.figures import trend_charts
from dashboard.tables import trends
from dashboard.views.page import PLOTLY_CONFIG, Page
from dashboard.views.trends import grouped


def render(page: Page) -> None:
    """Draw the Venues view; its figure goes into ``page.figures``."""
    documents = page.atlas.documents
    years = sorted(int(year) for year in documents["year"].dropna().unique())
    left, right = st.columns(2)
    year = left.selectbox("Year", years, index=len(years) - 1 if years else 0, key="venue_year")
    level = right.radio("Group by", ["theme", "topic"], horizontal=True, key="venue_level")
    grouped_documents, labels, group = grouped(page, level)
    shares, accepted_only = trends.venue_shares(grouped_documents, year, group)
    if shares["collection"].nunique() < 2:
        st.info(f"Only one collection in {year}: nothing to compare.")
        return
    st.caption(
        "Accepted papers only, at every venue: NeurIPS and ICML publish only their accepted papers, so ICLR's are cut "
        "to its accepted ones too."
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
        st.dataframe(lifted, hide_index=True)
