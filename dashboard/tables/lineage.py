"""What changed since the previous atlas: pure builders over a cache's lineage (no Streamlit).

The lineage is written by an aligned rebuild or by ``add`` (pipeline.topics.align, pipeline.operations.add): the
manifest's ``lineage`` record (per topic its status, per gone topic where its papers went) and the per-paper table
``lineage.parquet`` (previous_topic, topic; <NA> = not in that atlas). Old and new topic ids share one id space:
a topic that kept its id is the same topic. Every string from the corpus goes through
:func:`dashboard.display.plotly_escape` before it reaches a figure (plotly renders some HTML in labels and hovers).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from dashboard.display import (
    FONT_FAMILY,
    OUTLIER_COLOUR,
    OUTLIER_LABEL,
    OUTLIER_TOPIC,
    plotly_escape,
    shorten,
    topic_colour,
)

NOT_IN_PREVIOUS = "not in the previous atlas"
NOT_IN_CURRENT = "no longer in the corpus"
ABSENT_COLOUR = "#BDBDBD"
STATUS_ORDER = ("kept", "split", "merged", "new")


def has_lineage(manifest: Mapping[str, Any]) -> bool:
    """True when the manifest holds a lineage record with topics (an aligned rebuild or an add)."""
    lineage = manifest.get("lineage")
    return isinstance(lineage, Mapping) and isinstance(lineage.get("topics"), list)


def topic_name(topic: Any, labels: Mapping[int, str], max_chars: int = 44) -> str:
    """ "id · label" (shortened), "Outliers" for -1, or the absent-side text for <NA>/None (not escaped)."""
    if topic is None or pd.isna(topic):
        return ""
    topic = int(topic)
    if topic == OUTLIER_TOPIC:
        return OUTLIER_LABEL
    return f"{topic} · {shorten(str(labels.get(topic, '')), max_chars)}"


def previous_labels(lineage: Mapping[str, Any]) -> dict[int, str]:
    """{old topic id: its label in the previous atlas} from the lineage record."""
    return {int(topic): str(entry.get("label", "")) for topic, entry in (lineage.get("previous_topics") or {}).items()}


def flow_counts(lineage_table: pd.DataFrame) -> pd.DataFrame:
    """Papers per (previous_topic, topic) from the per-paper table; columns previous_topic, topic (Int64, <NA> =
    absent there), n_papers, largest first."""
    if lineage_table.empty:
        return pd.DataFrame(
            {
                "previous_topic": pd.array([], dtype="Int64"),
                "topic": pd.array([], dtype="Int64"),
                "n_papers": pd.Series([], dtype=int),
            }
        )
    table = lineage_table[["previous_topic", "topic"]].astype("Int64")
    counts = table.groupby(["previous_topic", "topic"], dropna=False).size().rename("n_papers").reset_index()
    return counts.sort_values(["n_papers", "previous_topic", "topic"], ascending=[False, True, True]).reset_index(
        drop=True
    )


def _rgba(colour: str, alpha: float) -> str:
    colour = colour.lstrip("#")
    red, green, blue = (int(colour[i : i + 2], 16) for i in (0, 2, 4))
    return f"rgba({red},{green},{blue},{alpha})"


def _node_colour(topic: Any) -> str:
    if topic is None or pd.isna(topic):
        return ABSENT_COLOUR
    return OUTLIER_COLOUR if int(topic) == OUTLIER_TOPIC else topic_colour(int(topic))


def sankey_figure(
    flows: pd.DataFrame, old_labels: Mapping[int, str], new_labels: Mapping[int, str], min_papers: int = 3
) -> go.Figure:
    """Sankey of papers from the previous atlas's topics (left) to this atlas's (right).

    ``flows``: :func:`flow_counts`. Flows of fewer than ``min_papers`` papers are left out (the title says how many
    papers they hold). Nodes are "id · label", in topic colours; papers new to the corpus enter from a grey
    "not in the previous atlas" node, removed ones leave to "no longer in the corpus". Returns the Figure.
    """
    shown = flows[flows["n_papers"] >= min_papers]
    hidden = int(flows.loc[flows["n_papers"] < min_papers, "n_papers"].sum())
    left = sorted(shown["previous_topic"].dropna().astype(int).unique().tolist()) + (
        [None] if shown["previous_topic"].isna().any() else []
    )
    right = sorted(shown["topic"].dropna().astype(int).unique().tolist()) + (
        [None] if shown["topic"].isna().any() else []
    )
    left_index = {topic: i for i, topic in enumerate(left)}
    right_index = {topic: len(left) + i for i, topic in enumerate(right)}

    def key(value: Any) -> Any:
        return None if pd.isna(value) else int(value)

    names = [plotly_escape(topic_name(t, old_labels) or NOT_IN_PREVIOUS) for t in left] + [
        plotly_escape(topic_name(t, new_labels) or NOT_IN_CURRENT) for t in right
    ]
    sources = [left_index[key(value)] for value in shown["previous_topic"]]
    targets = [right_index[key(value)] for value in shown["topic"]]
    stayed = [key(a) is not None and key(a) == key(b) for a, b in zip(shown["previous_topic"], shown["topic"])]
    link_colours = [
        _rgba(_node_colour(key(a)), 0.5 if same else 0.28) for a, same in zip(shown["previous_topic"], stayed)
    ]
    hovers = [
        f"{int(n)} papers<br>{names[s]} → {names[t]}" + (" (kept its topic)" if same else "")
        for n, s, t, same in zip(shown["n_papers"], sources, targets, stayed)
    ]
    figure = go.Figure(
        go.Sankey(
            arrangement="snap",
            node={
                "label": names,
                "color": [_node_colour(t) for t in left] + [_node_colour(t) for t in right],
                "pad": 8,
                "thickness": 14,
                "line": {"width": 0},
            },
            link={
                "source": sources,
                "target": targets,
                "value": shown["n_papers"].astype(int).tolist(),
                "color": link_colours,
                "customdata": hovers,
                "hovertemplate": "%{customdata}<extra></extra>",
            },
        )
    )
    title = "Where each topic's papers went: previous atlas (left) → this atlas (right)"
    if hidden:
        title += f"<br><sup>{hidden} papers in flows of fewer than {min_papers} are not drawn</sup>"
    figure.update_layout(
        template="plotly_white",
        height=max(420, 18 * max(len(left), len(right)) + 120),
        margin={"l": 8, "r": 8, "t": 70, "b": 20},
        title={"text": title, "x": 0, "xanchor": "left", "font": {"size": 16}},
        font={"family": FONT_FAMILY, "size": 11},
    )
    return figure


def _sources_text(entries: list[Mapping[str, Any]], labels: Mapping[int, str], absent: str) -> str:
    """ "12 · label (40%); not in the previous atlas (10%)" from a lineage from/to list (shares of the topic)."""
    parts = [f"{topic_name(entry['topic'], labels) or absent} ({entry['share']:.0%})" for entry in entries]
    return "; ".join(parts)


def change_tables(lineage: Mapping[str, Any]) -> dict[str, pd.DataFrame]:
    """The tables of what changed, from the manifest's lineage record: {"new", "split", "merged", "gone", "kept"}.

    new / split / merged / kept: one row per topic of this atlas with that status (topic, label, papers,
    added = papers new to the corpus, kept_share = share of the matched old topic's papers it kept, sources =
    where its papers were before). gone: one row per old topic whose id is no longer used (topic, label, papers,
    fate = merged / split / dissolved, into = the topics it went into, went_to = where its papers went).
    """
    old_labels = previous_labels(lineage)
    new_labels = {int(entry["topic"]): str(entry["label"]) for entry in lineage.get("topics", [])}
    rows: dict[str, list[dict[str, Any]]] = {status: [] for status in STATUS_ORDER}
    for entry in lineage.get("topics", []):
        sources = [topic_name(topic, old_labels) for topic in entry.get("sources", [])]
        rows.setdefault(entry["status"], []).append(
            {
                "topic": int(entry["topic"]),
                "label": str(entry["label"]),
                "papers": int(entry["n_papers"]),
                "added": int(entry.get("n_added", 0)),
                "kept_share": float("nan") if entry.get("carried_share") is None else float(entry["carried_share"]),
                "split_or_merged_from": "; ".join(sources),
                "sources": _sources_text(entry.get("from", []), old_labels, NOT_IN_PREVIOUS),
            }
        )
    gone = [
        {
            "topic": int(entry["topic"]),
            "label": str(entry["label"]),
            "papers": int(entry["n_papers"]),
            "fate": entry["fate"],
            "into": "; ".join(topic_name(topic, new_labels) for topic in entry.get("into", [])),
            "went_to": _sources_text(entry.get("to", []), new_labels, NOT_IN_CURRENT),
        }
        for entry in lineage.get("gone", [])
    ]
    columns = ["topic", "label", "papers", "added", "kept_share", "split_or_merged_from", "sources"]
    tables = {status: pd.DataFrame(rows[status], columns=columns) for status in STATUS_ORDER}
    tables["gone"] = pd.DataFrame(gone, columns=["topic", "label", "papers", "fate", "into", "went_to"])
    return tables


def change_counts(lineage: Mapping[str, Any]) -> dict[str, int]:
    """Topics per status (kept, split, merged, new, gone) and papers (shared, same_topic, added, removed)."""
    counts = {status: 0 for status in STATUS_ORDER}
    for entry in lineage.get("topics", []):
        counts[entry["status"]] = counts.get(entry["status"], 0) + 1
    counts["gone"] = len(lineage.get("gone", []))
    counts.update({f"papers_{key}": int(value) for key, value in (lineage.get("n_papers") or {}).items()})
    return counts


def moved_papers(
    lineage_table: pd.DataFrame, topic: int, old_labels: Mapping[int, str], new_labels: Mapping[int, str]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(moved in, moved out) of one topic id: papers now in ``topic`` that were elsewhere before (column
    ``came_from``), and papers that were in ``topic`` and are now elsewhere (column ``went_to``). Each has doc_id
    and title; papers new to the corpus come from "not in the previous atlas", removed ones go to "no longer in
    the corpus"."""
    table = lineage_table.astype({"previous_topic": "Int64", "topic": "Int64"})
    now, before = table["topic"] == topic, table["previous_topic"] == topic
    moved_in = table[now.fillna(False) & ~before.fillna(False)]
    moved_out = table[before.fillna(False) & ~now.fillna(False)]
    came_from = [topic_name(value, old_labels) or NOT_IN_PREVIOUS for value in moved_in["previous_topic"]]
    went_to = [topic_name(value, new_labels) or NOT_IN_CURRENT for value in moved_out["topic"]]
    return (
        pd.DataFrame(
            {
                "doc_id": moved_in["doc_id"].astype(str).tolist(),
                "title": moved_in["title"].tolist(),
                "came_from": came_from,
            }
        ),
        pd.DataFrame(
            {
                "doc_id": moved_out["doc_id"].astype(str).tolist(),
                "title": moved_out["title"].tolist(),
                "went_to": went_to,
            }
        ),
    )
