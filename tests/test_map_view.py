"""The map of a view (dashboard.figures.topic_map), on a synthetic table and on a real cache's tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dashboard.figures import map_model, plotly_map, publication, topic_map
from dashboard.figures.topic_map import Highlights, MapState
from pipeline.cache import HIERARCHY_COLUMNS

# Topic ids that are neither contiguous nor start at 0; three themes.
TOPICS = pd.DataFrame(
    {
        "topic": [-1, 5, 9, 40, 41],
        "label": ["Outliers", "graphs, nodes", "proteins, molecules", "<b>LLMs</b>, agents", "reasoning, math"],
        "size": [10, 30, 30, 30, 30],
        "theme": [-1, 1, 1, 0, 2],
        "theme_label": ["Outliers", "graphs, proteins", "graphs, proteins", "<b>LLMs</b>, agents", "reasoning, math"],
    }
)


def documents() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    centres = {-1: (5, 5), 5: (0, 0), 9: (1, 8), 40: (9, 1), 41: (9, 9)}
    rows = []
    for topic, size in zip(TOPICS["topic"], TOPICS["size"]):
        for index in range(size):
            x, y = rng.normal(centres[topic], 0.4)
            rows.append(
                {
                    "doc_id": f"d{topic}-{index}",
                    "title": f"<i>paper</i> {topic}-{index}",
                    "abstract": "",
                    "topic": topic,
                    "x": x,
                    "y": y,
                    "decision": ["Oral", "Poster", "Reject", None][index % 4],
                    "primary_area": ["optimization", "generative models", None][index % 3],
                }
            )
    return topic_map.with_themes(pd.DataFrame(rows), TOPICS)


def shown_labels(figure) -> list[str]:
    return [annotation.text for annotation in figure.layout.annotations]


def test_the_whole_map_labels_its_themes_beside_the_points():
    docs = documents()
    figure = plotly_map.map_figure(docs, TOPICS, MapState())
    assert sorted(shown_labels(figure)) == sorted(
        ["&lt;b&gt;LLMs&lt;/b&gt;, agents", "graphs, proteins", "reasoning, math"]
    )  # escaped, never markup
    x_low, x_high = docs["x"].min(), docs["x"].max()
    for annotation in figure.layout.annotations:
        assert annotation.ax < x_low or annotation.ax > x_high  # the label's column lies beside the points
        assert annotation.captureevents is False and annotation.hovertext is None  # never takes the hover
    assert figure.layout.yaxis.scaleanchor == "x"
    ids = np.concatenate([np.asarray(trace.customdata) for trace in figure.data])
    assert sorted(ids) == sorted(docs["doc_id"])  # every point, once, carries its doc_id


def test_topic_level_and_drill_down_label_the_fine_topics():
    docs = documents()
    assert len(plotly_map.map_figure(docs, TOPICS, MapState(level="topics")).layout.annotations) == 4
    drilled = plotly_map.map_figure(
        docs[docs["theme"] == 1], TOPICS, MapState(colour_by="topic", theme=1), context=docs[docs["theme"] != 1]
    )
    assert sorted(shown_labels(drilled)) == ["graphs, nodes", "proteins, molecules"]
    context = [trace for trace in drilled.data if trace.name == "rest of the map"]
    assert len(context) == 1 and context[0].hoverinfo == "skip" and len(context[0].x) == 70


@pytest.mark.parametrize(
    ("colour_by", "groups"),
    [
        (
            "theme",
            {"&lt;b&gt;LLMs&lt;/b&gt;, agents (30)", "graphs, proteins (60)", "reasoning, math (30)", "Outliers (10)"},
        ),
        (
            "topic",
            {
                "graphs, nodes (30)",
                "proteins, molecules (30)",
                "&lt;b&gt;LLMs&lt;/b&gt;, agents (30)",
                "reasoning, math (30)",
                "Outliers (10)",
            },
        ),
        ("decision", {"Oral (35)", "Poster (35)", "Reject (30)", "Unknown (30)"}),
        ("primary_area", {"optimization (44)", "generative models (43)", "Unknown (43)"}),
    ],
)
def test_each_colour_mode_has_its_legend(colour_by, groups):
    figure = plotly_map.map_figure(documents(), TOPICS, MapState(colour_by=colour_by))
    assert {trace.name for trace in figure.data} == groups
    assert figure.layout.showlegend


def test_highlights_and_a_kept_selection_are_drawn_on_the_map():
    docs = documents()
    chosen = docs["doc_id"].iloc[3]
    highlights = plotly_map.highlight_rows(
        docs,
        Highlights(search=tuple(docs["doc_id"].iloc[:5]), chosen=chosen, similar=tuple(docs["doc_id"].iloc[10:13])),
    )
    figure = plotly_map.map_figure(
        docs, TOPICS, MapState(), highlights=highlights, selected_ids=docs["doc_id"].iloc[:20]
    )
    names = [trace.name for trace in figure.data]
    assert names[-3:] == ["similar papers (3)", "search hits (5)", "chosen paper (1)"]  # the chosen paper on top
    assert list(figure.data[-1].customdata) == [chosen]
    selected = sum(len(trace.selectedpoints) for trace in figure.data if trace.selectedpoints is not None)
    assert selected == 20


def test_an_empty_view_says_so():
    figure = plotly_map.map_figure(documents().iloc[0:0], TOPICS, MapState())
    assert shown_labels(figure) == ["No papers match the filters"]


def test_the_publication_points_are_the_models_current_view():
    docs = documents()
    shown, context = docs[docs["theme"] == 1], docs[docs["theme"] != 1]
    state = MapState(colour_by="topic", level="themes", theme=1)
    model = map_model.map_model(docs, frozenset(shown["doc_id"]), TOPICS, state, all_levels=False)
    points = publication.view_points(docs, model, Highlights(chosen=shown["doc_id"].iloc[0]))
    assert list(points.columns) == ["x", "y", "colour", "label", "highlight"]
    assert len(points) == len(docs) and points["highlight"].sum() == 1
    assert set(points["label"]) == {"", "graphs, nodes", "proteins, molecules"}  # the drilled theme's topics
    assert (points.iloc[: len(context)]["label"] == "").all() and (
        points.iloc[: len(context)]["colour"] == topic_map.CONTEXT_COLOUR
    ).all()
    legend = model.present_groups()
    assert [name for name, _ in legend] == ["graphs, nodes", "proteins, molecules"]
    assert all(colour.startswith("#") for _, colour in legend)
    whole = publication.view_points(docs, map_model.map_model(docs, frozenset(docs["doc_id"]), TOPICS, MapState()))
    assert set(whole["label"]) == {
        "",
        "graphs, proteins",
        "<b>LLMs</b>, agents",
        "reasoning, math",
    }  # plain text: the renderer escapes


def test_topic_colours_follow_the_ids_order_not_their_values():
    colours = topic_map.topic_colours(TOPICS)
    assert (
        colours[5] == topic_map.TOPIC_PALETTE[0]
        and colours[41] == topic_map.TOPIC_PALETTE[3]
        and colours[-1] == topic_map.OUTLIER_COLOUR
    )


def test_old_caches_get_themes_at_load():
    hierarchy = pd.DataFrame(
        [
            {
                "parent_id": 50,
                "parent_name": "",
                "child_left_id": 48,
                "child_left_name": "",
                "child_right_id": 49,
                "child_right_name": "",
                "distance": 0.9,
                "topics": [5, 9, 40, 41],
            },
            {
                "parent_id": 48,
                "parent_name": "",
                "child_left_id": 5,
                "child_left_name": "",
                "child_right_id": 9,
                "child_right_name": "",
                "distance": 0.5,
                "topics": [5, 9],
            },
            {
                "parent_id": 49,
                "parent_name": "",
                "child_left_id": 40,
                "child_left_name": "",
                "child_right_id": 41,
                "child_right_name": "",
                "distance": 0.4,
                "topics": [40, 41],
            },
        ],
        columns=HIERARCHY_COLUMNS,
    )
    themed = topic_map.themed_topics(TOPICS.drop(columns=["theme", "theme_label"]), hierarchy)
    assert themed["theme"].tolist() == [-1, 0, 0, 1, 1]
    assert topic_map.themed_topics(TOPICS, hierarchy) is TOPICS  # a cache with themes keeps its own


def test_the_view_is_described_in_one_line_for_a_caption():
    line = topic_map.view_description(
        61,
        TOPICS,
        "iclr2025/x.parquet",
        chosen_topics=(40,),
        query=" agents ",
        decisions=("Oral",),
        areas=("optimization",),
        theme=1,
        selected=5,
    )
    assert line == (
        "iclr2025/x.parquet · 61 papers · theme: graphs, proteins · topics: <b>LLMs</b>, agents "
        '· search: "agents" · decision: Oral · primary area: optimization · 5 selected on the map'
    )
    assert topic_map.view_description(130, TOPICS) == "130 papers"


def parted_documents() -> tuple[pd.DataFrame, pd.DataFrame]:
    """documents() with topic 5 split in two subtopics at its median x, and the subtopics table."""
    docs = documents()
    in_five = (docs["topic"] == 5).to_numpy()
    right = docs["x"].to_numpy() > docs.loc[in_five, "x"].median()
    docs["subtopic"] = np.where(in_five, np.where(right, 1, 0), -1)
    subtopics = pd.DataFrame(
        {"subtopic": [0, 1], "topic": [5, 5], "label": ["left <graphs>", "right graphs"], "size": [15, 15]}
    )
    return docs, subtopics


def test_by_zoom_the_plotly_map_labels_the_first_level_and_a_drilled_topic_its_subtopics():
    docs, subtopics = parted_documents()
    themes = shown_labels(plotly_map.map_figure(docs, TOPICS, MapState()))
    assert shown_labels(plotly_map.map_figure(docs, TOPICS, MapState(level="zoom"), subtopics=subtopics)) == themes
    in_five = docs[docs["topic"] == 5]
    state = MapState(level="zoom", theme=1, topic=5)
    figure = plotly_map.map_figure(in_five, TOPICS, state, context=docs[docs["topic"] != 5], subtopics=subtopics)
    assert sorted(shown_labels(figure)) == ["left &lt;graphs&gt;", "right graphs"]
    assert shown_labels(plotly_map.map_figure(in_five, TOPICS, state)) == ["graphs, nodes"]  # no subtopics given
    every = frozenset(docs["doc_id"])
    model = map_model.map_model(docs, every, TOPICS, MapState(level="subtopics"), subtopics=subtopics)
    points = publication.view_points(docs, model)
    assert set(points["label"]) == {"", "left <graphs>", "right graphs"}
    assert (points["label"] != "").sum() == 30
