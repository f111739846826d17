"""dashboard.figures.charts: figures are built from the tables, map points carry doc_ids, corpus text is escaped."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import pytest

from dashboard import display
from dashboard.figures import charts

INJECTION = "<script>alert(1)</script> <b>bold</b> **md** $x$"


@pytest.fixture
def documents() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "doc_id": ["aaaaBBBB01", "aaaaBBBB02", "aaaaBBBB03", "row-4", "row-5", "row-6"],
            "title": [INJECTION, "Plain title", None, "Fourth", None, "Sixth"],
            "abstract": ["abs one", "abs two", "An abstract without a title " * 10, "abs four", None, "abs six"],
            "topic": [0, 0, 1, 1, -1, -1],
            "probability": [1.0, 0.9, 0.8, 0.7, 0.0, 0.0],
            "x": [0.0, 1.0, 2.0, 3.0, 4.0, 5.0],
            "y": [5.0, 4.0, 3.0, 2.0, 1.0, 0.0],
        }
    )


@pytest.fixture
def topics() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "topic": [-1, 0, 1],
            "label": [
                "Outliers",
                "<i>attention</i>, heads",
                "graphs, nodes, a very long label that goes on and on and on",
            ],
            "size": [2, 2, 2],
            "top_terms": [
                [],
                [["<i>attention</i>", 0.5], ["heads", 0.25]],
                [["graphs", 0.4], ["nodes", 0.3], ["edges", 0.1]],
            ],
            "representative_doc_ids": [[], ["aaaaBBBB01"], ["aaaaBBBB03"]],
            "x": [float("nan"), 0.5, 2.5],
            "y": [float("nan"), 4.5, 2.5],
        }
    )


def test_palette_has_sixty_distinct_colours_and_grey_outliers():
    colours = [display.topic_colour(topic) for topic in range(60)]
    assert len(set(colours)) == 60
    assert display.topic_colour(-1) == display.OUTLIER_COLOUR
    assert display.OUTLIER_COLOUR not in colours


def test_map_colours_each_point_by_its_topic_with_outliers_beneath(documents, topics):
    figure = charts.topic_map_figure(documents, topics)
    assert all(isinstance(trace, go.Scattergl) for trace in figure.data)
    assert len(figure.data) == 2
    outliers, points = figure.data
    scale = [colour for _, colour in points.marker.colorscale]
    last = points.marker.cmax
    topic_of = dict(zip(documents["doc_id"], documents["topic"]))
    for doc_id, value in zip(points.customdata, points.marker.color):
        assert scale[round(value / last * (len(scale) - 1))] == display.topic_colour(topic_of[doc_id])
    assert outliers.marker.color == display.OUTLIER_COLOUR
    assert outliers.marker.opacity < figure.data[1].marker.opacity
    assert outliers.marker.size < figure.data[1].marker.size
    assert figure.layout.dragmode in ("lasso", "select")


def test_map_customdata_maps_each_point_back_to_its_document(documents, topics):
    figure = charts.topic_map_figure(documents, topics)
    by_id = documents.set_index("doc_id")
    seen = []
    for trace in figure.data:
        for doc_id, x, y in zip(trace.customdata, trace.x, trace.y):
            assert (by_id.loc[doc_id, "x"], by_id.loc[doc_id, "y"]) == (x, y)
            seen.append(doc_id)
    assert sorted(seen) == sorted(documents["doc_id"])


def test_map_hover_escapes_titles_and_falls_back_to_the_abstract(documents, topics):
    figure = charts.topic_map_figure(documents, topics)
    hovers = {doc_id: text for trace in figure.data for doc_id, text in zip(trace.customdata, trace.hovertext)}
    injected = hovers["aaaaBBBB01"]
    assert "<script>" not in injected and "<b>bold</b>" not in injected and "<i>" not in injected
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in injected
    assert "&lt;i&gt;attention&lt;/i&gt;" in injected  # the topic label is escaped too
    untitled = hovers["aaaaBBBB03"].replace("<br>", " ")
    assert "An abstract without a title" in untitled and "…" in untitled
    assert len(untitled) < 250
    assert "(no text)" in hovers["row-5"]


def test_map_labels_are_escaped_annotations_with_a_halo(documents, topics):
    figure = charts.topic_map_figure(documents, topics)
    annotations = figure.layout.annotations
    assert len(annotations) == 2  # no label for the outlier topic
    texts = [annotation.text for annotation in annotations]
    assert "&lt;i&gt;attention&lt;/i&gt;, heads" in texts
    assert all(annotation.bgcolor and annotation.showarrow is False for annotation in annotations)
    assert all(len(text) <= display.MAP_LABEL_CHARS + 20 for text in texts)
    assert (annotations[0].x, annotations[0].y) == (0.5, 4.5)


def test_map_labels_only_topics_that_are_shown(documents, topics):
    figure = charts.topic_map_figure(documents[documents["topic"] == 1], topics)
    assert [annotation.x for annotation in figure.layout.annotations] == [2.5]


def test_map_of_no_documents_says_so(documents, topics):
    figure = charts.topic_map_figure(documents.iloc[0:0], topics)
    assert len(figure.data) == 0
    assert "No papers match" in figure.layout.annotations[0].text


def test_all_outlier_map_draws_visible_points(documents, topics):
    figure = charts.topic_map_figure(documents[documents["topic"] == -1], topics)
    assert len(figure.data) == 1 and figure.data[0].marker.opacity >= 0.5


def test_topic_size_chart_is_horizontal_sorted_and_escaped(topics):
    sized = topics.assign(size=[7, 3, 9])
    figure = charts.topic_size_figure(sized)
    bar = figure.data[0]
    assert bar.orientation == "h"
    assert list(bar.x) == [9, 3, 7]  # largest topic first, outliers last
    assert bar.y[-1] == "Outliers"
    assert all("<i>" not in label for label in bar.y)
    assert figure.layout.yaxis.autorange == "reversed"
    assert len(charts.topic_size_figure(sized, include_outliers=False).data[0].x) == 2


def test_top_terms_small_multiples(topics):
    figure = charts.top_terms_figure(topics, [1, 0, 99])
    assert len(figure.data) == 2  # unknown topic 99 skipped
    assert list(figure.data[0].y) == ["graphs", "nodes", "edges"]
    assert list(figure.data[1].y) == ["&lt;i&gt;attention&lt;/i&gt;", "heads"]
    assert all("<i>" not in annotation.text for annotation in figure.layout.annotations)
    assert list(figure.data[0].x) == [0.4, 0.3, 0.1]


def test_top_terms_without_topics_shows_a_notice(topics):
    figure = charts.top_terms_figure(topics, [])
    assert len(figure.data) == 0
    assert "Choose" in figure.layout.annotations[0].text


def test_shorten_cuts_at_a_word():
    assert display.shorten("alpha beta gamma", 100) == "alpha beta gamma"
    assert display.shorten("alpha beta gamma", 12) == "alpha beta…"
    assert len(display.shorten("x" * 50, 10)) == 10
