"""The "What changed" tab on a real aligned rebuild (the 300-paper slice, min_cluster_size 9 -> 5): Streamlit's
AppTest, then the page in Debian's Chromium (a screenshot is saved; set ATLAS_SHOTS_DIR to keep a copy)."""

from __future__ import annotations

import os
import shutil
import socket
from dataclasses import replace
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright
from streamlit.testing.v1 import AppTest

from pipeline import cache
from pipeline.config import BuildConfig
from pipeline.operations.build import run_build
from tests.conftest import ROOT
from tests.streamlit_server import PLOTS_DRAWN, RUN_TRACKER, rerun, streamlit_server

pytestmark = pytest.mark.slow

APP = ROOT / "dashboard" / "app.py"


@pytest.fixture(scope="module")
def aligned_cache(tmp_path_factory, papers_slice: Path, slice_cache: Path, embedding_store: Path, encoder) -> Path:
    target = tmp_path_factory.mktemp("changes") / "atlas"
    shutil.copytree(slice_cache, target)
    run_build(
        papers_slice,
        target,
        replace(BuildConfig(), min_cluster_size=5),
        embedding_store=embedding_store,
        encoder=encoder,
    )
    return target


def run_app(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    """The page on its "What changed" tab (only the open tab runs; the page keeps the open tab in
    session_state["tab"])."""
    monkeypatch.setenv("ATLAS_CACHE", str(cache_dir))
    app = AppTest.from_file(str(APP), default_timeout=90)
    app.session_state["tab"] = "What changed"
    return app.run()


def test_the_tab_shows_what_changed(aligned_cache: Path, monkeypatch):
    app = run_app(aligned_cache, monkeypatch)
    assert not app.exception and not app.error, [item.value for item in app.exception]
    assert "What changed" in [tab.label for tab in app.tabs]
    lineage = cache.read_manifest(aligned_cache)["lineage"]
    metrics = {metric.label: metric.value for metric in app.metric}
    for status in ("kept", "split", "merged", "new"):
        assert metrics[f"{status.capitalize()} topics"] == str(
            sum(entry["status"] == status for entry in lineage["topics"])
        )
    assert metrics["Gone topics"] == str(len(lineage["gone"]))
    split_expander = next(
        expander for expander in app.expander if expander.label.startswith("Topics split from one previous topic")
    )
    assert f"({sum(e['status'] == 'split' for e in lineage['topics'])})" in split_expander.label
    # Per topic, the papers that moved in and out: the table follows the chosen topic.
    chosen = next(entry for entry in lineage["topics"] if entry["status"] == "new")
    app.selectbox(key="changes-topic").set_value(chosen["topic"]).run()
    moved_in = next(frame.value for frame in app.dataframe if "came_from" in frame.value.columns)
    assert len(moved_in) == chosen["n_papers"]  # a new topic: every one of its papers came from elsewhere
    assert not app.exception
    app.session_state["tab"] = "Downloads"
    app.run()
    assert any(
        "Topic flow since the previous build" in markdown.value for markdown in app.markdown
    )  # offered for download


def test_a_cache_without_lineage_has_no_such_tab(slice_cache: Path, monkeypatch):
    app = run_app(slice_cache, monkeypatch)
    assert not app.exception
    assert "What changed" not in [tab.label for tab in app.tabs]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_the_tab_in_a_real_browser(aligned_cache: Path, tmp_path: Path, chromium: str):
    from PIL import Image, ImageStat

    with (
        streamlit_server(aligned_cache, tmp_path / "server.log") as (url, _),
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1440, "height": 1500})
        page.set_default_timeout(120_000)  # clicks on a busy machine
        page.add_init_script(RUN_TRACKER)
        page.goto(url, wait_until="domcontentloaded", timeout=120_000)
        page.get_by_role("tab", name="What changed").wait_for(timeout=120_000)  # the page is up
        with rerun(page):  # the tab's run has ended
            page.get_by_role("tab", name="What changed").click()
        page.wait_for_selector(".sankey .sankey-node", timeout=120_000)
        page.wait_for_function(PLOTS_DRAWN, timeout=90_000)  # plotly has drawn the flow
        shot = tmp_path / "what-changed.png"
        page.screenshot(path=str(shot))
        assert page.locator(".sankey .sankey-node").count() >= 4
        assert page.locator('[data-testid="stException"]').count() == 0
        browser.close()
    assert ImageStat.Stat(Image.open(shot).convert("L")).stddev[0] > 10
    if os.environ.get("ATLAS_SHOTS_DIR"):
        Path(os.environ["ATLAS_SHOTS_DIR"]).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(os.environ["ATLAS_SHOTS_DIR"]) / "what-changed-slice300.png")
