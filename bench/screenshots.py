"""Headless-Chromium screenshots of every view of the dashboard at the window sizes people use, to look at (not a
test).

    python -m bench.screenshots --cache /tmp/b2025 --out /tmp/shots [--sizes 900x1000,900x1000-closed,1280x720]
        [--views map-themes,structure-tree] [--publication]

Writes DIR/{view}-{size}.png for every view of ``VIEWS`` (the map at the theme and topic level, by decision, a
drilled theme, a filtered topic, a clicked paper, the table, Topics, Structure's three charts, Find and place,
Decisions, Downloads and its charts, What changed when the cache has it, Trends and Venues when it holds several
collections: Trends also with every venue pooled per year, picked in its Venue box (``CHOICES``), its rising and
fading tables and the notes under its chart) at every size (default: 900x1000 with the sidebar open and closed,
1280x720, 1500x1000, 1920x1080; a "-closed" size closes Streamlit's sidebar first). Each view is opened from its
address in a fresh page, waited for (the map drawn, or the tab's first chart), its section scrolled to the top of the
window when it has one, and shot at the window's size. Prints one line per shot with what it found: labels shown
and hidden on the map, elements that stick out of the window, and what the page shows that it should not ("nan", a
traceback, raw LaTeX, a title under the header bar). ``--publication``: also the publication figure of a drilled
view as PDF, rendered with pdftoppm.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
from pathlib import Path

from bench.dashboard import CHROMIUM, CHROMIUM_ARGS, start_server
from pipeline.runtime.parquet import read_frame

MAP_FRAME = "iframe[title*='atlas_scatter']"
SIZES = "900x1000,900x1000-closed,1280x720,1500x1000,1920x1080"
# (name, address query, the text to scroll to or None, what to wait for: "map", "tab" or a CSS selector)
VIEWS: list[tuple[str, str, str | None, str]] = [
    ("map-themes", "?level=themes", None, "map"),
    ("map-topics", "?level=topics&colour=topic", None, "map"),
    ("map-decision", "?colour=decision", None, "map"),
    ("map-drilled", "?theme={theme}&colour=topic", None, "map"),
    ("map-filtered", "?topic={topic}", None, "map"),
    ("map-clicked", "?paper={paper}", None, "map"),
    ("map-table", "?level=themes", "Papers (", "map"),
    ("topics", "?tab=Topics", None, ".js-plotly-plot"),
    ("structure-tree", "?tab=Structure", None, ".js-plotly-plot"),
    ("structure-similarity", "?tab=Structure", "How topics relate", ".js-plotly-plot"),
    ("structure-areas", "?tab=Structure", "Topics and primary areas", ".js-plotly-plot"),
    ("find", "?tab=Find+and+place", None, "tab"),
    ("decisions", "?tab=Decisions", None, ".js-plotly-plot"),
    # the tab panel is there seconds before its buttons on the six-collection atlas
    ("downloads", "?tab=Downloads", None, ".st-key-downloads-charts button"),
    ("downloads-charts", "?tab=Downloads", "Charts", ".st-key-downloads-charts button"),
    ("changes", "?tab=What+changed", None, "tab"),
    ("changes-candidates", "?tab=What+changed", "Candidate new topics", ".js-plotly-plot"),
    ("trends", "?tab=Trends", None, ".js-plotly-plot"),
    ("trends-years", "?tab=Trends", None, ".js-plotly-plot"),
    ("trends-themes", "?tab=Trends", "Rising and fading", ".js-plotly-plot"),
    ("trends-notes", "?tab=Trends", "Left out of the chart", ".js-plotly-plot"),
    ("venues", "?tab=Venues", None, "tab"),
    ("map-highlight", "?colour=year&highlight={year}", None, "map"),
]
# atlases of several collections (or years) only
COLLECTION_VIEWS = {"trends", "trends-years", "trends-themes", "trends-notes", "venues", "map-highlight"}
# Views drawn after a choice in a select box that the address does not hold: {view: (the box's label, the option)}.
POOLED = ("Venue", "All venues, per year")
CHOICES = {"trends-years": POOLED, "trends-themes": POOLED, "trends-notes": POOLED}
LABELS = """() => { const all = [...document.querySelectorAll('.atlas-label')];
  return [all.filter(n => n.style.display !== 'none').length, all.length]; }"""
# Elements of the page (outside the map's frame) that stick out of the window sideways: clipped text or controls.
OVERFLOW = """() => { const width = document.documentElement.clientWidth, out = [];
  for (const node of document.querySelectorAll('[data-testid="stMain"] *')) {
    const box = node.getBoundingClientRect();
    if (box.width > 0 && box.height > 0 && (box.right > width + 1) && node.children.length === 0
        && node.textContent.trim()) out.push(node.textContent.trim().slice(0, 40));
  }
  return [...new Set(out)].slice(0, 6); }"""
# What a user must never read: a missing value, a traceback, LaTeX source; and the title hidden under the header bar.
PROBLEMS = r"""() => { const text = document.querySelector('[data-testid="stMain"]').innerText, found = [];
  if (/(^|[^a-z])nan([^a-z]|$)/i.test(text)) found.push('"nan"');
  if (/Traceback/.test(text) || document.querySelector('[data-testid="stException"]')) found.push('traceback');
  const latex = text.match(/\\(frac|mathbb|mathcal|textbf|emph|begin)\b|\$[^$\n]{1,40}\$/);
  if (latex) found.push('LaTeX: ' + latex[0]);
  const title = document.querySelector('h1'), header = document.querySelector('[data-testid="stHeader"]');
  if (title && header && window.scrollY === 0 && getComputedStyle(header).backgroundColor !== 'rgba(0, 0, 0, 0)'
      && title.getBoundingClientRect().top < header.getBoundingClientRect().bottom) found.push('title under header');
  return found; }"""


def parse_size(size: str) -> tuple[int, int, bool]:
    """'900x1000-closed' -> (900, 1000, False): width, height in CSS pixels, whether the sidebar stays open."""
    dims, _, closed = size.partition("-")
    width, height = (int(value) for value in dims.lower().split("x"))
    return width, height, closed != "closed"


def close_sidebar(page) -> None:
    """Close Streamlit's sidebar with its own button."""
    page.locator("[data-testid='stSidebar']").hover()
    button = page.locator("[data-testid='stSidebarCollapseButton'] button")
    if button.count():
        button.first.click()
        page.wait_for_timeout(800)


def wait_for_view(page, wait: str) -> None:
    """Until the view has drawn: the map's points ("map"), the tab panel ("tab") or a selector."""
    if wait == "map":
        frame = page.wait_for_selector(MAP_FRAME, timeout=180_000).content_frame()
        frame.wait_for_selector("body[data-drawn]", state="attached", timeout=180_000)
    elif wait == "tab":
        page.wait_for_selector("[data-testid='stTabs'] [role='tabpanel']", timeout=120_000)
    else:
        page.wait_for_selector(wait, timeout=120_000)
    # the run has ended and nothing is still a grey placeholder (Find and Downloads were shot half drawn)
    page.wait_for_function(
        '() => !document.querySelector(\'[data-testid="stStatusWidget"], [data-testid="stSkeleton"]\')',
        timeout=120_000,
        polling=250,
    )
    page.wait_for_timeout(1500)


def choose(page, label: str, option: str) -> None:
    """Pick ``option`` in the Streamlit select box labelled ``label`` and wait for the rerun to end."""
    page.get_by_label(label, exact=True).first.click()
    page.get_by_role("option", name=option, exact=True).click()
    page.wait_for_timeout(500)
    page.wait_for_function(
        '() => !document.querySelector(\'[data-testid="stStatusWidget"], [data-testid="stSkeleton"]\')',
        timeout=120_000,
        polling=250,
    )
    page.wait_for_timeout(1500)


def shoot(browser, url: str, view: tuple[str, str, str | None, str], size: str, out: Path) -> str:
    """One screenshot of ``view`` at ``size``; returns its line of findings."""
    name, query, scroll_to, wait = view
    width, height, sidebar = parse_size(size)
    page = browser.new_page(viewport={"width": width, "height": height})
    page.set_default_timeout(120_000)
    try:
        start = time.perf_counter()
        page.goto(url + query, wait_until="domcontentloaded")
        wait_for_view(page, wait)
        if name in CHOICES:
            choose(page, *CHOICES[name])
        seconds = time.perf_counter() - start
        if not sidebar and not page.locator("[role='dialog']").count():  # the paper's drawer is modal: left as is
            close_sidebar(page)
        if scroll_to:
            target = page.get_by_text(scroll_to).first
            if not target.count():
                return f"{name}-{size}: no {scroll_to!r} on this page"
            target.evaluate("node => node.scrollIntoView({block: 'start'})")  # the section at the top
            page.wait_for_timeout(1200)
        path = out / f"{name}-{size}.png"
        page.screenshot(path=str(path))
        findings = [f"{seconds:.1f} s"]
        frame_element = page.query_selector(MAP_FRAME)
        if frame_element is not None and frame_element.content_frame() is not None:
            shown, total = frame_element.content_frame().evaluate(LABELS)
            findings.append(f"{shown} of {total} labels shown")
        sticking_out = page.evaluate(OVERFLOW)
        if sticking_out:
            findings.append(f"past the window's right edge: {sticking_out}")
        findings += page.evaluate(PROBLEMS)
        return f"{path.name}: " + "; ".join(findings)
    finally:
        page.close()


def publication_figure(browser, url: str, out: Path) -> None:
    """The publication figure of ``url``'s view from its Downloads tab: publication.pdf, rendered to
    publication-pdf.png with pdftoppm."""
    page = browser.new_page(viewport={"width": 1500, "height": 1000})
    page.set_default_timeout(300_000)
    page.goto(url)
    page.get_by_role("button", name="Draw the publication figure (PNG, SVG, PDF)").click()
    save = page.get_by_role("button", name="Save PDF")
    save.wait_for()
    with page.expect_download() as download:
        save.click()
    pdf = out / "publication.pdf"
    download.value.save_as(str(pdf))
    subprocess.run(["pdftoppm", "-png", "-r", "80", "-singlefile", str(pdf), str(out / "publication-pdf")], check=True)
    page.close()


def fill(query: str, cache_dir: Path) -> str:
    """The view's address with the largest theme, the largest topic, that topic's first paper and the latest year
    put in."""
    import pandas as pd

    topics = read_frame(cache_dir / "topics.parquet", columns=["topic", "size", "theme"])
    topics = topics[topics["topic"] >= 0].sort_values("size", ascending=False)
    themes = topics.groupby("theme")["size"].sum().sort_values(ascending=False)
    documents = read_frame(cache_dir / "documents.parquet")
    topic = int(topics["topic"].iloc[0])
    paper = str(documents.loc[documents["topic"] == topic, "doc_id"].iloc[0])
    years = pd.to_numeric(documents["year"], errors="coerce").dropna() if "year" in documents.columns else None
    year = int(years.max()) if years is not None and len(years) else 0
    return query.format(theme=int(themes.index[0]), topic=topic, paper=paper, year=year)


def has_collections(cache_dir: Path) -> bool:
    """Whether the atlas holds several collections, its own or its file's venue and year (then it has the Trends
    and Venues tabs)."""
    import pyarrow.parquet as pq

    from dashboard.tables.collections import has_collections as several
    from dashboard.tables.collections import with_derived_collections

    path = cache_dir / "documents.parquet"
    columns = [name for name in ("collection", "venue", "year") if name in pq.read_schema(path).names]
    return bool(columns) and several(with_derived_collections(pq.read_table(path, columns=columns).to_pandas()))


def main() -> None:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--sizes", default=SIZES, help=f"comma-separated WIDTHxHEIGHT[-closed] (default {SIZES})")
    parser.add_argument("--views", default="", help="comma-separated view names (default: all)")
    parser.add_argument("--publication", action="store_true", help="also the publication figure of a drilled view")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    wanted = set(filter(None, args.views.split(",")))
    views = [view for view in VIEWS if not wanted or view[0] in wanted]
    if not isinstance(json.loads((args.cache / "manifest.json").read_text()).get("lineage"), dict):
        views = [view for view in views if not view[0].startswith("changes")]
    if not has_collections(args.cache):
        views = [view for view in views if view[0] not in COLLECTION_VIEWS]
    server, port = start_server(args.cache)
    url = f"http://127.0.0.1:{port}/"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            for size in args.sizes.split(","):
                for name, query, scroll_to, wait in views:
                    try:
                        line = shoot(browser, url, (name, fill(query, args.cache), scroll_to, wait), size, args.out)
                    except Exception as error:  # one view that never drew is a finding, not the end of the run
                        line = f"{name}-{size}: not drawn: {type(error).__name__}: {str(error).splitlines()[0]}"
                    print(line, flush=True)
            if args.publication:
                publication_figure(
                    browser, url + fill("?theme={theme}&colour=topic&tab=Downloads", args.cache), args.out
                )
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
