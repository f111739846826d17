"""The WebGL map's layers (dashboard.figures.map_layers) on a real cache: what the browser is sent per view."""

from __future__ import annotations

import base64
from pathlib import Path

import numpy as np
import pytest

from dashboard.figures import map_layers, map_model, topic_map
from pipeline.cache import read_cache


@pytest.fixture(scope="module")
def atlas(slice_cache: Path):
    cache = read_cache(slice_cache)
    cache.topics = topic_map.themed_topics(cache.topics, cache.hierarchy)
    cache.documents = topic_map.with_themes(cache.documents, cache.topics)
    return cache


def bytes_of(text: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype=np.uint8)


def test_points_are_normalised_into_the_unit_square_with_one_scale(atlas):
    payload = map_layers.point_payload(atlas.documents)
    x = np.frombuffer(base64.b64decode(payload["x"]), dtype=np.float32)
    y = np.frombuffer(base64.b64decode(payload["y"]), dtype=np.float32)
    assert len(x) == len(y) == len(payload["titles"]) == len(atlas.documents)
    assert np.abs(x).max() <= 1 and np.abs(y).max() <= 1
    assert max(np.ptp(x), np.ptp(y)) > 1.9  # the larger axis spans the square
    raw = atlas.documents["x"].to_numpy()
    assert np.allclose(np.ptp(x) / np.ptp(raw), np.ptp(y) / np.ptp(atlas.documents["y"].to_numpy()), rtol=1e-4)


def test_a_view_sends_one_byte_per_point_and_no_positions(atlas):
    documents = atlas.documents
    ids = frozenset(documents["doc_id"].astype(str))
    layers = map_layers.view_layers(documents, ids, atlas.topics, topic_map.MapState())
    assert "x" not in layers and "points" not in layers
    assert len(bytes_of(layers["colours"])) == len(bytes_of(layers["emphasis"])) == len(documents)
    counts = [row["count"] for row in layers["legend"] if row["name"] != "Outliers"]
    assert counts == sorted(counts, reverse=True)  # the legend in size order
    assert sum(row["count"] for row in layers["legend"]) == len(documents)
    assert layers["labels"] and all(1 <= len(label["lines"]) <= 2 for label in layers["labels"])


def test_a_filtered_topic_keeps_the_map_grey_and_is_labelled_with_its_own_name(atlas):
    documents, topics = atlas.documents, atlas.topics
    topic = int(topics.loc[topics["topic"] != -1].sort_values("size").iloc[-1]["topic"])
    ids = frozenset(documents.loc[documents["topic"] == topic, "doc_id"].astype(str))
    layers = map_layers.view_layers(documents, ids, topics, topic_map.MapState(), topic_filter=(topic,))
    colours = bytes_of(layers["colours"])
    grey = len(layers["palette"]) - 1
    assert (colours == grey).sum() == len(documents) - len(ids)  # the rest of the map drawn as context
    label = str(topics.loc[topics["topic"] == topic, "label"].iloc[0])
    assert [entry["name"] for entry in layers["labels"]] == [label]
    frame = layers["frame"]
    assert frame[2] - frame[0] < 2 and frame[3] - frame[1] < 2  # framed on the matches, not the whole map


def test_decision_colouring_emphasises_the_orals(atlas):
    documents = atlas.documents
    ids = frozenset(documents["doc_id"].astype(str))
    layers = map_layers.view_layers(documents, ids, atlas.topics, topic_map.MapState(colour_by="decision"))
    emphasis = bytes_of(layers["emphasis"])
    orals = (documents["decision"] == "Oral").to_numpy()
    assert (emphasis[orals] == 2).all() and (emphasis[~orals] == 1).all()


def test_two_lines_wrap_instead_of_an_ellipsis():
    assert map_layers.two_lines("preference, instruction-following", 22) == ["preference,", "instruction-following"]
    name = "bayesian, combinatorial optimization, sampling"
    lines = map_layers.two_lines(name, 22)
    assert len(lines) == 2 and "…" not in "".join(lines) and " ".join(lines) == name


def test_theme_palette_has_twenty_colours_distinct_for_colour_blind_readers_too():
    """No two theme colours closer than 9 in CAM02-UCS with normal vision or full deuteranopia, protanopia or
    tritanopia (the Tol-based palette before had two blues 0.7 apart for tritanopes, 3.2 for deuteranopes)."""
    from bench.palette import BEFORE, closest_pair

    assert len(set(topic_map.THEME_PALETTE)) == 20
    assert min(distance for distance, _ in closest_pair(list(topic_map.THEME_PALETTE)).values()) >= 9.0
    assert min(distance for distance, _ in closest_pair(list(BEFORE)).values()) < 9.0  # the test can fail


@pytest.mark.parametrize(
    "name",
    [
        "Multimodal large language models (MLLMs)",
        "Mixture of experts (MoE)",
        "Contrastive Language-Image pretraining",
        "bayesian, combinatorial optimization, sampling, long words everywhere here",
        "Supercalifragilisticexpialidociousness",
    ],
)
def test_a_long_name_is_wrapped_on_two_balanced_lines_never_cut(name):
    lines = map_layers.two_lines(name, 22)
    assert len(lines) <= 2 and " ".join(lines) == name and "…" not in "".join(lines)
    if len(name) > 22 and " " in name:  # the split makes the longer line as short as a word boundary allows
        spaces = [i for i, char in enumerate(name) if char == " "]
        assert max(map(len, lines)) == min(max(i, len(name) - i - 1) for i in spaces)
    assert map_layers.two_lines("Graph neural networks (GNNs)", 22) == ["Graph neural", "networks (GNNs)"]


def test_every_map_label_of_the_atlas_keeps_its_whole_name(atlas):
    ids = frozenset(atlas.documents["doc_id"].astype(str))
    for level in ("themes", "topics"):
        layers = map_layers.view_layers(atlas.documents, ids, atlas.topics, topic_map.MapState(level=level))
        for label in layers["labels"]:
            assert 1 <= len(label["lines"]) <= 2 and " ".join(label["lines"]) == " ".join(label["name"].split())


def test_the_legend_and_the_hover_carry_the_subtitle(atlas):
    documents, topics = atlas.documents, atlas.topics
    assert topics.loc[topics["topic"] != -1, "subtitle"].str.len().gt(0).all()  # the build wrote subtitles
    ids = frozenset(documents["doc_id"].astype(str))
    layers = map_layers.view_layers(documents, ids, topics, topic_map.MapState(colour_by="topic"))
    subtitle_of = dict(zip(topics["label"], topics["subtitle"]))
    rows = [row for row in layers["legend"] if row["name"] != "Outliers"]
    assert rows and all(row["subtitle"] == subtitle_of[row["name"]] for row in rows)
    themes = map_layers.view_layers(documents, ids, topics, topic_map.MapState(colour_by="theme"))["legend"]
    assert any(row["subtitle"] for row in themes)  # a theme's subtitle: its largest topics' short names
    payload = map_layers.point_payload(documents, topics)
    topic_of = np.frombuffer(base64.b64decode(payload["topic_of"]), dtype=np.uint16)
    assert len(topic_of) == len(documents)
    label_of = dict(zip(topics["topic"], topics["label"]))
    for position in (0, len(documents) // 2, len(documents) - 1):
        topic = int(documents["topic"].iloc[position])
        text = payload["topic_texts"][topic_of[position]]
        expected = "Outliers" if topic == -1 else f"{label_of[topic]} — {subtitle_of[label_of[topic]]}"
        assert text == expected


def test_each_label_points_at_the_densest_cell_of_its_own_matching_papers(atlas):
    documents, topics = atlas.documents, atlas.topics
    from dashboard.figures.label_layout import dense_anchor

    topic = int(documents.loc[documents["topic"] != -1, "topic"].mode().iloc[0])
    theme = int(topics.loc[topics["topic"] == topic, "theme"].iloc[0])
    ids = frozenset(documents.loc[documents["theme"] == theme, "doc_id"].astype(str))
    state = topic_map.MapState(level="topics")
    layers = map_layers.view_layers(documents, ids, topics, state)
    x, y = map_model.normalisation(documents).apply(documents["x"], documents["y"])
    matches = documents["doc_id"].astype(str).isin(ids).to_numpy()
    assert layers["labels"]
    for label in layers["labels"]:
        members = matches & (documents["topic"].map(dict(zip(topics["topic"], topics["label"]))) == label["name"])
        expected = dense_anchor(x[members.to_numpy()].astype(float), y[members.to_numpy()].astype(float))
        assert label["anchor"] == list(expected)  # in the component's space, on the papers it names


def test_highlights_and_the_selection_are_sent_as_positions_in_the_listing(atlas):
    documents = atlas.documents
    doc_ids = documents["doc_id"].astype(str).tolist()
    marks = topic_map.Highlights(search=(doc_ids[3], "not-a-paper"), chosen=doc_ids[7], similar=(doc_ids[1],))
    layers = map_layers.view_layers(
        documents,
        frozenset(doc_ids),
        atlas.topics,
        topic_map.MapState(),
        highlights=marks,
        selected_ids=(doc_ids[9], doc_ids[2], "gone"),
    )
    assert layers["highlights"] == {"similar": [1], "search": [3], "chosen": 7}
    assert layers["selected"] == [2, 9]
    assert map_layers.positions_of(np.asarray(doc_ids, dtype=object), []) == {}


def test_subtitles_the_caller_keeps_are_the_legend_s(atlas):
    documents, topics = atlas.documents, atlas.topics
    ids = frozenset(documents["doc_id"].astype(str))
    state = topic_map.MapState(colour_by="topic")
    own = map_layers.view_layers(documents, ids, topics, state)
    given = {row["name"]: f"kept {index}" for index, row in enumerate(own["legend"])}
    kept = map_layers.view_layers(documents, ids, topics, state, legend_subtitles=given)
    assert [row["subtitle"] for row in kept["legend"]] == [given[row["name"]] for row in own["legend"]]
    assert {key: value for key, value in kept.items() if key != "legend"} == {
        key: value for key, value in own.items() if key != "legend"
    }


def test_a_theme_subtitle_names_its_largest_topics_by_their_abbreviations():
    import pandas as pd

    from dashboard.figures.subtitles import theme_subtitles

    topics = pd.DataFrame(
        {
            "topic": [-1, 0, 1, 2, 3, 4],
            "label": ["Outliers", "Graph neural networks (GNNs)", "Time series", "Graph", "Brain", "Speech"],
            "subtitle": ["", "a, b", "c, d", "e, f", "g, h", "audio, speaker"],
            "size": [5, 50, 40, 30, 10, 20],
            "theme": [-1, 0, 0, 0, 0, 1],
            "theme_label": ["Outliers", "Graph", "Graph", "Graph", "Graph", "Speech"],
        }
    )
    assert theme_subtitles(topics) == {0: "GNNs, Time series, Brain", 1: "audio, speaker"}


def test_the_labels_bench_judges_cuts_with_the_maps_own_lines():
    from bench.labels import cut, map_lines

    name = "Multimodal large language models (MLLMs)"  # three lines at 22 characters: cut by the old measure
    assert map_lines(name) == map_layers.two_lines(name, map_layers.TOPIC_LINE_CHARS)
    assert not cut(name) and not cut(name, map_layers.THEME_LINE_CHARS)


@pytest.fixture(scope="module")
def parted(atlas):
    """(the atlas's documents with subtopics, the subtopics table): tests.test_contents.with_subtopics."""
    from tests.test_contents import with_subtopics

    return with_subtopics(atlas.documents)


def levels_of(layers: dict) -> list[int]:
    return [label["level"] for label in layers["labels"]]


def test_by_zoom_the_labels_carry_every_level_each_sized_by_its_papers(atlas, parted):
    documents, subtopics = parted
    ids = frozenset(documents["doc_id"].astype(str))
    layers = map_layers.view_layers(documents, ids, atlas.topics, topic_map.MapState(level="zoom"), subtopics=subtopics)
    assert layers["label_mode"] == "zoom"
    levels = levels_of(layers)
    assert set(levels) == {0, 1, 2} and levels == sorted(levels)  # shallowest first
    for level, column in enumerate(("theme", "topic", "subtopic")):
        sizes = [label["size"] for label in layers["labels"] if label["level"] == level]
        assert sizes == sorted(sizes, reverse=True) and sum(sizes) == int((documents[column] != -1).sum())
    assert {label["name"] for label in layers["labels"] if label["level"] == 2} == set(subtopics["label"])
    from dashboard.figures.label_layout import dense_anchor

    x, y = map_model.normalisation(documents).apply(documents["x"], documents["y"])
    name_of = dict(zip(subtopics["subtopic"], subtopics["label"]))
    for label in (label for label in layers["labels"] if label["level"] == 2):
        members = (documents["subtopic"].map(name_of) == label["name"]).to_numpy()
        assert label["anchor"] == list(dense_anchor(x[members].astype(float), y[members].astype(float)))
    for level, number in (("themes", 0), ("topics", 1), ("subtopics", 2)):
        fixed = map_layers.view_layers(
            documents, ids, atlas.topics, topic_map.MapState(level=level), subtopics=subtopics
        )
        assert fixed["label_mode"] == "fixed" and set(levels_of(fixed)) == {number}


def test_a_drilled_theme_starts_at_topics_and_a_drilled_topic_at_its_subtopics(atlas, parted):
    documents, subtopics = parted
    topics = atlas.topics
    topic = int(subtopics["topic"].value_counts().index[0])
    theme = int(topics.loc[topics["topic"] == topic, "theme"].iloc[0])
    in_theme = frozenset(documents.loc[documents["theme"] == theme, "doc_id"].astype(str))
    state = topic_map.MapState(level="zoom", theme=theme)
    layers = map_layers.view_layers(documents, in_theme, topics, state, subtopics=subtopics)
    assert set(levels_of(layers)) == {1, 2}
    theme_topics = set(topics.loc[topics["theme"] == theme, "label"])
    assert {label["name"] for label in layers["labels"] if label["level"] == 1} <= theme_topics
    in_topic = frozenset(documents.loc[documents["topic"] == topic, "doc_id"].astype(str))
    drilled = map_layers.view_layers(
        documents, in_topic, topics, topic_map.MapState(level="zoom", theme=theme, topic=topic), subtopics=subtopics
    )
    assert set(levels_of(drilled)) == {2}
    assert {label["name"] for label in drilled["labels"]} == set(subtopics.loc[subtopics["topic"] == topic, "label"])
    assert drilled["frame_key"] != layers["frame_key"]
    lone = int(subtopics["topic"].iloc[-1])  # as if too small to have subtopics: its own label stays
    subtopics = subtopics[subtopics["topic"] != lone]
    documents = documents.assign(subtopic=documents["subtopic"].where(documents["topic"] != lone, -1))
    lone_ids = frozenset(documents.loc[documents["topic"] == lone, "doc_id"].astype(str))
    lone_theme = int(topics.loc[topics["topic"] == lone, "theme"].iloc[0])
    state = topic_map.MapState(level="zoom", theme=lone_theme, topic=lone)
    labels = map_layers.view_layers(documents, lone_ids, topics, state, subtopics=subtopics)["labels"]
    assert [(label["name"], label["level"]) for label in labels] == [
        (str(topics.loc[topics["topic"] == lone, "label"].iloc[0]), 1)
    ]


def test_without_subtopics_the_labels_stop_at_topics(atlas):
    documents = atlas.documents.drop(columns=[c for c in ("subtopic",) if c in atlas.documents.columns])
    ids = frozenset(documents["doc_id"].astype(str))
    layers = map_layers.view_layers(documents, ids, atlas.topics, topic_map.MapState(level="zoom"))
    assert set(levels_of(layers)) == {0, 1}
    assert all(isinstance(label["size"], int) and label["size"] > 0 for label in layers["labels"])


def test_each_topic_and_subtopic_label_names_its_topic():
    """The map hides a topic's label when its own subtopics' labels replace it; told each label's topic, it no longer
    guesses it from the papers round the anchor (a subtopic's anchor among another topic's papers hid that topic's
    label, seed 7)."""
    import pandas as pd

    from dashboard.figures.map_model import parent_topics

    subtopics = pd.DataFrame({"subtopic": [10, 11, 12], "topic": [3, 3, 5]})
    assert parent_topics("topic", [3, 5], subtopics) == [3, 5]
    assert parent_topics("subtopic", [12, 10], subtopics) == [5, 3]
    assert parent_topics("theme", [0, 1], subtopics) == [None, None]
    assert parent_topics("subtopic", [10], None) == [None]


def test_a_drilled_topic_is_coloured_by_its_subtopics_as_its_figure_is(atlas, parted):
    """The page and the publication figure draw a drilled topic alike: each subtopic's papers in its own colour
    (topic_map.subtopic_colours), the subtopics in the legend; coloured by decision, the decisions' colours stay."""
    documents, subtopics = parted
    topics = atlas.topics
    topic = int(subtopics["topic"].value_counts().index[0])
    theme = int(topics.loc[topics["topic"] == topic, "theme"].iloc[0])
    in_topic = documents["topic"].to_numpy() == topic
    state = topic_map.MapState(level="zoom", theme=theme, topic=topic)
    layers = map_layers.view_layers(documents, in_topic, topics, state, subtopics=subtopics)
    palette = layers["palette"]
    drawn = np.array([palette[index] for index in bytes_of(layers["colours"])], dtype=object)
    keys = documents["subtopic"].to_numpy()[in_topic]
    assert list(drawn[in_topic]) == list(topic_map.subtopic_colours(keys))
    assert len(set(drawn[in_topic])) == len(set(keys) - {-1}) + (-1 in set(keys)) > 1
    named = set(subtopics.loc[subtopics["topic"] == topic, "label"])
    assert named <= {row["name"] for row in layers["legend"]}
    by_decision = map_layers.view_layers(
        documents,
        in_topic,
        topics,
        topic_map.MapState(level="zoom", colour_by="decision", theme=theme, topic=topic),
        subtopics=subtopics,
    )
    assert not named & {row["name"] for row in by_decision["legend"]}
