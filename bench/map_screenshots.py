"""Headless-Chromium screenshots of the WebGL map at the theme and the topic level, at the sizes people use.

    python -m bench.map_screenshots --cache ATLAS --out DIR [--sizes 1280x720,1920x1080]

Writes DIR/map-{themes,topics}-{W}x{H}.png (the whole map; topics coloured by topic, so the legend lists each
topic with its subtitle), DIR/map-legend-{W}x{H}.png (that legend) and DIR/map-hover-{W}x{H}.png (the pointer on
the listing's first paper: its title and its topic's name and subtitle). Prints per shot the labels shown and
hidden (the component hides a label that would overlap another until the user zooms in), any label cut with "…",
the legend's entries with a subtitle, and the hover's text.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bench.dashboard import CHROMIUM, CHROMIUM_ARGS, start_server

MAP_FRAME = "iframe[title*='atlas_scatter']"
LABELS = """() => Array.from(document.querySelectorAll('.atlas-label')).map(el => ({
    text: Array.from(el.children).map(row => row.textContent).join(' / '), shown: el.style.display !== 'none'}))"""


def open_map(browser, url: str, width: int, height: int):
    """(page, the map's frame) once the map has drawn at ``width`` x ``height`` CSS pixels."""
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(url, wait_until="domcontentloaded", timeout=120_000)
    frame = page.wait_for_selector(MAP_FRAME, timeout=180_000).content_frame()
    frame.wait_for_selector("body[data-drawn]", state="attached", timeout=180_000)
    page.wait_for_timeout(2500)
    return page, frame


def shoot(browser, base: str, out: Path, width: int, height: int) -> None:
    """The three screenshots at one size, with what they show printed."""
    for level, query in (("themes", "?level=themes"), ("topics", "?level=topics&colour=topic")):
        page, frame = open_map(browser, base + query, width, height)
        labels = frame.evaluate(LABELS)
        shown = [label["text"] for label in labels if label["shown"]]
        cut = [label["text"] for label in labels if "…" in label["text"]]
        path = out / f"map-{level}-{width}x{height}.png"
        page.screenshot(path=str(path))
        print(f"{path.name}: {len(shown)} labels shown, {len(labels) - len(shown)} hidden, {len(cut)} cut {cut}")
        if level == "topics":
            x, y = frame.evaluate("() => window.__atlas.screen(0)")  # the listing's first paper
            plot = frame.locator("#plot").bounding_box()
            page.mouse.move(plot["x"] + x, plot["y"] + y)
            page.wait_for_timeout(800)
            tooltip = frame.locator("#tooltip")
            text = tooltip.inner_text() if tooltip.is_visible() else "(no hover shown)"
            path = out / f"map-hover-{width}x{height}.png"
            page.screenshot(path=str(path))
            print(f"{path.name}: hover {text!r}")
            # after the hover: the element screenshot scrolls the page, which moves the points
            legend = out / f"map-legend-{width}x{height}.png"
            frame.locator("#legend").screenshot(path=str(legend))
            subtitles = frame.locator(".legend-subtitle").count()
            print(f"{legend.name}: {frame.locator('.legend-item').count()} legend entries, {subtitles} with a subtitle")
        page.close()


def main() -> None:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--sizes", default="1280x720,1920x1080", help="comma-separated WIDTHxHEIGHT")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    server, port = start_server(args.cache)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            for size in args.sizes.split(","):
                width, height = (int(value) for value in size.lower().split("x"))
                shoot(browser, f"http://127.0.0.1:{port}/", args.out, width, height)
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
