"""What bench/load.py's many-users run changed in the page (issue 21): the long-lived heap frozen out of the full
garbage collections, and the Downloads tab's map built only when downloaded.
On the seed cache (19 abstracts), through AppTest: the real page, its real caches and Streamlit's media manager."""

from __future__ import annotations

import gc
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dashboard.state import heap

APP = Path(__file__).resolve().parent.parent / "dashboard" / "app.py"


@pytest.fixture
def thawed() -> Iterator[None]:
    """Whatever a test freezes is unfrozen after it, so the worker's later tests see a normal collector."""
    yield
    gc.unfreeze()


class Cycle:
    """An object in a reference cycle with itself: only the cycle collector frees it."""

    def __init__(self) -> None:
        self.me = self


def test_frozen_heap_is_skipped_but_new_cycles_are_still_collected(thawed) -> None:
    kept = [Cycle() for _ in range(1000)]  # alive at the freeze: frozen, never visited again
    frozen = heap.freeze_long_lived()
    # A frozen object freed by reference counting leaves the count (CI: 2 of 931,485 between the two reads; another
    # thread of the worker may free them), so the count is compared within a small margin.
    assert frozen >= 1000 and frozen - 100 <= gc.get_freeze_count() <= frozen
    tracked_after = len(gc.get_objects())
    assert tracked_after < frozen  # a full collection now visits only what was made since
    garbage = Cycle()
    probe = [garbage]
    del garbage
    probe.clear()
    assert gc.collect() >= 1  # a run's own cyclic garbage is still freed by the next full collection
    assert len(kept) == 1000


def test_downloads_map_is_made_when_its_html_is_fetched(
    seed_cache, tmp_path, monkeypatch, deferred_downloads, thawed
) -> None:
    # A copy in a folder of its own: the page reads it afresh (another test of this worker may have read the seed
    # cache already, and the cache read is what freezes).
    cache = tmp_path / "cache"
    shutil.copytree(seed_cache, cache)
    monkeypatch.setenv("ATLAS_CACHE", str(cache))
    app = AppTest.from_file(str(APP), default_timeout=120).run()
    app.session_state["tab"] = "Downloads"
    app.run()
    assert not app.exception, [item.value for item in app.exception]
    assert any("Topic map" in item.value for item in app.markdown)
    make_html = deferred_downloads.get("topic-atlas-map.html")
    assert make_html is not None, sorted(name for name in deferred_downloads if name)
    html_page = make_html().decode("utf-8")  # outside the script run, as Streamlit serves a deferred file
    assert "<title>Topic Atlas: Topic map</title>" in html_page and "scattergl" in html_page
    assert gc.get_freeze_count() > 0  # the cache read froze the page's imports and tables


def test_the_served_page_runs_no_full_collection_after_every_run() -> None:
    # The repository's .streamlit/config.toml, as `streamlit run` from the repository root reads it: Streamlit's
    # gc.collect(2) after each run of each session was 5-20 ms of a 50-90 ms run (dashboard/state/heap.py).
    from streamlit import config

    assert config.get_option("runner.postScriptGC") is False
    assert config.get_option("server.fileWatcherType") == "none"
