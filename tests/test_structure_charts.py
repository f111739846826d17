"""The structure figures and tables (dashboard.figures.structure_charts) on small synthetic tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dashboard.figures import structure_charts as structure
from dashboard.figures import tree_labels
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


def test_tree_labels_keep_their_words_whole_and_fit_their_blocks():
    """A block's name wraps at spaces, never inside a word ("Differenti / al privacy", "Equivarian / ce" at 1500 px);
    small blocks take their acronym, and a name that cannot fit is cut with "…" rather than hidden."""
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
    shown = {key: label.split("<br>") for key, label in zip(tree.ids, tree.labels)}
    assert " ".join(shown["topic:0"]) == "Differential privacy (DP) (10,000)"  # a big block: the whole name
    assert shown["topic:2"][0] == "KD"  # a small block with an acronym
    assert shown["topic:1"][-1] == "(70)" or shown["topic:1"][0].endswith("…")
    for lines in shown.values():
        for line in lines:
            assert line.endswith("…") or all(
                word in " ".join(topics["label"]) + " Big Small" for word in line.split() if not word.startswith("(")
            ), lines


def test_tree_label_forms_go_from_the_whole_name_to_the_acronym_to_a_cut():
    roomy, narrow, tiny = (300.0, 120.0), (60.0, 80.0), (30.0, 60.0)
    assert tree_labels.topic_lines("Machine unlearning (MU)", 86, roomy) == ["Machine unlearning (MU) (86)"]
    assert tree_labels.topic_lines("Machine unlearning (MU)", 86, narrow) == ["MU (86)"]
    cut = tree_labels.topic_lines("Molecules", 106, tiny)
    assert cut == ["Mole…"], cut  # four characters and the "…" at least, with no room for its count
    for block in (roomy, narrow):
        lines = tree_labels.topic_lines("Stochastic gradient descent (SGD)", 634, block)
        assert tree_labels.fits(lines, block), (block, lines)
    assert tree_labels.theme_line("Post-training quantization (PTQ)", (300.0, 200.0)) == (
        "Post-training quantization (PTQ)"
    )
    assert tree_labels.theme_line("Post-training quantization (PTQ)", (130.0, 100.0)) == "PTQ"
    assert tree_labels.theme_line("Speculative decoding", (72.0, 50.0)).endswith("…")


def test_tree_blocks_tile_the_chart_and_keep_each_block_s_smallest_shape():
    blocks = tree_labels.squarified([600, 300, 100, 0], 800, 600)
    assert sum(w * h for w, h in blocks) == pytest.approx(800 * 600) and blocks[3] == (0.0, 0.0)
    assert blocks[0][0] * blocks[0][1] == pytest.approx(2 * blocks[1][0] * blocks[1][1])
    themes = [(0, 600, [(0, 400), (1, 200)]), (1, 300, [(2, 300)]), (2, 100, [(3, 100)])]
    by_theme, by_topic = tree_labels.tree_blocks(themes, 600, widths=(800, 1000))
    for theme, (w, h) in by_theme.items():
        # each theme's block both ways round, at both widths: its smaller side each way
        sides = [
            min(block)
            for width in (800, 1000)
            for block in [tree_labels.squarified([600, 300, 100], width, 600)[theme]]
        ]
        assert w == h == pytest.approx(min(sides))
    theme_of = {0: 0, 1: 0, 2: 1, 3: 2}
    for topic, (w, h) in by_topic.items():  # inside its theme, below the header
        assert 0 < w < by_theme[theme_of[topic]][0] and 0 < h < by_theme[theme_of[topic]][1]


def test_the_names_the_tree_shortens_or_hides_are_listed_and_whole_names_are_not():
    topics = pd.DataFrame(
        {
            "topic": [0, 1, 2, 3],
            "label": ["Differential privacy (DP)", "Knowledge distillation (KD)", "Graph neural networks", "Pruning"],
            "size": [10_000, 81, 9_000, 12],
            "theme": [0, 1, 2, 1],
            "theme_label": ["Big", "Small", "Big too", "Small"],
        }
    )
    tree = structure.topic_tree_figure(topics).data[0]
    shown = {key: label.replace("<br>", " ") for key, label in zip(tree.ids, tree.labels)}
    listed = structure.shortened_tree_names(topics)
    assert "Knowledge distillation (KD)" in listed and not shown["topic:1"].startswith("Knowledge")  # its acronym
    assert "Pruning" in listed  # 12 papers of 19,093: no room for the word at 10 px
    assert "Differential privacy (DP)" not in listed and "Graph neural networks" not in listed  # written whole
    assert listed == [
        label for label in topics.sort_values(["theme", "size"], ascending=[True, False])["label"] if label in listed
    ]  # in the tree's order
