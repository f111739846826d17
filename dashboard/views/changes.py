"""The "What changed" view: the previous atlas's topics against this one's, shown when the cache holds a lineage
(an aligned rebuild or an add; see dashboard.tables.lineage for the builders and pipeline.topics.align for how topics
match)."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from dashboard.display import topic_labels
from dashboard.figures.candidate_map import CANDIDATE_MAP_NAME, candidate_map_figure
from dashboard.tables import candidates as candidate_tables
from dashboard.tables import lineage as changes
from pipeline.cache import TopicCache

PLOTLY_CONFIG = {"displaylogo": False, "modeBarButtonsToRemove": ["toImage"]}
TABLE_TITLES = {
    "new": "New topics (no previous topic matched)",
    "split": "Topics split from one previous topic",
    "merged": "Topics merged from several previous topics",
    "gone": "Previous topics whose id is no longer used",
    "kept": "Topics kept (same id as before)",
}


def available(atlas: TopicCache) -> bool:
    """True when the cache holds a lineage to show."""
    return changes.has_lineage(atlas.manifest)


def _summary(lineage: dict, counts: dict[str, int]) -> None:
    previous = lineage.get("previous") or {}
    what = (
        "papers were added without a refit"
        if lineage.get("kind") == "add"
        else "the topics were refitted and matched to the previous ones"
    )
    st.caption(
        f"Compared with the previous atlas of {str(previous.get('created_at', '?'))[:16].replace('T', ' ')} "
        f"({previous.get('n_documents', '?')} papers, {previous.get('n_topics', '?')} topics): {what}. "
        "A topic that kept its id is the same topic, so links and exports that name it stay valid."
    )
    columns = st.columns(6)
    for column, key, name in zip(
        columns, ("kept", "split", "merged", "new", "gone"), ("Kept", "Split", "Merged", "New", "Gone")
    ):
        column.metric(f"{name} topics", counts.get(key, 0))
    shared, same = counts.get("papers_shared", 0), counts.get("papers_same_topic", 0)
    columns[5].metric(
        "Same topic",
        f"{same / shared:.0%}" if shared else "—",
        help=f"{same:,} of the {shared:,} papers in both atlases",
    )
    st.caption(
        f"{counts.get('papers_added', 0):,} papers are new to the corpus; "
        f"{counts.get('papers_removed', 0):,} are no longer in it."
    )


def _tables(tables: dict) -> None:
    config = {
        "label": st.column_config.TextColumn("Topic", width=260),
        "kept_share": st.column_config.NumberColumn("Share of its papers kept", format="percent"),
        "sources": st.column_config.TextColumn("Where its papers were before", width=420),
        "went_to": st.column_config.TextColumn("Where its papers went", width=420),
        "split_or_merged_from": st.column_config.TextColumn("Split or merged from", width=260),
        "into": st.column_config.TextColumn("Into", width=260),
    }
    for status in ("new", "split", "merged", "gone", "kept"):
        table = tables[status]
        with st.expander(f"{TABLE_TITLES[status]} ({len(table)})", expanded=status != "kept" and not table.empty):
            if table.empty:
                st.caption("None.")
            else:
                st.dataframe(table, hide_index=True, column_config=config, key=f"changes-{status}")


def _moved(atlas: TopicCache, old_labels: dict[int, str], new_labels: dict[int, str]) -> None:
    st.subheader("Papers that moved in and out of a topic")
    topics = atlas.topics[atlas.topics["topic"] != changes.OUTLIER_TOPIC].sort_values("topic")
    if topics.empty or atlas.lineage.empty:
        st.caption("This cache has no per-paper lineage.")
        return
    options = {int(topic): changes.topic_name(topic, new_labels, 70) for topic in topics["topic"]}
    chosen = st.selectbox("Topic", list(options), format_func=options.__getitem__, key="changes-topic")
    moved_in, moved_out = changes.moved_papers(atlas.lineage, chosen, old_labels, new_labels)
    left, right = st.columns(2)
    left.markdown(f"**Moved in** ({len(moved_in):,})")
    left.dataframe(
        moved_in,
        hide_index=True,
        column_order=["title", "came_from"],
        column_config={"title": st.column_config.TextColumn("Title", width=340), "came_from": "Came from"},
        key="changes-in",
    )
    right.markdown(f"**Moved out** ({len(moved_out):,})")
    right.dataframe(
        moved_out,
        hide_index=True,
        column_order=["title", "went_to"],
        column_config={"title": st.column_config.TextColumn("Title", width=340), "went_to": "Went to"},
        key="changes-out",
    )


FLOW_NAME = "Topic flow since the previous build"


def flow_figure(atlas: TopicCache) -> go.Figure:
    """The Sankey of papers from the previous atlas's topics to this one's (small flows folded; see
    dashboard.tables.lineage.sankey_figure), for the view and for the downloads."""
    lineage = atlas.manifest["lineage"]
    old_labels = changes.previous_labels(lineage)
    new_labels = {int(topic): str(label) for topic, label in zip(atlas.topics["topic"], atlas.topics["label"])}
    flows = changes.flow_counts(atlas.lineage)
    min_papers = max(3, round(0.002 * int(flows["n_papers"].sum()))) if not flows.empty else 3
    return changes.sankey_figure(flows, old_labels, new_labels, min_papers=min_papers)


def _refit_note(atlas: TopicCache) -> None:
    """Whether the last add said a refit is due, and why (manifest["add_history"])."""
    history = atlas.manifest.get("add_history") or []
    if atlas.manifest["lineage"].get("kind") != "add" or not history:
        return
    reasons = history[-1].get("refit_reasons") or []
    if reasons:
        st.warning("**A refit is due.** " + " ".join(f"{reason[:1].upper()}{reason[1:]}." for reason in reasons))
    else:
        st.caption("No refit is due: the added papers fit the atlas's topics.")


def _count(value: object) -> str:
    return f"{value:,}" if isinstance(value, int) else "?"


def _candidates(atlas: TopicCache) -> dict[str, tuple[str, go.Figure]]:
    """The candidate new topics of the last add: a table, the papers of the chosen one, and the map."""
    history = atlas.manifest.get("add_history") or []
    shown, batch = candidate_tables.shown_candidates(atlas.candidates, history)
    if atlas.manifest["lineage"].get("kind") != "add" or batch is None:
        return {}
    rule = (history[batch - 1].get("candidates") or {}) if len(history) >= batch else {}
    labels = topic_labels(atlas.topics)
    overview = candidate_tables.candidate_overview(shown, labels)
    grown = rule.get("grown") or []
    st.subheader(f"Candidate new topics ({len(overview)})")
    st.caption(
        f"Of the papers this add placed, {_count(rule.get('n_misfits'))} fit no topic well (farther from every topic "
        "than 95% of the atlas's papers from their own, or among outliers) and "
        f"{_count(rule.get('n_new_territory'))} lie in new territory (most of their nearest papers are new ones: "
        f"the odds of a new paper there at least {rule.get('new_territory_odds', 3):g} times the atlas's). Those "
        f"that form a group of at least {rule.get('min_size', '?')} papers (the smallest group the build keeps as a "
        "topic) are listed here, each named by the build's namer and set beside the existing topic nearest it. A "
        "refit decides whether they become topics."
        + (
            f" Instead of forming groups of their own, {sum(int(entry['joined']) for entry in grown):,} flagged "
            f"papers joined candidates that earlier adds found ({', '.join(str(entry['label']) for entry in grown)}): "
            "most of their nearest papers are those candidates' papers."
            if grown
            else ""
        )
    )
    st.dataframe(
        overview,
        hide_index=True,
        column_config={
            "candidate": st.column_config.NumberColumn("Id", width=50),
            "label": st.column_config.TextColumn("Candidate topic", width=240),
            "subtitle": st.column_config.TextColumn("Also about", width=240),
            "size": st.column_config.NumberColumn("Papers"),
            "terms": st.column_config.TextColumn("Terms", width=320),
            "nearest": st.column_config.TextColumn("Nearest existing topic", width=240),
            "nearest_similarity": st.column_config.NumberColumn("Similarity to it", format="%.2f"),
        },
        key="changes-candidates",
    )
    names = dict(zip(overview["candidate"], overview["label"]))
    chosen = st.selectbox(
        "Papers of the candidate", list(names), format_func=lambda c: f"{c} · {names[c]}", key="changes-candidate"
    )
    st.dataframe(
        candidate_tables.candidate_papers(atlas.candidates, atlas.documents, int(chosen), labels),
        hide_index=True,
        column_config={
            "doc_id": "Id",
            "title": st.column_config.TextColumn("Title", width=420),
            "collection": "Collection",
            "placed_in": st.column_config.TextColumn("Placed in topic", width=220),
            "fit_similarity": st.column_config.NumberColumn("Similarity to nearest topic", format="%.2f"),
        },
        key="changes-candidate-papers",
    )
    figure = candidate_map_figure(atlas.documents, shown, candidate_tables.candidate_members(shown))
    st.plotly_chart(figure, theme=None, config=PLOTLY_CONFIG, key="changes-candidate-map")
    return {"changes-candidates": (CANDIDATE_MAP_NAME, figure)}


def render(atlas: TopicCache) -> dict[str, tuple[str, go.Figure]]:
    """Draw the view. Returns its figures for the downloads tab: {"changes-flow": (name, Sankey figure)} and, after
    an add that found candidate new topics, {"changes-candidates": (name, their map)}."""
    lineage = atlas.manifest["lineage"]
    counts = changes.change_counts(lineage)
    _summary(lineage, counts)
    _refit_note(atlas)
    figures = _candidates(atlas)
    figure = flow_figure(atlas)
    st.plotly_chart(figure, theme=None, config=PLOTLY_CONFIG, key="changes-flow")
    _tables(changes.change_tables(lineage))
    old_labels = changes.previous_labels(lineage)
    new_labels = {int(topic): str(label) for topic, label in zip(atlas.topics["topic"], atlas.topics["label"])}
    _moved(atlas, old_labels, new_labels)
    return {"changes-flow": (FLOW_NAME, figure), **figures}
