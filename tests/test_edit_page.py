"""The page's "Edit topics" panel (dashboard.views.edit): merge and undo through streamlit.testing (AppTest), and one
merge in headless Chromium, on copies of the session's real 300-paper cache (tests/conftest.py)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from playwright.sync_api import sync_playwright
from streamlit.testing.v1 import AppTest

from pipeline import cache
from pipeline.operations.edit_log import read_log
from tests.streamlit_server import RUN_TRACKER, rerun, streamlit_server, wait_until_run

# pick_option: how often a select's list is opened, and how long each time for its option to show.
OPEN_TRIES = 3
OPTION_TIMEOUT_MS = 30_000

APP = Path(__file__).resolve().parent.parent / "dashboard" / "app.py"


@pytest.fixture
def atlas(slice_cache: Path, tmp_path: Path) -> Path:
    """A copy of the 300-paper cache that the test may edit."""
    target = tmp_path / "atlas"
    shutil.copytree(slice_cache, target)
    return target


def two_largest(folder: Path) -> list[int]:
    counts = cache.read_cache(folder).documents["topic"].value_counts()
    return [int(topic) for topic in counts.index if int(topic) >= 0][:2]


def test_merge_then_undo_from_the_page(atlas: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("ATLAS_MAP_RENDERER", "plotly")
    monkeypatch.setenv("ATLAS_CACHE", str(atlas))
    original = (atlas / cache.DOCUMENTS_FILE).read_bytes()
    first, second = two_largest(atlas)
    app = AppTest.from_file(str(APP), default_timeout=120).run()
    assert not app.exception
    app.multiselect(key="topics").set_value([second]).run()  # a filter on a topic the merge removes
    app.multiselect(key="edit_merge").set_value([first, second]).run()
    app.button(key="edit_merge_go").click().run()
    assert not app.exception and not app.error, [element.value for element in app.error]
    assert any(f"Edit 1: merged topics {min(first, second)}" in element.value for element in app.success)
    assert second not in set(cache.read_cache(atlas).documents["topic"])
    assert app.multiselect(key="topics").value == []  # the removed topic left the filter
    assert not [option for option in app.multiselect(key="edit_merge").options if option.startswith(f"{second} ·")]
    assert [entry["op"] for entry in read_log(atlas)] == ["merge"]

    app.selectbox(key="edit_action").set_value("Undo").run()
    app.button(key="edit_undo_go").click().run()
    assert not app.exception and not app.error
    assert any("undid edit 1" in element.value for element in app.success)
    assert (atlas / cache.DOCUMENTS_FILE).read_bytes() == original
    log = next(frame.value for frame in app.dataframe if "undone" in frame.value.columns)
    assert log["edit"].tolist() == [2, 1] and log["undone"].tolist() == [False, True]


def test_a_refused_edit_shows_one_line(atlas: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("ATLAS_MAP_RENDERER", "plotly")
    monkeypatch.setenv("ATLAS_CACHE", str(atlas))
    app = AppTest.from_file(str(APP), default_timeout=120).run()
    app.selectbox(key="edit_action").set_value("Split a topic").run()
    smallest = int(cache.read_cache(atlas).topics.query("topic >= 0").sort_values("size")["topic"].iloc[0])
    size = int(cache.read_cache(atlas).topics.set_index("topic").loc[smallest, "size"])
    app.selectbox(key="edit_split_topic").set_value(smallest).run()
    app.number_input(key="edit_split_k").set_value(min(size + 1, 50)).run()
    app.button(key="edit_split_go").click().run()
    assert not app.exception
    if size + 1 <= 50:
        assert [element.value for element in app.error] == [
            f"topic {smallest} has {size} papers; it cannot be split into {size + 1}"
        ]
    assert not (atlas / "edits.jsonl").exists()


@pytest.mark.browser  # tests/conftest.py marks whole browser files; this file's other tests use AppTest
def test_a_merge_and_its_undo_in_a_real_browser(atlas: Path, tmp_path: Path, chromium: str):
    first, second = two_largest(atlas)
    with (
        streamlit_server(atlas, tmp_path / "server.log", {"ATLAS_MAP_RENDERER": "plotly"}) as (url, _),
        sync_playwright() as playwright,
    ):
        browser, page = open_page(playwright, chromium, url)
        sidebar = page.locator('[data-testid="stSidebar"]')
        sidebar.get_by_text("Edit topics").click()  # an expander opens in the browser, without a run
        merge = sidebar.locator(".st-key-edit_merge")
        for topic in (first, second):
            with rerun(page):
                # by its id: a long label is cut in the list ("... neural netw…" on another CPU's atlas)
                pick_option(page, merge, re.compile(rf"^{topic} · "), f"{topic} · ")
            sidebar.get_by_text("Topics to merge").click()  # closes the list, which covers the button
            page.get_by_role("listbox").wait_for(state="detached")
        sidebar.locator(".st-key-edit_merge_go button").click()
        page.get_by_text("Edit 1: merged topics").wait_for(timeout=120_000)
        assert page.locator('[data-testid="stException"]').count() == 0
        page.screenshot(path=str(tmp_path / "edited.png"))
        assert second not in set(cache.read_cache(atlas).documents["topic"])
        with rerun(page):  # the edit's own run has ended; then the undo
            sidebar.locator(".st-key-edit_action").get_by_role("combobox").click()
            page.get_by_role("option", name="Undo").click()
        sidebar.locator(".st-key-edit_undo_go button").click()
        page.get_by_text("Edit 2: undid edit 1").wait_for(timeout=120_000)
        assert page.locator('[data-testid="stException"]').count() == 0
        if os.environ.get("ATLAS_SHOTS_DIR"):  # the edited map, to look at
            Path(os.environ["ATLAS_SHOTS_DIR"]).mkdir(parents=True, exist_ok=True)
            shutil.copy(tmp_path / "edited.png", Path(os.environ["ATLAS_SHOTS_DIR"]) / "edit-merge-slice300.png")
        browser.close()
    assert second in set(cache.read_cache(atlas).documents["topic"])


def test_the_filtered_papers_move_to_a_topic(atlas: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("ATLAS_MAP_RENDERER", "plotly")
    monkeypatch.setenv("ATLAS_CACHE", str(atlas))
    target = two_largest(atlas)[0]
    app = AppTest.from_file(str(APP), default_timeout=120).run()
    app.text_input(key="query").set_value("diffusion").run()
    app.selectbox(key="edit_action").set_value("Move papers").run()
    caption = next(element.value for element in app.caption if "matching the filters" in element.value)
    app.selectbox(key="edit_move_to").set_value(target).run()
    app.button(key="edit_move_go").click().run()
    assert not app.exception and not app.error, [element.value for element in app.error]
    moved = read_log(atlas)[-1]["params"]["ids"]
    documents = cache.read_cache(atlas).documents.set_index("doc_id")
    texts = (documents["title"].fillna("") + " " + documents["abstract"].fillna("")).str.lower()
    assert moved and all("diffus" in texts[doc_id] for doc_id in moved)
    assert set(documents.loc[moved, "topic"]) == {target}
    assert int(caption.split()[0].replace(",", "")) >= len(moved)  # the ones already there stay


def pick_option(page, field, name: re.Pattern[str], typed: str) -> None:
    """Open the list of the select ``field`` (a locator holding its input), type ``typed`` to narrow it, and click the
    first option whose name matches ``name``. The list is opened again, at most OPEN_TRIES times, when its option
    never shows: on a busy machine a page still settling has closed the list under the click (a sweep run under
    load once waited the whole default timeout for it)."""
    for attempt in range(OPEN_TRIES):
        field.locator("input").click()
        page.keyboard.type(typed)
        try:
            page.get_by_role("option", name=name).first.click(timeout=OPTION_TIMEOUT_MS)
            return
        except PlaywrightTimeoutError:
            if attempt == OPEN_TRIES - 1:
                raise
            page.keyboard.press("Escape")
            field.locator("input").fill("")


def open_page(playwright, chromium: str, url: str):
    """(Chromium, a 1440x1400 page of the dashboard at ``url`` once its first run has ended)."""
    browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
    page = browser.new_page(viewport={"width": 1440, "height": 1400})
    page.set_default_timeout(120_000)
    page.add_init_script(RUN_TRACKER)
    page.goto(url, wait_until="domcontentloaded", timeout=120_000)
    wait_until_run(page)
    return browser, page


def choose_action(page, sidebar, action: str) -> None:
    """Pick ``action`` in the panel's "Edit" list (a run). As in :func:`pick_option`, the list is opened again, at
    most OPEN_TRIES times, when its option cannot be clicked: in a CI run the option was detached from the page again
    and again for the whole default timeout while the page settled."""
    with rerun(page):
        for attempt in range(OPEN_TRIES):
            sidebar.locator(".st-key-edit_action").get_by_role("combobox").click()
            try:
                page.get_by_role("option", name=action, exact=True).click(timeout=OPTION_TIMEOUT_MS)
                return
            except PlaywrightTimeoutError:
                if attempt == OPEN_TRIES - 1:
                    raise
                page.keyboard.press("Escape")


def press(page, sidebar, key: str, edit: int) -> None:
    """Press the panel's button ``key`` and wait for the message of edit number ``edit``, with no exception."""
    sidebar.locator(f".st-key-{key} button").click()
    page.get_by_text(f"Edit {edit}:").wait_for(timeout=120_000)
    wait_until_run(page)
    assert page.locator('[data-testid="stException"]').count() == 0


@pytest.mark.browser
def test_split_delete_move_and_rename_in_a_real_browser(atlas: Path, tmp_path: Path, chromium: str):
    """Each edit the panel offers beside merge and undo, made by clicking in Chromium, each logged in turn."""
    query = "diffusion"
    with (
        streamlit_server(atlas, tmp_path / "server.log", {"ATLAS_MAP_RENDERER": "plotly"}) as (url, _),
        sync_playwright() as playwright,
    ):
        browser, page = open_page(playwright, chromium, url)
        sidebar = page.locator('[data-testid="stSidebar"]')
        sidebar.get_by_text("Edit topics").click()
        choose_action(page, sidebar, "Split a topic")
        press(page, sidebar, "edit_split_go", 1)
        choose_action(page, sidebar, "Delete a topic")
        press(page, sidebar, "edit_delete_go", 2)
        with rerun(page):  # the papers to move: those a search finds
            search = sidebar.locator(".st-key-query input")
            search.fill(query)
            search.press("Enter")
        choose_action(page, sidebar, "Move papers")
        press(page, sidebar, "edit_move_go", 3)
        choose_action(page, sidebar, "Rename")
        with rerun(page):
            label = sidebar.locator(".st-key-edit_rename_label input")
            label.fill("A topic of my own")
            label.press("Enter")
        press(page, sidebar, "edit_rename_go", 4)
        browser.close()
    assert [entry["op"] for entry in read_log(atlas)] == ["split", "delete", "move", "rename"]
    assert "A topic of my own" in set(cache.read_cache(atlas).topics["label"])


@pytest.mark.browser
def test_the_selection_panel_in_a_real_browser(atlas: Path, tmp_path: Path, chromium: str):
    """A search narrows the papers; the panel summarises them and its BibTeX downloads (dashboard.views.selection)."""
    with (
        streamlit_server(atlas, tmp_path / "server.log", {"ATLAS_MAP_RENDERER": "plotly"}) as (url, _),
        sync_playwright() as playwright,
    ):
        browser, page = open_page(playwright, chromium, url)
        with rerun(page):
            search = page.locator('[data-testid="stSidebar"] .st-key-query input')
            search.fill("language")
            search.press("Enter")
        with rerun(page):
            page.get_by_text("What the papers shown hold").click()
        page.get_by_text("Phrases that set it apart").wait_for(timeout=120_000)
        assert page.locator('[data-testid="stException"]').count() == 0
        with page.expect_download() as download:
            page.locator(".st-key-selection-bibtex-one button").click()
        text = Path(download.value.path()).read_text(encoding="utf-8")
        assert text.startswith("@article{atlas:") and text.count("@article{") >= 2
        page.screenshot(path=str(tmp_path / "selection.png"), full_page=True)
        if os.environ.get("ATLAS_SHOTS_DIR"):  # the panel, to look at
            Path(os.environ["ATLAS_SHOTS_DIR"]).mkdir(parents=True, exist_ok=True)
            shutil.copy(tmp_path / "selection.png", Path(os.environ["ATLAS_SHOTS_DIR"]) / "selection-slice300.png")
        browser.close()
