"""The Decisions tab says only what the data can (issue 40, items 1-2): rates per collection, never pooled with a
collection whose decisions hold no rejection; no rate under a Decision filter (counts instead, the mix and the
table counting the same papers); a message, not empty axes, when no paper matches. On real builds: a two-collection
atlas (ICLR 2025 with every decision, ICLR 2024 with its side table of acceptances, withdrawals and desk
rejections only) and the 120-paper ICLR 2025 cache of tests/test_app.py."""

from __future__ import annotations

import base64
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io
import pytest
from streamlit.testing.v1 import AppTest

from dashboard.figures.decision_charts import acceptance_rate_figure, decision_mix_figure
from dashboard.tables.analytics import (
    ACCEPTED_ONLY,
    NO_DECISIONS,
    SUBMISSIONS,
    acceptance_table,
    collection_coverage,
    overall_rate,
)
from pipeline.cache import read_cache
from pipeline.runtime.parquet import read_frame
from tests.conftest import ICLR2024, ICLR2024_DECISIONS, ICLR2025, needs_shared
from tests.test_app import caches, no_failure, open_tab, run_app  # noqa: F401 (caches: the module fixture)


@pytest.fixture(scope="module")
def two_venues(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A build of 80 ICLR 2025 papers (every decision) and 40 ICLR 2024 papers with their side table (acceptances,
    withdrawals and desk rejections: no rejection known)."""
    from pipeline.ingest.collections import read_collection_file
    from pipeline.operations.build import run_build

    for path in (ICLR2024, ICLR2025, ICLR2024_DECISIONS):
        needs_shared(path)
    folder = tmp_path_factory.mktemp("two-venues")
    known = set(read_frame(ICLR2024_DECISIONS, columns=["openreview_id"])["openreview_id"])
    iclr2024 = read_frame(ICLR2024)
    pd.concat([iclr2024[iclr2024["openreview_id"].isin(known)].head(30), iclr2024.head(10)]).drop_duplicates(
        "openreview_id"
    ).to_parquet(folder / "iclr2024.parquet")
    read_frame(ICLR2025).head(80).to_parquet(folder / "iclr2025.parquet")
    read_frame(ICLR2024_DECISIONS).to_parquet(folder / "iclr2024_decisions.parquet")
    (folder / "atlas.toml").write_text(
        '[[collection]]\nname = "ICLR 2024"\nvenue = "ICLR"\nyear = 2024\npath = "iclr2024.parquet"\n'
        'side_tables = [{ path = "iclr2024_decisions.parquet", on = "openreview_id" }]\n'
        '[[collection]]\nname = "ICLR 2025"\nvenue = "ICLR"\nyear = 2025\npath = "iclr2025.parquet"\n',
        encoding="utf-8",
    )
    target = folder / "cache"
    source = folder / "atlas.toml"
    run_build(source, target, embedding_store=None, collections=read_collection_file(source), align=False)
    return target


def infos(app: AppTest) -> str:
    """The page's info lines, Markdown escapes removed."""
    return " ".join(item.value for item in app.info).replace("\\", "")


def values(data: object) -> list[float]:
    """A trace's array as plotly's JSON holds it: a list, or a typed array ({"dtype", "bdata": base64})."""
    if isinstance(data, dict):
        return np.frombuffer(base64.b64decode(data["bdata"]), dtype=data["dtype"]).tolist()
    return list(data)  # type: ignore[call-overload]


def charts(app: AppTest) -> dict[str, go.Figure]:
    """The page's plotly charts by title (read back from the specs the browser gets)."""
    found = {}
    for element in app.get("plotly_chart"):
        figure = plotly.io.from_json(element.proto.spec)
        found[str(figure.layout.title.text or "").split("<br>")[0]] = figure
    return found


def test_coverage_tells_submissions_from_collections_without_rejections() -> None:
    documents = pd.DataFrame(
        {
            "collection": ["A"] * 5 + ["B"] * 3 + ["C"] * 2,
            "decision": ["Poster", "Reject", "Reject", "Withdrawn", None, "Poster", "Oral", "Withdrawn", None, None],
        }
    )
    coverage = collection_coverage(documents).set_index("collection")
    assert coverage["kind"].to_dict() == {"A": SUBMISSIONS, "B": ACCEPTED_ONLY, "C": NO_DECISIONS}
    assert coverage.loc["A", "rate"] == pytest.approx(1 / 3)
    assert coverage[["rate"]].loc[["B", "C"]].isna().all().all()  # no rate where no rejection is known
    whole = collection_coverage(documents.drop(columns="collection"))
    assert whole["collection"].tolist() == [None] and whole["kind"].tolist() == [SUBMISSIONS]


def test_filtered_mix_and_rate_count_the_same_papers_and_no_paper_draws_no_axes() -> None:
    topics = pd.DataFrame({"topic": [0, 1], "label": ["graphs", "corals"], "size": [438, 50]})
    documents = pd.DataFrame({"topic": [0] * 13 + [1] * 2, "decision": ["Poster"] * 5 + ["Reject"] * 8 + ["Oral"] * 2})
    table = acceptance_table(documents, topics)
    assert table.set_index("topic")["size"].to_dict() == {0: 13, 1: 2}  # the papers counted, not the atlas's 438
    mix = decision_mix_figure(table)
    assert sum(sum(values(trace.x)) for trace in mix.data) == pytest.approx(2.0)  # each bar's shares add up to one
    rate = acceptance_rate_figure(table, overall_rate(documents))
    assert set(rate.data[0].y) == set(mix.data[0].y) == {"graphs (n=13)", "corals (n=2)"}
    empty = acceptance_table(documents.iloc[:0], topics.iloc[:0])
    for figure in (decision_mix_figure(empty), acceptance_rate_figure(empty, overall_rate(documents.iloc[:0]))):
        assert not figure.data and figure.layout.xaxis.visible is False and figure.layout.annotations


def test_rates_are_per_collection_and_say_what_they_leave_out(two_venues: Path, monkeypatch) -> None:
    """The line was the pooled rate of both years, ICLR 2024's known acceptances counted as decided papers."""
    documents = read_cache(two_venues).documents
    own = overall_rate(documents[documents["collection"] == "ICLR 2025"])
    pooled = overall_rate(documents)
    assert pooled["decided"] > own["decided"]  # the fixture's ICLR 2024 papers carry decisions
    app = open_tab(run_app(two_venues, monkeypatch), "Decisions")
    no_failure(app)
    choice = app.selectbox(key="decision_collection")
    assert choice.value == "ICLR 2025" and choice.options == [
        "ICLR 2024 (no rejection recorded: no rate)",
        "ICLR 2025 (submissions with their decisions)",
    ]
    captions = " ".join(caption.value for caption in app.caption).replace("\\", "")  # Markdown escapes
    assert "Rates and ratings cover ICLR 2025 only" in captions and "Left out of every rate: ICLR 2024" in captions
    assert f"({own['accepted']:,} of {own['decided']:,}, {own['rate']:.1%})" in captions
    assert f"({pooled['accepted']:,} of {pooled['decided']:,}," not in captions
    table = app.dataframe[0].value
    assert int(table["decided"].sum()) == own["decided"] and int(table["size"].sum()) == int(
        (documents["collection"] == "ICLR 2025").sum()
    )
    choice.set_value("ICLR 2024").run()
    no_failure(app)
    assert "Acceptance rate per topic" not in charts(app) and "Papers per topic and decision" in charts(app)
    assert "rate" not in app.dataframe[0].value.columns or app.dataframe[0].value["rate"].isna().all()


def test_a_decision_filter_draws_counts_not_rates(caches, monkeypatch) -> None:  # noqa: F811
    """With Decision = Oral every topic read 100 %, and the mix counted 438 papers where the rate counted 13."""
    app = run_app(caches["iclr"], monkeypatch)
    app.multiselect(key="decisions").set_value(["Poster"]).run()
    open_tab(app, "Decisions")
    no_failure(app)
    assert "No acceptance rate under the Decision filter (Poster)" in infos(app)
    found = charts(app)
    assert "Acceptance rate per topic" not in found
    mix = found["Papers per topic and decision"]
    table = app.dataframe[0].value
    assert {trace.name for trace in mix.data} == {"Poster"}
    assert sum(sum(values(trace.x)) for trace in mix.data) == int(table["size"].sum()) == int(table["Poster"].sum())
    labels = set(mix.data[0].y)
    assert all(f"(n={size})" in " ".join(labels) for size in table["size"])


def test_no_matching_paper_is_a_message_not_empty_axes(caches, monkeypatch) -> None:  # noqa: F811
    app = run_app(caches["iclr"], monkeypatch)
    app.text_input(key="query").set_value("no paper has this phrase zqx").run()
    open_tab(app, "Decisions")
    no_failure(app)
    assert "No paper matches the filters" in infos(app)
    assert not {"Decision mix per topic", "Acceptance rate per topic"} & set(charts(app))


def test_the_downloads_rate_is_the_decisions_tabs_collection_never_pooled(two_venues: Path) -> None:
    from dashboard.views.downloads import decision_charts_of
    from pipeline.cache import read_cache

    atlas = read_cache(two_venues)
    charts = decision_charts_of((str(two_venues), 0), atlas)
    assert charts["acceptance-rate"][0] == "Acceptance rate per topic (ICLR 2025)"  # the collection with rejections
    assert charts["decision-mix"][0] == "Decision mix per topic (ICLR 2025)"
    rate = charts["acceptance-rate"][1]
    drawn = sum(int(str(text).split("n=")[-1].rstrip(")")) for text in rate.data[0].y if "n=" in str(text))
    assert 0 < drawn <= int((atlas.documents["collection"] == "ICLR 2025").sum())  # none of ICLR 2024's papers
