"""The pure builders of the "What changed" view (dashboard.tables.lineage) on a constructed lineage."""

from __future__ import annotations

import pandas as pd

from dashboard.tables import lineage as changes

LINEAGE = {
    "kind": "rebuild",
    "previous": {"created_at": "2026-01-01T00:00:00+00:00", "n_documents": 9, "n_topics": 3},
    "n_papers": {"shared": 8, "same_topic": 5, "added": 1, "removed": 1},
    "previous_topics": {
        "-1": {"label": "Outliers", "size": 1},
        "0": {"label": "graphs", "size": 4},
        "1": {"label": "<b>vision</b>", "size": 2},
        "2": {"label": "speech", "size": 2},
    },
    "topics": [
        {
            "topic": 0,
            "label": "graphs",
            "status": "split",
            "sources": [0],
            "from": [{"topic": 0, "n_papers": 2, "share": 1.0}],
            "n_papers": 2,
            "n_added": 0,
            "carried_share": 0.5,
        },
        {
            "topic": 1,
            "label": "<b>vision</b>",
            "status": "merged",
            "sources": [1, 2],
            "from": [
                {"topic": 1, "n_papers": 2, "share": 0.5},
                {"topic": 2, "n_papers": 1, "share": 0.25},
                {"topic": None, "n_papers": 1, "share": 0.25},
            ],
            "n_papers": 4,
            "n_added": 1,
            "carried_share": 1.0,
        },
        {
            "topic": 3,
            "label": "graph theory",
            "status": "split",
            "sources": [0],
            "from": [{"topic": 0, "n_papers": 2, "share": 1.0}],
            "n_papers": 2,
            "n_added": 0,
            "carried_share": None,
        },
    ],
    "gone": [
        {
            "topic": 2,
            "label": "speech",
            "n_papers": 2,
            "fate": "merged",
            "into": [1],
            "to": [{"topic": 1, "n_papers": 1, "share": 0.5}, {"topic": None, "n_papers": 1, "share": 0.5}],
        }
    ],
}
TABLE = pd.DataFrame(
    {
        "doc_id": [f"p{i}" for i in range(10)],
        "title": [f"paper {i}" for i in range(10)],
        "previous_topic": pd.array([0, 0, 0, 0, 1, 1, 2, 2, -1, pd.NA], dtype="Int64"),
        "topic": pd.array([0, 0, 3, 3, 1, 1, 1, pd.NA, -1, 1], dtype="Int64"),
    }
)


def test_flows_count_papers_per_pair_with_absent_sides():
    flows = changes.flow_counts(TABLE)
    as_tuples = {
        (None if pd.isna(a) else int(a), None if pd.isna(b) else int(b)): n for a, b, n in flows.itertuples(index=False)
    }
    assert as_tuples == {(0, 0): 2, (0, 3): 2, (1, 1): 2, (2, 1): 1, (2, None): 1, (-1, -1): 1, (None, 1): 1}
    assert flows["n_papers"].sum() == len(TABLE)


def test_sankey_draws_both_sides_escapes_labels_and_says_what_it_hides():
    flows = changes.flow_counts(TABLE)
    figure = changes.sankey_figure(
        flows, changes.previous_labels(LINEAGE), {0: "graphs", 1: "<b>vision</b>", 3: "graph theory"}, min_papers=2
    )
    sankey = figure.data[0]
    labels = list(sankey.node.label)
    assert "1 · &lt;b&gt;vision&lt;/b&gt;" in labels and not any("<b>" in label for label in labels)
    assert sum(sankey.link.value) == 6  # flows of 2+ papers: (0,0), (0,3), (1,1)
    assert "4 papers in flows of fewer than 2" in figure.layout.title.text
    everything = changes.sankey_figure(
        flows, changes.previous_labels(LINEAGE), {0: "graphs", 1: "vision", 3: "graph theory"}, min_papers=1
    )
    names = list(everything.data[0].node.label)
    assert changes.NOT_IN_PREVIOUS in names and changes.NOT_IN_CURRENT in names and "Outliers" in names


def test_change_tables_sort_topics_by_status():
    tables = changes.change_tables(LINEAGE)
    assert tables["split"]["topic"].tolist() == [0, 3] and tables["merged"]["topic"].tolist() == [1]
    assert tables["new"].empty and tables["kept"].empty
    assert tables["merged"].iloc[0]["split_or_merged_from"] == "1 · <b>vision</b>; 2 · speech"
    assert "not in the previous atlas (25%)" in tables["merged"].iloc[0]["sources"]
    gone = tables["gone"].iloc[0]
    assert (gone["topic"], gone["fate"], gone["into"]) == (2, "merged", "1 · <b>vision</b>")
    assert gone["went_to"] == "1 · <b>vision</b> (50%); no longer in the corpus (50%)"
    counts = changes.change_counts(LINEAGE)
    assert counts["split"] == 2 and counts["merged"] == 1 and counts["gone"] == 1 and counts["papers_same_topic"] == 5


def test_papers_moved_in_and_out_of_a_topic():
    moved_in, moved_out = changes.moved_papers(TABLE, 1, changes.previous_labels(LINEAGE), {1: "vision"})
    assert moved_in["doc_id"].tolist() == ["p6", "p9"]
    assert moved_in["came_from"].tolist() == ["2 · speech", changes.NOT_IN_PREVIOUS]
    assert moved_out.empty
    moved_in, moved_out = changes.moved_papers(
        TABLE, 0, changes.previous_labels(LINEAGE), {0: "graphs", 3: "graph theory"}
    )
    assert moved_in.empty and moved_out["went_to"].tolist() == ["3 · graph theory", "3 · graph theory"]


def test_only_a_manifest_with_topics_in_its_lineage_counts():
    assert changes.has_lineage({"lineage": LINEAGE})
    assert (
        not changes.has_lineage({})
        and not changes.has_lineage({"lineage": None})
        and not changes.has_lineage({"lineage": {"kind": "add"}})
    )
