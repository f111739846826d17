"""The one-file share (``topic-atlas share``, issue 41): its size and first paint in headless Chromium.

    python bench/share_speed.py --cache /tmp/atlas38/iclr2025 [--repeats 3] [--shots /tmp/share-shots]

Writes the share file of the cache (timed), then opens it from disk (file://) in Debian's Chromium (Playwright,
software WebGL) with every other request aborted, ``--repeats`` times in fresh pages, and prints the file's size
and, per page, the first paint (ms from navigation to the scatterplot's first drawn frame:
``window.__atlasShare.firstDrawMs``, the page's own ``performance.now()``) and when the titles and abstracts were
ready for search. Goals: the whole ICLR 2025 conference <= 15 MB and first paint <= 2 s; six collections <= 60 MB.
``--shots`` saves 1280x720 screenshots: the map, a search, a filter, a paper, a lasso.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

CHROMIUM = "/usr/bin/chromium"
IDLE = "() => !window.__atlasShare.busy"
CHROMIUM_ARGS = ["--no-sandbox", "--enable-unsafe-swiftshader", "--disable-background-networking", "--no-first-run"]


def open_offline(browser, url: str, width: int = 1280, height: int = 720):
    """A fresh page at ``url`` with every request but ``url`` itself aborted; returns (page, aborted requests)."""
    page = browser.new_page(viewport={"width": width, "height": height})
    aborted: list[str] = []

    def route(request_route) -> None:
        if request_route.request.url == url:
            request_route.continue_()
        else:
            aborted.append(request_route.request.url)
            request_route.abort()

    page.route("**/*", route)
    page.goto(url)
    page.wait_for_function("() => window.__atlasShare && window.__atlasShare.firstDrawMs !== null", timeout=120_000)
    return page, aborted


def screenshots(browser, url: str, folder: Path) -> None:
    """The map, a search, a theme filter, a paper and a lasso at 1280x720, as PNGs in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    page, _ = open_offline(browser, url)
    page.wait_for_function("() => document.body.dataset.texts === '1'", timeout=120_000)
    page.screenshot(path=str(folder / "1-map.png"))
    page.fill("#search", "diffusion")
    page.wait_for_function("() => document.querySelector('.list-heading')", timeout=30_000)
    page.screenshot(path=str(folder / "2-search.png"))
    page.click("text=Clear filters and search")
    page.select_option("select[data-field=theme]", index=2)
    page.wait_for_function("() => document.querySelector('.list-heading')", timeout=30_000)
    page.screenshot(path=str(folder / "3-theme-filter.png"))
    page.click("ol.papers li")
    page.wait_for_selector(".abstract")
    page.screenshot(path=str(folder / "4-paper.png"))
    page.click("text=Clear filters and search")
    page.wait_for_function(IDLE)
    page.click("#lasso")
    box = page.locator("#plot").bounding_box()
    cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(cx - 60, cy - 60)
    page.mouse.down()
    for dx, dy in ((60, -60), (60, 60), (-60, 60), (-60, -60)):
        page.mouse.move(cx + dx, cy + dy, steps=5)
    page.mouse.up()
    page.wait_for_function("() => document.querySelector('.list-heading')", timeout=30_000)
    page.screenshot(path=str(folder / "5-lasso.png"))
    page.click("text=Clear selection")
    page.click("#lasso")
    page.click("#zoom-in")
    page.click("#zoom-in")
    page.wait_for_function("() => window.__atlasShareLabels().some((label) => label.level > 0)", timeout=30_000)
    page.screenshot(path=str(folder / "6-zoomed.png"))
    page.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--shots", type=Path, help="save 1280x720 screenshots here")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    from dashboard.export.share_page import write_share

    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "atlas.html"
        started = time.perf_counter()
        result = write_share(args.cache, target)
        written_s = time.perf_counter() - started
        print(f"{args.cache}: {result.papers:,} papers, {result.bytes / 1e6:.2f} MB, written in {written_s:.1f} s")
        url = target.as_uri()
        paints, texts = [], []
        with sync_playwright() as driver:
            browser = driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for repeat in range(args.repeats):
                page, aborted = open_offline(browser, url)
                page.wait_for_function("() => document.body.dataset.texts === '1'", timeout=120_000)
                first, ready = page.evaluate("() => [window.__atlasShare.firstDrawMs, window.__atlasShare.textsMs]")
                paints.append(first)
                texts.append(ready)
                print(
                    f"  page {repeat + 1}: first paint {first:.0f} ms, search ready {ready:.0f} ms, "
                    f"{len(aborted)} requests aborted"
                )
                page.close()
            if args.shots:
                screenshots(browser, url, args.shots)
                print(f"  screenshots in {args.shots}")
            browser.close()
        print(f"median first paint {statistics.median(paints):.0f} ms, search ready {statistics.median(texts):.0f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
