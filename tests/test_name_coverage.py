"""bench.name_coverage: the share of a group's papers that write its name, and how much of the name is the group's,
on tiny corpora where the answer is known by construction; and the command on a real 300-paper atlas."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bench.name_coverage import (
    Writers,
    build_texts,
    coverage_of,
    first_term,
    folded_text,
    group_coverage,
    group_titles,
    main,
    name_keys,
    name_phrases,
    representative_ids,
    summarise,
    theme_terms,
)
from pipeline.cache import read_cache
from pipeline.topics.naming.abbreviations import abbreviation_definitions
from pipeline.topics.naming.phrase_counts import count_phrases

# Group 0 (papers 0-5) and group 1 (papers 6-9). By construction:
# - "graph neural networks" or one of its abbreviations ("GNNs", "GNN": defined twice, so the corpus's abbreviation
#   table counts them as the expansion) is written by papers 0, 1, 2, 3 of group 0 and paper 6 of group 1;
# - "image classification" by papers 6-9, all of group 1, and by none of group 0;
# - "node classification" by papers 4 and 5 only: under the counts' three-paper floor, so found in the text.
TEXTS = [
    "Graph neural networks (GNNs) learn on molecules.",
    "We train graph neural networks (GNNs) on citation data.",
    "Deep GNNs oversmooth node features.",
    "Message passing with Graph Neural Networks scales.",
    "Node classification uses spectral filters.",
    "Spectral filters for node-classification.",
    "A GNN baseline for image classification.",
    "Image classification with convolutional networks.",
    "Convolutional networks for image classification.",
    "Image classification by vision transformers.",
]
GROUPS = np.array([0, 0, 0, 0, 0, 0, 1, 1, 1, 1])
GNN_WRITERS = [0, 1, 2, 3, 6]


@pytest.fixture(scope="module")
def writers() -> Writers:
    definitions = abbreviation_definitions(TEXTS)
    shorts = {short: long_key for short, (long_key, _, _) in definitions.items()}
    return Writers(count_phrases(TEXTS), TEXTS, shorts)


def flags(indices: list[int], n: int = len(TEXTS)) -> np.ndarray:
    found = np.zeros(n, dtype=bool)
    found[indices] = True
    return found


def test_a_name_covers_the_papers_writing_its_phrase_or_abbreviation(writers: Writers) -> None:
    writes, how = writers.of_name("Graph neural networks (GNNs)")
    assert np.array_equal(writes, flags(GNN_WRITERS))
    assert how == "phrase"
    measured = coverage_of(writes, GROUPS == 0)
    assert (measured.papers, measured.covered, measured.writers) == (6, 4, 5)
    assert measured.coverage == pytest.approx(4 / 6)
    assert measured.precision == pytest.approx(4 / 5)
    assert measured.lift == pytest.approx((4 / 6) / (5 / 10))


def test_close_variants_and_the_corpus_abbreviations_count_alike(writers: Writers) -> None:
    expected = flags(GNN_WRITERS)
    for name in ("Graph neural networks", "graph-neural network", "GRAPH NEURAL NETWORK (GNN)", "GNNs"):
        assert np.array_equal(writers.of_name(name)[0], expected), name


def test_name_keys_are_the_expansion_its_abbreviations_and_the_written_form() -> None:
    shorts = {"gnn": "graph neural network", "gnns": "graph neural network"}
    assert name_keys("Graph neural networks (GNNs)", shorts) == ["graph neural network", "gnn", "gnns"]
    assert name_keys("Speech", shorts) == ["speech"]
    assert name_keys("", shorts) == []


def test_a_name_only_written_by_one_group_has_precision_one(writers: Writers) -> None:
    writes, _ = writers.of_name("Image classification")
    measured = coverage_of(writes, GROUPS == 1)
    assert (measured.coverage, measured.precision) == (1.0, 1.0)
    assert measured.lift == pytest.approx(10 / 4)  # the group's share of the atlas, inverted
    assert coverage_of(writes, GROUPS == 0).coverage == 0.0


def test_a_phrase_the_counts_leave_out_is_found_in_the_text(writers: Writers) -> None:
    assert "node classification" not in writers.columns  # two papers: under the counts' floor
    writes, how = writers.of_name("Node classification")
    assert how == "text"
    assert np.array_equal(writes, flags([4, 5]))  # "node-classification" is the same key
    stop_word, how = writers.of_name("the, of, graph")  # a stock name: its first term only
    assert how == "text" and not stop_word.any()


def test_a_name_nobody_writes_has_no_precision() -> None:
    measured = coverage_of(np.zeros(4, dtype=bool), np.array([True, True, False, False]))
    assert measured.coverage == 0.0
    assert math.isnan(measured.precision) and math.isnan(measured.lift)
    with pytest.raises(ValueError):
        coverage_of(np.zeros(4, dtype=bool), np.zeros(4, dtype=bool))
    with pytest.raises(ValueError):
        coverage_of(np.zeros(3, dtype=bool), np.ones(4, dtype=bool))


def test_group_coverage_has_a_row_per_group_with_papers_and_never_the_outliers(writers: Writers) -> None:
    groups = np.array([0, 0, 0, 0, 0, 0, 1, 1, -1, -1])
    names = {-1: "Outliers", 0: "Graph neural networks (GNNs)", 1: "Image classification", 7: "Nobody"}
    frame = group_coverage(writers, names, groups)
    assert frame["id"].tolist() == [0, 1]
    assert frame["papers"].tolist() == [6, 2]
    assert frame["coverage"].tolist() == pytest.approx([4 / 6, 1.0])
    assert frame["precision"].tolist() == pytest.approx([4 / 5, 2 / 4])  # outliers count among the writers
    assert frame["coverage"].between(0, 1).all()


def test_summary_of_coverages() -> None:
    frame = pd.DataFrame(
        {"coverage": [0.2, 0.5, 0.9], "precision": [0.1, float("nan"), 0.3], "lift": [2.0, np.nan, 4.0]}
    ).assign(writers=[5, 0, 7])
    figures = summarise(frame)
    assert figures["groups"] == 3
    assert figures["median"] == pytest.approx(0.5)
    assert figures["mean"] == pytest.approx(1.6 / 3)
    assert figures["half"] == pytest.approx(2 / 3)  # 0.5 counts as covering half
    assert figures["precision"] == pytest.approx(0.2) and figures["lift"] == pytest.approx(3.0)
    assert summarise(frame.iloc[:0])["groups"] == 0


def test_name_phrases_and_stock_first_terms() -> None:
    assert name_phrases("Graph neural networks (GNNs)") == ["Graph neural networks", "GNNs"]
    assert name_phrases("Speech") == ["Speech"]
    assert first_term("the, of, graph, and") == "the"
    assert name_phrases(first_term("graph, node, gnn")) == ["graph"]


def test_folded_text_joins_variants_and_drops_punctuation() -> None:
    assert folded_text("Graph-Neural Networks, (GNNs).") == " graph neural network gnn "
    assert " graph neural network " in folded_text("on graph neural network-based models")


def test_build_texts_are_title_then_abstract() -> None:
    documents = pd.DataFrame({"title": ["A title", None], "abstract": ["Its abstract.", "Only an abstract."]})
    texts, titles = build_texts(documents)
    assert texts == ["A title. Its abstract.", "Only an abstract."]
    assert titles == ["A title", ""]


TOPICS = pd.DataFrame(
    {
        "topic": [-1, 0, 1, 2],
        "size": [5, 10, 30, 4],
        "theme": [-1, 0, 0, 1],
        "top_terms": [[["noise", 1.0]], [["graph", 0.5], ["node", 0.2]], [["node", 0.3], ["edge", 0.1]], [["x", 1]]],
        "representative_doc_ids": [["o"], ["a1", "a2"], ["b1", "b2", "b3"], ["c1"]],
    }
)


def test_theme_terms_weigh_each_topic_by_its_size() -> None:
    # node: 10 x 0.2 + 30 x 0.3 = 11; graph: 10 x 0.5 = 5; edge: 30 x 0.1 = 3; the outlier topic never counts
    assert theme_terms(TOPICS, 0) == ["node", "graph", "edge"]


def test_representative_papers_of_a_theme_take_its_topics_in_turn() -> None:
    assert representative_ids(TOPICS, "topics", 1) == ["b1", "b2", "b3"]
    assert representative_ids(TOPICS, "themes", 0) == ["b1", "a1", "b2", "a2", "b3"]  # largest topic first


def test_group_titles_fill_up_with_the_groups_first_papers() -> None:
    documents = pd.DataFrame({"doc_id": ["p", "q", "r", "s"], "title": ["P", "Q\n title", "R", "S"]})
    groups = np.array([0, 0, 0, 1])
    assert group_titles(documents, groups, 0, ["r", "s"], 3) == ["R", "P", "Q title"]  # "s" is not in group 0
    assert group_titles(documents, groups, 1, [], 3) == ["S"]


# One row of the printed per-group table: id, papers, coverage, precision, lift, match, name.
ROW = re.compile(r"^\s*(\d+)\s+([\d,]+)\s+(\d\.\d\d)\s+(\S+)\s+(\S+)\s+(phrase|text|none)\s\s(.*)$")


@pytest.mark.slow
def test_the_command_prints_a_row_per_topic_of_a_real_atlas(slice_cache: Path, capsys) -> None:
    main(["--cache", str(slice_cache), "--level", "topics", "--titles", "2"])
    output = capsys.readouterr().out
    rows = [match.groups() for match in map(ROW.match, output.splitlines()) if match]
    topics = read_cache(slice_cache).topics
    real = topics[topics["topic"] != -1]
    assert sorted(int(row[0]) for row in rows) == sorted(real["topic"].astype(int))
    assert all(0.0 <= float(row[2]) <= 1.0 for row in rows)
    assert {row[6] for row in rows} == set(real["label"].astype(str))
    assert "summary" in output and "stock first term" in output
