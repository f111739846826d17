"""The "What changed" tab's builders of an add's candidate new topics (dashboard.tables.candidates,
dashboard.figures.candidate_map) on a small table shaped as pipeline.cache reads candidates.parquet."""

from __future__ import annotations

import math

import pandas as pd

from dashboard.figures.candidate_map import candidate_map_figure
from dashboard.tables.candidates import candidate_members, candidate_overview, candidate_papers, shown_candidates

CANDIDATES = pd.DataFrame(
    {
        "candidate": [0, 1, 2],
        "batch": [1, 2, 2],
        "label": ["Cooking", "Knitting <b>", "Gardening"],
        "subtitle": ["sauce", "wool", "roses"],
        "size": [2, 1, 3],
        "top_terms": [[["sauce", 2.0]], [["wool", 1.0]], [["roses", 3.0], ["compost", 1.0]]],
        "doc_ids": [["a", "b"], ["c"], ["d", "e", "missing"]],
        "representative_doc_ids": [["a"], ["c"], ["d"]],
        "nearest_topic": [4, -1, 4],
        "nearest_similarity": [0.31, 0.12, 0.2],
        "x": [0.0, 1.0, 2.0],
        "y": [0.0, 1.0, 2.0],
    }
)
DOCUMENTS = pd.DataFrame(
    {
        "doc_id": ["a", "b", "c", "d", "e", "f"],
        "title": ["Tomato sauce", "Pesto", "Scarf <i>", "Roses", "Compost", "A transformer"],
        "collection": ["X 2026"] * 5 + ["X 2025"],
        "topic": [4, 4, 5, -1, 4, 5],
        "fit_similarity": [0.2, 0.25, 0.1, 0.05, 0.3, 0.7],
        "x": [0.0, 0.1, 1.0, 2.0, 2.1, 5.0],
        "y": [0.0, 0.1, 1.0, 2.0, 2.1, 5.0],
    }
)
LABELS = {4: "Food", 5: "Clothes"}


def test_the_tab_shows_the_last_adds_candidates_and_those_its_papers_joined():
    two_adds = [{"candidates": {}}, {"candidates": {"grown": []}}]
    shown, batch = shown_candidates(CANDIDATES, two_adds)
    assert batch == 2 and shown["candidate"].tolist() == [1, 2]
    grew_one = [*two_adds, {"candidates": {"grown": [{"candidate": 0, "label": "Baking", "joined": 2, "size": 7}]}}]
    shown, batch = shown_candidates(CANDIDATES, grew_one)
    assert batch == 3 and shown["candidate"].tolist() == [0]  # the third add found none and grew add 1's
    shown, batch = shown_candidates(CANDIDATES, [*two_adds, {"candidates": {"grown": []}}])
    assert batch == 2 and shown["candidate"].tolist() == [1, 2]  # nothing found or grown: the newest that found any
    empty, none = shown_candidates(CANDIDATES.iloc[:0], two_adds)
    assert empty.empty and none is None


def test_the_overview_lists_the_latest_add_largest_first():
    overview = candidate_overview(CANDIDATES, LABELS, batch=2)
    assert overview["label"].tolist() == ["Gardening", "Knitting <b>"]
    assert overview["terms"].tolist() == ["roses, compost", "wool"]
    assert overview["nearest"].tolist() == ["4 · Food", "none"]
    assert candidate_overview(CANDIDATES, LABELS, batch=3).empty


def test_a_candidates_papers_come_in_its_order_with_where_add_placed_them():
    papers = candidate_papers(CANDIDATES, DOCUMENTS, 2, LABELS)
    assert papers["doc_id"].tolist() == ["d", "e", "missing"]
    assert papers["placed_in"].tolist() == ["none", "4 · Food", "none"]
    assert papers["title"].tolist()[:2] == ["Roses", "Compost"] and papers["collection"].iloc[0] == "X 2026"
    assert math.isnan(papers["fit_similarity"].iloc[2])
    assert candidate_papers(CANDIDATES, DOCUMENTS, 9, LABELS).empty


def test_the_map_draws_every_paper_in_grey_and_each_candidate_in_its_colour():
    latest = CANDIDATES[CANDIDATES["batch"] == 2]
    members = candidate_members(latest)
    assert members.to_dict() == {"c": 1, "d": 2, "e": 2, "missing": 2}
    figure = candidate_map_figure(DOCUMENTS, latest, members)
    assert [len(trace.x) for trace in figure.data] == [6, 2, 1]  # all papers; Gardening's 2 found; Knitting's 1
    assert figure.data[1].name.startswith("Gardening (3)") and "&lt;b&gt;" in figure.data[2].name
    assert figure.data[1].marker.color != figure.data[2].marker.color
    assert all("<i>" not in text for text in figure.data[2].text)  # corpus text escaped for plotly
