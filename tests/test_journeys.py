"""A paper's journey (pipeline.journeys.links, the build's journeys stage, dashboard.tables.journeys and the page's
journey, collection filter, venue/year colours and highlighted year) on a real three-collection build: slices of
ICLR 2024, ICLR 2025 and ICML 2025 from ../shared/data with known pairs of the same work and of different work."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dashboard.tables import journeys as journey_tables
from pipeline.cache import JOURNEY_COLUMNS, JOURNEYS_FILE, read_cache
from pipeline.journeys.links import (
    FOUND_ABSTRACT,
    FOUND_BOTH,
    FOUND_TITLE,
    best_in_each_collection,
    collection_order,
    cross_collection_best,
    journey_links,
    title_key,
)
from pipeline.runtime.parquet import read_frame
from tests.conftest import ICLR2024, ICLR2025, ICML2025, needs_shared

# Hand-checked in docs/decisions/journeys-sample.csv: an ICLR 2025 reject published at ICML 2025 under a new title
# ("Toward Escaping Model Collapse..." -> "GMAIL: ..."), one resubmitted under its own title, and two papers of one
# group that are different work ("Spherical Tree-Sliced Wasserstein Distance" / "... with Nonlinear Projection").
RENAMED = ("mNkPAY3kvk", "u6xeKVHS6K")
SAME_TITLE = ("rwAEQWEqkX", "sGQEOXlezg")
DIFFERENT = ("FPQzXME9NK", "SwXYV7CIw9")


@pytest.fixture(scope="module")
def journeys_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A build of 40 ICLR 2024, 83 ICLR 2025 and 63 ICML 2025 papers (the pairs above among them)."""
    from pipeline.ingest.collections import read_collection_file
    from pipeline.operations.build import run_build

    for path in (ICLR2024, ICLR2025, ICML2025):
        needs_shared(path)
    folder = tmp_path_factory.mktemp("journeys")
    slices = {
        "iclr2024": read_frame(ICLR2024).head(40),
        "iclr2025": _with(read_frame(ICLR2025), [RENAMED[0], SAME_TITLE[0], DIFFERENT[0]], 80),
        "icml2025": _with(read_frame(ICML2025), [RENAMED[1], SAME_TITLE[1], DIFFERENT[1]], 60),
    }
    text = ""
    for name, frame in slices.items():
        frame.to_parquet(folder / f"{name}.parquet")
        venue, year = ("ICLR" if name.startswith("iclr") else "ICML"), int(name[-4:])
        text += f'[[collection]]\nname = "{venue} {year}"\nvenue = "{venue}"\nyear = {year}\npath = "{name}.parquet"\n'
    (folder / "atlas.toml").write_text(text, encoding="utf-8")
    target = folder / "cache"
    source = folder / "atlas.toml"
    run_build(source, target, embedding_store=None, collections=read_collection_file(source), align=False)
    return target


def _with(frame: pd.DataFrame, ids: list[str], n: int) -> pd.DataFrame:
    """The first ``n`` rows of ``frame`` and the rows of ``ids``."""
    chosen = frame["openreview_id"].isin(ids)
    return pd.concat([frame[~chosen].head(n), frame[chosen]], ignore_index=True)


def _pair(links: pd.DataFrame, pair: tuple[str, str]) -> pd.DataFrame:
    return links[(links["doc_id"] == pair[0]) & (links["other_id"] == pair[1])]


def test_title_key_and_the_order_of_collections_in_time() -> None:
    assert title_key("Graph Transformers: A Survey!") == title_key("graph transformers - a survey")
    assert title_key("Abstract") == "" and title_key(None) == ""
    entries = [
        {"name": "NeurIPS 2025", "venue": "NeurIPS", "year": 2025},
        {"name": "ICLR 2026", "venue": "ICLR", "year": 2026},
        {"name": "ICML 2025", "venue": "ICML", "year": 2025},
        {"name": "ICLR 2025", "venue": "ICLR", "year": 2025},
    ]
    order = collection_order(entries)
    assert sorted(order, key=order.__getitem__) == ["ICLR 2025", "ICML 2025", "NeurIPS 2025", "ICLR 2026"]


def test_best_neighbour_per_other_collection_skips_the_own_collection() -> None:
    indices = np.array([[0, 1, 2, 3], [1, 0, 3, 2], [2, 3, 0, 1], [3, 2, 1, 0]])
    similarities = np.array([[1, 0.9, 0.8, 0.7]] * 4, dtype=np.float32)
    rows, others, scores = best_in_each_collection(indices, similarities, np.array([0, 0, 1, 2]))
    found = {(int(row), int(other)): float(score) for row, other, score in zip(rows, others, scores)}
    assert found[(0, 2)] == pytest.approx(0.8) and found[(0, 3)] == pytest.approx(0.7)  # one per other collection
    assert (0, 1) not in found and (1, 0) not in found  # the same collection
    assert found[(2, 3)] == pytest.approx(0.9)


def test_small_build_links_by_title_only_and_the_threshold_links_by_abstract(journeys_cache: Path) -> None:
    """190 papers give 32-dimensional vectors, where different papers of one topic reach 0.98: the build links by
    titles only there (journey_min_dims); the same links by abstract, asked for at this scale's own similarities,
    take the renamed resubmission and leave the different work."""
    atlas = read_cache(journeys_cache)
    links = atlas.journeys
    assert list(links.columns) == JOURNEY_COLUMNS
    assert _pair(links, SAME_TITLE)[["same_title", "collection", "other_collection"]].values.tolist() == [
        [True, "ICLR 2025", "ICML 2025"]
    ]
    assert _pair(links, RENAMED).empty and _pair(links, DIFFERENT).empty  # another title: not by title
    assert set(links["found_by"]) <= {FOUND_BOTH, FOUND_TITLE}
    summary = atlas.manifest["journeys"]
    assert summary["n_links"] == len(links) and summary["candidates"].startswith("titles only (32 dimensions")
    documents, embeddings = atlas.documents, atlas.embeddings()
    row = {doc_id: position for position, doc_id in enumerate(documents["doc_id"])}
    similarity = {pair: float(embeddings[row[pair[0]]] @ embeddings[row[pair[1]]]) for pair in (RENAMED, DIFFERENT)}
    threshold = (similarity[RENAMED] + similarity[DIFFERENT]) / 2  # between them: the test can fail either way
    codes, _ = pd.factorize(documents["collection"])
    candidates = cross_collection_best(embeddings, codes)
    by_abstract = journey_links(
        documents, embeddings, candidates, threshold, collection_order(atlas.manifest["collections"])
    )
    renamed = _pair(by_abstract, RENAMED)
    assert len(renamed) == 1 and renamed["found_by"].iloc[0] == FOUND_ABSTRACT and not renamed["same_title"].iloc[0]
    assert _pair(by_abstract, DIFFERENT).empty and _pair(by_abstract, DIFFERENT[::-1]).empty
    assert set(by_abstract["doc_id"]) | set(by_abstract["other_id"]) <= set(documents["doc_id"])
    assert (by_abstract["collection"] != by_abstract["other_collection"]).all()


def test_a_cache_without_journeys_reads_an_empty_table(journeys_cache: Path, tmp_path: Path) -> None:
    copy = tmp_path / "cache"
    shutil.copytree(journeys_cache, copy)
    (copy / JOURNEYS_FILE).unlink()
    links = read_cache(copy).journeys
    assert links.empty and list(links.columns) == JOURNEY_COLUMNS


def test_journey_line_rejects_found_again_and_the_export(journeys_cache: Path) -> None:
    atlas = read_cache(journeys_cache)
    order = journey_tables.order_of(atlas.manifest, atlas.documents)
    steps = journey_tables.journey_steps(SAME_TITLE[1], atlas.journeys, atlas.documents, order)
    assert steps["doc_id"].tolist() == list(SAME_TITLE)  # time order, whichever paper was chosen
    assert journey_tables.journey_line(steps) == "ICLR 2025: Reject → ICML 2025"
    assert journey_tables.journey_steps(RENAMED[0], atlas.journeys, atlas.documents, order).empty
    rejects = journey_tables.rejects_found_again(atlas.documents, atlas.journeys, "topic", "ICLR 2025", ["ICML 2025"])
    reject_ids = atlas.documents.query("collection == 'ICLR 2025' and decision == 'Reject'")["doc_id"]
    assert rejects["rejects"].sum() == len(reject_ids)
    found = set(atlas.journeys.loc[atlas.journeys["doc_id"].isin(reject_ids), "doc_id"])
    assert rejects["found_again"].sum() == len(found) >= 1 and SAME_TITLE[0] in found
    export = journey_tables.links_export(atlas.journeys, atlas.documents)
    assert list(export.columns) == journey_tables.EXPORT_COLUMNS and len(export) == len(atlas.journeys)
    row = export[export["doc_id"] == SAME_TITLE[0]].iloc[0]
    assert row["decision"] == "Reject" and row["other_title"] == "Contrastive Localized Language-Image Pre-Training"


def test_page_shows_the_journey_filters_collections_and_colours_by_year(
    journeys_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from streamlit.testing.v1 import AppTest

    from tests.test_app import APP, map_spec, no_failure

    monkeypatch.setenv("ATLAS_CACHE", str(journeys_cache))
    monkeypatch.setenv("ATLAS_MAP_RENDERER", "plotly")
    app = AppTest.from_file(str(APP), default_timeout=120)
    app.query_params["paper"] = SAME_TITLE[0]
    app.run()
    no_failure(app)
    paper_text = [element.value for element in app.text]  # the paper's drawer (a dialog)
    assert "ICLR 2025: Reject → ICML 2025" in paper_text
    assert app.selectbox(key="colour").options[-2:] == ["Venue", "Year"]
    app.multiselect(key="collections").set_value(["ICML 2025"]).run()
    no_failure(app)
    n_icml = int((read_cache(journeys_cache).documents["collection"] == "ICML 2025").sum())
    assert any(f"{n_icml:,} matching the filters" in caption.value for caption in app.caption)
    assert app.query_params["collection"] == "ICML 2025"
    app.multiselect(key="collections").set_value([])
    app.selectbox(key="colour").set_value("year")
    app.selectbox(key="highlight_year").set_value(2024).run()
    no_failure(app)
    names = [str(trace.get("name", "")) for trace in map_spec(app)["data"]]
    assert any(name.startswith("2024") for name in names) and any(name.startswith("Other years") for name in names)
    assert not any(name.startswith("2025") for name in names)  # 2025 is grey with the other years
    assert app.query_params["highlight"] == "2024" and app.query_params["colour"] == "year"
    app.session_state["tab"] = "Venues"
    app.run()
    no_failure(app)
    assert any("rejects are found again" in caption.value for caption in app.caption)


def test_a_copy_under_another_title_is_a_journey_at_any_dimension() -> None:
    """Two papers that ``same_text_ids`` links (the same abstract in two collections) are one work whatever their
    titles, also where the build links by titles only (no near-neighbour candidates): found by their abstract."""
    documents = pd.DataFrame(
        {
            "doc_id": ["a", "b", "c"],
            "title": ["Edge attention for graph learning", "Attention on the edges of graphs", "Tables and trees"],
            "collection": ["ICLR 2025", "ICML 2025", "ICML 2025"],
            "same_text_ids": [["b"], ["a"], []],
        }
    )
    embeddings = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    empty = np.zeros(0, np.int64)
    order = {"ICLR 2025": 0, "ICML 2025": 1}
    links = journey_links(documents, embeddings, (empty, empty, np.zeros(0)), 0.9, order)
    assert links[["doc_id", "other_id", "found_by", "same_title"]].values.tolist() == [
        ["a", "b", FOUND_ABSTRACT, False]
    ]
    assert journey_links(
        documents.drop(columns="same_text_ids"), embeddings, (empty, empty, np.zeros(0)), 0.9, order
    ).empty
