"""What a selection holds: under the map, for the papers shown when a lasso, a box, a search or a filter narrows
them, a panel (opened by a toggle, so a rerun that does not ask pays nothing) with how many papers, the phrases that
set them apart from the rest of the atlas, their mix by theme, venue, year and decision against the atlas's, their
most representative papers, and downloads (BibTeX; the CSV is the papers table's). "Keep as A" keeps a selection so
the next one is shown beside it (dashboard/tables/selection.py computes; this module draws).
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
import streamlit as st

from dashboard import display
from dashboard.export import download_bytes
from dashboard.state import resources
from dashboard.state.shared_cache import shared
from dashboard.tables import selection as summaries
from dashboard.views import scope
from dashboard.views.page import Page, digest

TOGGLE_KEY = "selection_summary"
KEPT_KEY = "selection_kept"  # {"ids": frozenset of doc_ids, "name": what narrowed them}
# Mixed columns and their headings, where the cache has them.
MIX_HEADINGS = {"theme": "Theme", "collection": "Collection", "venue": "Venue", "year": "Year", "decision": "Decision"}


@shared(max_entries=32, show_spinner="Summarising the selection…")
def summary_of(
    cache_key: resources.CacheKey, ids_key: str, _ids: frozenset[str], _page_atlas, _columns: Mapping
) -> summaries.Summary:
    """The selection's summary, made once per cache and selection (``ids_key`` names ``_ids``) for every session."""
    embeddings = resources.cache_embeddings(cache_key, _page_atlas)
    return summaries.summarise(set(_ids), _page_atlas.documents, embeddings, _columns)


@shared(max_entries=32, show_spinner=False)
def bibtex_of(cache_key: resources.CacheKey, ids_key: str, _ids: frozenset[str], _documents: pd.DataFrame) -> bytes:
    """The BibTeX of the papers ``_ids`` (named by ``ids_key``), made once per cache and selection."""
    return summaries.bibtex(_documents[_documents["doc_id"].astype(str).isin(_ids)]).encode("utf-8")


def mixed_columns(page: Page) -> dict[str, Mapping | None]:
    """{column: its labels or None} of the columns this cache mixes a selection by."""
    documents = page.atlas.documents
    themes = dict(zip(page.atlas.topics["theme"].astype(int), page.atlas.topics["theme_label"].astype(str)))
    wanted: dict[str, Mapping | None] = {"theme": themes}
    for column in ("collection", "venue", "year", "decision"):
        if column in documents.columns and documents[column].nunique() > 1:
            wanted[column] = None
    if "collection" in wanted and "venue" in wanted:
        del wanted["venue"]  # a collection names its venue already
    return wanted


def render(page: Page) -> None:
    """The panel, when something narrows the papers shown; nothing otherwise."""
    if not scope.filters_active(page) or page.shown.empty:
        return
    ids = frozenset(page.shown["doc_id"].astype(str)) & frozenset(page.atlas.documents["doc_id"].astype(str))
    # one label whatever the count: a new label would be a new widget, closing the panel at each selection
    if not st.toggle("What the papers shown hold", key=TOGGLE_KEY, help=__doc__.split("\n\n")[0]):
        return
    columns = mixed_columns(page)
    current = summary_of(page.cache_key, digest(page.cache_key, sorted(ids)), ids, page.atlas, columns)
    kept = st.session_state.get(KEPT_KEY)
    if kept is not None and kept["ids"] != ids:
        kept_key = digest(page.cache_key, sorted(kept["ids"]))
        other = summary_of(page.cache_key, kept_key, kept["ids"], page.atlas, columns)
        left, right = st.columns(2)
        with left:
            draw(page, other, f"A: {kept['name']}", kept["ids"], "a")
        with right:
            draw(page, current, "B: now", ids, "b")
        if st.button("Forget A", key="selection_forget"):
            del st.session_state[KEPT_KEY]
            st.rerun()
    else:
        draw(page, current, "This selection", ids, "one")
        if st.button("Keep as A, to compare with the next selection", key="selection_keep"):
            st.session_state[KEPT_KEY] = {"ids": ids, "name": f"{len(ids):,} papers"}
            st.rerun()


def draw(page: Page, summary: summaries.Summary, heading: str, ids: frozenset[str], key: str) -> None:
    """One summary: counts, phrases, mixes, representative papers, BibTeX download."""
    st.markdown(
        f"**{display.literal_markdown(heading)}**: {summary.papers:,} of {summary.total:,} papers "
        f"({summary.papers / max(summary.total, 1):.1%})"
    )
    if not summary.phrases.empty:
        st.caption(
            "Phrases that set it apart from the rest of the atlas (c-TF-IDF"
            + (f", a sample of {summaries.CONTRAST_PAPERS:,} of its papers" if summary.sampled else "")
            + "): "
        )
        st.text(", ".join(f"{row.phrase} ({row.papers})" for row in summary.phrases.itertuples()))
    for column, table in summary.mixes.items():
        st.dataframe(
            table,
            hide_index=True,
            key=f"selection-mix-{key}-{column}",
            column_order=["value", "papers", "share", "share_low", "share_high", "atlas_share", "lift"],
            column_config={
                "value": st.column_config.TextColumn(MIX_HEADINGS.get(column, column.title())),
                "papers": st.column_config.NumberColumn("Papers"),
                "share": st.column_config.NumberColumn("Share", format="percent"),
                "share_low": st.column_config.NumberColumn("95% low", format="percent"),
                "share_high": st.column_config.NumberColumn("95% high", format="percent"),
                "atlas_share": st.column_config.NumberColumn("Share of the atlas", format="percent"),
                "lift": st.column_config.NumberColumn("Lift", format="%.2f×", help="share here / share of the atlas"),
            },
        )
    if not summary.representatives.empty:
        st.caption("Most representative (closest to the selection's centre):")
        st.text("\n".join(f"• {title}" for title in summary.representatives["title"]))
    st.download_button(
        "BibTeX of these papers",
        data=bibtex_of(page.cache_key, digest(page.cache_key, sorted(ids)), ids, page.atlas.documents),
        file_name=download_bytes.download_name("selection", "bib"),
        mime="application/x-bibtex",
        key=f"selection-bibtex-{key}",
        on_click="ignore",
    )
