"""The structure of the topics: the topic tree, how topics relate, and topics against primary areas. Pure.

Tables in, a plotly Figure or a DataFrame out, no Streamlit. Topic ids are never used as array positions.
Corpus strings go through :func:`dashboard.display.plotly_escape` before they reach a figure (``&``, ``<``, ``>``
escaped; quotes kept, since plotly would show ``&quot;`` literally).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dashboard.display import FONT_FAMILY, OUTLIER_TOPIC, as_text_list, plotly_escape, shorten
from dashboard.figures import tree_labels
from dashboard.figures.topic_map import area_order, theme_colours
from pipeline.topics.themes import OUTLIER_THEME, leaf_order

ROOT_NODE = "all"
TREE_HEIGHT_PX = 680
AXIS_LABEL_CHARS = 34
# A paper sits "between areas" when more than this share of its 10 most similar papers carry one and the same
# other primary area. "Any other area" is too weak a test: on the whole of ICLR 2025 (static encoder) only 32% of a
# paper's neighbours share its area, so 8,330 of 11,670 papers would qualify; one other area holding 6 or more of
# the 10 picks 817 (7%), 7 or more 377.
OTHER_AREA_SHARE = 0.5
MANY_AREA_COLUMNS = 25  # above this many columns, the areas chart's headers stand upright and cells carry no text


def node_id(kind: str, key: int) -> str:
    """The tree's node id of a theme or topic: "theme:3", "topic:12"."""
    return f"{kind}:{int(key)}"


def node_topics(node: str, topics: pd.DataFrame) -> tuple[str, list[int]]:
    """What a clicked tree node stands for: ("all", []), ("theme", its topics) or ("topic", [topic]).

    Raises ValueError for a node id this module did not make."""
    if node == ROOT_NODE:
        return "all", []
    kind, _, key = str(node).partition(":")
    if kind == "theme":
        return "theme", sorted(int(topic) for topic in topics.loc[topics["theme"] == int(key), "topic"])
    if kind == "topic":
        return "topic", [int(key)]
    raise ValueError(f"not a topic-tree node: {node!r}")


class TreeText(NamedTuple):
    """What the topic tree writes in its blocks (:func:`tree_text`)."""

    themes: pd.DataFrame  # per theme id: theme_label, size (papers), n (topics)
    ordered: pd.DataFrame  # the real topics in drawing order
    theme_blocks: dict[int, tree_labels.Block]  # each theme's smallest block (px)
    topic_blocks: dict[int, tree_labels.Block]  # each topic's smallest block (px)
    lines: dict[int, list[str]]  # each topic's text, tree_labels.topic_lines for its smallest block


def tree_text(topics: pd.DataFrame, height: int) -> TreeText:
    """The topic tree's blocks and texts for a chart ``height`` px tall (tree_labels.tree_blocks at the widths it
    estimates). ``topics``: topic, label, size, theme, theme_label."""
    real = topics[topics["topic"] != OUTLIER_TOPIC]
    themes = real.groupby("theme", sort=True).agg(
        theme_label=("theme_label", "first"), size=("size", "sum"), n=("topic", "size")
    )
    ordered = real.sort_values(["theme", "size"], ascending=[True, False])
    members = {int(theme): group for theme, group in ordered.groupby("theme", sort=False)}
    theme_blocks, topic_blocks = tree_labels.tree_blocks(
        [
            (int(theme), int(row["size"]), list(zip(members[int(theme)]["topic"], members[int(theme)]["size"])))
            for theme, row in themes.iterrows()
        ],
        height,
    )
    lines = {
        int(row.topic): tree_labels.topic_lines(str(row.label), int(row.size), topic_blocks[int(row.topic)])
        for row in ordered.itertuples(index=False)
    }
    return TreeText(themes, ordered, theme_blocks, topic_blocks, lines)


def shortened_tree_names(topics: pd.DataFrame, height: int | None = None) -> list[str]:
    """The labels of the topics whose tree block may not show the whole name (an acronym, a name cut with "…", or
    a text that does not fit its estimated block, which plotly hides), in the tree's order: the page lists them under
    the tree, so every topic can be read without hovering. Plain text (not escaped)."""
    text = tree_text(topics, height or TREE_HEIGHT_PX)

    def whole(topic: int, label: str) -> bool:
        written = "".join("".join(text.lines[topic]).split())
        return "".join(label.split()) in written and tree_labels.fits(text.lines[topic], text.topic_blocks[topic])

    return [str(row.label) for row in text.ordered.itertuples(index=False) if not whole(int(row.topic), str(row.label))]


def topic_tree_figure(topics: pd.DataFrame, height: int | None = None) -> go.Figure:
    """A treemap of the topic tree: the themes (cut from the hierarchy), each a block of its topics; areas are paper
    counts, colours the themes'. No "All papers" level: as an icicle's first column it was a blank band of a third of
    the width that took it from the topics' names. Each node's ``id`` is :func:`node_id` (``customdata`` too), so a
    click tells which theme or topic was chosen. Labels are chosen to fit their blocks at 10 px
    (:mod:`dashboard.figures.tree_labels`); one that still does not fit is hidden (named on hover), never shrunk to
    micro-text. ``topics``: topic, label, size, theme, theme_label."""
    colours = theme_colours(topics)
    themes, ordered, blocks_of_themes, _, lines_of_topics = tree_text(topics, height or TREE_HEIGHT_PX)
    ids: list[str] = []
    labels: list[str] = []
    parents: list[str] = []
    values: list[int] = []
    colour_list: list[str] = []
    hover: list[str] = []
    for theme, row in themes.iterrows():
        ids.append(node_id("theme", theme))
        labels.append(plotly_escape(tree_labels.theme_line(str(row["theme_label"]), blocks_of_themes[int(theme)])))
        parents.append("")
        values.append(int(row["size"]))
        colour_list.append(colours.get(int(theme), "#9E9E9E"))
        hover.append(
            f"Theme: {plotly_escape(row['theme_label'])}<br>{int(row['size']):,} papers in {int(row['n'])} topics"
        )
    for row in ordered.itertuples(index=False):
        ids.append(node_id("topic", row.topic))
        # Words stay whole ("Differenti / al privacy" at 1500 px); a label that does not fit its block is hidden
        # (uniformtext "hide") and named by the hover and by shortened_tree_names.
        labels.append("<br>".join(plotly_escape(line) for line in lines_of_topics[int(row.topic)]))
        parents.append(node_id("theme", row.theme))
        values.append(int(row.size))
        colour_list.append(colours.get(int(row.theme), "#9E9E9E"))
        hover.append(f"Topic {int(row.topic)}: {plotly_escape(str(row.label))}<br>{int(row.size):,} papers")
    figure = go.Figure(
        go.Treemap(
            ids=ids,
            labels=labels,
            parents=parents,
            values=values,
            branchvalues="total",
            customdata=ids,
            marker={"colors": colour_list, "line": {"color": "#FFFFFF", "width": 1}},
            tiling={"pad": 2},
            pathbar={"visible": False},
            hovertext=hover,
            hoverinfo="text",
            textinfo="label",
            insidetextfont={"size": 12},
            sort=False,
        )
    )
    figure.update_layout(
        uniformtext={"minsize": 10, "mode": "hide"},
        height=height or TREE_HEIGHT_PX,
        margin={"l": 4, "r": 4, "t": 4, "b": 4},
        font={"family": FONT_FAMILY},
    )
    return figure


def topic_vectors(documents: pd.DataFrame, embeddings: np.ndarray, topic_ids: Sequence[int]) -> np.ndarray:
    """(len(topic_ids), dim) unit-length mean of each topic's centred document embeddings, rows in ``topic_ids``
    order (a zero row for a topic without documents). ``embeddings`` (n x dim) is aligned with ``documents`` by
    position. The corpus mean is subtracted first: every abstract shares a large common direction (with the static
    encoder the raw topic means of ICLR 2025 all lie within cosine 0.978-0.997 of each other), which would hide
    how topics differ."""
    topic_of = documents["topic"].astype(int).to_numpy()
    centred = embeddings.astype(np.float64) - embeddings.mean(axis=0, dtype=np.float64)
    vectors = np.zeros((len(topic_ids), embeddings.shape[1]), dtype=np.float64)
    for row, topic in enumerate(topic_ids):
        members = topic_of == int(topic)
        if members.any():
            mean = centred[members].mean(axis=0)
            norm = float(np.linalg.norm(mean))
            vectors[row] = mean / norm if norm > 0 else mean
    return vectors


def _axis_label(topic: int, label: str) -> str:
    return plotly_escape(f"{shorten(label, AXIS_LABEL_CHARS)} · {topic}")


def similarity_figure(
    topics: pd.DataFrame, hierarchy: pd.DataFrame, vectors_by_topic: dict[int, np.ndarray]
) -> go.Figure:
    """Heatmap of the cosine similarity between topics' mean embeddings, topics in the tree's order (so each
    theme is a block on the diagonal), the diagonal left blank; a theme's block is outlined in its colour.

    ``vectors_by_topic``: {topic id: unit vector} (see :func:`topic_vectors`). Readable up to about 60 topics.
    """
    real = topics[topics["topic"] != OUTLIER_TOPIC]
    order = [topic for topic in leaf_order(hierarchy, real["topic"]) if topic in vectors_by_topic]
    labels = dict(zip(real["topic"].astype(int), real["label"].astype(str)))
    theme_of = dict(zip(real["topic"].astype(int), real["theme"].astype(int)))
    matrix = np.vstack([vectors_by_topic[topic] for topic in order]) if order else np.zeros((0, 1))
    similarity = matrix @ matrix.T
    np.fill_diagonal(similarity, np.nan)
    names = [_axis_label(topic, labels[topic]) for topic in order]
    hover = [
        [
            f"{plotly_escape(labels[a])}<br>{plotly_escape(labels[b])}<br>cosine similarity {similarity[i, j]:.2f}"
            if i != j
            else plotly_escape(labels[a])
            for j, b in enumerate(order)
        ]
        for i, a in enumerate(order)
    ]
    figure = go.Figure(
        go.Heatmap(
            z=similarity,
            x=names,
            y=names,
            colorscale="Blues",
            zmin=0,
            zmax=max(float(np.nanmax(similarity)) if similarity.size > 1 else 1.0, 0.1),
            hovertext=hover,
            hoverinfo="text",
            colorbar={"title": {"text": "cosine"}, "thickness": 12},
            xgap=1,
            ygap=1,
        )
    )
    colours = theme_colours(topics)
    start = 0
    for index in range(1, len(order) + 1):
        if index == len(order) or theme_of[order[index]] != theme_of[order[start]]:
            figure.add_shape(
                type="rect",
                x0=start - 0.5,
                x1=index - 0.5,
                y0=start - 0.5,
                y1=index - 0.5,
                line={"color": colours.get(theme_of[order[start]], "#555"), "width": 2},
            )
            start = index
    size = max(420, 16 * len(order) + 260)
    figure.update_layout(
        height=size,
        margin={"l": 8, "r": 8, "t": 8, "b": 8},
        font={"family": FONT_FAMILY, "size": 11},
        # Every row labelled (plotly skips every other category label when they are dense); the columns are the
        # same topics in the same order, named on hover: their 57 slanted labels printed over each other at 1280 px.
        xaxis={"showticklabels": False, "showgrid": False, "ticks": ""},
        yaxis={
            "autorange": "reversed",
            "automargin": True,
            "showgrid": False,
            # no scaleanchor: square cells shrank the matrix to the width left beside the labels (240 px at 900 px
            # with the sidebar open) and left the rest of its 1,100 px height blank; rows stay 16 px, labelled
            "tickmode": "array",
            "tickvals": names,
            "ticktext": names,
        },
        plot_bgcolor="#FFFFFF",
    )
    return figure


def area_crosstab(documents: pd.DataFrame, topics: pd.DataFrame, by: str = "theme") -> pd.DataFrame:
    """Papers per (theme or topic, primary area): rows the themes (or topics) by id, outliers left out; columns
    the primary areas, most papers first (:func:`dashboard.figures.topic_map.area_order`); the index holds the row
    names. Papers without an area are not counted. Raises ValueError for ``by`` other than "theme" or "topic"."""
    if by not in ("theme", "topic"):
        raise ValueError(f"by must be 'theme' or 'topic', not {by!r}")
    areas = area_order(documents)
    known = documents[documents["primary_area"].isin(areas)] if areas else documents.iloc[0:0]
    outlier = OUTLIER_THEME if by == "theme" else OUTLIER_TOPIC
    known = known[known[by].astype(int) != outlier]
    counts = pd.crosstab(known[by].astype(int), known["primary_area"]).reindex(columns=areas, fill_value=0)
    if by == "theme":
        names = topics[topics["theme"] != OUTLIER_THEME].drop_duplicates("theme").set_index("theme")["theme_label"]
    else:
        names = topics.set_index("topic")["label"]
    counts = counts.sort_index()
    counts.index = [str(names.get(key, key)) for key in counts.index]
    return counts


AREA_ROW_LABELS_PX = 330  # the areas' names (48 characters at 11 px) and the colour bar beside the cells
AREA_CELL_PX = {False: 22.0, True: 8.5}  # a column: "12%" at 10 px; an upright 9 px header (many columns)


def area_chart_min_width(n_columns: int) -> int:
    """Pixels below which :func:`area_share_figure` of ``n_columns`` columns overprints: its percentages, or its
    upright headers when there are more than MANY_AREA_COLUMNS, need AREA_CELL_PX a column beside the areas' names.
    Measured in Chromium: 19 themes fit 820 px (at 1280 x 720 with the sidebar) and printed over each other in 440 px
    (900 x 1000); 57 topics fit 820 px."""
    return int(AREA_ROW_LABELS_PX + n_columns * AREA_CELL_PX[n_columns > MANY_AREA_COLUMNS])


def area_share_figure(counts: pd.DataFrame, normalise: str = "theme") -> go.Figure:
    """Heatmap of :func:`area_crosstab` as shares, primary areas as rows and themes (or topics) as columns.

    ``normalise="theme"``: each column is a theme's papers across the areas (which areas a theme draws from;
    columns sum to 100%); ``"area"``: each row is an area's papers across the themes (which themes an area holds;
    rows sum to 100%). Cells of 3% or more carry their percentage, unless there are more than MANY_AREA_COLUMNS
    columns. Raises ValueError for another ``normalise``.
    """
    if normalise not in ("theme", "area"):
        raise ValueError(f"normalise must be 'theme' or 'area', not {normalise!r}")
    values = counts.to_numpy(dtype=float).T  # areas x themes
    totals = values.sum(axis=0, keepdims=True) if normalise == "theme" else values.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        shares = np.where(totals > 0, values / totals, 0.0)
    # Many columns (topics, not themes) are about 10 px wide at 1280 px: headers upright, smaller and shorter, and no
    # percentages in the cells (they printed over each other); the hover names every cell.
    many = len(counts.index) > MANY_AREA_COLUMNS
    text = [["" if many or share < 0.03 else f"{100 * share:.0f}%" for share in row] for row in shares]
    areas = [plotly_escape(shorten(area, 48)) for area in counts.columns]
    # One line per column header, slanted: wrapped headers side by side printed over each other at 1280 px.
    groups = [plotly_escape(shorten(str(name), 26 if many else 32)) for name in counts.index]
    what = "of the theme's papers" if normalise == "theme" else "of the area's papers"
    hover = [
        [
            f"{plotly_escape(counts.columns[i])}<br>{plotly_escape(counts.index[j])}<br>"
            f"{int(values[i, j]):,} papers, {100 * shares[i, j]:.1f}% {what}"
            for j in range(values.shape[1])
        ]
        for i in range(values.shape[0])
    ]
    figure = go.Figure(
        go.Heatmap(
            z=shares,
            x=list(range(len(groups))),
            y=areas,
            text=text,
            texttemplate="%{text}",
            textfont={"size": 10},
            colorscale="YlGnBu",
            zmin=0,
            hovertext=hover,
            hoverinfo="text",
            xgap=1,
            ygap=1,
            colorbar={"title": {"text": "share"}, "tickformat": ".0%", "thickness": 12},
        )
    )
    figure.update_layout(
        height=max(360, 26 * len(areas) + 120),
        margin={"l": 8, "r": 8, "t": 34, "b": 8},  # the toolbar sits above the headers, not over the last ones
        font={"family": FONT_FAMILY, "size": 11},
        xaxis={
            "side": "top",
            "tickmode": "array",
            "tickvals": list(range(len(groups))),
            "ticktext": groups,
            "tickangle": -90 if many else -45,
            "automargin": True,
            "tickfont": {"size": 9 if many else 10},
        },
        yaxis={"autorange": "reversed", "automargin": True},
    )
    return figure


def papers_between_areas(
    documents: pd.DataFrame, topics: pd.DataFrame, min_other_share: float = OTHER_AREA_SHARE
) -> pd.DataFrame:
    """The papers whose most similar papers (``neighbor_ids``, 10 in a cache) mostly carry one other primary area:
    that area holds more than ``min_other_share`` of the neighbours that have an area.

    Columns doc_id, title, primary_area, neighbour_area (that other area), other_share (0-1: its share of the
    neighbours), topic, topic_label; highest share first. Empty (same columns) without area or neighbour columns.
    """
    columns = ["doc_id", "title", "primary_area", "neighbour_area", "other_share", "topic", "topic_label"]
    if "primary_area" not in documents.columns or "neighbor_ids" not in documents.columns:
        return pd.DataFrame(columns=columns)
    area_of = {
        str(doc_id): area
        for doc_id, area in zip(documents["doc_id"], documents["primary_area"])
        if isinstance(area, str) and area.strip()
    }
    labels = dict(zip(topics["topic"].astype(int), topics["label"].astype(str)))
    records = []
    for doc_id, title, area, neighbours, topic in zip(
        documents["doc_id"],
        documents["title"],
        documents["primary_area"],
        documents["neighbor_ids"],
        documents["topic"],
    ):
        if not (isinstance(area, str) and area.strip()):
            continue
        others = Counter(area_of[other] for other in as_text_list(neighbours) if other in area_of)
        if not others:
            continue
        commonest, count = min(others.items(), key=lambda item: (-item[1], item[0]))
        share = count / sum(others.values())
        if commonest != area and share > min_other_share:
            records.append(
                (str(doc_id), title, area, commonest, round(share, 2), int(topic), labels.get(int(topic), str(topic)))
            )
    table = pd.DataFrame(records, columns=columns)
    return table.sort_values(["other_share", "primary_area", "doc_id"], ascending=[False, True, True]).reset_index(
        drop=True
    )


def between_area_summary(documents: pd.DataFrame, between: pd.DataFrame) -> pd.DataFrame:
    """Per primary area: papers, how many of them sit between areas (see :func:`papers_between_areas`), that
    share, and the other area they lean to most. Rows in :func:`dashboard.figures.topic_map.area_order`."""
    areas = area_order(documents)
    sizes = documents["primary_area"].value_counts() if areas else pd.Series(dtype=int)
    rows = []
    for area in areas:
        mine = between[between["primary_area"] == area]
        lean = mine["neighbour_area"].value_counts()
        rows.append(
            {
                "primary_area": area,
                "papers": int(sizes.get(area, 0)),
                "between": len(mine),
                "share": len(mine) / max(int(sizes.get(area, 0)), 1),
                "leans_to": lean.index[0] if len(lean) else None,
            }
        )
    return pd.DataFrame(rows, columns=["primary_area", "papers", "between", "share", "leans_to"])
