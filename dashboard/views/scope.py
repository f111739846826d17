"""The one line a tab shows when the sidebar's filters are on but the tab describes the whole atlas, and why."""

from __future__ import annotations

import streamlit as st

from dashboard.state import resources
from dashboard.tables import paper_table
from dashboard.views.page import Page


def filters_active(page: Page) -> bool:
    """Whether any sidebar filter, the drilled theme or a map selection narrows the papers."""
    view = page.view
    return bool(
        view.topics or view.query.strip() or view.decisions or view.areas or view.collections or view.theme is not None
    ) or bool(page.selected)


def scope_line(page: Page, why: str) -> str:
    """'Whole atlas: all N papers, not the M matching the filters (Map and papers lists those): <why>.'"""
    total = len(resources.listing(page.cache_key, page.atlas))
    return (
        f"Whole atlas: all {total:,} papers, not the {len(page.shown):,} matching the filters (the Map and papers tab "
        f"lists those): {why}"
    )


def show_scope(page: Page, why: str) -> None:
    """Show :func:`scope_line` as an info line when a filter is on (nothing otherwise)."""
    if filters_active(page):
        st.info(paper_table.markdown_escape(scope_line(page, why)), icon="ℹ️")
