"""Per-topic review analytics on hand-made tables whose answers are known."""

from __future__ import annotations

import math

import pandas as pd

from dashboard.figures.decision_charts import acceptance_rate_figure, decision_mix_figure, rating_figure
from dashboard.tables.analytics import (
    acceptance_table,
    decision_counts,
    extremes,
    overall_rate,
    rating_table,
    wilson_interval,
)


def make_documents() -> tuple[pd.DataFrame, pd.DataFrame]:
    decisions = (
        ["Oral"] * 2
        + ["Poster"] * 2  # topic 0: 4 of 4 accepted (small)
        + ["Poster"] * 120
        + ["Reject"] * 80
        + ["Withdrawn"] * 50  # topic 1: 120 of 200 decided
        + ["Reject"] * 30
        + ["Desk Rejected"] * 5
        + ["Spotlight"] * 5
        + [None] * 2  # topic 2: 5 of 40 decided
    )
    topics = [0] * 4 + [1] * 250 + [2] * 42
    documents = pd.DataFrame({"doc_id": [f"d{i}" for i in range(len(topics))], "topic": topics, "decision": decisions})
    documents["rating_mean"] = [6.0 if topic == 0 else 5.0 if topic == 1 else None for topic in topics]
    topic_table = pd.DataFrame({"topic": [0, 1, 2], "label": ["<b>tiny</b>", "graphs", "corals"], "size": [4, 250, 42]})
    return documents, topic_table


def test_wilson_interval_matches_the_formula():
    low, high = wilson_interval(120, 200)
    z = 1.959963984540054
    p, n = 0.6, 200
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert abs(low - (centre - half)) < 1e-9 and abs(high - (centre + half)) < 1e-9
    assert all(math.isnan(value) for value in wilson_interval(0, 0))


def test_counts_and_rates():
    documents, topics = make_documents()
    counts = decision_counts(documents, topics).set_index("topic")
    assert counts.loc[2, "Unknown"] == 2 and counts.loc[1, "Withdrawn"] == 50
    table = acceptance_table(documents, topics).set_index("topic")
    assert table.loc[1, ["accepted", "decided", "withdrawn"]].tolist() == [120, 200, 50]
    assert table.loc[1, "rate"] == 0.6 and table.loc[2, "rate"] == 5 / 40
    assert table.loc[0, "small"] and not table.loc[1, "small"]


def test_a_small_perfect_topic_does_not_outrank_a_large_good_one():
    documents, topics = make_documents()
    table = acceptance_table(documents, topics)
    assert table["topic"].tolist() == [1, 0, 2]  # 4/4 has a Wilson lower bound of 0.51 < 0.53 for 120/200
    top, bottom = extremes(table, n=1, min_decided=30)
    assert top["topic"].tolist() == [1] and bottom["topic"].tolist() == [2]


def test_overall_rate_and_ratings():
    documents, topics = make_documents()
    overall = overall_rate(documents)
    assert overall["accepted"] == 129 and overall["decided"] == 244
    ratings = rating_table(documents, topics)
    assert ratings["topic"].tolist() == [0, 1] and ratings.loc[0, "mean"] == 6.0


def test_figures_escape_labels_and_mark_the_overall_rate():
    documents, topics = make_documents()
    table = acceptance_table(documents, topics)
    rate_figure = acceptance_rate_figure(table, overall_rate(documents))
    assert any("&lt;b&gt;tiny&lt;/b&gt;" in name for name in rate_figure.data[0].y)
    assert rate_figure.layout.shapes and abs(rate_figure.layout.shapes[0].x0 - 129 / 244) < 1e-9
    mix = decision_mix_figure(table)
    assert {trace.name for trace in mix.data} == {
        "Oral",
        "Spotlight",
        "Poster",
        "Reject",
        "Desk Rejected",
        "Withdrawn",
        "Unknown",
    }
    assert len(rating_figure(documents, topics).data) == 2


def test_wilson_interval_agrees_with_scipy():
    from scipy.stats import binomtest

    for successes, trials in ((0, 5), (3, 3), (120, 200), (7, 1000)):
        expected = binomtest(successes, trials).proportion_ci(confidence_level=0.95, method="wilson")
        low, high = wilson_interval(successes, trials)
        assert abs(low - expected.low) < 1e-9 and abs(high - expected.high) < 1e-9
