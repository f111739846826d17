"""dashboard.figures.charts: figures built from the tables, highlighted points carry doc_ids, corpus text escaped."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import pytest

from dashboard import display
from dashboard.figures import charts
from dashboard.tables import find

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


def test_hover_escapes_titles_and_falls_back_to_the_abstract(documents, topics):
    hovers = dict(zip(documents["doc_id"], display.hover_texts(documents, display.topic_labels(topics))))
    injected = hovers["aaaaBBBB01"]
    assert "<script>" not in injected and "<b>bold</b>" not in injected and "<i>" not in injected
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in injected
    assert "&lt;i&gt;attention&lt;/i&gt;" in injected  # the topic label is escaped too
    untitled = hovers["aaaaBBBB03"].replace("<br>", " ")
    assert "An abstract without a title" in untitled and "…" in untitled
    assert len(untitled) < 250
    assert "(no text)" in hovers["row-5"]


def test_highlight_points_draws_a_copy_of_the_map_with_the_points_on_top(documents, topics):
    base = go.Figure(go.Scattergl(x=[0.0], y=[0.0], customdata=["aaaaBBBB01"]))
    points = find.overlay_points(documents.iloc[[0, 2]], "search hit")
    figure = charts.highlight_points(base, points, "search hits")
    assert len(base.data) == 1 and len(figure.data) == 2  # the map itself is not changed
    top = figure.data[-1]
    assert list(top.customdata) == ["aaaaBBBB01", "aaaaBBBB03"] and top.marker.symbol == "star"
    assert "&lt;script&gt;" in top.hovertext[0] and "<script>" not in top.hovertext[0]


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
