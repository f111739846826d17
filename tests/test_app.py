"""The Streamlit page through streamlit.testing (AppTest), on small caches built by the real pipeline.

Builds, once for the module: a 120-paper slice of the ICLR 2025 corpus (one title is an HTML/Markdown
injection) and the 24-abstract all-outlier case. Each build pays UMAP's numba compilation once per process.
"""

from __future__ import annotations

import io
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.testing.v1 import AppTest

from pipeline.build import run_build
from pipeline.config import BuildConfig

REPO = Path(__file__).resolve().parent.parent
APP = REPO / "dashboard" / "app.py"
ICLR_PAPERS = REPO.parent / "shared" / "data" / "iclr2025" / "papers.parquet"
ALL_OUTLIERS = REPO.parent / "shared" / "cases" / "02-all-outliers" / "abstracts.jsonl"
INJECTION_TITLE = "<script>alert(1)</script> <b>bold</b> **md** $x$"
SLICE_ROWS = 120


def embedding_store(tmp_dir: Path) -> Path:
    """The shared embedding cache named by $ATLAS_EMBEDDING_CACHE, else a fresh file under ``tmp_dir``."""
    configured = os.environ.get("ATLAS_EMBEDDING_CACHE")
    return Path(configured) if configured else tmp_dir / "embeddings.sqlite"


@pytest.fixture(scope="module")
def caches(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """{"iclr": 120-paper cache with an injection title, "outliers": all-outlier cache}, built once for the module."""
    if not ICLR_PAPERS.is_file() or not ALL_OUTLIERS.is_file():
        pytest.skip(f"test corpora missing: {ICLR_PAPERS} or {ALL_OUTLIERS}")
    root = tmp_path_factory.mktemp("app-caches")
    store = embedding_store(root)
    papers = pd.read_parquet(ICLR_PAPERS).head(SLICE_ROWS).copy()
    papers.loc[papers.index[0], "title"] = INJECTION_TITLE
    sliced = root / "papers-120.parquet"
    papers.to_parquet(sliced, index=False)
    run_build(sliced, root / "iclr", embedding_store=store)
    run_build(ALL_OUTLIERS, root / "outliers", replace(BuildConfig(), min_cluster_size=15), embedding_store=store)
    return {"iclr": root / "iclr", "outliers": root / "outliers"}


def run_app(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv("ATLAS_CACHE", str(cache_dir))
    app = AppTest.from_file(str(APP), default_timeout=60)
    return app.run()


def papers_table(app: AppTest) -> pd.DataFrame:
    """The drill-down table: the only dataframe with a doc_id column."""
    for frame in app.dataframe:
        if "doc_id" in frame.value.columns:
            return frame.value
    raise AssertionError("no papers table on the page")


def papers_table_key(app: AppTest) -> str:
    for frame in app.dataframe:
        if "doc_id" in frame.value.columns:
            return frame.key
    raise AssertionError("no papers table on the page")


def no_failure(app: AppTest) -> None:
    assert not app.exception, [item.value for item in app.exception]
    assert not app.error, [item.value for item in app.error]


def test_page_renders_the_corpus(caches, monkeypatch):
    app = run_app(caches["iclr"], monkeypatch)
    no_failure(app)
    assert app.title[0].value == "Topic Atlas"
    assert [metric.label for metric in app.metric][:3] == ["Papers", "Topics", "Outliers"]
    assert app.metric[0].value == str(SLICE_ROWS)
    assert len(papers_table(app)) == SLICE_ROWS
    assert app.multiselect(key="decisions").options  # the slice has decisions
    assert not app.warning  # topics were found


def test_choosing_a_topic_narrows_the_table(caches, monkeypatch):
    app = run_app(caches["iclr"], monkeypatch)
    table = papers_table(app)
    counts = table["topic"].value_counts()
    topic = int(counts.index[0])
    assert counts.iloc[0] < SLICE_ROWS, "the slice should have more than one topic"
    app.multiselect(key="topics").set_value([topic]).run()
    no_failure(app)
    narrowed = papers_table(app)
    assert len(narrowed) == counts.iloc[0]
    assert set(narrowed["topic"]) == {topic}


def test_text_search_narrows_case_insensitively(caches, monkeypatch):
    app = run_app(caches["iclr"], monkeypatch)
    app.text_input(key="query").set_value("DIFFUSION").run()
    no_failure(app)
    found = papers_table(app)
    assert 0 < len(found) < SLICE_ROWS
    app.text_input(key="query").set_value("no paper has this phrase zqx").run()
    no_failure(app)
    assert papers_table(app).empty


def test_decision_filter(caches, monkeypatch):
    app = run_app(caches["iclr"], monkeypatch)
    app.multiselect(key="decisions").set_value(["Oral"]).run()
    no_failure(app)
    table = papers_table(app)
    assert len(table) < SLICE_ROWS and set(table["decision"]) <= {"Oral"}


def test_injection_title_shows_as_text(caches, monkeypatch):
    app = run_app(caches["iclr"], monkeypatch)
    app.text_input(key="query").set_value("alert(1)").run()
    table = papers_table(app)
    assert table["title"].tolist() == [INJECTION_TITLE]  # dataframe cells are text
    app.session_state[papers_table_key(app)] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    app.run()
    no_failure(app)
    texts = [element.value for element in app.text]
    assert INJECTION_TITLE in texts  # shown with st.text: not HTML, not Markdown, not math
    assert not any("<script>" in element.value for element in app.markdown)


def test_missing_cache_shows_the_problem_and_the_rebuild_command(tmp_path, monkeypatch):
    missing = tmp_path / "no-such-cache"
    app = run_app(missing, monkeypatch)
    assert not app.exception
    assert "no cache folder here" in app.error[0].value
    assert "python -m pipeline build --input PATH --cache" in app.code[0].value
    assert str(missing) in app.code[0].value
    assert not app.dataframe  # the page stopped


def test_command_line_cache_wins_over_the_environment(caches, tmp_path, monkeypatch):
    monkeypatch.setenv("ATLAS_CACHE", str(tmp_path / "elsewhere"))
    monkeypatch.setattr("sys.argv", ["app.py", "--cache", str(caches["outliers"])])
    app = AppTest.from_file(str(APP), default_timeout=60).run()
    no_failure(app)
    assert app.metric[0].value == "24"


@pytest.fixture
def deferred_downloads(monkeypatch: pytest.MonkeyPatch) -> dict[str, Callable[[], bytes]]:
    """Records the callables the page registers for st.download_button(data=callable), by file name."""
    registered: dict[str, Callable[[], bytes]] = {}
    original = MediaFileManager.add_deferred

    def recording(self, data_callable, mimetype, coordinates, file_name=None, **kwargs):
        registered[file_name] = data_callable
        return original(self, data_callable, mimetype, coordinates, file_name=file_name, **kwargs)

    monkeypatch.setattr(MediaFileManager, "add_deferred", recording)
    return registered


def test_all_outlier_cache_says_no_topics_and_exports_outliers(caches, monkeypatch, deferred_downloads):
    app = run_app(caches["outliers"], monkeypatch)
    no_failure(app)
    assert any("No topics were found" in warning.value for warning in app.warning)
    assert app.metric[1].value == "0"
    csv_makers = [make for name, make in deferred_downloads.items() if name and name.endswith(".csv")]
    assert len(csv_makers) == 1
    exported = pd.read_csv(io.BytesIO(csv_makers[0]()))
    assert len(exported) == 24
    assert set(exported["topic"]) == {-1}
    assert set(exported["topic_label"]) == {"Outliers"}


def test_reruns_reuse_the_loaded_cache(caches, monkeypatch):
    app = run_app(caches["iclr"], monkeypatch)
    started = time.perf_counter()
    app.run()
    assert time.perf_counter() - started < 5
    no_failure(app)


@pytest.fixture(autouse=True)
def _quiet_argv(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The page reads --cache from sys.argv; pytest's own arguments must not leak into it."""
    monkeypatch.setattr("sys.argv", ["app.py"])
    yield
