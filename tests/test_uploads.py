"""Bad files through "Find and place": the checks of dashboard.state.uploads on real bytes, and each refusal as a
user meets it in Chromium (playwright's set_input_files on the page served by `streamlit run`)."""

from __future__ import annotations

import io
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from playwright.sync_api import sync_playwright

from dashboard.state import uploads
from tests.conftest import ROOT, SEED
from tests.streamlit_server import RUN_TRACKER, chromium_path, rerun, streamlit_server, wait_until_run


def parquet_bytes(frame: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    return buffer.getvalue()


def zipped(name: str, data: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(name, data)
    return buffer.getvalue()


MILLION_ROWS = b"abstract\n" + b"A short abstract about graphs.\n" * 1_000_000  # 31 MB: over the size limit too
MILLION_SHORT = b"a\n" * 1_000_000  # 2 MB, so only the row bound refuses it


def test_the_upload_limit_is_the_servers():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["server"]["maxUploadSize"] == uploads.MAX_UPLOAD_MB


@pytest.mark.parametrize(
    ("name", "data", "expected"),
    [
        ("big.csv", b"abstract\n" + b"x" * (uploads.MAX_UPLOAD_BYTES + 1), "files up to 20 MB"),
        ("papers.csv", zipped("papers.csv", SEED.read_bytes()), "a zip archive"),
        ("papers.csv", bytes(range(256)) * 64, "binary data"),
        ("papers.csv", b"\x89PNG\r\n\x1a\n" + b"\x00" * 100, "a PNG image"),
        ("papers.parquet", b"PAR1 truncated", "binary data, not text or a whole Parquet file"),
        ("papers.csv", MILLION_SHORT, "1,000,001 lines"),
        ("papers.parquet", parquet_bytes(pd.DataFrame({"abstract": ["x"] * 20_001})), "20,001 rows"),
        ("empty.csv", b"  \n", "the file is empty"),
    ],
)
def test_bad_uploads_are_refused_by_content_with_what_was_expected(name: str, data: bytes, expected: str):
    problem = uploads.upload_problem(name, data)
    assert problem is not None and expected in problem


def test_good_uploads_pass_and_are_read_by_their_content():
    table = parquet_bytes(pd.DataFrame({"abstract": ["A paper."]}))
    assert uploads.upload_problem("papers.csv", table) is None
    assert uploads.parse_name("../../etc/papers.csv", table) == "upload.parquet"  # content wins; no user path
    assert uploads.upload_problem("seed.txt", SEED.read_bytes()) is None
    assert uploads.parse_name("/home/u/seed.TXT", b"text") == "upload.txt"
    assert uploads.parse_name("papers.exe", b"text") == "upload.txt"


@pytest.fixture(scope="module")
def find_page(seed_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """The page on the seed atlas in Chromium, on the "Find and place" tab (fails in one line without Chromium)."""
    executable = chromium_path()
    log = tmp_path_factory.mktemp("upload-log") / "server.log"
    with streamlit_server(seed_cache, log) as (url, _), sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1440, "height": 1400})
        page.add_init_script(RUN_TRACKER)
        page.set_default_timeout(120_000)  # clicks on a busy machine
        page.goto(f"{url}/?tab=Find+and+place", wait_until="domcontentloaded", timeout=120_000)
        page.get_by_text("Place new papers on this map").wait_for(timeout=90_000)
        yield page
        browser.close()


BROWSER_CASES = [
    ("huge.csv", b"abstract\n" + b"x" * (21 * 1024 * 1024), "File must be 20"),  # server.maxUploadSize, in the widget
    ("papers.csv", zipped("papers.csv", SEED.read_bytes()), "a zip archive"),
    ("binary.csv", bytes(range(256)) * 64, "binary data"),
    ("other.parquet", parquet_bytes(pd.DataFrame({"foo": [1, 2], "bar": ["a", "b"]})), "Accepted text columns"),
    ("million.csv", MILLION_SHORT, "1,000,001 lines"),
    ("wrong.csv", b"foo,bar\n1,2\n3,4\n", "Accepted text columns"),
]


@pytest.mark.parametrize(("name", "data", "expected"), BROWSER_CASES, ids=[case[0] for case in BROWSER_CASES])
def test_each_bad_file_gets_a_clear_message_in_the_browser(
    find_page, tmp_path: Path, name: str, data: bytes, expected: str
):
    page = find_page
    path = tmp_path / name
    path.write_bytes(data)
    # A file given while the script still runs for the previous case can be lost with the widget it was given to
    # (CI once waited 90 s for a message that never came): give it only once no run is under way or asked for.
    wait_until_run(page)
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(path, timeout=120_000)
    page.get_by_text(expected).first.wait_for(timeout=90_000)
    assert page.locator('[data-testid="stException"]').count() == 0
    # Remove the file for the next case and wait until the page shows neither it nor its refusal (two cases share a
    # message: the next one must not find this one's). A file the widget refused itself (over the size limit) never
    # reached the page and has no delete button; the next file replaces its message.
    delete = page.locator('[data-testid="stFileUploaderDeleteBtn"] button')
    if delete.count():
        with rerun(page):  # the removal's own run has ended
            delete.first.click()
        delete.first.wait_for(state="detached", timeout=90_000)
        page.get_by_text(expected).first.wait_for(state="detached", timeout=90_000)
