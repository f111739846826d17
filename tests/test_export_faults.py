"""Fault injection on the dashboard's exports and loads, with real processes: a browser that hangs, one that fails to
start, one that is missing, a render child killed midway, a render server that died; and a cache deleted or
replaced while the page is open (AppTest).

The fake browsers are shell scripts named by BROWSER_PATH, started by kaleido/choreographer exactly as Chromium
would be; nothing in the code under test is mocked.
"""

from __future__ import annotations

import json
import shutil
import threading
import time
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import psutil
import pytest
from streamlit.testing.v1 import AppTest

from dashboard.export import download_bytes, kaleido_images, render_process
from dashboard.figures import publication
from pipeline.runtime.parquet import read_frame

REPO = Path(__file__).resolve().parent.parent
APP = REPO / "dashboard" / "app.py"
SHORT_TIMEOUT_S = 4.0


@pytest.fixture(scope="module", autouse=True)
def render_server_ready():
    """The render server has done its imports (5-15 s once), so the short timeouts below time the job alone."""
    assert render_process.wait_until_ready(240), "the render server did not start"


def fake_browser(folder: Path, name: str, body: str) -> Path:
    """An executable shell script standing in for Chromium; it appends its pid to ``name``.pids first."""
    script = folder / name
    script.write_text(f"#!/bin/sh\necho $$ >> '{folder / (name + '.pids')}'\n{body}\n", encoding="utf-8")
    script.chmod(0o755)
    return script


@pytest.fixture
def hanging_browser(tmp_path: Path) -> Path:
    return fake_browser(tmp_path, "hanging-chromium", "exec sleep 100000")


@pytest.fixture
def failing_browser(tmp_path: Path) -> Path:
    return fake_browser(
        tmp_path, "failing-chromium", 'echo "chromium: error while loading shared libraries: libnss3.so" >&2\nexit 127'
    )


def started_pids(script: Path) -> list[int]:
    pids = script.with_name(script.name + ".pids")
    return [int(line) for line in pids.read_text().split()] if pids.exists() else []


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@pytest.fixture
def chart() -> go.Figure:
    return go.Figure(go.Bar(x=[3, 1], y=["a", "b"], orientation="h"), layout={"height": 300})


def small_view() -> publication.MapView:
    points = pd.DataFrame(
        {
            "x": [0.0, 1.0, 0.5, 4.0],
            "y": [0.0, 0.5, 1.0, 4.0],
            "colour": ["#1F77B4", "#1F77B4", "#1F77B4", "#9E9E9E"],
            "label": ["topic a", "topic a", "topic a", ""],
            "highlight": [False, True, False, False],
        }
    )
    return publication.MapView(points=points, title="Four papers", caption="4 papers of test.csv · filters: no filters")


# --- the export mechanism ---


def test_hung_browser_is_stopped_at_the_timeout_with_everything_it_started(chart, hanging_browser, monkeypatch):
    monkeypatch.setenv("BROWSER_PATH", str(hanging_browser))
    with pytest.raises(download_bytes.ExportTimedOut, match=f"not ready after {SHORT_TIMEOUT_S:.0f} s") as raised:
        download_bytes.figure_images(chart, ["png"], "PNG of the test chart", timeout_s=SHORT_TIMEOUT_S)
    assert "the browser (Chromium) did not answer" in str(raised.value)  # the cause, not "a smaller selection"
    assert "smaller selection" not in str(raised.value)
    assert started_pids(hanging_browser), "the fake browser never started"
    assert all(gone(pid) for pid in started_pids(hanging_browser)), "the hung browser outlived its job"


def test_browser_that_fails_to_start_gives_a_message(chart, failing_browser, monkeypatch):
    monkeypatch.setenv("BROWSER_PATH", str(failing_browser))
    with pytest.raises(download_bytes.ExportFailed, match="closed right after it started") as raised:
        download_bytes.figure_images(chart, ["png", "svg"], "PNG of the test chart", timeout_s=60)
    assert str(failing_browser) in str(raised.value)
    assert started_pids(failing_browser)


def test_missing_browser_says_what_to_install(chart, tmp_path, monkeypatch):
    monkeypatch.setenv("BROWSER_PATH", str(tmp_path / "no-such-chromium"))
    with pytest.raises(download_bytes.ImageExportUnavailable, match="apt-get install chromium"):
        download_bytes.figure_images(chart, ["png"], "PNG of the test chart")


def test_render_child_killed_midway_gives_a_message_and_takes_its_browser_along(chart, hanging_browser, monkeypatch):
    """As when the kernel's OOM killer picks the render job: the page hears of it as a stopped job (not as the
    timeout, which is 120 s away), and the browser the job started, orphaned by then, is killed too."""
    monkeypatch.setenv("BROWSER_PATH", str(hanging_browser))
    outcome: dict[str, BaseException] = {}

    def export_in_background() -> None:
        try:
            download_bytes.figure_images(chart, ["png"], "PNG of the test chart", timeout_s=120)
        except BaseException as error:  # noqa: BLE001 - the test inspects whatever it was
            outcome["error"] = error

    worker = threading.Thread(target=export_in_background)
    worker.start()
    deadline = time.monotonic() + 60
    while not started_pids(hanging_browser) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert started_pids(hanging_browser), "the fake browser never started"
    browser = psutil.Process(started_pids(hanging_browser)[0])
    render_child = next(
        process for process in browser.parents() if "dashboard.export.render_worker" in " ".join(process.cmdline())
    )  # the nearest: the fork, not the server
    render_child.kill()
    worker.join(60)
    assert not worker.is_alive()
    assert isinstance(outcome.get("error"), download_bytes.ExportFailed), outcome
    assert "stopped without an image" in str(outcome["error"])  # not ExportTimedOut: heard before the timeout
    psutil.wait_procs([browser], timeout=10)
    assert gone(browser.pid), "the orphaned browser was left running"


def test_render_server_that_died_is_started_again():
    for process in psutil.Process().children(recursive=True):
        if "dashboard.export.render_worker" in " ".join(process.cmdline()):
            process.kill()
            process.wait(10)
    images = download_bytes.publication_images(small_view(), ["png", "svg"], timeout_s=240)
    assert images["png"].startswith(b"\x89PNG") and b"Four papers" in images["svg"]


def test_a_renderer_error_becomes_the_message(monkeypatch):
    view = small_view()
    broken = publication.MapView(points=view.points.assign(colour="not-a-colour"), title=view.title)
    with pytest.raises(ValueError, match="#RRGGBB"):  # checked before any process starts
        download_bytes.publication_images(broken, ["png"])


# --- the page (AppTest) ---


def run_page(cache_dir: Path, monkeypatch: pytest.MonkeyPatch, **environment: str) -> AppTest:
    monkeypatch.setattr("sys.argv", ["app.py"])
    monkeypatch.setenv("ATLAS_CACHE", str(cache_dir))
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    app = AppTest.from_file(str(APP), default_timeout=240)
    app.session_state["tab"] = "Downloads"  # only the open tab runs
    return app.run()


def page_errors(app: AppTest) -> list[str]:
    assert not app.exception, [item.value for item in app.exception]
    return [item.value for item in app.error]


@pytest.fixture
def page_cache(seed_cache: Path, tmp_path: Path) -> Path:
    """A private copy of the 19-abstract seed cache, free to delete or replace."""
    copy = tmp_path / "cache"
    shutil.copytree(seed_cache, copy)
    return copy


def test_page_with_a_hung_browser_says_so_within_the_timeout(page_cache, hanging_browser, monkeypatch):
    app = run_page(
        page_cache, monkeypatch, BROWSER_PATH=str(hanging_browser), ATLAS_EXPORT_TIMEOUT_S=str(SHORT_TIMEOUT_S)
    )
    assert page_errors(app) == []
    app.button(key="map-draw").click().run()
    errors = page_errors(app)
    assert len(errors) == 1 and f"was not ready after {SHORT_TIMEOUT_S:.0f} s" in errors[0]
    assert all(gone(pid) for pid in started_pids(hanging_browser))
    app.run()  # the message stays until the view changes or the user tries again
    assert len(page_errors(app)) == 1


def test_page_with_a_failing_browser_says_so(page_cache, failing_browser, monkeypatch):
    app = run_page(page_cache, monkeypatch, BROWSER_PATH=str(failing_browser))
    app.button(key="topic-sizes-draw").click().run()
    errors = page_errors(app)
    assert len(errors) == 1 and "closed right after it started" in errors[0]


def test_page_without_a_browser_still_draws_the_publication_figure(page_cache, tmp_path, monkeypatch):
    app = run_page(page_cache, monkeypatch, BROWSER_PATH=str(tmp_path / "no-such-chromium"))
    assert any(kaleido_images.CHROMIUM_MISSING in info.value for info in app.info)
    assert app.button(key="map-draw").disabled
    app.button(key="publication-draw").click().run()
    assert page_errors(app) == []
    images = app.session_state["downloads-images"]["publication"]["images"]
    assert images["png"].startswith(b"\x89PNG") and images["pdf"].startswith(b"%PDF")
    assert [button.proto.label for button in app.get("download_button") if button.proto.label.startswith("Save")] == [
        "Save PNG",
        "Save SVG",
        "Save PDF",
    ]
    assert not app.get("radio") or all(radio.key != "publication-renderer" for radio in app.get("radio"))


def test_publication_figure_names_corpus_and_filters(page_cache, monkeypatch):
    app = run_page(page_cache, monkeypatch)
    app.text_input(key="query").set_value("language").run()
    app.button(key="publication-draw").click().run()
    assert page_errors(app) == []
    svg = app.session_state["downloads-images"]["publication"]["images"]["svg"].decode("utf-8")
    assert 'filters: search "language"' in svg and "ICLR 2025 seed" in svg  # the corpus by its name
    app.text_input(key="query").set_value("").run()  # another view: the old figure is no longer offered
    assert not [button for button in app.get("download_button") if button.proto.label.startswith("Save")]


def test_cache_deleted_while_the_page_is_open(page_cache, monkeypatch):
    app = run_page(page_cache, monkeypatch)
    assert page_errors(app) == []
    shutil.rmtree(page_cache)
    app.run()
    errors = page_errors(app)
    assert len(errors) == 1 and "cannot be opened" in errors[0]
    assert str(page_cache) in app.code[0].value  # the command that rebuilds it


def test_cache_replaced_while_the_page_is_open(page_cache, monkeypatch):
    """Another build lands in the folder (new topic ids) while a topic is chosen: the page shows the new cache."""
    from dashboard.views import map as map_tab

    app = run_page(page_cache, monkeypatch)
    chosen = app.multiselect(key="topics").options[0]
    app.multiselect(key="topics").select(chosen).run()
    assert page_errors(app) == []
    replacement = page_cache.with_name("replacement")
    shutil.copytree(page_cache, replacement)
    documents = read_frame(replacement / "documents.parquet")
    topics = read_frame(replacement / "topics.parquet")
    shift = lambda topic: topic if topic == -1 else topic + 100  # noqa: E731
    documents["topic"] = documents["topic"].map(shift)
    topics["topic"] = topics["topic"].map(shift)
    documents.to_parquet(replacement / "documents.parquet", index=False)
    topics.to_parquet(replacement / "topics.parquet", index=False)
    manifest = json.loads((replacement / "manifest.json").read_text())
    manifest["created_at"] = "2099-01-01T00:00:00+00:00"
    (replacement / "manifest.json").write_text(json.dumps(manifest))
    shutil.rmtree(page_cache)
    replacement.rename(page_cache)
    app.session_state["tab"] = "Map and papers"  # where the papers table is
    app.session_state[map_tab.SHOWN_KEY] = True  # sent once the map has drawn: what the browser's map then says
    app.run()
    assert page_errors(app) == []
    assert "built 2099-01-01" in app.caption[0].value.replace("\\", "")  # Markdown-escaped
    table = next(frame.value for frame in app.dataframe if "doc_id" in frame.value.columns)
    assert len(table) > 0 and set(table["topic"]) <= set(documents["topic"])
