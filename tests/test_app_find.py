"""AppTest of the "Find and place" and "Decisions" tabs on a real cache (300 ICLR 2025 papers)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT

APP = str(ROOT / "dashboard" / "app.py")


@pytest.fixture
def app(slice_cache: Path, monkeypatch) -> AppTest:
    """The page on the "Find and place" tab (tabs run only when open)."""
    monkeypatch.setenv("ATLAS_CACHE", str(slice_cache))
    monkeypatch.setenv("ATLAS_MAP_RENDERER", "plotly")  # these tests read the plotly map's spec
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    assert not at.exception
    at.session_state["tab"] = "Find and place"
    at.run()
    assert not at.exception
    return at


def frame_with(at: AppTest, column: str):
    return next(frame.value for frame in at.dataframe if column in frame.value.columns)


def test_semantic_search_lists_the_exact_title_first(app: AppTest):
    from pipeline.cache import read_cache

    documents = read_cache(Path(os.environ["ATLAS_CACHE"])).documents
    title = documents["title"].iloc[42]
    next(widget for widget in app.text_input if widget.key == "semantic_query").input(title).run()
    assert not app.exception
    hits = frame_with(app, "score")
    assert hits.iloc[0]["title"] == title
    assert list(hits["score"]) == sorted(hits["score"], reverse=True)


def test_semantic_search_respects_the_topic_filter(app: AppTest):
    topic = next(option for option in app.multiselect(key="topics").options)
    app.multiselect(key="topics").select(topic).run()
    next(widget for widget in app.text_input if widget.key == "semantic_query").input(
        "diffusion models for images"
    ).run()
    hits = frame_with(app, "score")
    assert hits["topic_label"].nunique() == 1


def test_pasted_abstract_is_placed_with_its_nearest_paper(app: AppTest):
    app.text_area(key="pasted_abstract").input(
        "We propose a reinforcement learning agent whose policy stays "
        "robust when the environment's dynamics shift at test time."
    ).run()
    assert not app.exception
    placed = frame_with(app, "nearest")
    assert len(placed) == 1 and placed.iloc[0]["topic_label"] and placed.iloc[0]["nearest"]


def test_search_hits_are_starred_on_the_main_map(app: AppTest):
    next(widget for widget in app.text_input if widget.key == "semantic_query").input(
        "diffusion models for images"
    ).run()
    hits = frame_with(app, "score")
    app.session_state["tab"] = "Map and papers"
    app.run()
    assert not app.exception
    import json

    spec = json.loads(app.get("plotly_chart")[0].proto.spec)
    starred = next(trace for trace in spec["data"] if trace["name"].startswith("search hits"))
    assert len(starred["customdata"]) == len(hits) == 20
    assert app.query_params["find"] == "diffusion models for images"  # the search is part of the shared view


def test_decisions_tab_and_decision_colouring(app: AppTest):
    assert "Decisions" in [tab.label for tab in app.tabs]
    app.session_state["tab"] = "Decisions"
    app.run()
    rates = frame_with(app, "rate_low")
    assert rates["decided"].sum() > 0 and (rates["rate_low"].dropna() <= rates["rate"].dropna()).all()
    app.session_state["tab"] = "Map and papers"
    app.run()
    app.selectbox(key="colour").set_value("decision").run()
    assert not app.exception
