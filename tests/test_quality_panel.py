"""The quality panel's pure functions: metrics -> table, faithfulness note; render with a stand-in Streamlit."""

from __future__ import annotations

from dashboard.views.quality_panel import METRICS, faithfulness_note, format_value, metrics_table, render

METRICS_951 = {
    "n_documents": 951,
    "k": 10,
    "n_topics": 15,
    "outlier_fraction": 0.0494,
    "largest_topic_share": 0.1167,
    "npmi": 0.0618,
    "npmi_by_topic": {"0": 0.1},
    "topic_diversity": 1.0,
    "trustworthiness_2d": 0.91,
    "knn_recall_2d": 0.2176,
    "reference_column": "decision",
    "nmi_reference": 0.039,
    "ari_reference": 0.0149,
    "knn_accuracy_embedding": 0.4984,
    "knn_accuracy_2d": 0.4963,
    "reference_majority_share": 0.5068,
}


def test_table_has_one_readable_row_per_known_metric():
    table = metrics_table(METRICS_951)
    assert list(table.columns) == ["metric", "value", "meaning"]
    assert len(table) == len(METRICS)
    values = dict(zip(table["metric"], table["value"]))
    assert values["Topics"] == "15"
    assert values["Outliers"] == "4.9%"
    assert values["Term coherence (NPMI)"] == "0.062"
    assert values["Term diversity"] == "100.0%"
    assert values["Neighbours kept on the map"] == "21.8%"
    assert table["meaning"].str.len().gt(20).all()


def test_table_leaves_out_missing_and_unknown_metrics():
    table = metrics_table({"n_topics": 3, "trustworthiness_2d": None, "npmi": float("nan"), "something_new": 1.0})
    assert table["metric"].tolist() == ["Topics"]
    assert metrics_table(None).empty and list(metrics_table({}).columns) == ["metric", "value", "meaning"]


def test_titles_corpus_without_decisions_has_no_decision_rows():
    metrics = {key: value for key, value in METRICS_951.items() if "reference" not in key and "accuracy" not in key}
    assert not metrics_table(metrics)["metric"].str.contains("ecision").any()


def test_format_value():
    assert format_value(0.12345, "share") == "12.3%"
    assert format_value(0.12345, "score") == "0.123"
    assert format_value(7.0, "int") == "7"
    assert format_value(None, "score") == "n/a"


def test_faithfulness_note_reports_the_share_and_advice():
    note = faithfulness_note(METRICS_951)
    assert note == (
        "On average 22% of a paper's 10 nearest neighbours are also its neighbours on this map; "
        "use the similar-papers list, not distance on the map."
    )
    assert "fair guide" in faithfulness_note({"knn_recall_2d": 0.8, "k": 10})
    assert "not measured" in faithfulness_note({"knn_recall_2d": None})
    assert "not measured" in faithfulness_note(None)


class FakeStreamlit:
    """Records the calls render makes."""

    def __init__(self):
        self.calls = []

    def __getattr__(self, name):
        return lambda *args, **kwargs: self.calls.append((name, args, kwargs))


def test_render_draws_note_and_table_or_a_hint():
    st = FakeStreamlit()
    render(st, {"metrics": METRICS_951})
    names = [name for name, _, _ in st.calls]
    assert names == ["subheader", "caption", "dataframe"]
    assert len(st.calls[2][1][0]) == len(METRICS)
    st = FakeStreamlit()
    render(st, {"n_topics": 3})
    assert [name for name, _, _ in st.calls] == ["subheader", "info"]
    assert "topic-atlas evaluate" in st.calls[1][1][0]


def test_primary_area_figures_come_from_the_references_block_and_only_from_it():
    from dashboard.views.quality_panel import reference_table

    metrics = dict(
        METRICS_951,
        references={
            "primary_area": {
                "nmi": 0.21,
                "ami": 0.2,
                "ari": 0.08,
                "knn_accuracy_embedding": 0.45,
                "knn_accuracy_2d": None,
                "majority_share": 0.12,
                "n_classes": 21,
            }
        },
    )
    table = reference_table(metrics)
    assert table["metric"].tolist() == [
        "Classes",
        "Topics vs primary area (NMI)",
        "Topics vs primary area (AMI)",
        "Topics vs primary area (ARI)",
        "Primary area from similar papers",
        "Commonest primary area",
    ]
    assert table["value"].tolist() == ["21", "0.210", "0.200", "0.080", "45.0%", "12.0%"]
    assert reference_table(METRICS_951).empty  # a cache built before the references block: nothing shown
    assert reference_table(None).empty
