"""The map's two renderers side by side in headless Chromium: the WebGL component and today's plotly map.

    python -m bench.dashboard --cache DIR --renderers [--repeats 5]

For each renderer (``ATLAS_MAP_RENDERER=webgl|plotly``) one ``streamlit run`` serves the cache; a page at
1500 x 1000 (software WebGL) does each interaction ``repeats`` times (alternating values, so every run is a real
change) and the median is printed. Each run is timed from the user's action until the page has settled: the
rerun's last websocket message arrived and the map drew after it (the WebGL component's ``data-drawn-at``, or
plotly's last ``plotly_afterplot``). "until last message" is the server's rerun plus the transfer; "drawing" is
the browser's work after it. Bytes are what the browser received in that run. A click on a point is timed from the
press (the point already under the mouse, its tooltip shown) until the page drew the paper's drawer at rest, by
the page's own clock (:data:`WATCH_DRAWER`). A fresh page's first paint is timed until the map has drawn (the first
screen: the papers table sits below the fold at every tested size, and the WebGL page sends it once the map has
drawn); "table below too" times the same pages until the table has come and the page settled.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import TimeoutError as PlaywrightTimeout

from bench.dashboard import APP, CHROMIUM, ROOT, VIEWPORT

FRAME = "iframe[title*='atlas_scatter']"
ARGS = ["--no-sandbox", "--enable-unsafe-swiftshader", "--disable-background-networking", "--no-first-run"]
FIRST_PAINT, PAGE_COMPLETE = "first paint of a fresh page", "fresh page: table below too"
GOALS = {"click on a point -> paper": 0.5, FIRST_PAINT: 2.0}
# The WebGL map's click and lasso rows (issue 19's goals); the plotly map's are bench/dashboard.py's browser table.
# The tab step's row is every switch, away and back; TAB_BACK's only the switches back to the map.
TAB_STEP, TAB_BACK = "tab switch and back", "tab: back to the map"
POINT_STEPS = ("click on a point -> paper", "lasso, half the map -> table")


class Wire:
    """The times (wall seconds) and sizes of websocket frames received by one page."""

    def __init__(self) -> None:
        self.received: list[tuple[float, int]] = []

    def attach(self, page) -> None:
        page.on("websocket", lambda ws: ws.on("framereceived", self.record))

    def record(self, payload) -> None:
        self.received.append((time.time(), len(payload)))


def start(cache_dir: Path, renderer: str) -> tuple[subprocess.Popen, str]:
    from tests.streamlit_server import free_port

    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", APP, "--server.port", str(port), "--server.headless", "true"]
        + ["--", "--cache", str(cache_dir)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "ATLAS_MAP_RENDERER": renderer},
    )
    import urllib.request

    url = f"http://127.0.0.1:{port}"
    for _ in range(240):
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2):
                return server, url
        except OSError:
            time.sleep(0.5)
    server.terminate()
    raise RuntimeError("streamlit did not start")


def drawn_at(page, renderer: str) -> float:
    """Wall seconds of the map's last draw (0 before any, or when the open tab has no map)."""
    if renderer == "webgl":
        if not page.locator(FRAME).count():
            return 0.0
        frame = page.frame_locator(FRAME)
        try:
            value = frame.locator("body").get_attribute("data-drawn-at", timeout=10_000)
        except PlaywrightTimeout:  # the map tab's frame, on its way out after a switch to another tab
            return 0.0
        return float(value or 0) / 1000
    return float(page.evaluate("() => window.__lastPlot || 0")) / 1000


def drawn_before(page) -> bool:
    """Whether the WebGL map's frame has drawn at least once (a frame made again after a tab switch has not)."""
    return bool(page.frame_locator(FRAME).locator("body[data-drawn]").count())


PLOTLY_HOOK = """() => { const gd = document.querySelector('.js-plotly-plot');
  if (gd && !gd.__hooked) { gd.__hooked = true; gd.on('plotly_afterplot', () => { window.__lastPlot = Date.now(); }); }
  window.__lastPlot = window.__lastPlot || Date.now(); }"""


def settle(page, renderer: str, wire: Wire, began: float) -> tuple[float, float, int]:
    """(seconds until settled, seconds until the last message, bytes received) after an action at ``began``."""
    deadline = time.time() + 60
    while time.time() < deadline:
        page.wait_for_timeout(100)
        quiet = not wire.received or time.time() - wire.received[-1][0] > 0.35
        busy = page.locator("[data-testid='stStatusWidget'] img, [data-testid='stStatusWidget'] svg").count()
        if quiet and not busy:
            break
    if renderer == "plotly":
        page.evaluate(PLOTLY_HOOK)
    frames = [(at, size) for at, size in wire.received if at >= began]
    last = max((at for at, _ in frames), default=began)
    drawn = drawn_at(page, renderer)
    # A map whose frame came back (a tab switch back to the map) draws after the last message: wait for that draw
    # (at most 15 s) instead of timing the page without it. Every step here changes the map it shows.
    # A frame the page kept while its tab was hidden has drawn already and shows that drawing.
    redraw_deadline = time.time() + 15
    shown = renderer == "webgl" and page.locator(FRAME).count() and page.locator(FRAME).first.is_visible()
    while shown and drawn < began and not drawn_before(page) and time.time() < redraw_deadline:
        page.wait_for_timeout(50)
        drawn = drawn_at(page, renderer)
    end = max(last, drawn if drawn >= began else last)
    return end - began, last - began, sum(size for _, size in frames)


def map_drawn(page, renderer: str, wire: Wire, began: float) -> tuple[float, float, int] | None:
    """For a fresh WebGL page: (seconds until the map's first draw, seconds until the last message before it, bytes
    received until then); None for plotly, whose page comes in one run (its first paint is when it settled)."""
    if renderer != "webgl":
        return None
    drawn = drawn_at(page, renderer)
    frames = [(at, size) for at, size in wire.received if began <= at <= drawn]
    last = max((at for at, _ in frames), default=began)
    return drawn - began, last - began, sum(size for _, size in frames)


def open_fresh(browser, url: str, renderer: str, wire: Wire):
    page = browser.new_page(viewport=VIEWPORT)
    wire.attach(page)
    began = time.time()
    page.goto(url)
    if renderer == "webgl":
        page.frame_locator(FRAME).locator("body[data-drawn]").wait_for(state="attached", timeout=120_000)
    else:
        page.wait_for_selector(".js-plotly-plot .annotation", timeout=120_000)
        page.evaluate(PLOTLY_HOOK)
    return page, began


def choose(page, label: str, option: str) -> Callable[[], None]:
    def act() -> None:
        page.locator("[data-testid='stSelectbox']").filter(has_text=label).first.click()
        page.get_by_role("option", name=option, exact=False).first.click()

    return act


def search(page, text: str) -> Callable[[], None]:
    def act() -> None:
        box = page.get_by_label("Search titles, abstracts and keywords")
        box.fill(text)
        box.press("Enter")

    return act


def tab(page, name: str) -> Callable[[], None]:
    return lambda: page.get_by_role("tab", name=name).click()


def renderer_times(cache_dir: Path, renderer: str, repeats: int) -> dict[str, tuple[float, float, int]]:
    """{interaction: (median seconds settled, median seconds until the last message, median bytes)}."""
    from playwright.sync_api import sync_playwright

    server, url = start(cache_dir, renderer)
    runs: dict[str, list[tuple[float, float, int]]] = {}
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
            warm, _ = open_fresh(browser, url, renderer, Wire())
            warm.close()
            for _ in range(repeats):
                wire = Wire()
                page, began = open_fresh(browser, url, renderer, wire)
                first = map_drawn(page, renderer, wire, began)
                page.wait_for_selector('[data-testid="stDataFrame"]', timeout=120_000)
                complete = settle(page, renderer, wire, began)
                runs.setdefault(FIRST_PAINT, []).append(first or complete)
                runs.setdefault(PAGE_COMPLETE, []).append(complete)
                page.close()
            wire = Wire()
            page, _ = open_fresh(browser, url, renderer, wire)
            page.wait_for_timeout(1000)
            first_theme = page.locator("[data-testid='stSelectbox']").filter(has_text="Drill into a theme")
            steps: list[tuple[str, Callable[[], None], Callable[[], None]]] = [
                ("colour theme <-> topic", choose(page, "Colour points by", "Topic"), choose(page, "Colour", "Theme")),
                ("label themes <-> topics", choose(page, "Label", "Topics"), choose(page, "Label", "Themes")),
                ("drill into a theme and out", drill_first(page, first_theme), choose(page, "Drill", "All themes")),
                ("text search", search(page, "diffusion"), search(page, "")),
                (TAB_STEP, tab(page, "Topics"), tab(page, "Map and papers")),
            ]
            for name, forth, back in steps:
                print(f"  {renderer}: {name}", file=sys.stderr, flush=True)
                for run in range(repeats):
                    for action in (forth, back) if run % 2 == 0 else (back, forth):
                        began = time.time()
                        action()
                        timed = settle(page, renderer, wire, began)
                        runs.setdefault(name, []).append(timed)
                        if name == TAB_STEP and action is back:
                            runs.setdefault(TAB_BACK, []).append(timed)
            if renderer == "webgl":
                for _ in range(repeats):
                    print(f"  {renderer}: click and lasso", file=sys.stderr, flush=True)
                    runs.setdefault(POINT_STEPS[0], []).append(click_to_paper(page, wire))
                    runs.setdefault(POINT_STEPS[1], []).append(lasso_to_table(page, wire))
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    return {
        name: (
            statistics.median(r[0] for r in values),
            statistics.median(r[1] for r in values),
            int(statistics.median(r[2] for r in values)),
        )
        for name, values in runs.items()
    }


def drill_first(page, picker) -> Callable[[], None]:
    def act() -> None:
        picker.first.click()
        page.get_by_role("option").nth(1).click()

    return act


def plot_origin(page) -> tuple[float, float, float, float]:
    """(left, top, width, height) of the WebGL map's plot area in page pixels."""
    page.locator(FRAME).scroll_into_view_if_needed()
    plot = page.frame_locator(FRAME).locator("#plot").bounding_box()  # playwright: page pixels, frames included
    return plot["x"], plot["y"], plot["width"], plot["height"]


# Watches the page for the paper's drawer: window.__drawerShownAt is the wall-clock ms of the first animation frame
# in which the drawer is laid out and at rest (no element around it moved by a transform, as during a slide-in).
WATCH_DRAWER = """() => { window.__drawerShownAt = 0;
  const atRest = (node) => { for (let n = node; n && n !== document.body; n = n.parentElement) {
    const t = getComputedStyle(n).transform; if (t !== 'none' && !/, 0, 0\\)$/.test(t)) return false; } return true; };
  const poll = () => { const panel = document.querySelector('.st-key-paper-panel');
    const box = panel && panel.getBoundingClientRect();
    if (box && box.width > 0 && box.height > 0 && atRest(panel)) window.__drawerShownAt = Date.now();
    else requestAnimationFrame(poll); };
  requestAnimationFrame(poll); }"""


def click_to_paper(page, wire: Wire) -> tuple[float, float, int]:
    """Point at a paper on the WebGL map (its tooltip shows), then click it; (seconds from the press until the
    page drew its drawer at rest, seconds until the last message, bytes). Times are the browser's own (the drawer's
    first animation frame), not when Playwright noticed it, which came 100-300 ms later on a busy main thread. The
    drawer is closed again (Esc) and the page settled before returning."""
    frame = page.frame_locator(FRAME)
    left, top, _, _ = plot_origin(page)
    x, y = frame.locator("body").evaluate("() => window.__atlas.screen(0)")
    page.mouse.move(left + x, top + y)  # as a person does: the point is under the mouse before the click
    frame.locator("#tooltip").wait_for(state="visible", timeout=10_000)
    page.wait_for_timeout(300)
    page.evaluate(WATCH_DRAWER)
    began = time.time()
    page.mouse.down()
    page.mouse.up()
    page.locator(".st-key-paper-panel").wait_for(timeout=60_000)
    page.wait_for_function("() => window.__drawerShownAt > 0", timeout=60_000)
    shown = page.evaluate("() => window.__drawerShownAt") / 1000
    frames = [(at, size) for at, size in wire.received if began <= at <= shown]
    last = max((at for at, _ in frames), default=began)
    page.keyboard.press("Escape")
    page.wait_for_function("() => !location.search.includes('paper=')", timeout=60_000)
    settle(page, "webgl", wire, time.time())
    return shown - began, last - began, sum(size for _, size in frames)


def lasso_to_table(page, wire: Wire) -> tuple[float, float, int]:
    """Lasso the left half of the WebGL map; (seconds from the mouse's release until the table says how many papers
    are selected, seconds until the last message, bytes). The selection is cleared before returning."""
    frame = page.frame_locator(FRAME)
    frame.locator("#lasso").click()
    left, top, width, height = plot_origin(page)
    corners = [(0.02, 0.02), (0.5, 0.02), (0.5, 0.98), (0.02, 0.98), (0.02, 0.03)]
    page.mouse.move(left + corners[0][0] * width, top + corners[0][1] * height)
    page.mouse.down()
    for fx, fy in corners[1:]:
        page.mouse.move(left + fx * width, top + fy * height, steps=12)
    began = time.time()
    page.mouse.up()
    page.get_by_text("papers selected on the map").wait_for(timeout=60_000)
    shown = time.time()
    frames = [(at, size) for at, size in wire.received if began <= at <= shown]
    last = max((at for at, _ in frames), default=began)
    settle(page, "webgl", wire, time.time())
    frame.locator("#lasso").click()  # back to pan and zoom
    page.get_by_role("button", name="Clear selection").click()
    page.get_by_text("papers selected on the map").wait_for(state="detached", timeout=60_000)
    settle(page, "webgl", wire, time.time())
    return shown - began, last - began, sum(size for _, size in frames)


def print_table(cache_dir: Path, repeats: int) -> None:
    """Both renderers' medians, one row per interaction, with the load average."""
    results = {renderer: renderer_times(cache_dir, renderer, repeats) for renderer in ("webgl", "plotly")}
    load = os.getloadavg()
    print(
        f"map renderers at {VIEWPORT['width']}x{VIEWPORT['height']}, headless Chromium (software WebGL), medians of "
        f"{repeats}; load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} on {os.cpu_count()} cores"
    )
    print(f"  {'interaction':<30} {'renderer':<7} {'settled':>8} {'last msg':>9} {'drawing':>8} {'received':>9}  goal")
    for name in results["webgl"]:
        for renderer in ("webgl", "plotly"):
            if name not in results[renderer]:
                continue
            total, last, size = results[renderer][name]
            goal = None if name == PAGE_COMPLETE else GOALS.get(name, 1.0)  # the first paint's goal covers it
            verdict = (
                "(no goal of its own)" if goal is None else f"<= {goal:.1f} s {'met' if total <= goal else 'MISSED'}"
            )
            print(
                f"  {name:<30} {renderer:<7} {total * 1000:6.0f}ms {last * 1000:7.0f}ms {(total - last) * 1000:6.0f}ms "
                f"{size / 1e6:7.2f}MB  {verdict}"
            )
