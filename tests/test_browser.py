"""The dashboard in a real browser: `streamlit run` as a subprocess, driven by Debian's Chromium through playwright.

Never runs `playwright install`: it uses /usr/bin/chromium and fails in one line when that is absent. Every wait is
for a state of the page (a finished script run, plotly done drawing, a hovered point), never a fixed pause.
"""

from __future__ import annotations

import csv
import io
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipeline.operations.build import run_build
from pipeline.runtime.parquet import read_frame
from tests.conftest import needs_shared
from tests.streamlit_server import (
    PAPERS_GRID,
    PLOTS_DRAWN,
    RUN_TRACKER,
    chromium_browser,
    chromium_path,
    rerun,
    streamlit_server,
    wait_until_run,
)

REPO = Path(__file__).resolve().parent.parent
ICLR_PAPERS = REPO.parent / "shared" / "data" / "iclr2025" / "papers.parquet"
SEED = REPO / "data" / "sample" / "iclr2025_seed_abstracts.txt"
INJECTION_TITLE = "<script>alert(1)</script> <b>bold</b> **md** $x$"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 60-paper ICLR slice whose first title is an injection (the 19-abstract seed when the corpus is absent)."""
    root = tmp_path_factory.mktemp("browser-cache")
    configured = os.environ.get("ATLAS_EMBEDDING_CACHE")
    store = Path(configured) if configured else root / "embeddings.sqlite"
    if ICLR_PAPERS.is_file():
        papers = read_frame(ICLR_PAPERS).head(60).copy()
        papers.loc[papers.index[0], "title"] = INJECTION_TITLE
        source = root / "papers-60.parquet"
        papers.to_parquet(source, index=False)
    else:
        source = SEED
    run_build(source, root / "cache", embedding_store=store)
    return root / "cache"


@pytest.fixture(scope="module")
def server_url(cache_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`streamlit run dashboard/app.py` on a free port, stopped after the module."""
    log = tmp_path_factory.mktemp("streamlit-log") / "server.log"
    # The plotly map's tests; exports may take 120 s, not the default 30: on a fresh clone the render server's first
    # figure ran beside the other test worker's build (CI failed "Save SVG" so, with DataMapPlot's numba compile).
    environment = {"ATLAS_MAP_RENDERER": "plotly", "ATLAS_EXPORT_TIMEOUT_S": "120"}
    with streamlit_server(cache_dir, log, environment) as (url, _):
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with chromium_browser(CHROMIUM_ARGS) as chromium:
        yield chromium


def open_dashboard(browser, url: str, dialogs: list[str]):
    page = browser.new_page(viewport={"width": 1440, "height": 1400}, accept_downloads=True)
    page.set_default_timeout(120_000)  # clicks on a busy machine
    page.add_init_script(RUN_TRACKER)
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(url, wait_until="domcontentloaded", timeout=120_000)
    page.wait_for_selector(".js-plotly-plot", timeout=120_000)
    page.wait_for_selector(".js-plotly-plot canvas", state="attached", timeout=90_000)
    page.wait_for_selector(PAPERS_GRID, timeout=90_000)
    wait_until_run(page)  # the page's run has ended
    page.wait_for_function(PLOTS_DRAWN, timeout=90_000)  # and plotly has drawn the map, its points through WebGL
    return page


def pixel_spread(png: bytes) -> float:
    from PIL import Image, ImageStat

    image = Image.open(io.BytesIO(png)).convert("L")
    return ImageStat.Stat(image).stddev[0]


def test_map_renders_without_exceptions(browser, server_url, tmp_path):
    dialogs: list[str] = []
    page = open_dashboard(browser, server_url, dialogs)
    shot = page.screenshot(path=str(tmp_path / "dashboard.png"), full_page=True)
    assert pixel_spread(shot) > 10, f"the page screenshot looks blank: {tmp_path / 'dashboard.png'}"
    chart = page.locator(".js-plotly-plot").first
    assert pixel_spread(chart.screenshot()) > 5, "the topic map looks blank"
    assert page.locator('[data-testid="stException"]').count() == 0
    assert page.get_by_text("Topic Atlas", exact=True).count() >= 1
    assert not dialogs
    page.close()


def lasso(page, points: list[tuple[float, float]]) -> None:
    """Drag a lasso through ``points`` given as fractions of the map's plot area (0..1 from the top left)."""
    area = page.locator(".js-plotly-plot .nsewdrag").first.bounding_box()
    x0, y0, width, height = area["x"], area["y"], area["width"], area["height"]
    page.mouse.move(x0 + width * points[0][0], y0 + height * points[0][1])
    page.mouse.down()
    for fx, fy in points[1:] + points[:1]:
        page.mouse.move(x0 + width * fx, y0 + height * fy, steps=8)
    page.mouse.up()


def shown_papers(page) -> int:
    heading = page.get_by_text(re.compile(r"^Papers \((\d+)\)$")).first
    heading.wait_for(timeout=90_000)
    return int(re.search(r"\d+", heading.inner_text()).group())


def test_lasso_selection_narrows_the_table_and_clears(browser, server_url):
    page = open_dashboard(browser, server_url, [])
    total = shown_papers(page)
    page.locator(
        '.js-plotly-plot .modebar-btn[data-val="lasso"]'
    ).first.click()  # dragging pans; the lasso is in the toolbar
    lasso(page, [(0.01, 0.01), (0.5, 0.01), (0.5, 0.99), (0.01, 0.99)])
    caption = page.get_by_text("papers selected on the map")
    caption.wait_for(timeout=90_000)
    selected = int(caption.inner_text().split()[0].replace(",", ""))
    assert 0 < selected < total
    page.get_by_text(f"Papers ({selected})", exact=True).wait_for(timeout=90_000)
    page.get_by_role("button", name="Clear selection").click()
    page.get_by_text("No map selection").wait_for(timeout=90_000)
    assert shown_papers(page) == total
    assert page.locator('[data-testid="stException"]').count() == 0
    page.close()


def point_positions(page) -> list[tuple[float, float, str]]:
    """(x, y, doc_id) in page pixels of every hoverable point of the main map, from plotly's own axes."""
    return page.evaluate(
        """() => {
            const gd = document.querySelector('.js-plotly-plot');
            const layout = gd._fullLayout, size = layout._size, box = gd.getBoundingClientRect(), out = [];
            gd._fullData.forEach(trace => {
                if (trace.hoverinfo === 'skip' || !trace.x) return;
                for (let i = 0; i < trace.x.length; i++) out.push([box.left + size.l + layout.xaxis.l2p(trace.x[i]),
                                                                   box.top + size.t + layout.yaxis.l2p(trace.y[i]),
                                                                   trace.customdata[i]]);
            });
            return out;
        }"""
    )


def label_boxes(page) -> list[dict]:
    return page.eval_on_selector_all(
        ".js-plotly-plot .annotation .bg",
        "els => els.map(e => { const r = e.getBoundingClientRect(); "
        "return {x: r.x, y: r.y, w: r.width, h: r.height, text: e.parentNode.textContent}; })",
    )


def test_labels_never_overlap_never_cover_a_point_and_let_the_hover_through(browser, server_url):
    page = open_dashboard(browser, server_url, [])
    for level in ("Themes", "Topics"):
        if level == "Topics":
            page.locator('[data-testid="stSelectbox"]').filter(has_text="Label").click()
            with rerun(page):
                page.get_by_role("option", name="Topics").click()
            page.wait_for_function(PLOTS_DRAWN, timeout=90_000)  # the map with the topics' labels
        boxes = label_boxes(page)
        assert boxes, "the map has no labels"
        for i, a in enumerate(boxes):
            for b in boxes[i + 1 :]:
                apart = (
                    a["x"] + a["w"] <= b["x"]
                    or b["x"] + b["w"] <= a["x"]
                    or a["y"] + a["h"] <= b["y"]
                    or b["y"] + b["h"] <= a["y"]
                )
                assert apart, f"{level}: labels overlap: {a} {b}"
        points = point_positions(page)
        for box in boxes:
            inside = [
                (doc, round(x, 1), round(y, 1))
                for x, y, doc in points
                if box["x"] <= x <= box["x"] + box["w"] and box["y"] <= y <= box["y"] + box["h"]
            ]
            assert not inside, f"{level}: the label {box} covers points {inside[:3]}"
            hit = page.evaluate(
                f"() => document.elementFromPoint({box['x'] + box['w'] / 2}, "
                f"{box['y'] + box['h'] / 2}).getAttribute('class')"
            )
            assert "nsewdrag" in (hit or ""), f"the label takes the pointer ({hit}); hover beneath it would be blocked"
    page.close()


def test_a_click_on_a_point_opens_its_paper_at_once(browser, server_url):
    page = open_dashboard(browser, server_url, [])
    x, y, doc_id = point_positions(page)[0]
    page.mouse.move(x, y)
    # plotly sends a click for the point it hovers: wait until the hover has found this one
    page.wait_for_function(
        "(doc) => (document.querySelector('.js-plotly-plot')._hoverdata || []).some((p) => p.customdata === doc)",
        arg=doc_id,
        timeout=30_000,
    )
    page.mouse.click(x, y)
    page.locator(".st-key-paper-panel").wait_for(timeout=90_000)
    # the chosen paper is part of the shared view (the address follows the panel within a rerun)
    page.wait_for_function(f"() => location.search.includes('paper={doc_id}')", timeout=10_000)
    # title, topic, abstract... in the drawer at the right, at least 500 px wide (the sidebar's column was 240 px)
    assert page.locator('[role="dialog"] [data-testid="stText"]').count() >= 3
    assert page.locator('[role="dialog"]').bounding_box()["width"] >= 500
    page.wait_for_function(
        "() => Array.from(document.querySelectorAll('.js-plotly-plot "
        ".legendtext')).some(e => e.textContent.startsWith('chosen paper'))",
        timeout=90_000,
    )
    assert page.locator('[data-testid="stException"]').count() == 0
    page.close()


def test_a_shared_address_reopens_the_same_view_in_a_fresh_browser(browser, server_url, tmp_path):
    page = open_dashboard(browser, server_url, [])
    page.locator('[data-testid="stSelectbox"]').filter(has_text="Drill into a theme").click()
    with rerun(page):
        page.get_by_role("option").nth(1).click()  # the largest theme
    page.wait_for_function("() => location.search.includes('theme=')", timeout=90_000)
    page.locator('[data-testid="stSelectbox"]').filter(has_text="Colour points by").click()
    with rerun(page):
        page.get_by_role("option", name="Topic", exact=True).click()
    page.wait_for_function("() => location.search.includes('colour=topic')", timeout=90_000)
    page.wait_for_function(PLOTS_DRAWN, timeout=90_000)
    shared, labels, heading = (
        page.url,
        sorted(box.text_content() for box in page.locator(".js-plotly-plot .annotation-text").all()),
        shown_papers(page),
    )
    page.close()
    fresh = browser.browser_type.launch(
        executable_path=chromium_path(), args=CHROMIUM_ARGS
    )  # another browser: a new session
    try:
        again = fresh.new_page(viewport={"width": 1440, "height": 1400})
        again.set_default_timeout(120_000)  # clicks on a busy machine
        again.add_init_script(RUN_TRACKER)
        again.goto(shared, wait_until="domcontentloaded", timeout=120_000)
        again.wait_for_selector(".js-plotly-plot .annotation", timeout=120_000)
        wait_until_run(again)  # the shared view's run has ended
        again.wait_for_function(PLOTS_DRAWN, timeout=90_000)
        assert shown_papers(again) == heading
        assert sorted(box.text_content() for box in again.locator(".js-plotly-plot .annotation-text").all()) == labels
        again.screenshot(path=str(tmp_path / "shared-view.png"))
    finally:
        fresh.close()


def choose_first_row(page) -> None:
    """Click the row-selection checkbox of the table's first data row. Playwright scrolls the table into view and
    clicks once it holds still (the same box over two animation frames) and takes the pointer there."""
    grid = page.locator(PAPERS_GRID).first
    grid.click(position={"x": 12, "y": 35 + 17})  # below the 35 px header, in the middle of the row


def test_injection_title_is_shown_as_text_and_downloads_work(browser, server_url, tmp_path):
    needs_shared(ICLR_PAPERS)  # the titles of the real corpus (the first one made an injection)
    dialogs: list[str] = []
    page = open_dashboard(browser, server_url, dialogs)
    search = page.get_by_label("Search titles, abstracts and keywords")
    search.fill("alert(1)")
    search.press("Enter")
    page.get_by_text("Papers (1)").wait_for(timeout=90_000)
    choose_first_row(page)
    # st.text, not the table cell: the script and the tags stay literal text, as written (issue 40, item 8:
    # pipeline.ingest.readable.readable_title), so "<b>bold</b>" reads "<b>bold</b>" and is never bold
    readable = INJECTION_TITLE.replace("$x$", "x")  # a title's math as text
    shown = page.locator('[data-testid="stText"]').filter(has_text=readable)
    shown.first.wait_for(timeout=90_000)
    assert shown.count() == 1 and shown.first.inner_text().strip() == readable
    assert page.locator("b", has_text="bold").count() == 0
    assert not dialogs
    assert page.locator('[data-testid="stException"]').count() == 0
    page.keyboard.press("Escape")  # the paper's drawer is modal: Esc closes it (the search stays)
    page.locator('[role="dialog"]').wait_for(state="detached")

    page.get_by_role("tab", name="Downloads").click()
    with page.expect_download(timeout=120_000) as download_info:
        page.get_by_role("button", name="Download CSV").click()
    rows = list(csv.DictReader(io.StringIO(Path(download_info.value.path()).read_text(encoding="utf-8"))))
    assert len(rows) == 1
    assert rows[0]["title"] == INJECTION_TITLE

    # The publication figure of the one-paper map. The paper may be an outlier (no label; whether it is depends on
    # the build), so what must be there is the title and a caption naming the filter, never a near-blank image.
    page.get_by_role("button", name="Draw the publication figure (PNG, SVG, PDF)").click()
    with page.expect_download(timeout=120_000) as download_info:
        page.get_by_role("button", name="Save SVG").first.click()
    svg = Path(download_info.value.path()).read_text(encoding="utf-8")
    assert 'filters: search "alert(1)"' in svg and "1 paper of" in svg
    with page.expect_download(timeout=90_000) as download_info:
        page.get_by_role("button", name="Save PNG").first.click()
    png = Path(download_info.value.path()).read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and pixel_spread(png) > 3  # title, caption and the point (about 10)
    assert page.locator('[data-testid="stException"]').count() == 0
    page.close()


def kind_of(data: bytes) -> str:
    """What a downloaded file is, by its content: "png", "pdf", "svg", "html" or "unknown"."""
    from xml.etree import ElementTree

    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if data.startswith(b"%PDF-"):
        return "pdf"
    text = data.decode("utf-8", errors="replace").lstrip()
    if text.lower().startswith(("<!doctype html", "<html")):
        return "html"
    try:
        if ElementTree.fromstring(data).tag.rsplit("}", 1)[-1] == "svg":
            return "svg"
    except ElementTree.ParseError:
        pass
    return "unknown"


def saved(page, button) -> bytes:
    """The bytes of the download that a click on ``button`` starts."""
    with page.expect_download(timeout=120_000) as download_info:
        button.click()
    return Path(download_info.value.path()).read_bytes()


def test_every_chart_downloads_in_every_format_and_filtered_tabs_say_what_they_show(browser, server_url, cache_dir):
    """Every format the Downloads tab offers, for every chart, arrives in the browser and is what it says by its
    content: HTML (standalone, offline, with the chart's topic names), PNG, SVG, the CSV, and the publication
    figure's PNG, SVG and PDF; nothing is offered that does not arrive. (The "Topic map" HTML never arrived:
    plotly.io.to_html raised on the unvalidated map figure and the page swallowed it.) Then, with filters on,
    Decisions says it shows the whole atlas (it went on counting "here" as if it applied them)."""
    labels = read_frame(cache_dir / "topics.parquet", columns=["label"])["label"].astype(str).tolist()
    dialogs: list[str] = []
    page = open_dashboard(browser, server_url, dialogs)
    page.get_by_role("tab", name="Downloads").click()
    html_buttons = page.get_by_role("button", name="HTML", exact=True)
    html_buttons.first.wait_for(timeout=120_000)
    csv_rows = list(csv.DictReader(io.StringIO(saved(page, page.get_by_role("button", name="Download CSV")).decode())))
    assert csv_rows and {"doc_id", "title", "abstract", "topic_label"} <= set(csv_rows[0])
    charts = page.locator(".st-key-downloads-charts [class*='st-key-chart-']").all()
    assert len(charts) >= 3, "the Downloads tab lists fewer charts than the map, the sizes and the tree"
    names = []
    for row in charts:
        name = row.locator("strong").first.inner_text()
        names.append(name)
        html_page = saved(page, row.get_by_role("button", name="HTML", exact=True))
        assert kind_of(html_page) == "html" and b"<script src=" not in html_page, name  # standalone, offline
        assert f"<title>Topic Atlas: {name}</title>".encode() in html_page, name
        assert any(label.encode() in html_page for label in labels), f"{name}: no topic name in its HTML"
        row.get_by_role("button", name="Draw PNG + SVG").click()
        for image_format in ("png", "svg"):
            button = row.get_by_role("button", name=f"Save {image_format.upper()}")
            button.wait_for(timeout=120_000)
            assert kind_of(saved(page, button)) == image_format, (name, image_format)
    # every chart of every tab, not only those of the tabs visited before (this corpus has no primary areas)
    assert {"Topic map", "Topic sizes", "Top terms", "Topic tree", "Topic similarity"} <= set(names), names
    page.get_by_role("button", name="Draw the publication figure (PNG, SVG, PDF)").click()
    publication = page.locator(".st-key-downloads-publication")
    for image_format in ("png", "svg", "pdf"):
        button = publication.get_by_role("button", name=f"Save {image_format.upper()}")
        button.wait_for(timeout=120_000)
        assert kind_of(saved(page, button)) == image_format, ("publication", image_format)
    assert page.locator('[data-testid="stAlert"]').filter(has_text="cannot").count() == 0
    search = page.get_by_label("Search titles, abstracts and keywords")
    search.fill("no paper has this phrase zqx")
    search.press("Enter")
    page.get_by_text("0 matching the filters", exact=False).first.wait_for(timeout=120_000)
    page.get_by_role("tab", name="Decisions").click()
    page.get_by_text("not the 0 matching the filters", exact=False).first.wait_for(timeout=120_000)
    assert page.locator('[data-testid="stException"]').count() == 0 and not dialogs
    page.close()


def test_a_click_on_a_theme_in_the_tree_drills_the_map_and_keeps_the_tree_whole(browser, server_url):
    page = open_dashboard(browser, server_url, [])
    page.get_by_role("tab", name="Structure").click()
    tree = page.locator(".js-plotly-plot").filter(has=page.locator(".treemaplayer")).first
    tree.locator(".treemaplayer .slice").first.wait_for(timeout=120_000)
    slices_before = tree.locator(".treemaplayer .slice").count()
    # The first slice is plotly's root, the whole area; the next is the first theme, its topics inside it.
    theme_block = tree.locator(".treemaplayer .slice").nth(1)
    box = theme_block.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + 8, box["y"] + 6)  # its header strip, above its topics
    page.wait_for_function("() => /[?&]theme=\\d/.test(location.search)", timeout=120_000)
    tree = page.locator(".js-plotly-plot").filter(has=page.locator(".treemaplayer")).first
    page.wait_for_function(
        "(n) => document.querySelectorAll('.treemaplayer .slice').length >= n", arg=slices_before, timeout=120_000
    )
    page.get_by_role("tab", name="Map and papers").click()
    drill = page.locator('[data-testid="stSelectbox"]').filter(has_text="Drill into a theme")
    assert "All themes" not in drill.inner_text()  # the map is drilled into the clicked theme
    page.close()
