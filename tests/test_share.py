"""The one-file share of an atlas (issue 41): ``topic-atlas share`` over the session's 300-paper cache, opened from
disk in Debian's Chromium with every other request aborted, and used as a reader would: the map paints, a search
finds a known title, a filter narrows the papers, a click shows the paper's abstract and link, a lasso lists papers
and their CSV downloads; the ``--folder`` variant served over (routed) http; bad targets refused in one line.
"""

from __future__ import annotations

import csv
import io
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import playwright.sync_api as playwright_api
import pytest
from PIL import Image

from bench import share_speed
from dashboard.export.share_page import write_share_folder
from pipeline.cache import read_cache
from pipeline.ingest.readable import readable_text, readable_title
from pipeline.runtime.parquet import read_frame
from tests.streamlit_server import chromium_path
from tests.test_browser_map import CHROMIUM_ARGS
from topic_atlas.cli import main as topic_atlas

DRAWN = "() => window.__atlasShare && window.__atlasShare.firstDrawMs !== null"
TEXTS = "() => document.body.dataset.texts === '1'"
COUNT = "() => document.getElementById('count').textContent"
HOST = "http://atlas.test/"
IDLE = "() => !window.__atlasShare.busy"  # no filter, search or clear being drawn


@pytest.fixture(scope="module")
def share_file(slice_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The share file of the 300-paper cache, written by the command line."""
    target = tmp_path_factory.mktemp("share") / "atlas.html"
    assert topic_atlas(["share", "--cache", str(slice_cache), "--out", str(target)]) == 0
    return target


@pytest.fixture(scope="module")
def browser() -> Iterator[playwright_api.Browser]:
    with playwright_api.sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def open_offline(browser: playwright_api.Browser, url: str) -> tuple[playwright_api.Page, list[str]]:
    """A 1280x720 page at ``url`` (file://) with every other request aborted (bench.share_speed.open_offline), once
    its map is drawn and its texts are ready; and the list of the requests it aborted."""
    page, aborted = share_speed.open_offline(browser, url)
    page.wait_for_function(TEXTS, timeout=60_000)
    return page, aborted


def papers_shown(page: playwright_api.Page) -> int:
    """The first number of the count ("1,234 of 11,660 papers")."""
    found = re.match(r"([\d,]+) of", page.evaluate(COUNT))
    assert found, page.evaluate(COUNT)
    return int(found.group(1).replace(",", ""))


def coloured_pixels(png: bytes) -> int:
    """Pixels of a screenshot that are not white or light grey (the map's points in colour)."""
    pixels = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)
    spread = pixels.max(axis=2) - pixels.min(axis=2)
    return int((spread > 40).sum())


def lasso_round(page: playwright_api.Page, cx: float, cy: float, half: int) -> None:
    """Lasso mode on, then a square of 2 * ``half`` px dragged round (cx, cy) (page pixels)."""
    page.click("#lasso")
    page.mouse.move(cx - half, cy - half)
    page.mouse.down()
    for dx, dy in ((half, -half), (half, half), (-half, half), (-half, -half)):
        page.mouse.move(cx + dx, cy + dy, steps=8)
    page.mouse.up()


def test_share_file_works_offline(share_file: Path, slice_cache: Path, browser: playwright_api.Browser):
    documents = read_cache(slice_cache).documents
    page, aborted = open_offline(browser, share_file.as_uri())
    total = len(documents)
    assert papers_shown(page) == total
    assert coloured_pixels(page.locator("#plot").screenshot()) > 500  # the WebGL points, in colour
    assert page.evaluate("() => window.__atlasShareLabels().length") > 0  # labels by zoom: themes at the fit
    assert {label["level"] for label in page.evaluate("() => window.__atlasShareLabels()")} == {0}

    # search: a known title, by two of its words
    title = str(documents["title"].iloc[7])
    words = [word for word in re.findall(r"[A-Za-z]{5,}", title)][:2]
    page.fill("#search", " ".join(words))
    page.wait_for_function(f"() => document.getElementById('count').textContent.startsWith('{total:,}') === false")
    assert title in page.locator("ol.papers").inner_text()
    assert 1 <= papers_shown(page) < total

    # a filter narrows the papers further, and clearing gives them all back
    page.click("text=Clear filters and search")
    page.wait_for_function(f"() => document.getElementById('count').textContent.startsWith('{total:,} of')")
    page.select_option("select[data-field=theme]", index=1)
    page.wait_for_function(IDLE)
    page.wait_for_selector(".list-heading")
    assert 1 <= papers_shown(page) < total
    levels = [label["level"] for label in page.evaluate("() => window.__atlasShareLabels()")]
    assert levels and min(levels) >= 1  # a filtered theme shows its topics' labels, as the dashboard's drill does
    topic_options = page.locator("#filter-topic option")
    assert 1 < topic_options.count() - page.locator("#filter-topic option[hidden]").count() < topic_options.count()
    page.click("text=Clear filters and search")
    page.wait_for_function(IDLE)
    page.wait_for_selector("text=Themes")

    # a click on a point shows that paper's abstract and its OpenReview link
    index = int(documents["topic"].ge(0).to_numpy().nonzero()[0][0])
    x, y = page.evaluate(f"() => window.__atlasShareScreen({index})")
    page.mouse.move(x, y)
    page.mouse.click(x, y)
    page.wait_for_selector(".abstract")
    chosen = page.evaluate("() => window.__atlasShare.atlas.chosen")
    assert page.locator(".abstract").inner_text() == readable_text(documents["abstract"].iloc[chosen])
    assert str(page.locator("a.paper-link").get_attribute("href")).endswith(str(documents["doc_id"].iloc[chosen]))

    # a lasso lists papers, and their CSV downloads
    page.click("text=Back to the list")
    lasso_round(page, x, y, 80)
    page.wait_for_selector(".list-heading")
    selected = int(page.locator(".list-heading").inner_text().split()[0].replace(",", ""))
    assert 0 < selected <= total
    assert page.locator("ol.papers li").count() == min(selected, 300)
    with page.expect_download() as download:
        page.click("button.csv")
    rows = list(csv.DictReader(io.StringIO(Path(download.value.path()).read_text(encoding="utf-8"))))
    assert len(rows) == selected
    assert {row["doc_id"] for row in rows} <= set(documents["doc_id"].astype(str))
    assert {"title", "theme", "topic", "link", "abstract"} <= set(rows[0])
    first = documents.set_index("doc_id").loc[rows[0]["doc_id"]]
    assert rows[0]["abstract"] == readable_text(first["abstract"])
    assert aborted == []  # the page asked for nothing beyond itself
    page.close()


def test_share_folder_for_static_hosting(slice_cache: Path, tmp_path: Path, browser: playwright_api.Browser):
    folder = tmp_path / "site"
    result = write_share_folder(slice_cache, folder)
    assert sorted(path.name for path in (folder / "data").iterdir()) == ["points.bin", "texts.bin", "titles.bin"]
    assert result.papers == len(read_cache(slice_cache).documents)
    write_share_folder(slice_cache, folder)  # a share folder is replaced
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.route(
        f"{HOST}**",
        lambda route: route.fulfill(path=str(folder / route.request.url[len(HOST) :].split("?")[0])),
    )
    page.goto(f"{HOST}index.html")
    page.wait_for_function(DRAWN, timeout=60_000)
    page.wait_for_function(TEXTS, timeout=60_000)
    assert papers_shown(page) == result.papers
    assert page.evaluate("() => window.__atlasShare.error") is None
    page.close()


def test_share_refuses_bad_targets_in_one_line(slice_cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture):
    assert topic_atlas(["share", "--cache", str(tmp_path / "missing"), "--out", str(tmp_path / "a.html")]) == 2
    assert topic_atlas(["share", "--cache", str(slice_cache), "--out", str(tmp_path)]) == 2
    (tmp_path / "mine.txt").write_text("keep me", encoding="utf-8")
    assert topic_atlas(["share", "--cache", str(slice_cache), "--folder", str(tmp_path)]) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 3 and all(line.startswith("error: ") for line in errors)
    assert "Traceback" not in "".join(errors)
    assert (tmp_path / "mine.txt").read_text(encoding="utf-8") == "keep me"
    assert not (tmp_path / "a.html").exists()


def test_share_file_holds_compressed_blocks_not_json_rows(share_file: Path, slice_cache: Path):
    html = share_file.read_text(encoding="utf-8")
    documents = read_cache(slice_cache).documents
    assert 'type="application/octet-stream" id="atlas-points"' in html
    assert str(documents["abstract"].iloc[0])[:60] not in html  # abstracts only compressed
    assert "<script src=" not in html and "https://cdn" not in html
    assert pd.notna(documents["title"]).all()


def test_downloads_tab_makes_the_share_file_when_asked(
    slice_cache: Path, monkeypatch: pytest.MonkeyPatch, eager_downloads: dict[str, bytes]
):
    from streamlit.testing.v1 import AppTest

    import dashboard.export.share_page as share_operation
    from tests.test_app import APP, no_failure

    made: list[str] = []
    share_html = share_operation.share_html

    def counted(cache_dir: Path | str) -> bytes:  # the real writer, its calls counted
        made.append(str(cache_dir))
        return share_html(cache_dir)

    monkeypatch.setattr(share_operation, "share_html", counted)
    monkeypatch.setenv("ATLAS_CACHE", str(slice_cache))
    app = AppTest.from_file(str(APP), default_timeout=120).run()
    app.session_state["tab"] = "Downloads"
    app.run()
    no_failure(app)
    assert made == []  # not made before it is asked for
    app.button(key="share-make").click().run()
    no_failure(app)
    pages = [data for name, data in eager_downloads.items() if name.endswith(".html") and b"atlas-points" in data]
    assert len(pages) == 1 and share_operation.MARKER.encode() in pages[0]
    app.run()  # a rerun offers the same bytes, made once
    no_failure(app)
    assert len(made) == 1


def test_markup_in_titles_stays_text(slice_cache: Path, tmp_path: Path, browser: playwright_api.Browser):
    cache = tmp_path / "cache"
    shutil.copytree(slice_cache, cache)
    documents = read_frame(cache / "documents.parquet")
    documents.loc[0, "title"] = "Tricky </script><!--<script> title & <b>bold</b>"
    documents.to_parquet(cache / "documents.parquet", index=False)
    target = tmp_path / "atlas.html"
    assert topic_atlas(["share", "--cache", str(cache), "--out", str(target)]) == 0
    page, aborted = open_offline(browser, target.as_uri())
    assert papers_shown(page) == len(documents)
    shown = page.evaluate("() => window.__atlasShare.atlas.titles[0]")
    assert shown == readable_title(documents.loc[0, "title"]) and shown.startswith("Tricky ")
    assert page.locator("b").count() == 0 and aborted == []
    page.close()


def test_atlas_share_writes_the_same_page(slice_cache: Path, share_file: Path, tmp_path: Path):
    import topic_atlas as ta
    from dashboard.export.share_page import MARKER

    written = ta.Atlas.load(slice_cache).share(tmp_path / "mine.html")
    assert written == tmp_path / "mine.html"
    page = written.read_text(encoding="utf-8")
    assert MARKER in page and len(page) == len(share_file.read_text(encoding="utf-8"))
    assert list(tmp_path.iterdir()) == [written]  # no temporary file left beside it
