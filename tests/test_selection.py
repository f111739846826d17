"""What a selection holds (dashboard/tables/selection.py, dashboard/views/selection.py): the phrases that set it
apart, its mix against the atlas's with intervals, representative papers, BibTeX, and two selections side by side
on the page (issue 41)."""

from __future__ import annotations

from pathlib import Path

import bibtexparser
import numpy as np
import pandas as pd
import pytest

from dashboard.tables import selection
from pipeline.cache import read_cache


def corpus() -> pd.DataFrame:
    """40 papers on graph neural networks for molecules and 60 on reinforcement learning for robots."""
    graph = [
        {"title": f"Graph neural networks for molecules {i}", "abstract": "Message passing over molecular graphs."}
        for i in range(40)
    ]
    robots = [
        {"title": f"Reinforcement learning for robot control {i}", "abstract": "A policy learns to grasp objects."}
        for i in range(60)
    ]
    frame = pd.DataFrame(graph + robots)
    frame["doc_id"] = [f"p{i}" for i in range(len(frame))]
    frame["year"] = [2024 if i % 2 else 2025 for i in range(len(frame))]
    frame["theme"] = [0] * 40 + [1] * 60
    return frame


def test_the_phrases_that_set_a_selection_apart_are_its_own() -> None:
    papers = corpus()
    found = selection.distinguishing_phrases(papers.head(40), papers.tail(60))
    assert found["phrase"].iloc[0] in {"graph neural", "neural networks", "molecules", "message passing", "graph"}
    assert not found["phrase"].str.contains("robot|policy|reinforcement").any()
    assert (found["papers"] >= 2).all() and (found["papers"] <= 40).all()
    # a word inside a chosen phrase is not listed again
    for first in found["phrase"]:
        assert not any(first != other and f" {first} " in f" {other} " for other in found["phrase"])


def test_a_selections_mix_counts_every_paper_with_intervals_and_lift() -> None:
    papers = corpus()
    chosen = papers.iloc[30:50]  # 10 graph papers, 10 robot papers
    table = selection.mix(chosen, papers, "theme", {0: "Graphs", 1: "Robots"})
    assert table["papers"].sum() == 20 and set(table["value"]) == {"Graphs", "Robots"}
    assert (table["share_low"] <= table["share"]).all() and (table["share"] <= table["share_high"]).all()
    graphs = table.set_index("value").loc["Graphs"]
    assert graphs["share"] == pytest.approx(0.5) and graphs["atlas_share"] == pytest.approx(0.4)
    assert graphs["lift"] == pytest.approx(1.25)
    many = pd.DataFrame({"venue": [f"v{i % 12}" for i in range(120)] + [None] * 30})
    wide = selection.mix(many, many, "venue")
    assert len(wide) == selection.MIX_ROWS + 1 and wide["value"].iloc[-1] == selection.OTHER
    assert wide["papers"].sum() == 150 and wide["value"].iloc[0] == selection.UNKNOWN  # 30, the most


def test_representatives_are_closest_to_the_centre() -> None:
    papers = corpus().head(4)
    embeddings = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.7, 0.3]])
    found = selection.representatives(np.array([0, 1, 3]), embeddings, papers, n=2)
    assert found["doc_id"].tolist() == ["p1", "p0"]  # 6 and 10 degrees from the mean direction of rows 0, 1, 3


def test_bibtex_of_a_selection_reads_back_whole() -> None:
    papers = (
        corpus()
        .head(3)
        .assign(
            authors=[["Ada Lovelace", "Alan Turing"], None, []],
            title=["A {balanced} title", "An unbalanced } brace", "Math $\\ell_p$ & 50%"],
        )
    )
    library = bibtexparser.parse_string(selection.bibtex(papers))
    assert not library.failed_blocks
    entries = {entry.key: entry for entry in library.entries}
    assert list(entries) == ["atlas:p0", "atlas:p1", "atlas:p2"]
    assert entries["atlas:p0"]["author"] == "Ada Lovelace and Alan Turing"
    assert entries["atlas:p0"]["title"] == "A {balanced} title"
    assert entries["atlas:p1"]["title"] == "An unbalanced  brace"  # the brace without a partner left out
    assert entries["atlas:p2"]["title"] == "Math $\\ell_p$ & 50%" and entries["atlas:p2"]["year"] == "2025"


def test_the_page_summarises_a_filtered_selection_and_compares_two(
    slice_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from streamlit.testing.v1 import AppTest

    from tests.test_app import APP, no_failure

    topics = read_cache(slice_cache).topics
    first, second = [int(topic) for topic in topics[topics["topic"] >= 0].nlargest(2, "size")["topic"]]
    monkeypatch.setenv("ATLAS_CACHE", str(slice_cache))
    monkeypatch.setenv("ATLAS_MAP_RENDERER", "plotly")
    app = AppTest.from_file(str(APP), default_timeout=120).run()
    no_failure(app)
    assert not [toggle for toggle in app.toggle if toggle.key == "selection_summary"]  # nothing narrows: no panel
    app.multiselect(key="topics").set_value([first]).run()
    app.toggle(key="selection_summary").set_value(True).run()
    no_failure(app)
    assert any("set it apart" in caption.value for caption in app.caption)
    mix = next(frame for frame in app.dataframe if "value" in frame.value.columns)
    size = int(topics.set_index("topic").loc[first, "size"])
    assert mix.value["papers"].sum() == size
    assert [button.label for button in app.get("download_button") if "BibTeX" in button.label]
    app.button(key="selection_keep").click().run()
    app.multiselect(key="topics").set_value([second]).run()
    no_failure(app)
    headings = [item.value for item in app.markdown if item.value.startswith(("**A", "**B"))]
    assert len(headings) == 2, headings
