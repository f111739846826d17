"""The find view: search by meaning (hits starred on the main map) and placing new papers on the map."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from dashboard import display
from dashboard.figures import charts
from dashboard.state import resources, uploads
from dashboard.state.resources import CacheKey
from dashboard.tables import find, paper_table
from dashboard.views.page import PLOTLY_CONFIG, Page
from pipeline.cache import TopicCache

SEARCH_KEY = "semantic_query"
N_HITS = 20


def search_hits(
    atlas: TopicCache, cache_key: CacheKey, matching: pd.DataFrame, query: str, filter_key: tuple[Any, ...]
) -> pd.DataFrame:
    """The semantic search's N_HITS best papers among ``matching`` (the papers the filters ``filter_key`` leave),
    with a score column; empty without a query or a loadable representation."""
    if not query.strip():
        return atlas.documents.iloc[0:0].assign(score=pd.Series(dtype=float))
    return resources.search_hits(cache_key, filter_key, query.strip(), N_HITS, atlas, matching)


def render(page: Page, base_map: Callable[[], go.Figure]) -> None:
    """The search box and its hits, then placement of an uploaded file or a pasted abstract. ``base_map`` makes
    the plotly map the placed papers are drawn on, called only when there are some (building it for every run
    of this tab cost 270 ms at 11,660 papers: bench/load.py)."""
    atlas, cache_key = page.atlas, page.cache_key
    st.subheader("Search by meaning")
    query = st.text_input(
        "Describe the papers you are looking for",
        key=SEARCH_KEY,
        placeholder="e.g. robustness of reinforcement learning to distribution shift",
        persist_state="session",
    )
    upload = st.session_state.get("upload")
    pasted = st.session_state.get("pasted_abstract") or ""
    # The representation is loaded only once something needs it, so the first page render stays fast.
    wanted = query.strip() or upload is not None or pasted.strip()
    representation, problem = resources.representation_or_problem(cache_key, atlas) if wanted else (None, None)
    if problem:
        st.info(
            "Semantic search and placement need the embedding model, which is "
            f"unavailable ({problem}). The keyword search in the sidebar still works."
        )
    elif query.strip():
        hits = page.search_hits
        st.caption(
            f"The {len(hits)} papers closest in meaning among the {len(page.matching):,} "
            "matching the filters (cosine similarity of embeddings); they are starred on the map."
        )
        table = paper_table.papers_table(hits, atlas.topics, links=resources.links(cache_key, atlas)).assign(
            score=hits["score"].to_numpy()
        )
        st.dataframe(
            table,
            hide_index=True,
            column_order=["score", "title", "topic_label", "decision", "link"],
            column_config={
                "score": st.column_config.NumberColumn("Similarity", format="%.3f"),
                "title": st.column_config.TextColumn("Title", width=480),
                "topic_label": st.column_config.TextColumn("Topic"),
                "link": st.column_config.LinkColumn("OpenReview", display_text="open ↗"),
            },
        )
    st.subheader("Place new papers on this map")
    st.caption(
        "Each paper gets the topic of its nearest papers (by embedding) "
        "and a position among them; the cache is not changed."
    )
    upload = st.file_uploader(
        "A file of papers: CSV, TSV, JSON, JSONL, Parquet, or text with one abstract per paragraph "
        f"(up to {uploads.MAX_UPLOAD_MB} MB and {uploads.MAX_UPLOAD_ROWS:,} papers)",
        type=uploads.UPLOADER_TYPES,  # the page checks the extension itself: uploads.upload_problem
        key="upload",
    )
    pasted = st.text_area("…or paste an abstract", key="pasted_abstract", height=120)
    placed = None
    refused = uploads.upload_problem(upload.name, upload.getvalue()) if upload is not None else None
    if refused and upload is not None:
        st.error(paper_table.markdown_escape(f"Cannot place {upload.name}: {refused}."))  # the name is the user's
    elif representation is not None and (upload is not None or pasted.strip()):
        from pipeline.runtime.errors import AtlasError

        try:
            placed = (
                resources.placed_papers(cache_key, upload.name, upload.getvalue(), atlas)
                if upload is not None
                else resources.placed_abstract(cache_key, pasted, atlas)
            )
        except AtlasError as error:
            st.error(paper_table.markdown_escape(f"Cannot place these papers: {error}"))
    if placed is not None and not placed.empty:
        titles = dict(
            zip(atlas.documents["doc_id"], atlas.documents["title"].fillna(atlas.documents["abstract"].str[:90]))
        )
        listing = placed.assign(
            paper=[
                display.document_heading(title, abstract)
                for title, abstract in zip(placed["title"], placed["abstract"])
            ],
            nearest=[titles.get(ids[0], "") for ids in placed["neighbor_ids"]],
            nearest_similarity=[scores[0] for scores in placed["neighbor_scores"]],
        )
        st.dataframe(
            listing,
            hide_index=True,
            column_order=["paper", "topic_label", "probability", "nearest", "nearest_similarity"],
            column_config={
                "paper": st.column_config.TextColumn("New paper", width=360),
                "topic_label": st.column_config.TextColumn("Placed in topic"),
                "probability": st.column_config.NumberColumn("Topic share of its neighbours", format="%.2f"),
                "nearest": st.column_config.TextColumn("Nearest paper on the map", width=360),
                "nearest_similarity": st.column_config.NumberColumn("Similarity", format="%.3f"),
            },
        )
        figure = charts.highlight_points(
            base_map(),
            find.overlay_points(placed.assign(doc_id=""), "new paper"),
            "new papers",
            symbol="diamond",
            colour="#d62728",
            size=16,
        )
        st.plotly_chart(figure, key="find-map", theme=None, config=PLOTLY_CONFIG)
        page.figures["find-map"] = ("Map with new papers", figure)
