"""The publication figure of a drilled topic (issue 38): what the page's Downloads tab draws when the map is drilled
into a topic with subtopics. The topic's papers coloured by their subtopics and labelled with the subtopics' names
(leader lines as for topics), every other paper grey context, the figure framed on the topic as the page's map is,
a title naming the theme and the topic, a caption naming corpus, build date and filters.

On the session's real 300-paper cache (tests/conftest.py ``slice_cache``) given subtopics as the contract of issue 38
describes (the documents' ``subtopic`` column and subtopics.parquet: each topic of SUBTOPIC_MIN_PAPERS papers or
more split by x into three named parts); the MapView is the one the Downloads tab builds
(dashboard.views.downloads.page_map_view of the page in the drilled state), the images come from the real renderers,
and the last test drives the page (AppTest) from a shared address to the drawn files.
"""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dashboard.display import OUTLIER_TOPIC
from dashboard.figures import publication
from dashboard.figures.publication_layout import label_anchors
from dashboard.figures.topic_map import CONTEXT_COLOUR
from pipeline.cache import TopicCache
from pipeline.runtime.parquet import read_frame

APP = Path(__file__).resolve().parent.parent / "dashboard" / "app.py"
SUBTOPIC_MIN_PAPERS = 30  # the slice's topics are small: the pipeline's floor (60 papers) would leave none
PARTS = "ABC"


def add_subtopics(cache: Path) -> None:
    """Give ``cache`` subtopics: each topic of SUBTOPIC_MIN_PAPERS papers or more split by its papers' x into three
    parts named "Part A of topic N" (short: one line in the figure), the rest -1."""
    documents = read_frame(cache / "documents.parquet")
    subtopic = np.full(len(documents), -1, dtype=np.int64)
    rows: list[dict[str, object]] = []
    for topic, members in documents[documents["topic"] != OUTLIER_TOPIC].groupby("topic"):
        if len(members) < SUBTOPIC_MIN_PAPERS:
            continue
        ranks = members["x"].rank(method="first").to_numpy() - 1
        for part, letter in enumerate(PARTS):
            chosen = members[(ranks * len(PARTS) // len(members)) == part]
            subtopic[documents.index.get_indexer(chosen.index)] = len(rows)
            rows.append(
                {
                    "subtopic": len(rows),
                    "topic": int(topic),
                    "label": f"Part {letter} of topic {topic}",
                    "subtitle": [],
                    "size": len(chosen),
                    "x": float(chosen["x"].median()),
                    "y": float(chosen["y"].median()),
                }
            )
    assert rows, "the slice has no topic of SUBTOPIC_MIN_PAPERS papers"
    documents.assign(subtopic=subtopic).to_parquet(cache / "documents.parquet", index=False)
    pd.DataFrame(rows).astype({"subtopic": "int64", "topic": "int64", "size": "int64"}).to_parquet(
        cache / "subtopics.parquet", index=False
    )


@pytest.fixture(scope="module")
def drill_cache(slice_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the 300-paper cache with subtopics."""
    target = tmp_path_factory.mktemp("drill") / "slice300"
    shutil.copytree(slice_cache, target)
    add_subtopics(target)
    return target


def drilled_topic(atlas: TopicCache) -> tuple[int, int, str, list[str]]:
    """(topic, its theme, its label, its subtopics' names) of the largest topic with subtopics."""
    subtopics = atlas.subtopics
    topic = int(subtopics.groupby("topic")["size"].sum().idxmax())
    row = atlas.topics.loc[atlas.topics["topic"] == topic].iloc[0]
    names = sorted(subtopics.loc[subtopics["topic"] == topic, "label"].astype(str))
    return topic, int(row["theme"]), str(row["label"]), names


def drilled_view(cache: Path, colour: str = "theme") -> tuple[publication.MapView, TopicCache, pd.DataFrame]:
    """(the Downloads tab's MapView of the page drilled into the largest topic with subtopics, the atlas as the page
    loads it, the listing): the Page built as dashboard/app.py builds it for ``?theme=T&drill=N&colour=...``."""
    from dashboard.state import resources
    from dashboard.state.url_state import ViewState
    from dashboard.tables import contents
    from dashboard.views import downloads
    from dashboard.views.page import Page

    key = (str(cache.resolve()), 0)
    atlas = resources.load_cache(*key)
    listing = resources.listing(key, atlas)
    topic, theme, _, _ = drilled_topic(atlas)
    in_theme = (listing["theme"] == theme).to_numpy()
    matching, context = listing[in_theme], listing[~in_theme]
    view = ViewState(theme=theme, drill=topic, colour=colour)
    page = Page(atlas, key, view, matching, context, set(), matching, [], pd.DataFrame({"doc_id": []}))
    page.drill_topic(topic, *contents.topic_parts(matching, context, topic))
    return downloads.page_map_view(page), atlas, listing


def test_the_drilled_topics_view_is_its_subtopics_in_their_colours_over_the_grey_atlas(drill_cache):
    view, atlas, listing = drilled_view(drill_cache)
    topic, _, label, names = drilled_topic(atlas)
    points = view.points
    labelled = points[points["label"] != ""]
    assert sorted(labelled["label"].unique()) == names  # the label groups are the subtopics, not the topic
    in_topic = int((listing["topic"] == topic).sum())
    assert len(labelled) == in_topic and len(points) == len(listing)
    colours = labelled.groupby("label")["colour"].unique()
    assert all(len(group) == 1 for group in colours)  # one colour per subtopic ...
    assert len({group[0] for group in colours}) == len(names)  # ... each its own ...
    assert CONTEXT_COLOUR not in {group[0] for group in colours}  # ... none the context's grey
    assert (points.loc[points["label"] == "", "colour"] == CONTEXT_COLOUR).sum() == len(listing) - in_topic
    assert view.legend == []  # the labels name the colours
    theme_name = str(atlas.topics.loc[atlas.topics["topic"] == topic, "theme_label"].iloc[0])
    assert label in view.title and theme_name in view.title and "coloured by subtopic" in view.title
    assert f"drilled topic: {label}" in view.caption and f"theme: {theme_name}" in view.caption
    assert f"{in_topic} papers of " in view.caption and "(built " in view.caption
    # framed on the topic as the page is, every subtopic's anchor inside the frame
    x_low, x_high, y_low, y_high = view.frame
    anchors = label_anchors(view.shown_points)
    assert sorted(anchors["label"]) == names
    assert anchors["x"].between(x_low, x_high).all() and anchors["y"].between(y_low, y_high).all()
    assert len(view.shown_points) <= len(points)


def test_coloured_by_decision_the_drilled_topic_keeps_its_colours_and_legend_with_subtopic_labels(drill_cache):
    from dashboard.figures.decision_charts import DECISION_COLOURS

    view, atlas, _ = drilled_view(drill_cache, colour="decision")
    _, _, label, names = drilled_topic(atlas)
    labelled = view.points[view.points["label"] != ""]
    assert sorted(labelled["label"].unique()) == names
    assert view.legend and {name for name, _ in view.legend} <= set(DECISION_COLOURS)  # the key, as on the page
    assert set(labelled["colour"]) <= {colour for _, colour in view.legend}
    assert "coloured by decision" in view.title and label in view.title


def test_the_view_keeps_its_frame_through_a_job_folder(drill_cache, tmp_path):
    view, _, _ = drilled_view(drill_cache)
    publication.save_view(view, tmp_path)
    loaded = publication.load_view(tmp_path)
    assert loaded.frame == pytest.approx(view.frame) and loaded.fingerprint == view.fingerprint
    whole = publication.MapView(view.points, view.legend, view.title, view.caption)
    assert whole.fingerprint != view.fingerprint and len(whole.shown_points) == len(view.points)


def svg_texts(svg: bytes) -> str:
    """The text of an SVG's <text> elements, joined by newlines (matplotlib writes each line as one)."""
    return "\n".join(re.findall(r"<text[^>]*>([^<]*)</text>", svg.decode("utf-8")))


def colour_found(png: bytes, colour: str, tolerance: int = 40) -> bool:
    """Whether some pixel of ``png`` is near ``colour`` (#RRGGBB) drawn at the points' opacity over white."""
    from PIL import Image

    pixels = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=int).reshape(-1, 3)
    target = np.asarray([int(colour[index : index + 2], 16) for index in (1, 3, 5)])
    blended = 0.85 * target + 0.15 * 255
    return bool((np.abs(pixels - blended).max(axis=1) <= tolerance).any())


def test_the_exported_png_and_svg_show_the_subtopics_names_and_colours(drill_cache):
    from dashboard.export.publication_images import render_all

    view, atlas, _ = drilled_view(drill_cache)
    _, _, label, names = drilled_topic(atlas)
    images = render_all(view, ["png", "svg"])
    texts = svg_texts(images["svg"])
    for name in names:
        assert name in texts.split("\n"), (name, texts)  # each subtopic's label, on one line of its own
    words = " ".join(texts.split())  # the title and the caption, wrapped on lines
    assert f"› {label}, coloured by subtopic" in words and f"drilled topic: {label}" in words
    assert images["png"].startswith(b"\x89PNG\r\n\x1a\n")
    for colour in view.points.loc[view.points["label"] != "", "colour"].unique():
        assert colour_found(images["png"], colour), colour


def test_the_downloads_tab_draws_the_drilled_topics_figure(drill_cache, monkeypatch, eager_downloads):
    from pipeline.cache import read_cache

    atlas = read_cache(drill_cache)
    topic, theme, label, names = drilled_topic(atlas)
    monkeypatch.setenv("ATLAS_CACHE", str(drill_cache))
    monkeypatch.setenv("ATLAS_MAP_RENDERER", "plotly")
    monkeypatch.setattr("sys.argv", ["app.py"])
    app = AppTest.from_file(str(APP), default_timeout=120)
    app.query_params["theme"], app.query_params["drill"] = str(theme), str(topic)  # a shared address
    app.query_params["tab"] = "Downloads"
    app.run()
    assert not app.exception and not app.error, [item.value for item in [*app.exception, *app.error]]
    assert app.session_state["map_topic"] == topic
    caption = next(item.value for item in app.caption if item.value.startswith("Caption: "))
    assert "drilled topic" in caption
    app.button(key="publication-draw").click().run()
    assert not app.exception and not app.error, [item.value for item in [*app.exception, *app.error]]
    svg = eager_downloads["topic-atlas-map.svg"]
    texts = svg_texts(svg)
    assert all(name in texts.split("\n") for name in names) and f"› {label}" in " ".join(texts.split())
    assert eager_downloads["topic-atlas-map.png"].startswith(b"\x89PNG")
