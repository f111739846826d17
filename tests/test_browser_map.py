"""The WebGL map in a real browser: labels that fit at four window sizes, the wheel, zoom keys, click, lasso and a
page with the network blocked. `streamlit run` as a subprocess over the session's 300-paper cache, driven by
Debian's Chromium (software WebGL) through playwright; fails in one line when Chromium is absent.

Every wait is for a state the page or the map shows (a finished script run, a camera that holds still over several
animation frames, a render the map received), never a fixed pause: the tests hold on a loaded machine.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import playwright.sync_api as playwright_api
import pytest

from tests.streamlit_server import PAPERS_GRID, RUN_TRACKER, chromium_browser, rerun, streamlit_server

CHROMIUM_ARGS = ["--no-sandbox", "--enable-unsafe-swiftshader", "--disable-background-networking", "--no-first-run"]
MAP_FRAME = "iframe[title*='atlas_scatter']"
# (width, height, sidebar open): the sizes the issue names (19), 900 wide with the sidebar open and closed.
SIZES = [(900, 1000, True), (900, 1000, False), (1280, 720, True), (1500, 1000, True), (1920, 1080, True)]

LABEL_BOXES = """() => {
  const plot = document.getElementById('plot').getBoundingClientRect().toJSON();
  const toolbar = document.getElementById('toolbar').getBoundingClientRect().toJSON();
  const labels = [...document.querySelectorAll('.atlas-label')]
    .filter((node) => node.style.display !== 'none')
    .map((node) => ({text: node.textContent, box: node.getBoundingClientRect().toJSON()}));
  return {plot, toolbar, labels, total: document.querySelectorAll('.atlas-label').length};
}"""

POINT_SPREAD = """() => {
  const n = window.__atlas.count();
  let [x0, x1, y0, y1] = [Infinity, -Infinity, Infinity, -Infinity];
  for (let i = 0; i < n; i++) {
    const [x, y] = window.__atlas.screen(i);
    x0 = Math.min(x0, x); x1 = Math.max(x1, x); y0 = Math.min(y0, y); y1 = Math.max(y1, y);
  }
  const plot = document.getElementById('plot');
  return [(x1 - x0) / plot.clientWidth, (y1 - y0) / plot.clientHeight];
}"""


@pytest.fixture(scope="module")
def server_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The map server's output (its tail goes into the report of a failed click)."""
    return tmp_path_factory.mktemp("streamlit-map-log") / "server.log"


@pytest.fixture(scope="module")
def server_url(slice_cache: Path, server_log: Path) -> Iterator[str]:
    with streamlit_server(slice_cache, server_log, {"ATLAS_MAP_RENDERER": "webgl"}) as (url, _):
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with chromium_browser(CHROMIUM_ARGS) as chromium:
        yield chromium


# Resolves once the map's view has stopped changing. A new size reaches the map's ResizeObserver within two
# animation frames, and the map frames the view again 80 ms later (index.js, resize()): a timer of the same delay
# set after that one runs after it (timers run in the order of their due times), so past it the refit has been
# done. Then the size and the camera must hold over three animation frames (a fitted view's transition moves the
# camera every frame until it ends); a round in which anything changed is waited again.
SETTLE_VIEW = """async () => {
  const frame = () => new Promise((done) => requestAnimationFrame(done));
  const plot = document.getElementById('plot');
  const look = () => JSON.stringify([plot.clientWidth, plot.clientHeight, window.__atlas.cameraView()]);
  for (;;) {
    const start = look();
    await frame();
    await frame();
    await new Promise((done) => setTimeout(done, 80));
    let seen = look();
    for (let still = 0; still < 3; ) {
      await frame();
      const now = look();
      still = now === seen ? still + 1 : 0;
      seen = now;
    }
    if (seen === start) return true;
  }
}"""


def settle_camera(frame, timeout_ms: float = 60_000) -> None:
    """Wait until the map's view holds still (:data:`SETTLE_VIEW`): the fit after a resize comes on a timer and
    a double-click's fit is a transition, and a point's position read before they end is stale (a click there
    missed on a busy machine)."""
    frame.wait_for_function(SETTLE_VIEW, timeout=timeout_ms)


# For failure reports, in every frame: the mouse presses and clicks it received (window.__presses: type, the
# element's id or tag, position, buttons, detail) and, in the page, every value the map sent to Streamlit
# (window.__posted: [epoch ms, the value as JSON, the requests for a run sent before it], with RUN_TRACKER).
RECORD_POSTS = (
    """window.__presses = [];
for (const type of ['mousedown', 'mouseup', 'click']) {
  window.addEventListener(type, (event) => window.__presses.push(
    [type, event.target.id || event.target.tagName, Math.round(event.clientX), Math.round(event.clientY),
     event.buttons, event.detail, Date.now()]), {capture: true});
}
if (window === window.top) {
  window.__posted = [];
  window.addEventListener('message', (event) => {
    const data = event.data || {};
    if (data.type === 'streamlit:setComponentValue') {
      window.__posted.push([Date.now(), JSON.stringify(data.value), window.__runs ? window.__runs.sent : 0]);
    }
  });
  document.addEventListener('DOMContentLoaded', () => new MutationObserver((changes, observer) => {
    if (document.querySelector('"""
    + PAPERS_GRID
    + """')) {
      window.__firstTableAt = Date.now();
      observer.disconnect();
    }
  }).observe(document.body, {childList: true, subtree: true}));
}"""
)


# The page has run every value the map sent (RECORD_POSTS with RUN_TRACKER): no run is under way, and the latest
# finished run started after the request for a run that the latest value made.
POSTS_TAKEN = """() => {
  const last = window.__posted[window.__posted.length - 1];
  const runs = window.__runs;
  return !runs.running && runs.covered >= runs.sent && (!last || runs.covered > last[2]);
}"""


def map_report(page, frame, log: Path | None = None) -> str:
    """What the map sent and drew, the page's console, and the server log's tail, for a failed wait."""
    try:
        posted = page.evaluate("() => [window.__posted, window.__presses.slice(-12)]")
        drawn = frame.evaluate(
            "() => [document.body.dataset.drawn, document.body.dataset.drawnAt, Date.now(), window.__atlas.state(),"
            " window.__presses.slice(-12)]"
        )
    except playwright_api.Error as error:
        posted, drawn = f"unreadable: {error}", None
    console = getattr(page, "console_lines", [])[-20:]
    tail = log.read_text(errors="replace")[-3000:] if log and log.exists() else ""
    return (
        f"url={page.url}\nposted, presses on the page={posted}\ndrawn, state, presses in the map={drawn}\n"
        f"console={console}\nserver log:\n{tail}"
    )


def open_map(browser, url: str, width: int = 1500, height: int = 1000, blocked: list[str] | None = None):
    """(page, the map's frame) once the map has drawn; with ``blocked``, every request off 127.0.0.1 is aborted
    and its address appended there."""
    page = browser.new_page(viewport={"width": width, "height": height})
    page.add_init_script(RUN_TRACKER)
    page.add_init_script(RECORD_POSTS)
    page.console_lines = []
    page.on("console", lambda message: page.console_lines.append(f"{message.type}: {message.text}"))
    page.on("websocket", lambda socket: socket.on("close", lambda _: page.console_lines.append("websocket closed")))
    page.set_default_timeout(120_000)  # clicks on a busy machine
    if blocked is not None:

        def route(request_route) -> None:
            address = request_route.request.url
            if address.startswith(("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:")):
                request_route.continue_()
            else:
                blocked.append(address)
                request_route.abort()

        page.route("**/*", route)
    page.goto(url, wait_until="domcontentloaded", timeout=120_000)
    frame = page.wait_for_selector(MAP_FRAME, timeout=90_000).content_frame()
    frame.wait_for_selector("body[data-drawn]", state="attached", timeout=90_000)
    page.wait_for_selector(PAPERS_GRID, timeout=90_000)  # the papers table, after the map's draw
    page.wait_for_function(POSTS_TAKEN, timeout=90_000)  # the run the map's "shown" made has ended
    settle_camera(frame)  # the page's layout with the table has reached the map, and its view holds still
    return page, frame


# The sidebar is open (or closed: the argument) and has stopped moving: Streamlit says its state in data-collapsed
# and slides it with CSS transitions, which Element.getAnimations() lists until they end.
SIDEBAR_SETTLED = """(open) => {
  const sidebar = document.querySelector('[data-testid="stSidebar"]');
  return !!sidebar && sidebar.getAttribute('data-collapsed') === String(!open) && sidebar.getAnimations().length === 0;
}"""


def set_sidebar(page, open_: bool) -> None:
    """Open or close Streamlit's sidebar with its own buttons, and wait until it is so and has stopped moving."""
    collapse = page.locator("[data-testid='stSidebarCollapseButton'] button")
    expand = page.locator("[data-testid='stExpandSidebarButton']")
    if open_ and expand.count() and expand.first.is_visible():
        expand.first.click()
    elif not open_:
        page.locator("[data-testid='stSidebar']").hover()
        if collapse.count():
            collapse.first.click()
    page.wait_for_function(SIDEBAR_SETTLED, arg=open_, timeout=30_000)


def overlapping(a: dict, b: dict) -> bool:
    return (
        a["x"] < b["x"] + b["width"]
        and b["x"] < a["x"] + a["width"]
        and a["y"] < b["y"] + b["height"]
        and (b["y"] < a["y"] + a["height"])
    )


def check_labels(page, frame, where: str) -> int:
    """Assert that no visible label overlaps another or the toolbar, or leaves the plot or the window; returns
    how many are shown."""
    boxes = frame.evaluate(LABEL_BOXES)
    plot, labels = boxes["plot"], boxes["labels"]
    frame_box = page.locator(MAP_FRAME).bounding_box()
    viewport = page.viewport_size
    for index, label in enumerate(labels):
        box = label["box"]
        assert plot["x"] <= box["x"] and box["x"] + box["width"] <= plot["x"] + plot["width"], (where, label)
        assert plot["y"] <= box["y"] and box["y"] + box["height"] <= plot["y"] + plot["height"], (where, label)
        assert 0 <= frame_box["x"] + box["x"] and frame_box["x"] + box["x"] + box["width"] <= viewport["width"]
        assert not overlapping(box, boxes["toolbar"]), (where, label)
        for other in labels[index + 1 :]:
            assert not overlapping(box, other["box"]), (where, label["text"], other["text"])
        assert "…" not in label["text"], (where, label)
    return len(labels)


TOOLBAR_BOXES = """() => ({
  buttons: [...document.querySelectorAll('#toolbar button')].map((node) => node.getBoundingClientRect().toJSON()),
  hint: document.getElementById('hint').getBoundingClientRect().toJSON(),
  body: document.body.clientWidth,
})"""


TITLE_AND_HEADER = """() => {
  const header = document.querySelector('[data-testid="stHeader"]');
  return {
    title: document.querySelector('h1').getBoundingClientRect().toJSON(),
    header: header.getBoundingClientRect().toJSON(),
    opaque: getComputedStyle(header).backgroundColor !== 'rgba(0, 0, 0, 0)',
    buttons: [...header.querySelectorAll('button')].filter((node) => node.offsetParent)
      .map((node) => node.getBoundingClientRect().toJSON()),
  };
}"""


def check_page_chrome(page, frame, where: str) -> None:
    """The toolbar's buttons keep their width and never lie under its hint (at 900 px "Lasso" sat over the hint),
    the hint stays inside the frame, every tab lies within the tab bar's width (900 px cut "Downloads" behind
    a scroll arrow), and the title is not under Streamlit's header bar (opaque once the sidebar is closed, it hid
    the title's top 25 px at every size) or its buttons."""
    chrome = page.evaluate(TITLE_AND_HEADER)
    title = chrome["title"]
    assert not (chrome["opaque"] and title["y"] < chrome["header"]["y"] + chrome["header"]["height"]), (where, chrome)
    assert not any(overlapping(title, button) for button in chrome["buttons"]), (where, chrome)
    boxes = frame.evaluate(TOOLBAR_BOXES)
    for button in boxes["buttons"]:
        assert button["width"] >= 26 and not overlapping(button, boxes["hint"]), (where, button, boxes["hint"])
    assert boxes["hint"]["x"] + boxes["hint"]["width"] <= boxes["body"] + 1, (where, boxes["hint"])
    bar = page.locator("[data-testid='stTabs']").first.bounding_box()
    for tab in page.get_by_role("tab").all():
        box = tab.bounding_box()
        assert box and bar["x"] <= box["x"] and box["x"] + box["width"] <= bar["x"] + bar["width"] + 1, (
            where,
            tab.inner_text(),
        )


@pytest.mark.parametrize(("width", "height", "sidebar"), SIZES)
def test_labels_fit_and_points_fill_the_map(browser, server_url, width, height, sidebar):
    for level in ("themes", "topics"):
        page, frame = open_map(browser, f"{server_url}/?level={level}", width, height)
        try:
            set_sidebar(page, sidebar)
            settle_camera(frame)  # the map has its new width and has framed its view for it
            shown = check_labels(page, frame, f"{width}x{height} sidebar={sidebar} {level}")
            check_page_chrome(page, frame, f"{width}x{height} sidebar={sidebar}")
            assert shown >= 1
            spread_x, spread_y = frame.evaluate(POINT_SPREAD)
            assert max(spread_x, spread_y) >= 0.8, (spread_x, spread_y)
            frame.locator("#zoom-in").click()
            frame.locator("#zoom-in").click()
            check_labels(page, frame, f"{width}x{height} {level} zoomed in")
        finally:
            page.close()


TRUNCATED = """(root) => [...root.querySelectorAll('button, button *')]
  .filter((node) => node.offsetParent && node.scrollWidth > node.clientWidth + 1)
  .map((node) => node.closest('button').innerText)"""


@pytest.mark.parametrize(("width", "sidebar"), [(900, True), (1280, True)])
def test_every_chart_s_download_buttons_are_listed_and_never_cut(browser, server_url, width, sidebar):
    """Every chart of every tab is offered (top terms, similarity and ratings were not), and its buttons keep their
    whole text ("Draw PNG + SVG" was cut to "D…" at 900 px and "Draw PNG …" at 1280 px)."""
    page = browser.new_page(viewport={"width": width, "height": 1000})
    page.set_default_timeout(120_000)
    try:
        page.goto(f"{server_url}/?tab=Downloads", wait_until="domcontentloaded", timeout=120_000)
        charts = page.locator(".st-key-downloads-charts")
        charts.get_by_role("button", name="Draw PNG + SVG").first.wait_for(timeout=120_000)
        set_sidebar(page, sidebar)
        names = [node.inner_text() for node in charts.locator("[class*='st-key-chart-'] strong").all()]
        assert {"Topic map", "Topic sizes", "Top terms", "Topic tree", "Topic similarity"} <= set(names), names
        assert charts.get_by_role("button", name="Draw PNG + SVG").count() == len(names)
        assert charts.evaluate(TRUNCATED) == []
        assert page.locator(".st-key-downloads-publication").evaluate(TRUNCATED) == []
    finally:
        page.close()


def test_the_wheel_scrolls_the_page_and_ctrl_wheel_or_keys_zoom(browser, server_url):
    page, frame = open_map(browser, server_url, 1280, 720)
    try:
        box = page.locator(MAP_FRAME).bounding_box()
        before = frame.evaluate("() => window.__atlas.cameraView()")
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + min(box["height"] / 2, 300))
        page.mouse.wheel(0, 500)
        # the page scrolled: the wheel went past the map to the page
        page.wait_for_function(
            "([selector, top]) => document.querySelector(selector).getBoundingClientRect().y < top - 100",
            arg=[MAP_FRAME, box["y"]],
            timeout=30_000,
        )
        frame.evaluate(TWO_FRAMES)  # the camera takes a wheel's zoom in its next frame
        assert frame.evaluate("() => window.__atlas.cameraView()") == before  # the map did not zoom
        assert page.locator(MAP_FRAME).bounding_box()["y"] < box["y"] - 100  # the page scrolled
        frame.locator("#plot").click(position={"x": 5, "y": 5})
        page.keyboard.press("+")
        # a busy machine may take a while to draw the frame: wait for the zoom (up to 5 s) instead of a fixed pause
        frame.wait_for_function("(scale) => window.__atlas.cameraView()[0] > scale", arg=before[0], timeout=5000)
        zoomed = frame.evaluate("() => window.__atlas.cameraView()")
        assert zoomed[0] > before[0]
        page.keyboard.down("Control")
        page.mouse.wheel(0, -300)
        page.keyboard.up("Control")
        frame.wait_for_function("(scale) => window.__atlas.cameraView()[0] !== scale", arg=zoomed[0], timeout=5000)
        assert frame.evaluate("() => window.__atlas.cameraView()")[0] != zoomed[0]
    finally:
        page.close()


# Where the map's frame lies in the page and how the page is scrolled, for a failed click's report.
FRAME_GEOMETRY = """(selector) => {
  const frame = document.querySelector(selector);
  const main = document.querySelector('[data-testid="stMain"]') || document.scrollingElement;
  return {frame: frame && frame.getBoundingClientRect().toJSON(), scroll: [window.scrollX, window.scrollY],
    main: main && [main.scrollLeft, main.scrollTop, main.scrollWidth, main.clientWidth],
    page: [document.documentElement.scrollWidth, document.documentElement.clientWidth]};
}"""


# Two animation frames of the map's window: the camera (dom-2d-camera, in regl-scatterplot) takes the pointer's
# position once per frame and pans by how far it moved while the button was down, so a press in the frame the pointer
# arrived in panned the view by the pointer's whole offset from (0, 0) on a loaded machine (CI: by (731, 290), and
# the click opened nothing). A person's pointer rests on a point for many frames before the press.
TWO_FRAMES = "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))"


CAMERA = "() => window.__atlas.cameraView()"


def press_on_map(page, frame, x: float, y: float) -> None:
    """Move the pointer to (x, y) in the map's canvas (CSS pixels), let the map see it there, then click."""
    canvas = frame.locator("#canvas").bounding_box()
    page.mouse.move(canvas["x"] + x, canvas["y"] + y)
    frame.evaluate(TWO_FRAMES)
    page.mouse.down()
    page.mouse.up()


def click_until_a_paper_opens(page, frame, index: int, log: Path, tries: int = 3) -> None:
    """Click point ``index`` where it is now, as a user would (:func:`press_on_map`), until the address names a
    paper. Each try re-reads the point; after ``tries`` raises AssertionError with the page's geometry at every try,
    a screenshot and :func:`map_report`."""
    tried = []
    for attempt in range(tries):
        if attempt:
            frame.locator("#fit").click()  # undo whatever the missed press did to the view
        settle_camera(frame)
        x, y = frame.evaluate(f"() => window.__atlas.screen({index})")
        tried.append(((x, y), page.evaluate(FRAME_GEOMETRY, MAP_FRAME), frame.evaluate(CAMERA)))
        press_on_map(page, frame, x, y)
        try:
            page.wait_for_url("**paper=*", timeout=30_000 if attempt < tries - 1 else 90_000)
            return
        except playwright_api.TimeoutError as error:
            if attempt == tries - 1:
                shot = log.with_name("click-failure.png")
                page.screenshot(path=str(shot))
                raise AssertionError(
                    f"no paper opened; point, page geometry and camera per try: {tried}; screenshot {shot}: "
                    f"{map_report(page, frame, log)}"
                ) from error


# The titles of the points the map keeps in the page (map_layers.point_payload: readable titles, at most 200
# characters), by position.
POINT_TITLES = """() => {
  const kept = Object.values(window.__topicAtlasPoints || {});
  return kept.length ? kept[kept.length - 1].titles : [];
}"""

# The texts of the first column (the title) of the papers table's rows on screen, from the grid's accessible table.
TABLE_TITLES = (
    """() => [...document.querySelectorAll('"""
    + PAPERS_GRID
    + """ table tbody tr')]
  .map((row) => row.querySelector('td'))
  .filter((cell) => cell)
  .map((cell) => cell.innerText)"""
)

# The papers table shows rows, and every one's title is among the argument's (whitespace collapsed, 200 characters).
ROWS_AMONG = (
    """(titles) => {
  const rows = ("""
    + TABLE_TITLES
    + """)();
  const plain = (text) => text.split(/\\s+/).filter(Boolean).join(' ').slice(0, 200);
  return rows.length > 0 && rows.every((row) => titles.includes(plain(row)));
}"""
)


def plain(text: str) -> str:
    return " ".join(text.split())


def latest_event(page, kind: str) -> dict:
    """The latest value of ``kind`` the map sent to the page (RECORD_POSTS)."""
    values = [json.loads(value) for _, value, _ in page.evaluate("() => window.__posted")]
    found = [value for value in values if value.get("kind") == kind]
    assert found, f"the map sent no {kind}: {values}"
    return found[-1]


def test_a_click_opens_the_paper_and_a_lasso_lists_its_papers(browser, server_url, server_log):
    page, frame = open_map(browser, server_url, 1500, 1000)
    try:
        click_until_a_paper_opens(page, frame, 0, server_log)
        panel = page.locator(".st-key-paper-panel")
        panel.wait_for()
        # The paper that opened is the one clicked: the map sent the point under the pointer (point 0, or one drawn
        # at its very place), and the drawer shows that point's paper.
        titles = page.evaluate(POINT_TITLES)
        sent = latest_event(page, "click")["index"]
        clicked_at = frame.evaluate("() => window.__atlas.screen(0)")
        assert frame.evaluate(f"() => window.__atlas.screen({sent})") == pytest.approx(clicked_at, abs=2), sent
        shown_title = panel.locator('[data-testid="stText"]').first.inner_text()
        assert plain(shown_title)[:200] == plain(titles[sent]), (shown_title, titles[sent])
        page.keyboard.press("Escape")  # the paper's drawer is modal: Esc closes it and forgets the paper
        page.wait_for_function("() => !location.search.includes('paper=')", timeout=90_000)
        frame.locator("#lasso").click()
        settle_camera(frame)
        plot = frame.locator("#canvas").bounding_box()  # in the page's coordinates, read once the drawer has gone
        corners = [(0.02, 0.02), (0.5, 0.02), (0.5, 0.98), (0.02, 0.98), (0.02, 0.03)]
        page.mouse.move(plot["x"] + corners[0][0] * plot["width"], plot["y"] + corners[0][1] * plot["height"])
        frame.evaluate(TWO_FRAMES)
        page.mouse.down()
        for fx, fy in corners[1:]:
            page.mouse.move(plot["x"] + fx * plot["width"], plot["y"] + fy * plot["height"], steps=12)
        page.mouse.up()
        caption = page.get_by_text("papers selected on the map")
        caption.wait_for(timeout=90_000)
        page.wait_for_function(POSTS_TAKEN, timeout=90_000)  # the run that took the lasso has ended
        # The lasso's papers are those inside it: every point it sent lies in the dragged rectangle, and every point
        # well inside the rectangle (6 px from its edges) was sent.
        indices = sorted(set(latest_event(page, "lasso")["indices"]))
        screen = frame.evaluate(
            "() => Array.from({length: window.__atlas.count()}, (_, i) => window.__atlas.screen(i))"
        )
        left, right = 0.02 * plot["width"], 0.5 * plot["width"]
        top, bottom = 0.02 * plot["height"], 0.98 * plot["height"]
        outside = [
            i for i in indices if not (left - 2 <= screen[i][0] <= right + 2 and top - 2 <= screen[i][1] <= bottom + 2)
        ]
        assert indices and not outside, (len(indices), outside[:5])
        inside = {i for i, (x, y) in enumerate(screen) if left + 6 < x < right - 6 and top + 6 < y < bottom - 6}
        assert inside and inside <= set(indices), sorted(inside - set(indices))[:5]
        assert len(indices) < len(screen)  # half the plot: not every paper
        # ... and the page lists exactly them: the caption and the table's heading count them, and the table's rows
        # on screen are among their titles.
        assert caption.inner_text().split()[0].replace(",", "") == str(len(indices)), caption.inner_text()
        page.get_by_text(f"Papers ({len(indices):,})", exact=True).wait_for(timeout=30_000)
        heading = page.get_by_text(re.compile(r"^Papers \([\d,]+\)$")).first.inner_text()
        assert heading == f"Papers ({len(indices):,})", heading
        chosen = {plain(page.evaluate(POINT_TITLES)[i]) for i in indices}
        page.wait_for_function(ROWS_AMONG, arg=sorted(chosen), timeout=30_000)  # the grid has drawn its new rows
        rows = page.evaluate(TABLE_TITLES)
        assert rows and all(plain(row)[:200] in chosen for row in rows), (rows, sorted(chosen)[:5])
    finally:
        page.close()


def test_the_page_and_the_map_work_with_the_network_blocked(browser, server_url):
    blocked: list[str] = []
    page, frame = open_map(browser, server_url, 1500, 1000, blocked=blocked)
    try:
        assert frame.evaluate("() => window.__atlas.count()") > 0
        assert frame.evaluate(LABEL_BOXES)["labels"]
        assert page.get_by_text("Colour points by").count()
    finally:
        page.close()


def test_the_legend_and_a_point_hover_show_the_topic_subtitle(browser, server_url):
    page, frame = open_map(browser, f"{server_url}/?level=topics&colour=topic", 1500, 1000)
    try:
        subtitles = frame.locator(".legend-subtitle").all_inner_texts()
        assert subtitles and all(text.strip() for text in subtitles), subtitles
        plot = frame.locator("#plot").bounding_box()
        x, y = frame.evaluate("() => window.__atlas.screen(0)")
        page.mouse.move(plot["x"] + x, plot["y"] + y)
        frame.locator(".tooltip-topic").wait_for(timeout=10_000)
        assert (
            " — " in frame.locator(".tooltip-topic").inner_text()
            or "Outliers" in frame.locator("#tooltip").inner_text()
        )
    finally:
        page.close()


# A double-click on point ``index`` as Chromium delivers one (two presses, the second with detail 2, then dblclick),
# dispatched in one task: Playwright's presses came more than the click's wait apart on 2 loaded cores, which
# a person's double-click never does, and the test then failed by its own timing.
DOUBLE_CLICK_POINT = """(index) => {
  const canvas = document.getElementById('canvas');
  const box = canvas.getBoundingClientRect();
  const [x, y] = window.__atlas.screen(index);
  const at = {bubbles: true, cancelable: true, view: window, clientX: box.left + x, clientY: box.top + y, button: 0};
  for (const detail of [1, 2]) {
    canvas.dispatchEvent(new MouseEvent('mousedown', {...at, detail, buttons: 1}));
    canvas.dispatchEvent(new MouseEvent('mouseup', {...at, detail, buttons: 0}));
    canvas.dispatchEvent(new MouseEvent('click', {...at, detail, buttons: 0}));
  }
  canvas.dispatchEvent(new MouseEvent('dblclick', {...at, detail: 2, buttons: 0}));
}"""


def test_controls_keep_their_values_across_tabs_and_double_click_fits_without_opening_a_paper(
    browser, server_url, server_log
):
    """After a visit to Decisions, "Drill into a theme" showed "Choose an option"; a double-click on a point, which
    the hint says fits the view, opened a paper."""
    page, frame = open_map(browser, f"{server_url}/?theme=0&colour=topic&level=topics", 1280, 720)
    try:
        theme = page.locator(".st-key-theme").inner_text()
        assert "Choose an option" not in theme and "All themes" not in theme, theme
        controls = {key: page.locator(f".st-key-{key}").inner_text() for key in ("colour", "level", "theme")}
        for tab in ("Decisions", "Topics", "Structure"):
            if page.get_by_role("tab", name=tab).count():
                switch_tab(page, tab)
        switch_tab(page, "Map and papers")
        frame = page.wait_for_selector(MAP_FRAME).content_frame()
        frame.wait_for_selector("body[data-drawn]", state="attached")
        assert {key: page.locator(f".st-key-{key}").inner_text() for key in controls} == controls
        assert "theme=0" in page.url and "colour=topic" in page.url
        settle_camera(frame)
        fitted = frame.evaluate("() => window.__atlas.cameraView()")
        frame.locator("#zoom-in").click()
        before = frame.evaluate("() => window.__atlas.state()")
        frame.evaluate(DOUBLE_CLICK_POINT, 0)
        # The map has taken the double-click (its second press), its fit has ended, and the page has run whatever
        # the map sent for it (a click it sent would have opened the paper by then).
        assert frame.evaluate("() => window.__atlas.state().lastDoubleClick") > before["lastDoubleClick"]
        settle_camera(frame)
        page.wait_for_function(POSTS_TAKEN, timeout=90_000)
        assert "paper=" not in page.url and page.locator(".st-key-paper-panel").count() == 0, map_report(
            page, frame, server_log
        )
        emitted = frame.evaluate("() => window.__atlas.state().emitted")[len(before["emitted"]) :]
        assert emitted in ([], ["click", "double_click"]), emitted  # no click left standing
        assert frame.evaluate("() => window.__atlas.cameraView()") == pytest.approx(fitted, rel=1e-3, abs=1e-4)
    finally:
        page.close()


# The second press of a double-click on point ``index`` as Chromium delivers it (a press with detail 2, its click,
# then dblclick), in one task.
SECOND_PRESS = """(index) => {
  const canvas = document.getElementById('canvas');
  const box = canvas.getBoundingClientRect();
  const [x, y] = window.__atlas.screen(index);
  const at = {bubbles: true, cancelable: true, view: window, clientX: box.left + x, clientY: box.top + y, button: 0};
  canvas.dispatchEvent(new MouseEvent('mousedown', {...at, detail: 2, buttons: 1}));
  canvas.dispatchEvent(new MouseEvent('mouseup', {...at, detail: 2, buttons: 0}));
  canvas.dispatchEvent(new MouseEvent('click', {...at, detail: 2, buttons: 0}));
  canvas.dispatchEvent(new MouseEvent('dblclick', {...at, detail: 2, buttons: 0}));
}"""


def test_a_click_opens_its_paper_at_once_without_a_draw_and_a_second_press_takes_it_back(
    browser, server_url, server_log
):
    """A click waited 300 ms for a second one, and the scatterplot selected its point (every point drawn twice with
    software WebGL) before the paper was asked for. Now the click is sent at once and the map draws no frame for
    it; the second press of a double-click takes the paper back (the view is fitted, no paper stays open)."""
    page, frame = open_map(browser, server_url, 1500, 1000)
    try:
        settle_camera(frame)
        x, y = frame.evaluate("() => window.__atlas.screen(0)")
        canvas = frame.locator("#canvas").bounding_box()
        page.mouse.move(canvas["x"] + x, canvas["y"] + y)
        frame.locator("#tooltip").wait_for(state="visible", timeout=30_000)  # the point is hovered
        frame.evaluate(TWO_FRAMES)
        before = frame.evaluate("() => window.__atlas.state()")
        page.mouse.down()
        page.mouse.up()
        after = frame.evaluate("() => window.__atlas.state()")
        assert after["emitted"][-1:] == ["click"] and after["framesDrawn"] == before["framesDrawn"], (before, after)
        page.wait_for_url("**paper=*", timeout=90_000)
        page.locator(".st-key-paper-panel").wait_for(timeout=90_000)
        frame.evaluate(SECOND_PRESS, 0)
        assert frame.evaluate("() => window.__atlas.state().emitted")[-2:] == ["click", "double_click"]
        page.wait_for_function("() => !location.search.includes('paper=')", timeout=90_000)
        page.locator(".st-key-paper-panel").wait_for(state="detached", timeout=90_000)
    except playwright_api.TimeoutError as error:
        raise AssertionError(map_report(page, frame, server_log)) from error
    finally:
        page.close()


def switch_tab(page, name: str) -> None:
    """Open tab ``name`` and wait until the run it makes has finished."""
    with rerun(page):
        page.get_by_role("tab", name=name).click()
    page.get_by_role("tab", name=name, selected=True).wait_for()


def test_the_map_s_frame_stays_while_another_tab_is_open_and_draws_what_changed_meanwhile(
    browser, server_url, server_log
):
    """A switch back to the map made its frame again and drew every point (1.1-3.7 s on the whole conference), and
    the zoom was lost. Now the frame stays, hidden with its tab: back on the map it is the same window with the
    user's zoom, and the points are not drawn again; a filter changed meanwhile is drawn when the map shows again,
    not while hidden."""
    page, frame = open_map(browser, server_url, 1280, 720)
    try:
        frame.evaluate("() => { window.__sameWindow = true; }")
        frame.locator("#zoom-in").click()
        settle_camera(frame)
        zoomed = frame.evaluate("() => window.__atlas.cameraView()")
        draws = frame.evaluate("() => window.__atlas.state().pointDraws")
        switch_tab(page, "Topics")
        switch_tab(page, "Map and papers")
        frame = page.wait_for_selector(MAP_FRAME).content_frame()
        assert frame.evaluate("() => window.__sameWindow === true"), map_report(page, frame, server_log)
        frame.wait_for_function("() => document.getElementById('plot').clientWidth > 0")  # shown again
        settle_camera(frame)  # past the refit a new size would make (80 ms after it), which must keep the zoom
        assert frame.evaluate("() => window.__atlas.cameraView()") == pytest.approx(zoomed, rel=1e-4, abs=1e-6)
        assert frame.evaluate("() => window.__atlas.state().pointDraws") == draws
        switch_tab(page, "Topics")
        received = frame.evaluate("() => window.__atlas.state().rendersReceived")
        search = page.get_by_label("Search titles, abstracts and keywords")
        with rerun(page):
            search.fill("diffusion")
            search.press("Enter")
        assert "diffusion" in page.url
        # The hidden map has received the filtered render (polled by time: a hidden frame has no animation frames)
        # and has not drawn it.
        frame.wait_for_function(f"() => window.__atlas.state().rendersReceived > {received}", polling=100)
        assert frame.evaluate("() => window.__atlas.state().pointDraws") == draws  # hidden: not drawn yet
        switch_tab(page, "Map and papers")
        frame.wait_for_function(f"() => window.__atlas.state().pointDraws > {draws}", timeout=90_000)
        assert frame.evaluate("() => window.__sameWindow === true")
    finally:
        page.close()


# Two renders in one task, as Streamlit sends them when reruns come quickly: the second, with other labels, came
# while the first's draw was under way and regl-scatterplot refused it, so the page's latest view was never drawn.
TWO_RENDERS = """(names) => {
  const args = window.__atlas.args();
  for (const name of names) {
    const labels = args.labels.map((label, i) => (i === 0 ? {...label, lines: [name], name} : label));
    window.dispatchEvent(new MessageEvent('message', {data: {type: 'streamlit:render', args: {...args, labels}}}));
  }
}"""


def test_renders_that_come_during_a_draw_are_drawn_the_latest_last(browser, server_url, server_log):
    page, frame = open_map(browser, server_url, 1280, 720)
    try:
        before = frame.evaluate("() => window.__atlas.state()")
        frame.evaluate(TWO_RENDERS, ["First of two", "Second of two"])
        frame.wait_for_function(
            f"() => window.__atlas.state().renders > {before['renders']} && "
            "[...document.querySelectorAll('.atlas-label')].some((node) => "
            "node.textContent === 'Second of two')",
            timeout=30_000,
        )
        # Both renders were taken in the task that posted them and neither changes the points, so their draws end
        # in that task's microtasks; two animation frames later a first drawn late would show.
        frame.evaluate(TWO_FRAMES)
        texts = frame.locator(".atlas-label").all_inner_texts()
        assert "Second of two" in texts and "First of two" not in texts, map_report(page, frame, server_log)
        assert not [line for line in page.console_lines if line.startswith("error")], page.console_lines
    finally:
        page.close()


# When the page asked for Streamlit's dataframe chunk (epoch ms; null if it never did): its file is named
# "DataFrame.<hash>.js" in Streamlit's build.
GRID_CODE_REQUESTED = """() => {
  const entry = performance.getEntriesByType('resource').find((e) => /\\/DataFrame\\.[^/]*\\.js$/.test(e.name));
  return entry ? performance.timeOrigin + entry.startTime : null;
}"""


def test_the_papers_table_comes_after_the_map_s_first_draw(browser, server_url, server_log):
    # A dataframe on a fresh page made the browser load and run Streamlit's grid code before it made the map's frame
    # (0.35-0.45 s of the first paint, bench/map_compare.py): the map says once that it has drawn ("shown"), and
    # the papers table comes with the rerun that makes.
    page, frame = open_map(browser, server_url, 1500, 1000)
    try:
        shown = [at for at, value, _ in page.evaluate("() => window.__posted") if json.loads(value)["kind"] == "shown"]
        table_at = page.evaluate("() => window.__firstTableAt")
        grid_code_at = page.evaluate(GRID_CODE_REQUESTED)  # epoch ms of the request for the grid's chunk
        report = map_report(page, frame, server_log)
        assert len(shown) == 1 and grid_code_at, (shown, grid_code_at, report)
        assert shown[0] <= grid_code_at <= table_at, (shown, grid_code_at, table_at, report)
        assert frame.evaluate("() => window.__atlas.state().emitted").count("shown") == 1
    finally:
        page.close()


# One render posted as Streamlit posts it, with some of its arguments changed.
POST_RENDER = """(changes) => {
  const args = {...window.__atlas.args(), ...changes};
  window.dispatchEvent(new MessageEvent('message', {data: {type: 'streamlit:render', args}}));
}"""


def test_a_repeated_render_is_not_drawn_and_a_label_change_does_not_redraw_the_points(browser, server_url, server_log):
    # Streamlit posts a fresh page's first render twice; drawing both cost the first paint 170-330 ms, and redrawing
    # every point for a change of labels or highlights cost each such change 130-400 ms with software WebGL.
    page, frame = open_map(browser, server_url, 1280, 720)
    try:
        before = frame.evaluate("() => window.__atlas.state()")
        labels = frame.evaluate("() => window.__atlas.args().labels")
        frame.evaluate(POST_RENDER, {})
        frame.wait_for_function(f"() => window.__atlas.state().rendersReceived > {before['rendersReceived']}")
        repeated = frame.evaluate("() => window.__atlas.state()")
        assert (repeated["renders"], repeated["pointDraws"]) == (before["renders"], before["pointDraws"])

        # The map takes renders in order, so once the next one's label shows, the repeated render has been dealt
        # with whatever it did: one render drawn since (the relabel) and no points.
        renamed = [{**labels[0], "lines": ["Renamed label"], "name": "Renamed label"}, *labels[1:]]
        frame.evaluate(POST_RENDER, {"labels": renamed})
        frame.wait_for_function(
            "() => [...document.querySelectorAll('.atlas-label')].some((n) => n.textContent === 'Renamed label')"
        )
        relabelled = frame.evaluate("() => window.__atlas.state()")
        assert relabelled["renders"] == before["renders"] + 1 and relabelled["pointDraws"] == before["pointDraws"]

        palette = frame.evaluate("() => window.__atlas.args().palette")
        frame.evaluate(POST_RENDER, {"labels": renamed, "palette": ["#000000", *palette[1:]]})
        frame.wait_for_function(f"() => window.__atlas.state().pointDraws > {before['pointDraws']}", timeout=30_000)
        assert frame.evaluate("() => window.__atlas.state().renders") == before["renders"] + 2, map_report(
            page, frame, server_log
        )
    finally:
        page.close()
