"""A hung image renderer against the real page: `streamlit run` whose BROWSER_PATH is a fake Chromium that sleeps
forever, driven by Debian's headless Chromium through playwright.

What issue 13 saw: the PNG button spun for minutes with no message, the worker thread never returned, and the
server then ignored SIGTERM. Here the spinner must end with the page saying that the image was not ready after the
export timeout, the fake browser (which would sleep for a day) must have been killed, the publication figure
(matplotlib, no browser) must still download, and the server must stop on SIGTERM.
"""

from __future__ import annotations

import io
import signal
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import playwright.sync_api as playwright_api
import psutil
import pytest

from tests.streamlit_server import RUN_TRACKER, rerun, streamlit_server

REPO = Path(__file__).resolve().parent.parent
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
EXPORT_TIMEOUT_S = 5


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def hanging_browser(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("fake-browser")
    script = folder / "chromium"
    script.write_text(f"#!/bin/sh\necho $$ >> '{folder / 'pids'}'\nexec sleep 100000\n", encoding="utf-8")
    script.chmod(0o755)
    return script


def browser_pids(script: Path) -> list[int]:
    pids = script.parent / "pids"
    return [int(line) for line in pids.read_text().split()] if pids.exists() else []


@pytest.fixture(scope="module")
def server(
    seed_cache: Path, hanging_browser: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, subprocess.Popen]]:
    """`streamlit run dashboard/app.py` on the seed cache with the hanging browser and a 5 s export timeout."""
    environment = {"BROWSER_PATH": str(hanging_browser), "ATLAS_EXPORT_TIMEOUT_S": str(EXPORT_TIMEOUT_S)}
    with streamlit_server(seed_cache, tmp_path_factory.mktemp("streamlit-log") / "server.log", environment) as running:
        yield running


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, killed and not yet reaped, does not)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_hung_renderer_gives_a_message_and_the_server_still_stops(server, hanging_browser, chromium, tmp_path):
    url, process = server
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1440, "height": 1400}, accept_downloads=True)
        page.set_default_timeout(120_000)  # clicks on a busy machine
        page.add_init_script(RUN_TRACKER)
        page.goto(url, wait_until="domcontentloaded", timeout=120_000)
        page.get_by_role("tab", name="Downloads").wait_for(timeout=120_000)
        # A tab is a widget: clicked while the first run still streams, the run's end may open the first tab again
        # and hide the Downloads buttons (seen on a busy CI machine). Click once no run is under way, and wait for
        # the run it asks for.
        with rerun(page):
            page.get_by_role("tab", name="Downloads").click()
        page.get_by_role("tab", name="Downloads", selected=True).wait_for()
        # The first try may end while the render server is still importing its renderers (it starts 5 s after the
        # page): that too must end in the message. Retry, as a user would, until the job reaches the browser. While
        # the fake browser sleeps for a day the spinner can only end by the export timeout: with the message, and
        # with the browser killed with its tree (not left to hang the worker).
        message = page.get_by_text(f"was not ready after {EXPORT_TIMEOUT_S} s")
        for _ in range(12):  # a busy machine imports plotly, kaleido and matplotlib for up to a minute
            page.get_by_role("button", name="Draw PNG + SVG").first.click()
            spinner = page.get_by_text("Drawing the PNG and SVG")
            spinner.wait_for(state="visible", timeout=90_000)
            spinner.wait_for(state="hidden", timeout=120_000)
            message.first.wait_for(timeout=30_000)
            if browser_pids(hanging_browser):
                break
        started = browser_pids(hanging_browser)
        assert started, "the fake browser never started"
        assert message.count() >= 1 and page.get_by_text("Drawing the PNG and SVG").count() == 0
        assert [pid for pid in started if alive(pid)] == [], "the hung browser outlived its export's timeout"

        # The figure must beat this server's 5 s export timeout: on a busy machine the first try may not; try again,
        # as a user would.
        save = page.get_by_role("button", name="Save PNG").first
        for _ in range(4):
            page.get_by_role("button", name="Draw the publication figure (PNG, SVG, PDF)").click()
            try:
                save.wait_for(timeout=40_000)
                break
            except playwright_api.TimeoutError:
                continue
        with page.expect_download(timeout=120_000) as download_info:
            page.get_by_role("button", name="Save PNG").first.click()
        png = Path(download_info.value.path()).read_bytes()
        assert png.startswith(b"\x89PNG\r\n\x1a\n")
        from PIL import Image

        assert Image.open(io.BytesIO(png)).width >= 3000
        assert page.locator('[data-testid="stException"]').count() == 0
        page.screenshot(path=str(tmp_path / "downloads.png"), full_page=True)
        browser.close()
    children = psutil.Process(process.pid).children(recursive=True)
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=20)  # raises TimeoutExpired when SIGTERM is ignored
    psutil.wait_procs(children, timeout=20)
    assert not [child for child in children if child.is_running() and child.status() != psutil.STATUS_ZOMBIE], (
        "the render server outlived the page"
    )
