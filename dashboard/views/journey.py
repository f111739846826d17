"""A paper's journey on the page (atlases of several collections with ``journeys.parquet``): the paper panel's line
"ICLR 2025: Reject → ICML 2025" with the other appearances, the Venues tab's rejects found again per topic, and the
links as CSV in Downloads. Tables: dashboard/tables/journeys.py; links: pipeline/journeys/links.py."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pandas as pd
import streamlit as st

from dashboard.export import download_bytes
from dashboard.tables import journeys, trends
from dashboard.views.page import Page
from dashboard.views.trends import named_columns, percent
from pipeline.cache import TopicCache

PAPER_KEY = "paper"


def has_journeys(atlas: TopicCache) -> bool:
    """True when the cache holds links between collections."""
    return not atlas.journeys.empty


def open_linked(key: str, doc_ids: list[str]) -> None:
    """The appearances table's selection callback: the chosen row's paper opens in the panel."""
    event = st.session_state.get(key)
    rows = event.selection.rows if event is not None else []
    if rows and 0 <= rows[0] < len(doc_ids):
        st.session_state[PAPER_KEY] = doc_ids[rows[0]]


def render_paper_journey(page: Page, doc_id: str) -> None:
    """Inside the paper panel: the work's journey in one line and its other appearances (choose one to open it);
    nothing for a paper found in no other collection."""
    atlas = page.atlas
    if not has_journeys(atlas):
        return
    steps = journeys.journey_steps(
        str(doc_id), atlas.journeys, atlas.documents, journeys.order_of(atlas.manifest, atlas.documents)
    )
    if steps.empty:
        return
    st.caption("Journey: the same work in other collections")
    st.text(journeys.journey_line(steps))
    others = steps[~steps["chosen"]].reset_index(drop=True)
    key = f"journey-{doc_id}"
    st.dataframe(
        others[["collection", "title", "similarity", "found_by"]],
        hide_index=True,
        on_select=partial(open_linked, key, others["doc_id"].astype(str).tolist()),
        selection_mode="single-row",
        key=key,
        column_config={
            "collection": st.column_config.TextColumn("Where", width=90),
            "title": st.column_config.TextColumn("Title"),
            "similarity": st.column_config.NumberColumn(
                "Sim.", format="%.2f", width=50, help="Cosine similarity of the two abstracts' vectors"
            ),
            "found_by": st.column_config.TextColumn("Found by", width=90),
        },
    )


def render_rejects(page: Page, documents: pd.DataFrame, labels: dict[int, str], group: str) -> None:
    """In the Venues tab: per topic or theme, how many rejects of a collection with rejects reappear in the later
    collections, with the caveat that accepted-only collections hold no rejected paper."""
    atlas = page.atlas
    if not has_journeys(atlas) or "decision" not in documents.columns:
        return
    order = journeys.order_of(atlas.manifest, documents)
    with_rejects = [
        name
        for name in sorted(order, key=order.__getitem__)
        if (documents.loc[documents["collection"] == name, "decision"] == journeys.REJECT).any()
    ]
    if not with_rejects:
        return
    st.subheader("Rejected, then published elsewhere")
    source = st.selectbox("Rejects of", with_rejects, key="journey_source")
    targets = [name for name in sorted(order, key=order.__getitem__) if order[name] > order[source]]
    if not targets:
        st.info(f"No collection after {source} in this atlas.")
        return
    table = journeys.rejects_found_again(documents, atlas.journeys, group, source, targets)
    table.insert(1, "label", table[group].map(labels))
    accepted = [name for name, only in trends.accepted_only(documents).items() if only and name in targets]
    total, found = int(table["rejects"].sum()), int(table["found_again"].sum())
    st.caption(
        f"{found:,} of {source}'s {total:,} rejects are found again in {', '.join(targets)} (the same work: "
        "the same title, or an abstract close enough to be the same paper). "
        + (
            f"Only accepted papers of {', '.join(accepted)} are in the data: a reject found there was accepted there; "
            "one not found may have been rejected again, withdrawn, or not resubmitted."
            if accepted
            else ""
        )
    )
    st.dataframe(
        table,
        hide_index=True,
        column_order=["label", "rejects", *targets, "found_again", "share", group],
        column_config={
            **named_columns(group),
            "rejects": st.column_config.NumberColumn("Rejects", format="%d"),
            **{target: st.column_config.NumberColumn(f"Found in {target}", format="%d") for target in targets},
            "found_again": st.column_config.NumberColumn("Found again", format="%d"),
            "share": percent("Share found again"),
        },
        key="journey-rejects",
    )


def render_download(atlas: TopicCache) -> None:
    """In Downloads: every link between collections as CSV (both papers' ids, collections, decisions, titles)."""
    if not has_journeys(atlas):
        return
    st.markdown(
        f"**Journeys as CSV** — the {len(atlas.journeys):,} pairs of papers that are the same work in two collections, "
        "with the similarity of their abstracts and how each pair was found."
    )
    st.download_button(
        "Download journeys CSV",
        data=lambda: download_bytes.csv_bytes(journeys.links_export(atlas.journeys, atlas.documents)),
        file_name=download_bytes.download_name(f"topic-atlas-journeys-{Path(str(atlas.path)).name}", "csv"),
        mime="text/csv",
        on_click="ignore",
        key="journeys-csv",
    )
