"""The page at a large atlas (issue 42): the first visitor after a server start, a second visitor, and the sidebar's
interactions, in headless Chromium (software WebGL) at 1280 x 720.

    python -m bench.page_speed --cache DIR [--repeats 2]

One ``streamlit run`` serves the cache (the WebGL map). The first visitor opens the page right after the server
answers its health check (nothing warmed by a visit before: what the first person to open a fresh server waits;
``--warm``: after Streamlit's script health check has run the page once, as a launcher can do at start); once that
page is complete (the papers table under the map has come), a second visitor opens it. Each first paint is timed
from navigation until the map's first draw (the component's ``data-drawn-at``); "last msg" is the last websocket
message before that draw (server work and transfer), "drawing" the browser's work after it; "table below too" until
the table has come and the page settled. On the second page each interaction is timed from the action until
the page has settled (bench/map_compare.py's ``settle``: the rerun's last message arrived and the map drew after
it), ``repeats`` times each way (forth and back), medians printed: a colour change (theme <-> topic), a theme
filter (drill into the first theme and out), a text search, and a year filter (the first collection chosen and
cleared; an atlas without collections skips it). Goals (issue 42): first paint <= 3 s, every interaction <= 1 s.
The load average is printed before and after: these are a shared 2-core machine's figures.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

from bench.dashboard import APP, CHROMIUM, ROOT
from bench.map_compare import ARGS, FRAME, Wire, choose, drawn_at, drill_first, map_drawn, search, settle

VIEWPORT = {"width": 1280, "height": 720}
GOALS = {"first visitor: first paint": 3.0, "second visitor: first paint": 3.0}
NO_GOAL = ("first visitor: table below too", "second visitor: table below too")


def start(cache_dir: Path, warm: bool) -> tuple[subprocess.Popen, str]:
    """``streamlit run`` on the cache (the WebGL map) and its address, once it answers its health check. With
    ``warm``, Streamlit's script health check is turned on and asked for once before returning: it runs the page's
    script in a session of its own, which fills the server's caches as a first visitor's run would (what a launcher
    can do right after starting the server)."""
    from tests.streamlit_server import free_port

    port = free_port()
    flags = ["--server.port", str(port), "--server.headless", "true"]
    flags += ["--server.scriptHealthCheckEnabled", "true"] if warm else []
    server = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", APP, *flags, "--", "--cache", str(cache_dir)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "ATLAS_MAP_RENDERER": "webgl"},
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(240):
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2):
                break
        except OSError:
            time.sleep(0.5)
    else:
        server.terminate()
        raise RuntimeError("streamlit did not start")
    if warm:
        began = time.time()
        with urllib.request.urlopen(f"{url}/_stcore/script-health-check", timeout=600) as answer:
            print(
                f"  warmed by the script health check ({answer.read().decode()}) in {time.time() - began:.1f} s",
                file=sys.stderr,
                flush=True,
            )
    return server, url


def open_page(browser, url: str, wire: Wire):
    page = browser.new_page(viewport=VIEWPORT)
    wire.attach(page)
    began = time.time()
    page.goto(url)
    page.frame_locator(FRAME).locator("body[data-drawn]").wait_for(state="attached", timeout=300_000)
    return page, began


def pick_collection(page) -> Callable[[], None]:
    def act() -> None:
        page.locator("[data-testid='stMultiSelect']").filter(has_text="Collection").first.click()
        page.get_by_role("option").first.click()
        page.keyboard.press("Escape")

    return act


def clear_collection(page) -> Callable[[], None]:
    def act() -> None:
        page.locator("[data-testid='stMultiSelect']").filter(has_text="Collection").locator("input").first.click()
        page.keyboard.press("Backspace")  # the chosen collection's chip
        page.keyboard.press("Escape")

    return act


def settled(page, wire: Wire, began: float) -> tuple[float, float, int]:
    """map_compare.settle once the rerun's first message has come and the map has drawn since ``began`` (at most
    30 s; every interaction timed here changes the map): settle alone can find the page quiet before a slow rerun has
    sent anything (a search's first run) or while the server is still making the map's layers, and time too little."""
    deadline = time.time() + 30
    while time.time() < deadline and not any(at >= began for at, _ in wire.received):
        page.wait_for_timeout(20)
    while time.time() < deadline and drawn_at(page, "webgl") < began:
        page.wait_for_timeout(20)
    return settle(page, "webgl", wire, began)


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} / {five:.2f} / {fifteen:.2f}"


def measure(cache_dir: Path, repeats: int, warm: bool = False) -> list[tuple[str, float, float, int]]:
    """[(step, seconds settled, seconds until the last message, bytes received)], medians for the interactions."""
    from playwright.sync_api import sync_playwright

    started = time.time()
    server, url = start(cache_dir, warm)
    print(f"  server answered its health check in {time.time() - started:.1f} s", file=sys.stderr, flush=True)
    rows: list[tuple[str, float, float, int]] = []
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
            for visitor in ("first", "second"):
                wire = Wire()
                page, began = open_page(browser, url, wire)
                drawn = map_drawn(page, "webgl", wire, began)
                assert drawn is not None
                rows.append((f"{visitor} visitor: first paint", *drawn))
                print(f"  {visitor} visitor: {drawn[0] * 1000:.0f} ms", file=sys.stderr, flush=True)
                # The page is complete when the papers table under the map has come (sent after the map's first
                # draw): the second visitor comes to a server that has finished the first one's work.
                page.wait_for_selector('[data-testid="stDataFrame"]', timeout=600_000)
                complete = settle(page, "webgl", wire, began)
                rows.append((f"{visitor} visitor: table below too", *complete))
                if visitor == "first":
                    page.close()
            page.wait_for_timeout(1000)
            theme_picker = page.locator("[data-testid='stSelectbox']").filter(has_text="Drill into a theme")
            steps: list[tuple[str, Callable[[], None], Callable[[], None]]] = [
                ("colour theme <-> topic", choose(page, "Colour points by", "Topic"), choose(page, "Colour", "Theme")),
                ("theme filter (drill in, out)", drill_first(page, theme_picker), choose(page, "Drill", "All themes")),
                ("text search", search(page, "diffusion"), search(page, "")),
            ]
            if page.locator("[data-testid='stMultiSelect']").filter(has_text="Collection").count():
                steps.append(("year filter (a collection)", pick_collection(page), clear_collection(page)))
            for name, forth, back in steps:
                print(f"  {name}", file=sys.stderr, flush=True)
                timed: list[tuple[float, float, int]] = []
                for run in range(repeats):
                    for action in (forth, back) if run % 2 == 0 else (back, forth):
                        began = time.time()
                        action()
                        timed.append(settled(page, wire, began))
                rows.append(
                    (
                        name,
                        statistics.median(t[0] for t in timed),
                        statistics.median(t[1] for t in timed),
                        int(statistics.median(t[2] for t in timed)),
                    )
                )
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument("--repeats", type=int, default=2, help="runs each way per interaction (default 2)")
    parser.add_argument(
        "--warm",
        action="store_true",
        help="warm the server before the first visitor (Streamlit's script health check run once after the start)",
    )
    args = parser.parse_args()
    from pipeline.cache import read_manifest

    n_documents = read_manifest(args.cache)["n_documents"]
    before = load()
    rows = measure(args.cache, args.repeats, args.warm)
    warmed = ", server warmed" if args.warm else ""
    print(
        f"page speed on {args.cache} ({n_documents:,} papers){warmed}, {VIEWPORT['width']}x{VIEWPORT['height']}, "
        f"headless Chromium (software WebGL), interactions: medians of {args.repeats * 2}; load average {before} "
        f"before, {load()} after, on {os.cpu_count()} cores"
    )
    print(f"  {'step':<32} {'settled':>8} {'last msg':>9} {'drawing':>8} {'received':>9}  goal")
    for name, total, last, size in rows:
        goal = GOALS.get(name, 1.0)
        verdict = (
            "(no goal of its own)" if name in NO_GOAL else f"<= {goal:.1f} s {'met' if total <= goal else 'MISSED'}"
        )
        print(
            f"  {name:<32} {total * 1000:6.0f}ms {last * 1000:7.0f}ms {(total - last) * 1000:6.0f}ms "
            f"{size / 1e6:7.2f}MB  {verdict}"
        )


if __name__ == "__main__":
    main()
