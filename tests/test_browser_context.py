"""Issue 40, items 5 and 7, on the WebGL map in Chromium over the session's 300-paper cache.

7. The grey context (the papers outside a topic filter, or outside a highlighted year) was all but invisible:
   #D5D5D5 at opacity 0.3 reached a WCAG contrast of 1.1:1 on white. Its pixels are sampled from the drawn canvas
   and must reach 1.5:1 (visible) while staying lighter than the matching papers (recessive). A filtered view's
   fitted frame clipped its points at the map's edge: the frame's points now lie a margin inside the plot, and a
   tight frame holds all but a few of the matches.
5. A lasso closed where it started, on a paper, opened that paper and lost the selection: its release counted as a
   click on the point under the pointer.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from dashboard.display import OUTLIER_COLOUR, TOPIC_PALETTE
from dashboard.figures import map_layers, map_model, topic_map
from pipeline.cache import read_cache
from tests.streamlit_server import chromium_browser, streamlit_server
from tests.test_browser_map import CHROMIUM_ARGS, POSTS_TAKEN, TWO_FRAMES, latest_event, open_map, settle_camera

FIT_MARGIN_PX = 24  # index.js


def relative_luminance(rgb: np.ndarray) -> np.ndarray:
    """WCAG 2 relative luminance of sRGB colours (..., 3) in 0-255."""
    channel = np.asarray(rgb, dtype=float) / 255
    linear = np.where(channel <= 0.04045, channel / 12.92, ((channel + 0.055) / 1.055) ** 2.4)
    return linear @ np.array([0.2126, 0.7152, 0.0722])


def contrast_on_white(rgb: np.ndarray) -> np.ndarray:
    """WCAG 2 contrast ratio of sRGB colours (..., 3) against white: 1 (invisible) to 21."""
    return 1.05 / (relative_luminance(rgb) + 0.05)


def over_white(colour: str, opacity: float) -> np.ndarray:
    """The sRGB colour ``colour`` (#RRGGBB) drawn at ``opacity`` over white."""
    rgb = np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)], dtype=float)
    return opacity * rgb + (1 - opacity) * 255


def test_the_context_grey_is_visible_but_lighter_than_every_colour_it_sits_under():
    sizes, opacities = map_layers._sizes(300)
    context = contrast_on_white(over_white(topic_map.CONTEXT_COLOUR, opacities[0]))
    assert context >= 1.5  # visible: #D5D5D5 at 0.3 was 1.1
    assert contrast_on_white(over_white(topic_map.CONTEXT_COLOUR, 0.6)) >= 1.5  # plotly's context trace
    matched = [contrast_on_white(over_white(colour, opacities[1])) for colour in TOPIC_PALETTE]
    # recessive: grey, smaller, lighter than the outliers' grey and than all but the palette's lightest colours
    assert context < contrast_on_white(over_white(OUTLIER_COLOUR, opacities[1]))
    assert context < np.quantile(matched, 0.1), sorted(matched)[:8]
    assert sizes[0] < sizes[1]


def test_a_highlighted_year_draws_the_other_years_as_visible_context(slice_cache):
    """Highlighting 2026 made the other ~33,000 papers of the six collections vanish: they are the context grey at
    the context opacity (emphasis 0), like a filter's context."""
    atlas = read_cache(slice_cache)
    topics = topic_map.themed_topics(atlas.topics, atlas.hierarchy)
    documents = topic_map.with_themes(atlas.documents, topics)
    documents = documents.assign(year=[2025 + (row % 2) for row in range(len(documents))])
    ids = frozenset(documents["doc_id"].astype(str))
    layers = map_layers.view_layers(documents, ids, topics, topic_map.MapState(highlight=2026))
    colours = np.frombuffer(base64.b64decode(layers["colours"]), dtype=np.uint8)
    emphasis = np.frombuffer(base64.b64decode(layers["emphasis"]), dtype=np.uint8)
    others = (documents["year"] != 2026).to_numpy()
    assert {layers["palette"][index] for index in colours[others]} == {topic_map.CONTEXT_COLOUR}
    assert set(emphasis[others]) == {0} and set(emphasis[~others]) == {1}
    opacity = layers["opacities"][0]
    assert contrast_on_white(over_white(topic_map.CONTEXT_COLOUR, opacity)) >= 1.5


def test_a_tight_frame_holds_all_but_a_few_of_the_matches():
    """A drilled theme framed on its 8th-92nd percentiles plus 15% left about one paper in eight outside the view."""
    rng = np.random.default_rng(0)
    x, y = rng.normal(0, 0.2, 2000), rng.normal(0.1, 0.1, 2000)
    x0, y0, x1, y1 = map_model.frame_of(np.arange(2000), x, y, tight=True)
    inside = (x0 <= x) & (x <= x1) & (y0 <= y) & (y <= y1)
    assert inside.mean() >= 0.97, inside.mean()
    assert x1 - x0 < np.ptp(x)  # still tight: a stray paper does not widen the view to the whole map


@pytest.fixture(scope="module")
def server_url(slice_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("context-log") / "server.log"
    with streamlit_server(slice_cache, log, {"ATLAS_MAP_RENDERER": "webgl"}) as (url, _):
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with chromium_browser(CHROMIUM_ARGS) as chromium:
        yield chromium


# Per point: its place on the canvas (CSS pixels), whether it is context (the palette's last colour), and the
# rectangles of what lies over the canvas (labels, toolbar, legend), in the canvas's pixels.
MAP_GEOMETRY = """() => {
  const args = window.__atlas.args();
  const colours = Uint8Array.from(atob(args.colours), (c) => c.charCodeAt(0));
  const canvas = document.getElementById('canvas').getBoundingClientRect();
  const over = [...document.querySelectorAll('.atlas-label, #toolbar, #legend, #tooltip')]
    .map((node) => node.getBoundingClientRect())
    .filter((box) => box.width > 0)
    .map((box) => [box.left - canvas.left, box.top - canvas.top, box.right - canvas.left, box.bottom - canvas.top]);
  return {
    points: Array.from({length: window.__atlas.count()}, (_, i) => window.__atlas.screen(i)),
    context: Array.from(colours, (c) => c === args.palette.length - 1),
    frame: args.frame,
    corners: [window.__atlas.toScreen(args.frame[0], args.frame[1]),
      window.__atlas.toScreen(args.frame[2], args.frame[3])],
    over,
    size: [canvas.width, canvas.height],
  };
}"""


def darkest_near(image: np.ndarray, x: float, y: float) -> np.ndarray:
    """The darkest pixel (RGB) of the 3 x 3 pixels round (x, y): a small point's centre, whatever its sub-pixel
    place."""
    col, row = int(round(x)), int(round(y))
    patch = image[row - 1 : row + 2, col - 1 : col + 2].reshape(-1, 3)
    return patch[np.argmin(patch.sum(axis=1))]


def isolated_points(geometry: dict, which: np.ndarray, gap_px: float = 10) -> np.ndarray:
    """Indices of the points of ``which`` with no other point within ``gap_px``, inside the canvas and under
    nothing drawn over it."""
    points = np.asarray(geometry["points"], dtype=float)
    width, height = geometry["size"]
    chosen = []
    for index in np.flatnonzero(which):
        x, y = points[index]
        if not (gap_px < x < width - gap_px and gap_px < y < height - gap_px):
            continue
        near = np.hypot(points[:, 0] - x, points[:, 1] - y)
        if np.sum(near < gap_px) > 1:
            continue
        if any(box[0] - 4 <= x <= box[2] + 4 and box[1] - 4 <= y <= box[3] + 4 for box in geometry["over"]):
            continue
        chosen.append(index)
    return np.asarray(chosen, dtype=int)


def test_context_points_are_visible_and_the_frame_keeps_its_points_off_the_edge(browser, server_url, slice_cache):
    topics = read_cache(slice_cache).topics
    topic = int(topics.loc[topics["topic"] != -1].sort_values("size").iloc[-1]["topic"])
    page, frame = open_map(browser, f"{server_url}/?topic={topic}", 1500, 1000)
    try:
        page.mouse.move(1, 1)  # no hover tooltip over the map
        frame.evaluate(TWO_FRAMES)
        geometry = frame.evaluate(MAP_GEOMETRY)
        context = np.asarray(geometry["context"], dtype=bool)
        assert context.any() and (~context).any(), "the filter left no context or no match"
        image = np.asarray(Image.open(io.BytesIO(frame.locator("#canvas").screenshot())).convert("RGB"))
        height_px, width_px = image.shape[:2]  # one pixel a CSS pixel (a fractional edge: one more)
        assert abs(height_px - geometry["size"][1]) <= 1 and abs(width_px - geometry["size"][0]) <= 1, image.shape
        points = np.asarray(geometry["points"], dtype=float)
        lonely_context = isolated_points(geometry, context)
        lonely_matches = isolated_points(geometry, ~context)
        assert len(lonely_context) >= 5, len(lonely_context)
        context_contrast = np.median([contrast_on_white(darkest_near(image, *points[i])) for i in lonely_context])
        assert context_contrast >= 1.5, context_contrast  # visible (1.1 before)
        if len(lonely_matches):
            match_contrast = np.median([contrast_on_white(darkest_near(image, *points[i])) for i in lonely_matches])
            assert context_contrast < match_contrast, (context_contrast, match_contrast)  # recessive
        # The fitted frame lies a margin inside the plot: none of its points is cut by the map's edge.
        (left, bottom), (right, top) = geometry["corners"]
        width, height = geometry["size"]
        assert min(left, top, width - right, height - bottom) >= FIT_MARGIN_PX - 2, (geometry["corners"], width)
        matches = points[~context]
        inside = (matches[:, 0] >= 0) & (matches[:, 0] <= width) & (matches[:, 1] >= 0) & (matches[:, 1] <= height)
        assert inside.mean() >= 0.95, inside.mean()
    finally:
        page.close()


def test_a_lasso_closed_on_a_paper_keeps_its_selection_and_opens_no_paper(browser, server_url):
    page, frame = open_map(browser, server_url, 1500, 1000)
    try:
        frame.locator("#lasso").click()
        settle_camera(frame)
        plot = frame.locator("#canvas").bounding_box()
        points = np.asarray(frame.evaluate(MAP_GEOMETRY)["points"], dtype=float)
        centre = np.array([plot["width"] / 2, plot["height"] / 2])
        start = points[np.argmin(np.hypot(*(points - centre).T))]  # a paper near the middle: the lasso starts on it
        page.mouse.move(plot["x"] + start[0], plot["y"] + start[1])
        frame.evaluate(TWO_FRAMES)
        frame.locator(".tooltip-topic, #tooltip").first.wait_for(state="visible", timeout=10_000)  # it is on a paper
        page.mouse.down()
        for dx, dy in [(90, 0), (90, 90), (0, 90), (0, 0)]:  # round, and back to the very paper it started on
            page.mouse.move(plot["x"] + start[0] + dx, plot["y"] + start[1] + dy, steps=12)
        page.mouse.up()
        caption = page.get_by_text("papers selected on the map")
        caption.wait_for(timeout=90_000)
        page.wait_for_function(POSTS_TAKEN, timeout=90_000)
        indices = sorted(set(latest_event(page, "lasso")["indices"]))
        assert len(indices) > 1, indices
        emitted = frame.evaluate("() => window.__atlas.state().emitted")
        last_lasso = len(emitted) - 1 - emitted[::-1].index("lasso")
        assert "click" not in emitted[last_lasso:], emitted  # the release opened no paper
        assert "paper=" not in page.url and page.locator(".st-key-paper-panel").count() == 0
        assert caption.inner_text().split()[0].replace(",", "") == str(len(indices))  # the selection holds
        page.get_by_text(f"Papers ({len(indices):,})", exact=True).wait_for(timeout=30_000)
    finally:
        page.close()
