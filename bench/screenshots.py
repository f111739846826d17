"""Headless-Chromium screenshots of the dashboard's views, to look at (not a test).

    python bench/screenshots.py --cache /tmp/atlas-full-static --out /work/shots/map

Writes map-themes.png (the whole map, theme labels), map-drilled.png (the largest theme drilled into, its topics
labelled), map-topics.png (topic labels), map-clicked.png (a point clicked: its paper in the sidebar, similar
papers ringed), tree.png, tree-clicked.png (a theme node of the tree clicked: the map drilled), structure.png (the
similarity heatmap), areas.png (topics x primary areas), between-areas.png (papers between areas), shared-view.png (an
address copied from one browser, opened in another), at 1500 x 1000 CSS pixels; then that view's publication figure as
publication.pdf and publication-pdf.png (rendered by pdftoppm) and its Downloads tab as downloads.png.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bench.dashboard import CHROMIUM, CHROMIUM_ARGS, MAP_DRAWN, VIEWPORT, start_server  # noqa: E402


def settle(page, extra_ms: int = 2500) -> None:
    page.wait_for_selector(MAP_DRAWN, state="attached", timeout=120_000)
    page.wait_for_timeout(extra_ms)


def publication_figure(page, out: Path) -> None:
    """The publication figure of the view ``page`` shows, from its Downloads tab: publication.pdf, rendered to
    publication-pdf.png with pdftoppm (to compare with the view's screenshot), and downloads.png."""
    import subprocess

    page.get_by_role("tab", name="Downloads").click()
    page.get_by_role("button", name="Draw the publication figure (PNG, SVG, PDF)").click(timeout=120_000)
    save = page.get_by_role("button", name="Save PDF")
    save.wait_for(timeout=300_000)
    with page.expect_download(timeout=120_000) as download:
        save.click()
    pdf = out / "publication.pdf"
    download.value.save_as(str(pdf))
    page.screenshot(path=str(out / "downloads.png"), full_page=True)
    subprocess.run(["pdftoppm", "-png", "-r", "80", "-singlefile", str(pdf), str(out / "publication-pdf")], check=True)


def main() -> None:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    server, port = start_server(args.cache)
    url = f"http://127.0.0.1:{port}/"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            page = browser.new_page(viewport=VIEWPORT)
            page.goto(url)
            settle(page, 4000)
            page.screenshot(path=str(args.out / "map-themes.png"))
            page.goto(url + "?level=topics&colour=topic")
            settle(page)
            page.screenshot(path=str(args.out / "map-topics.png"))
            page.goto(url + "?theme=0&colour=topic")
            settle(page)
            page.screenshot(path=str(args.out / "map-drilled.png"))
            shared = page.url
            position = page.evaluate(
                """() => { const gd = document.querySelector('.js-plotly-plot'), L = gd._fullLayout, s = L._size,
                                 b = gd.getBoundingClientRect();
                           const t = gd._fullData.filter(t => t.hoverinfo !== 'skip' && t.x)
                                                 .sort((a, c) => c.x.length - a.x.length)[0];
                           const i = Math.floor(t.x.length / 3);
                           return [b.left + s.l + L.xaxis.l2p(t.x[i]), b.top + s.t + L.yaxis.l2p(t.y[i])]; }"""
            )
            page.mouse.move(*position)
            page.wait_for_timeout(400)
            page.mouse.click(*position)
            page.locator(".st-key-paper-panel").wait_for(timeout=60_000)
            settle(page, 3000)
            page.screenshot(path=str(args.out / "map-clicked.png"))
            page.goto(url + "?tab=Structure")
            page.wait_for_selector(".js-plotly-plot", timeout=120_000)
            page.wait_for_timeout(4000)
            page.screenshot(path=str(args.out / "tree.png"))
            relate = page.get_by_text(
                "How topics relate"
            )  # the page scrolls inside Streamlit's main block, not the document
            relate.first.scroll_into_view_if_needed()
            page.wait_for_timeout(1500)
            page.screenshot(path=str(args.out / "structure.png"))
            between = page.get_by_text("Papers between areas")
            if between.count():  # corpora with a primary area
                between.first.scroll_into_view_if_needed()
                page.wait_for_timeout(1000)
                page.screenshot(path=str(args.out / "between-areas.png"))
            page.get_by_text("The topic tree").first.scroll_into_view_if_needed()
            page.wait_for_timeout(500)
            tree = page.locator(".js-plotly-plot").first.bounding_box()
            page.mouse.click(tree["x"] + tree["width"] * 0.5, tree["y"] + 30)  # the first theme's node
            page.wait_for_function("() => location.search.includes('theme=')", timeout=60_000)
            page.get_by_role("tab", name="Map and papers").click()
            settle(page)
            page.screenshot(path=str(args.out / "tree-clicked.png"))
            page.goto(url + "?tab=Structure")
            page.wait_for_selector(".js-plotly-plot", timeout=120_000)
            page.wait_for_timeout(3000)
            areas = page.get_by_text("Topics and primary areas")
            if areas.count():
                areas.first.scroll_into_view_if_needed()
                page.wait_for_timeout(1500)
                page.screenshot(path=str(args.out / "areas.png"))
            fresh = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            again = fresh.new_page(viewport=VIEWPORT)
            again.goto(shared)
            settle(again)
            again.screenshot(path=str(args.out / "shared-view.png"))
            print(f"shared address: {shared}")
            publication_figure(again, args.out)
            fresh.close()
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    print("\n".join(str(path) for path in sorted(args.out.glob("*.png"))))


if __name__ == "__main__":
    main()
