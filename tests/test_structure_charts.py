"""The structure figures and tables (dashboard.figures.structure_charts) on small synthetic tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dashboard.figures import structure_charts as structure
from tests.test_map_view import TOPICS, documents
from tests.test_themes import hierarchy_of


def test_the_tree_has_themes_then_topics_and_its_nodes_say_what_they_filter():
    figure = structure.topic_tree_figure(TOPICS)
    tree = figure.data[0]
    assert set(tree.ids) == {  # no "All papers" root: it was a blank band
        "theme:0",
        "theme:1",
        "theme:2",
        "topic:5",
        "topic:9",
        "topic:40",
        "topic:41",
    }
    parents = dict(zip(tree.ids, tree.parents))
    assert parents["topic:9"] == "theme:1" and parents["theme:1"] == ""
    assert figure.layout.uniformtext.minsize == 10 and figure.layout.uniformtext.mode == "hide"  # no micro-text
    assert dict(zip(tree.ids, tree.values))["theme:1"] == 60
    assert "&lt;b&gt;" in " ".join(tree.labels)  # labels escaped
    assert structure.node_topics("theme:1", TOPICS) == ("theme", [5, 9])
    assert structure.node_topics("topic:40", TOPICS) == ("topic", [40])
    assert structure.node_topics("all", TOPICS) == ("all", [])
    with pytest.raises(ValueError):
        structure.node_topics("leaf:3", TOPICS)


def test_similarity_puts_a_themes_topics_together_and_centres_the_embeddings():
    docs = documents()
    rng = np.random.default_rng(1)
    direction = {5: 0, 9: 0, 40: 1, 41: 2, -1: 3}
    embeddings = np.stack(
        [np.eye(4)[direction[topic]] * 0.2 + 5.0 + rng.normal(0, 0.01, 4) for topic in docs["topic"]]
    )  # a large shared direction
    ids = [5, 9, 40, 41]
    vectors = structure.topic_vectors(docs, embeddings, ids)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    similar = vectors @ vectors.T
    assert similar[0, 1] > 0.9 and similar[0, 2] < 0.5  # without centring every pair would be near 1
    tree = hierarchy_of([(60, 58, 59, [5, 9, 40, 41], 0.9), (58, 5, 9, [5, 9], 0.3), (59, 40, 41, [40, 41], 0.5)])
    figure = structure.similarity_figure(TOPICS, tree, dict(zip(ids, vectors)))
    heatmap = figure.data[0]
    assert [label.split(" · ")[-1] for label in heatmap.y] == ["5", "9", "40", "41"]
    assert list(figure.layout.yaxis.ticktext) == list(heatmap.y)  # every row labelled, none skipped
    assert np.isnan(np.asarray(heatmap.z, dtype=float)[0, 0])
    assert len(figure.layout.shapes) == 3  # one outline per theme


def test_topics_against_areas_count_and_normalise_both_ways():
    docs = documents()
    counts = structure.area_crosstab(docs, TOPICS, by="theme")
    assert list(counts.columns) == ["optimization", "generative models"]
    assert (
        counts.to_numpy().sum()
        == docs["primary_area"].notna().sum() - docs.loc[docs["theme"] == -1, "primary_area"].notna().sum()
    )
    by_theme = np.asarray(structure.area_share_figure(counts, "theme").data[0].z, dtype=float)
    by_area = np.asarray(structure.area_share_figure(counts, "area").data[0].z, dtype=float)
    assert np.allclose(by_theme.sum(axis=0), 1.0) and np.allclose(by_area.sum(axis=1), 1.0)
    with pytest.raises(ValueError):
        structure.area_crosstab(docs, TOPICS, by="decision")


def test_papers_between_areas_are_those_whose_neighbours_mostly_carry_one_other_area():
    docs = pd.DataFrame(
        {
            "doc_id": ["a", "b", "c", "d", "e"],
            "title": ["A", "B", "C", "D", "E"],
            "topic": [5, 5, 9, 9, 9],
            "primary_area": ["vision", "vision", "language", "language", "speech"],
            "neighbor_ids": [["c", "d", "b"], ["a", "c", "e"], ["d", "a"], ["c", "e"], ["a", "b", "c"]],
        }
    )
    between = structure.papers_between_areas(docs, TOPICS)
    assert between["doc_id"].tolist() == ["e", "a"]  # e: all 3 vision; a: 2 of 3 language. b: 1 of each, no majority
    assert between.set_index("doc_id").loc["a", "neighbour_area"] == "language"
    assert between.set_index("doc_id").loc["a", "other_share"] == pytest.approx(0.67)
    summary = structure.between_area_summary(docs, between)
    assert summary.set_index("primary_area").loc["vision", "between"] == 1
    assert structure.papers_between_areas(docs.drop(columns="primary_area"), TOPICS).empty


def test_tree_labels_keep_their_words_whole():
    """A small block's name wraps at spaces, never inside a word ("Differenti / al privacy", "Equivarian / ce" at
    1500 px)."""
    topics = pd.DataFrame(
        {
            "topic": [0, 1, 2],
            "label": ["Differential privacy (DP)", "Equivariance", "Knowledge distillation (KD)"],
            "size": [10_000, 70, 81],
            "theme": [0, 1, 1],
            "theme_label": ["Big", "Small", "Small"],
        }
    )
    tree = structure.topic_tree_figure(topics).data[0]
    shown = dict(zip(tree.ids, tree.labels))
    for topic, name in zip(topics["topic"], topics["label"]):
        lines = shown[f"topic:{topic}"].split("<br>")
        assert " ".join(lines).startswith(name), lines  # every word whole, in order
        assert len(lines) > 1 or topic == 0  # the small blocks' names do wrap
