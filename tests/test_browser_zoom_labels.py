"""The WebGL map's labels follow the zoom (issue 38): at the fitted view the shallowest level (themes), zoomed in the
next levels (topics, then subtopics), never two labels over each other or over the toolbar; and the + / − buttons
and keys zoom the points with the labels (the points stayed put until the next pan, the labels floated).

`streamlit run` over the session's 300-paper cache with subtopics added as the contract of issue 38 describes
(documents' `subtopic`, subtopics.parquet: each topic of 30 papers or more split by x into 2-3 parts), driven by
Debian's Chromium. The labels with their levels (label dicts with `level` and `size`, the render's `label_mode`) are
the page's own (dashboard.figures.map_layers.view_layers).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import playwright.sync_api as playwright_api
import pytest

from pipeline.runtime.parquet import read_frame
from tests.streamlit_server import chromium_browser, streamlit_server
from tests.test_browser_map import CHROMIUM_ARGS, TWO_FRAMES, open_map, overlapping, settle_camera

LABELS = "() => window.__atlasLabels()"
SUBTOPIC_MIN_PAPERS = 30  # the slice's topics are small: the real pipeline's floor (~60) would leave none
EDGE = 0.5  # a label's rect lies inside the plot up to rounding


def add_subtopics(cache: Path) -> None:
    """Give ``cache`` subtopics as the contract of issue 38 describes: each topic of SUBTOPIC_MIN_PAPERS papers or
    more split by its papers' x into 2 or 3 parts (named by the topic's top terms), the rest -1."""
    documents = read_frame(cache / "documents.parquet")
    topics = read_frame(cache / "topics.parquet")
    terms = dict(zip(topics["topic"].astype(int), topics["top_terms"]))
    subtopic = np.full(len(documents), -1, dtype=np.int64)
    rows = []
    for topic, members in documents[documents["topic"] >= 0].groupby("topic"):
        if len(members) < SUBTOPIC_MIN_PAPERS:
            continue
        parts = 3 if len(members) >= 2 * SUBTOPIC_MIN_PAPERS else 2
        ranks = members["x"].rank(method="first").to_numpy() - 1
        for part in range(parts):
            chosen = members[(ranks * parts // len(members)) == part]
            subtopic[documents.index.get_indexer(chosen.index)] = len(rows)
            words = [term["term"] if isinstance(term, dict) else str(term) for term in terms.get(int(topic), [])]
            name = f"{words[part % len(words)]} {'ABC'[part]}" if words else f"Part {part + 1} of {topic}"
            rows.append(
                {
                    "subtopic": len(rows),
                    "topic": int(topic),
                    "label": name.capitalize(),
                    "subtitle": [],
                    "size": len(chosen),
                    "x": float(chosen["x"].median()),
                    "y": float(chosen["y"].median()),
                }
            )
    documents["subtopic"] = subtopic
    documents.to_parquet(cache / "documents.parquet", index=False)
    pd.DataFrame(rows).astype({"subtopic": "int64", "topic": "int64", "size": "int64"}).to_parquet(
        cache / "subtopics.parquet", index=False
    )


def topics_without_subtopics(cache: Path) -> set[str]:
    """The names of ``cache``'s topics that have no subtopic."""
    topics = read_frame(cache / "topics.parquet")
    with_some = set(read_frame(cache / "subtopics.parquet")["topic"].astype(int))
    return {str(name) for topic, name in zip(topics["topic"], topics["label"]) if 0 <= topic and topic not in with_some}


@pytest.fixture(scope="module")
def subtopic_cache(slice_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the 300-paper cache with subtopics."""
    target = tmp_path_factory.mktemp("subtopics") / "slice300"
    shutil.copytree(slice_cache, target)
    add_subtopics(target)
    return target


@pytest.fixture(scope="module")
def server_url(subtopic_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("streamlit-zoom-log") / "server.log"
    with streamlit_server(subtopic_cache, log, {"ATLAS_MAP_RENDERER": "webgl"}) as (url, _):
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with chromium_browser(CHROMIUM_ARGS) as chromium:
        yield chromium


def page_labels(frame, mode: str = "zoom") -> list[dict]:
    """The labels the page sent the map (dashboard.figures.map_layers.view_layers), after asserting that they came
    in ``mode`` ("zoom": every level with its ``level`` and ``size``; "fixed": the picker's level only) and that
    the map drew them in that mode."""
    args = frame.evaluate("() => window.__atlas.args()")
    assert args.get("label_mode") == mode, args.get("label_mode")
    labels = args["labels"]
    assert labels and all("level" in label and "size" in label for label in labels)
    assert frame.evaluate(LABELS)["mode"] == mode
    return labels


def check_shown(shown: dict, where: str) -> list[dict]:
    """Assert that the visible labels lie inside the plot, clear of each other, of the toolbar and of the legend, each
    beside its anchor; returns them."""
    labels, plot = shown["labels"], shown["plot"]
    for index, label in enumerate(labels):
        box = label["rect"]
        assert plot["x"] - EDGE <= box["x"] and box["x"] + box["width"] <= plot["x"] + plot["width"] + EDGE, label
        assert plot["y"] - EDGE <= box["y"] and box["y"] + box["height"] <= plot["y"] + plot["height"] + EDGE, label
        assert not overlapping(box, shown["toolbar"]) and not overlapping(box, shown["legend"]), (where, label)
        for other in labels[index + 1 :]:
            assert not overlapping(box, other["rect"]), (where, label, other)
        # at its anchor or moved off it by a few pixels (labels.js offsets): the label stays with its group
        ax, ay = label["anchor"]
        gap_x = max(box["x"] - ax, ax - box["x"] - box["width"], 0)
        gap_y = max(box["y"] - ay, ay - box["y"] - box["height"], 0)
        assert gap_x <= 10 and gap_y <= 10, (where, label)
    return labels


# A point of the map well off the plot's centre (so a zoom about the centre moves it) and in view.
OFF_CENTRE_POINT = """() => {
  const plot = document.getElementById('plot');
  const [w, h] = [plot.clientWidth, plot.clientHeight];
  for (let i = 0; i < window.__atlas.count(); i++) {
    const [x, y] = window.__atlas.screen(i);
    if (x > 0 && x < w && y > 0 && y < h && Math.hypot(x - w / 2, y - h / 2) > Math.min(w, h) / 6) return i;
  }
  return 0;
}"""

# The map has drawn a frame with the camera it has now (window.__atlasProject reads the camera of the latest frame
# drawn) and the point has moved on the canvas from where it was drawn before.
DRAWN_AND_MOVED = """([index, before]) => {
  const drawn = window.__atlasProject(index);
  const now = window.__atlas.screen(index);
  return Math.abs(drawn[0] - now[0]) < 0.01 && Math.abs(drawn[1] - now[1]) < 0.01 &&
    Math.hypot(drawn[0] - before[0], drawn[1] - before[1]) > 1;
}"""


def zoom_and_check(frame, press, where: str) -> dict:
    """Zoom by ``press`` (a button's click or a key) and wait until the points are drawn where the camera now puts
    them (they stayed until the next pan); returns what the labels show then, checked by :func:`check_shown`."""
    index = frame.evaluate(OFF_CENTRE_POINT)
    before = frame.evaluate(f"() => window.__atlasProject({index})")
    zoom = frame.evaluate(LABELS)["zoom"]
    press()
    try:
        frame.wait_for_function(DRAWN_AND_MOVED, arg=[index, before], timeout=30_000)
    except playwright_api.TimeoutError as error:
        drawn = frame.evaluate(f"() => [window.__atlasProject({index}), window.__atlas.screen({index})]")
        raise AssertionError(f"{where}: point {index} drawn at {drawn[0]}, the camera puts it at {drawn[1]}") from error
    frame.evaluate(TWO_FRAMES)
    shown = frame.evaluate(LABELS)
    assert shown["zoom"] != pytest.approx(zoom), where
    check_shown(shown, where)
    return shown


def centre_on(page, frame, anchor: list[float]) -> None:
    """Drag the map so that ``anchor`` (a place of the data space) comes near the plot's centre, as a user pans."""
    canvas = frame.locator("#canvas").bounding_box()
    x, y = frame.evaluate("([x, y]) => window.__atlas.toScreen(x, y)", anchor)
    page.mouse.move(canvas["x"] + x, canvas["y"] + y)
    frame.evaluate(TWO_FRAMES)
    page.mouse.down()
    for step in range(1, 11):  # the camera pans by the pointer's move in each frame
        page.mouse.move(
            canvas["x"] + x + (canvas["width"] / 2 - x) * step / 10,
            canvas["y"] + y + (canvas["height"] / 2 - y) * step / 10,
        )
        frame.evaluate(TWO_FRAMES)
    page.mouse.up()
    settle_camera(frame)


def levels_of(shown: dict) -> set[int]:
    return {label["level"] for label in shown["labels"]}


def test_labels_go_deeper_as_the_map_zooms_and_the_points_zoom_with_them(browser, server_url, subtopic_cache):
    page, frame = open_map(browser, f"{server_url}/?level=zoom", 1280, 720)
    try:
        labels = page_labels(frame)
        assert {label["level"] for label in labels} == {0, 1, 2}
        fitted = frame.evaluate(LABELS)
        assert fitted["zoom"] == pytest.approx(1, abs=0.02)
        assert check_shown(fitted, "fit") and levels_of(fitted) == {0}, fitted["labels"]
        # Subtopics replace their topic's label, and a topic without subtopics keeps its own when zoomed in.
        topics = {label["name"] for label in labels if label["level"] == 1}
        covered = {label["name"] for label in fitted["covered"] if label["level"] == 1}
        assert topics - covered == topics & topics_without_subtopics(subtopic_cache), covered

        # Zoom in on the largest subtopic, as a reader does on a part of the map they want to read.
        largest = max((label for label in labels if label["level"] == 2), key=lambda label: label["size"])
        centre_on(page, frame, largest["anchor"])
        steps = []
        for press in range(6):  # 1.5x each: 1.5, 2.25, 3.4, 5.1, 7.6, 11.4
            steps.append(zoom_and_check(frame, frame.locator("#zoom-in").click, f"+ button {press + 1}"))
        first = {level: next((i for i, s in enumerate(steps) if level in levels_of(s)), None) for level in (1, 2)}
        report = [(round(s["zoom"], 2), sorted(levels_of(s)), len(s["labels"])) for s in steps]
        assert first[1] is not None and first[2] is not None and first[1] < first[2], report
        assert steps[first[1]]["zoom"] >= 1.25 and steps[first[2]]["zoom"] >= 2.8, report  # not at the fitted view
        assert all(0 not in levels_of(step) for step in steps if step["zoom"] >= 4), report  # themes gave way

        # The keys zoom the points too, out and in, and the fit brings the themes back.
        # Focus inside the map's frame without clicking the plot: a click there may land on a paper, whose panel
        # then takes the keyboard's focus from the map.
        frame.locator("#zoom-out").focus()
        out = zoom_and_check(frame, lambda: page.keyboard.press("-"), "− key")
        assert out["zoom"] < steps[-1]["zoom"]
        again = zoom_and_check(frame, lambda: page.keyboard.press("+"), "+ key")
        assert again["zoom"] > out["zoom"]
        zoom_and_check(frame, frame.locator("#zoom-out").click, "− button")
        frame.locator("#fit").click()
        settle_camera(frame)
        refitted = frame.evaluate(LABELS)
        assert refitted["zoom"] == pytest.approx(1, abs=0.02) and check_shown(refitted, "refit")
        assert levels_of(refitted) == {0}, refitted["labels"]
    finally:
        page.close()


def test_ctrl_wheel_zooms_points_and_labels_together(browser, server_url, subtopic_cache):
    page, frame = open_map(browser, f"{server_url}/?level=zoom", 1500, 1000)
    try:
        page_labels(frame)
        canvas = frame.locator("#canvas").bounding_box()

        def wheel() -> None:
            page.mouse.move(canvas["x"] + canvas["width"] / 2, canvas["y"] + canvas["height"] / 2)
            page.keyboard.down("Control")
            page.mouse.wheel(0, -400)
            page.keyboard.up("Control")

        zoomed = zoom_and_check(frame, wheel, "ctrl+wheel")
        assert zoomed["zoom"] > 1
    finally:
        page.close()


def test_a_fixed_level_shows_only_that_level_without_overlaps(browser, server_url):
    page, frame = open_map(browser, f"{server_url}/?level=subtopics", 1280, 720)
    try:
        labels = page_labels(frame, "fixed")
        assert {label["level"] for label in labels} == {2}  # the subtopics alone, whatever the zoom
        settle_camera(frame)
        shown = check_shown(frame.evaluate(LABELS), "fixed subtopics at fit")
        assert shown and levels_of(frame.evaluate(LABELS)) == {2}
    finally:
        page.close()
