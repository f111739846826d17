"""The table of contents under the map (dashboard.tables.contents, dashboard.views.contents) and the drill it makes:
pure tables on synthetic topics, then the page through AppTest on a real 300-paper cache given subtopics (each
topic of 8 papers or more split in two at its papers' median x, as CONTRACT's fixture rule says), and on the same
cache without them (a cache built before subtopics)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.testing.v1 import AppTest

from dashboard.tables import contents
from pipeline.runtime.parquet import read_frame

APP = Path(__file__).resolve().parent.parent / "dashboard" / "app.py"
SUBTOPIC_MIN_PAPERS = 8

TOPICS = pd.DataFrame(
    {
        "topic": [-1, 0, 1, 2, 3],
        "label": ["Outliers", "graphs", "proteins", "agents", "math"],
        "size": [5, 30, 50, 40, 10],
        "theme": [-1, 1, 1, 0, 0],
        "theme_label": ["Outliers", "science", "science", "reasoning", "reasoning"],
    }
)
SUBTOPICS = pd.DataFrame(
    {"subtopic": [0, 1, 2], "topic": [1, 1, 2], "label": ["folding", "design", "tools"], "size": [20, 30, 40]}
)


def depth(name: str) -> int:
    """A table of contents row's level: its indents."""
    return (len(name) - len(name.lstrip("\u2003"))) // len(contents.INDENT)


def test_the_tree_reads_theme_topic_subtopic_each_largest_first():
    tree = contents.contents_tree(TOPICS, SUBTOPICS)
    assert list(zip(tree["level"], tree["name"])) == [
        (0, "science"),  # 80 papers
        (1, "proteins"),
        (2, "design"),
        (2, "folding"),
        (1, "graphs"),
        (0, "reasoning"),  # 50 papers
        (1, "agents"),
        (2, "tools"),
        (1, "math"),
    ]
    assert tree.loc[tree["level"] == 0, "size"].tolist() == [80, 50]
    assert (tree.loc[tree["level"] < 2, "subtopic"] == -1).all() and (tree.loc[tree["level"] == 0, "topic"] == -1).all()
    assert contents.contents_tree(TOPICS, None)["level"].tolist() == [0, 1, 1, 0, 1, 1]  # two levels before subtopics


def test_counts_are_the_filtered_papers_and_the_table_keeps_only_rows_with_papers():
    tree = contents.contents_tree(TOPICS, SUBTOPICS)
    inside = pd.DataFrame({"theme": [1, 1, 1], "topic": [1, 1, 0], "subtopic": [1, -1, -1]})
    around = pd.DataFrame({"theme": [0, -1], "topic": [2, -1], "subtopic": [2, -1]})
    counts = contents.contents_counts(tree, (inside, around))
    assert dict(zip(tree["name"], counts.tolist())) == {
        "science": 3,
        "proteins": 2,
        "design": 1,
        "folding": 0,
        "graphs": 1,
        "reasoning": 1,
        "agents": 1,
        "tools": 1,
        "math": 0,
    }
    before = pd.DataFrame({"theme": [1], "topic": [1]})  # a cache without the subtopic column counts no subtopic
    assert contents.contents_counts(tree, (before, None))[tree["level"].to_numpy() == 2].tolist() == [0, 0, 0]
    table, rows = contents.contents_table(tree, counts, 5, theme=1, topic=1)
    assert table["Contents"].iloc[0] == contents.WHOLE_MAP_NAME and table["Papers"].iloc[0] == 5 and rows[0] == -1
    shown = [name.strip("\u2003") for name in table["Contents"].iloc[1:]]
    assert "folding" not in shown and "math" not in shown  # no paper matches the filters
    assert shown[:3] == ["▶ science", "▶ proteins", "design"]  # the drilled theme and topic marked
    assert [depth(name) for name in table["Contents"].iloc[:4]] == [0, 0, 1, 2]  # the level is the indent
    assert [tree["name"].iloc[row] for row in rows[1:4]] == ["science", "proteins", "design"]
    assert table["Contents"].iloc[3].startswith(contents.INDENT * 2)  # a subtopic sits two indents in
    unmarked, _ = contents.contents_table(tree, counts, 5)
    assert unmarked["Contents"].iloc[0].startswith(contents.DRILLED_MARK)  # the whole map is where the map is


def with_subtopics(documents: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(``documents`` with a ``subtopic`` column, the subtopics table of SUBTOPIC_COLUMNS): each topic of
    SUBTOPIC_MIN_PAPERS papers or more split in two at its papers' median x; the rest -1."""
    subtopic = np.full(len(documents), -1, dtype=np.int64)
    rows = []
    topic_ids = documents["topic"].astype(int).to_numpy()
    x, y = documents["x"].to_numpy(dtype=float), documents["y"].to_numpy(dtype=float)
    for topic in sorted(set(topic_ids.tolist()) - {-1}):
        members = np.flatnonzero(topic_ids == topic)
        if len(members) < SUBTOPIC_MIN_PAPERS:
            continue
        right = x[members] > np.median(x[members])
        for side, part in enumerate((members[~right], members[right])):
            subtopic[part] = len(rows)
            name = f"part {side} of topic {topic}"
            rows.append(
                (len(rows), topic, name, [name], len(part), float(np.median(x[part])), float(np.median(y[part])))
            )
    table = pd.DataFrame(rows, columns=["subtopic", "topic", "label", "subtitle", "size", "x", "y"])
    return documents.assign(subtopic=subtopic), table


@pytest.fixture(scope="module")
def caches(slice_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """{"sub": the 300-paper cache with subtopics (with_subtopics), "old": the same cache without any}."""
    root = tmp_path_factory.mktemp("contents")
    sub, old = root / "sub", root / "old"
    shutil.copytree(slice_cache, sub)
    shutil.copytree(slice_cache, old)
    documents, subtopics = with_subtopics(read_frame(sub / "documents.parquet"))
    documents.to_parquet(sub / "documents.parquet", index=False)
    subtopics.to_parquet(sub / "subtopics.parquet", index=False)
    (old / "subtopics.parquet").unlink(missing_ok=True)
    plain = read_frame(old / "documents.parquet")
    plain.drop(columns=[column for column in ("subtopic",) if column in plain.columns]).to_parquet(
        old / "documents.parquet", index=False
    )
    return {"sub": sub, "old": old}


@pytest.fixture(autouse=True)
def plotly_map(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The plotly map, whose spec the test reads (the WebGL map's labels: tests/test_map_layers.py); no pytest
    arguments in the page's argv."""
    monkeypatch.setenv("ATLAS_MAP_RENDERER", "plotly")
    monkeypatch.setattr("sys.argv", ["app.py"])
    yield


def run_app(cache: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv("ATLAS_CACHE", str(cache))
    return AppTest.from_file(str(APP), default_timeout=60).run()


def no_failure(app: AppTest) -> None:
    assert not app.exception, [item.value for item in app.exception]
    assert not app.error, [item.value for item in app.error]


def contents_frame(app: AppTest):
    """The table of contents: the dataframe with a Contents column."""
    return next(frame for frame in app.dataframe if "Contents" in frame.value.columns)


def papers_table(app: AppTest) -> pd.DataFrame:
    return next(frame.value for frame in app.dataframe if "doc_id" in frame.value.columns)


def map_labels(app: AppTest) -> list[str]:
    spec = json.loads(app.get("plotly_chart")[0].proto.spec)
    return sorted(annotation["text"].replace("<br>", " ") for annotation in spec["layout"].get("annotations", []))


def choose(app: AppTest, name: str, level: int | None = None) -> AppTest:
    """Click the name ``name`` (at ``level``, 0 theme, 1 topic, 2 subtopic, when given: a theme of one topic bears
    its topic's name) in the table of contents: AppTest has no click for a dataframe, so this sends the selection
    message the browser sends on a click (the dataframe's widget state: the cell chosen), and the page's own
    callback runs as it does for a click."""
    frame = contents_frame(app)
    names = [
        value.strip("\u2003").removeprefix(contents.DRILLED_MARK) if level is None or depth(value) == level else None
        for value in frame.value["Contents"]
    ]
    states = app._tree.get_widget_states()
    kept = [state for state in states.widgets if state.id != frame.proto.id]
    del states.widgets[:]
    states.widgets.extend(kept)
    selection = {"selection": {"rows": [], "columns": [], "cells": [[names.index(name), "Contents"]]}}
    states.widgets.append(WidgetState(id=frame.proto.id, string_value=json.dumps(selection)))
    return app._run(states)


def test_choosing_a_topic_drills_the_map_into_it_labelled_by_its_subtopics(caches, monkeypatch):
    from pipeline.cache import read_cache

    atlas = read_cache(caches["sub"])
    subtopics = atlas.subtopics
    topic = int(subtopics["topic"].value_counts().index[0])
    label = str(atlas.topics.loc[atlas.topics["topic"] == topic, "label"].iloc[0])
    app = run_app(caches["sub"], monkeypatch)
    no_failure(app)
    assert app.selectbox(key="level").value == "zoom"  # by zoom, the default; the plotly map labels the themes
    assert app.selectbox(key="level").options == ["By zoom", "Themes", "Topics", "Subtopics"]
    n_themes = len(app.selectbox(key="theme").options) - 1
    assert len(map_labels(app)) == n_themes
    assert {depth(name) for name in contents_frame(app).value["Contents"]} == {0, 1, 2}
    app = choose(app, label, level=1)
    no_failure(app)
    theme = int(atlas.topics.loc[atlas.topics["topic"] == topic, "theme"].iloc[0])
    assert app.session_state["theme"] == theme and app.selectbox(key="theme").value == theme
    table = papers_table(app)
    assert len(table) == int((atlas.documents["topic"] == topic).sum()) and set(table["topic"]) == {topic}
    header = next(caption.value for caption in app.caption if "matching the filters" in caption.value)
    assert f"{len(table):,} matching the filters" in header  # the header counts the drilled topic, not its theme
    names = sorted(subtopics.loc[subtopics["topic"] == topic, "label"])
    assert map_labels(app) == names  # the map labels the topic's subtopics
    marked = [
        value.strip("\u2003") for value in contents_frame(app).value["Contents"] if contents.DRILLED_MARK in value
    ]
    theme_name = str(atlas.topics.loc[atlas.topics["topic"] == topic, "theme_label"].iloc[0])
    assert marked == [contents.DRILLED_MARK + theme_name, contents.DRILLED_MARK + label]  # where the map is
    part = names[0]
    app = choose(app, part)  # a subtopic: its papers selected, the table lists them
    no_failure(app)
    members = subtopics.loc[subtopics["label"] == part, "subtopic"].iloc[0]
    expected = set(atlas.documents.loc[atlas.documents["subtopic"] == members, "doc_id"].astype(str))
    assert set(papers_table(app)["doc_id"].astype(str)) == expected
    assert any(f"{len(expected)} papers selected on the map" in caption.value for caption in app.caption)
    app = next(button for button in app.button if button.label == "Up one level").click().run()
    no_failure(app)
    assert app.session_state["theme"] == theme and len(papers_table(app)) == int(
        (atlas.documents["topic"].map(dict(zip(atlas.topics["topic"], atlas.topics["theme"]))) == theme).sum()
    )
    app = next(button for button in app.button if button.label == "Whole map").click().run()
    no_failure(app)
    assert app.session_state["theme"] is None and len(papers_table(app)) == len(atlas.documents)


def test_picking_another_theme_leaves_the_drilled_topic(caches, monkeypatch):
    from pipeline.cache import read_cache

    atlas = read_cache(caches["sub"])
    topic = int(atlas.subtopics["topic"].iloc[0])
    label = str(atlas.topics.loc[atlas.topics["topic"] == topic, "label"].iloc[0])
    app = choose(run_app(caches["sub"], monkeypatch), label)
    assert set(papers_table(app)["topic"]) == {topic}
    other = next(option for option in app.selectbox(key="theme").options if "All themes" in option)
    app.selectbox(key="theme").select(other).run()
    no_failure(app)
    assert app.session_state["map_topic"] is None and len(papers_table(app)) == len(atlas.documents)


def test_a_cache_without_subtopics_offers_two_levels_and_its_topics_still_drill(caches, monkeypatch):
    from pipeline.cache import read_cache

    atlas = read_cache(caches["old"])
    assert atlas.subtopics.empty and "subtopic" not in atlas.documents.columns
    app = run_app(caches["old"], monkeypatch)
    no_failure(app)
    assert app.selectbox(key="level").options == ["By zoom", "Themes", "Topics"]
    assert {depth(name) for name in contents_frame(app).value["Contents"]} == {0, 1}  # no subtopic rows
    topics = atlas.topics[atlas.topics["topic"] != -1].sort_values("size")
    topic, label = int(topics["topic"].iloc[-1]), str(topics["label"].iloc[-1])
    app = choose(app, label, level=1)
    no_failure(app)
    assert set(papers_table(app)["topic"]) == {topic}
    assert map_labels(app) == [label.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")]


def test_an_address_naming_the_subtopic_level_restores_it_and_by_zoom_leaves_it_bare(caches, monkeypatch):
    monkeypatch.setenv("ATLAS_CACHE", str(caches["sub"]))
    app = AppTest.from_file(str(APP), default_timeout=60)
    app.query_params["level"] = "subtopics"
    app.run()
    no_failure(app)
    assert app.selectbox(key="level").value == "subtopics" and app.query_params["level"] == "subtopics"
    app.selectbox(key="level").set_value("zoom").run()
    assert "level" not in app.query_params


def test_a_drilled_topic_is_in_the_address_and_an_address_reopens_it(caches, monkeypatch):
    from pipeline.cache import read_cache

    atlas = read_cache(caches["sub"])
    topic = int(atlas.subtopics["topic"].value_counts().index[0])
    label = str(atlas.topics.loc[atlas.topics["topic"] == topic, "label"].iloc[0])
    theme = int(atlas.topics.loc[atlas.topics["topic"] == topic, "theme"].iloc[0])
    app = choose(run_app(caches["sub"], monkeypatch), label, level=1)
    no_failure(app)
    assert (app.query_params["theme"], app.query_params["drill"]) == (str(theme), str(topic))
    shared = AppTest.from_file(str(APP), default_timeout=60)  # a colleague opens the address
    shared.query_params["theme"], shared.query_params["drill"] = str(theme), str(topic)
    shared.run()
    no_failure(shared)
    assert shared.session_state["map_topic"] == topic
    assert set(papers_table(shared)["topic"]) == {topic}
