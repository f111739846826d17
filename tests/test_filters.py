"""dashboard.tables.paper_table: filtering semantics and the tables the page shows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dashboard.tables import paper_table


@pytest.fixture
def documents() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "doc_id": ["rUxr9Ll5FQ", "ykuc5q381b", "row-3", "row-4"],
            "title": ["Diffusion Models (v2)", "Graph nets", None, "A [bracketed] title.*"],
            "abstract": [
                "We study denoising.",
                "Message passing on GRAPHS.",
                "Only an abstract about Diffusion here.",
                None,
            ],
            "keywords": [np.array(["generative", "score matching"]), [], None, np.array(["Transformers"])],
            "decision": ["Oral", "Reject", None, "Poster"],
            "topic": [0, 1, 0, -1],
            "probability": [1.0, 1.0, 0.5, 0.0],
            "x": [0.0, 1.0, 2.0, 3.0],
            "y": [0.0, 1.0, 2.0, 3.0],
            "neighbor_ids": [
                np.array(["row-3", "ykuc5q381b"]),
                np.array(["rUxr9Ll5FQ"]),
                np.array([], dtype=object),
                np.array(["missing"]),
            ],
            "neighbor_scores": [np.array([0.9, 0.4]), np.array([0.5]), np.array([]), np.array([0.1])],
        }
    )


@pytest.fixture
def topics() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "topic": [-1, 0, 1],
            "label": ["Outliers", "diffusion, denoising", "graphs, message"],
            "size": [1, 2, 1],
            "top_terms": [[], [["diffusion", 0.5]], [["graphs", 0.4]]],
            "representative_doc_ids": [["row-4"], ["rUxr9Ll5FQ", "row-3"], ["ykuc5q381b", "gone"]],
            "x": [np.nan, 1.0, 1.0],
            "y": [np.nan, 1.0, 1.0],
        }
    )


def ids(frame: pd.DataFrame) -> list[str]:
    return frame["doc_id"].tolist()


def test_empty_filters_keep_everything(documents):
    assert ids(paper_table.filter_documents(documents)) == ids(documents)
    assert ids(paper_table.filter_documents(documents, topics=[], query="  ", decisions=[], selected_ids=set())) == ids(
        documents
    )


def test_topic_filter_includes_outliers_on_request(documents):
    assert ids(paper_table.filter_documents(documents, topics=[0])) == ["rUxr9Ll5FQ", "row-3"]
    assert ids(paper_table.filter_documents(documents, topics=[-1, 1])) == ["ykuc5q381b", "row-4"]


def test_query_is_case_insensitive_over_title_abstract_and_keywords(documents):
    assert ids(paper_table.filter_documents(documents, query="DIFFUSION")) == ["rUxr9Ll5FQ", "row-3"]
    assert ids(paper_table.filter_documents(documents, query="graphs")) == ["ykuc5q381b"]
    assert ids(paper_table.filter_documents(documents, query="score match")) == ["rUxr9Ll5FQ"]
    assert ids(paper_table.filter_documents(documents, query="transformers")) == ["row-4"]


def test_query_characters_are_never_a_regex(documents):
    assert ids(paper_table.filter_documents(documents, query="(v2)")) == ["rUxr9Ll5FQ"]
    assert ids(paper_table.filter_documents(documents, query="[bracketed] title.*")) == ["row-4"]
    assert ids(paper_table.filter_documents(documents, query=".*")) == ["row-4"]
    assert ids(paper_table.filter_documents(documents, query="[")) == ["row-4"]


def test_query_matches_word_forms():
    """Search was literal: "LLM agents" found 64 papers and "LLM agent" 85 on the whole conference."""
    frame = pd.DataFrame(
        {
            "doc_id": ["a", "b", "c", "d", "e"],
            "topic": [0, 0, 0, 0, 0],
            "title": ["LLM agents plan", "An LLM agent", "LLMs-agentic search", "agent LLM", "Classes of glass"],
            "abstract": ["", "", "", "", ""],
        }
    )
    for query in ("LLM agents", "LLM agent", "llm AGENT"):
        assert ids(paper_table.filter_documents(frame, query=query)) == ["a", "b", "c"], query
    assert ids(paper_table.filter_documents(frame, query="agent")) == ["a", "b", "c", "d"]
    assert ids(paper_table.filter_documents(frame, query="agents")) == ["a", "b", "c", "d"]
    assert ids(paper_table.filter_documents(frame, query="glass")) == ["e"]  # "ss" is no plural
    assert paper_table.query_pattern("LLM agents") == r"LLM\w*\W+agent\w*"


def test_decision_and_selection_filters_combine(documents):
    assert ids(paper_table.filter_documents(documents, decisions=["Oral", "Poster"])) == ["rUxr9Ll5FQ", "row-4"]
    assert ids(paper_table.filter_documents(documents, topics=[0], decisions=["Oral", "Poster"])) == ["rUxr9Ll5FQ"]
    assert ids(paper_table.filter_documents(documents, selected_ids={"row-3", "row-4"})) == ["row-3", "row-4"]
    assert ids(paper_table.filter_documents(documents, query="diffusion", selected_ids={"row-3", "row-4"})) == ["row-3"]


def test_decision_filter_without_a_decision_column_matches_nothing(documents):
    assert paper_table.filter_documents(documents.drop(columns="decision"), decisions=["Oral"]).empty


def test_filter_returns_a_copy_with_the_original_index(documents):
    result = paper_table.filter_documents(documents, topics=[1])
    assert list(result.index) == [1]
    result.loc[1, "title"] = "changed"
    assert documents.loc[1, "title"] == "Graph nets"


def test_selected_doc_ids_reads_customdata():
    points = [{"customdata": "a"}, {"customdata": ["b", 3]}, {"x": 1}, {"customdata": None}]
    assert paper_table.selected_doc_ids(points) == {"a", "b"}
    assert paper_table.selected_doc_ids([]) == set()


@pytest.mark.parametrize(
    ("doc_id", "expected"),
    [
        ("rUxr9Ll5FQ", True),
        ("ykuc5q381b", True),
        ("E4LAVLXAHW", True),
        ("row-3", False),
        ("row-1234", False),
        ("abstract", False),
        ("12345678", False),
        ("o01", False),
        ("has space1", False),
        ("id#7abcdEF", False),
        (None, False),
    ],
)
def test_openreview_id_detection(doc_id, expected):
    assert paper_table.is_openreview_id(doc_id) is expected
    assert (paper_table.openreview_link(doc_id) == f"https://openreview.net/forum?id={doc_id}") is expected


def test_papers_table(documents, topics):
    table = paper_table.papers_table(documents, topics, links=True)
    assert list(table.columns) == ["doc_id", "title", "topic", "topic_label", "keywords", "decision", "link"]
    assert list(table.index) == [0, 1, 2, 3]
    assert table.loc[2, "title"] == "Only an abstract about Diffusion here."
    assert table.loc[0, "keywords"] == "generative; score matching"
    assert table.loc[3, "topic_label"] == "Outliers"
    assert table.loc[0, "link"] == "https://openreview.net/forum?id=rUxr9Ll5FQ"
    assert pd.isna(table.loc[2, "link"])


def test_papers_table_leaves_out_empty_optional_columns(documents, topics):
    bare = documents.drop(columns=["decision", "keywords"]).assign(doc_id=["row-1", "row-2", "row-3", "row-4"])
    assert list(paper_table.papers_table(bare, topics).columns) == ["doc_id", "title", "topic", "topic_label"]
    empty = documents.assign(decision=None, keywords=[[]] * 4, doc_id=["row-1", "row-2", "row-3", "row-4"])
    assert list(paper_table.papers_table(empty, topics).columns) == ["doc_id", "title", "topic", "topic_label"]


def test_the_download_is_the_page_table_with_full_titles_abstracts_and_metadata(documents, topics):
    """One builder: the CSV has the page's rows and labels, the titles as written and the extra columns, and keeps a
    metadata column the corpus has even when these rows leave it empty (every download of a corpus has the same
    columns)."""
    shown = documents.assign(
        authors=["A. One", None, None, "B. Two"], primary_area=["generative models", None, None, None]
    )
    page = paper_table.papers_table(shown, topics, links=True)
    full = paper_table.papers_table(shown, topics, links=True, full=True)
    assert list(page.columns) == [
        "doc_id",
        "title",
        "topic",
        "topic_label",
        "keywords",
        "decision",
        "primary_area",
        "link",
    ]
    assert list(full.columns) == [
        "doc_id",
        "title",
        "abstract",
        "topic",
        "topic_label",
        "keywords",
        "probability",
        "decision",
        "authors",
        "primary_area",
        "link",
    ]
    for column in ("doc_id", "topic", "topic_label", "keywords", "decision", "primary_area", "link"):
        assert page[column].tolist() == full[column].tolist(), column
    assert page.loc[2, "title"] == "Only an abstract about Diffusion here." and full.loc[2, "title"] is None
    assert full["abstract"].tolist() == shown["abstract"].tolist()
    none_decided = paper_table.papers_table(shown.assign(decision=None), topics, full=True)
    assert "decision" in none_decided.columns and none_decided["decision"].isna().all()
    assert "decision" not in paper_table.papers_table(shown.assign(decision=None), topics).columns


def test_topic_options_label_sizes_and_put_outliers_last(topics):
    options = paper_table.topic_options(topics)
    assert list(options) == [0, 1, -1]
    assert options[0] == "0 · diffusion, denoising (2)"
    assert options[-1] == "Outliers (1)"


def test_decision_options_follow_review_order(documents):
    assert paper_table.decision_options(documents) == ["Oral", "Poster", "Reject"]
    assert paper_table.decision_options(documents.assign(decision=[None, "Zeta", "Oral", None])) == ["Oral", "Zeta"]
    assert paper_table.decision_options(documents.drop(columns="decision")) == []


def test_paper_details_are_plain_fields(documents, topics):
    details = paper_table.paper_details(documents, topics, "rUxr9Ll5FQ", links=True)
    assert details["title"] == "Diffusion Models (v2)"
    assert details["keywords"] == ["generative", "score matching"]
    assert details["topic_label"] == "diffusion, denoising"
    assert details["link"].endswith("rUxr9Ll5FQ")
    assert paper_table.paper_details(documents, topics, "row-4")["abstract"] is None
    assert paper_table.paper_details(documents, topics, "nope") is None


def test_similar_papers_follow_neighbour_order(documents, topics):
    similar = paper_table.similar_papers(documents, topics, "rUxr9Ll5FQ", links=True)
    assert similar["title"].tolist() == ["Only an abstract about Diffusion here.", "Graph nets"]
    assert similar["similarity"].tolist() == [0.9, 0.4]
    assert pd.isna(similar["link"].iloc[0]) and similar["link"].iloc[1] == "https://openreview.net/forum?id=ykuc5q381b"
    assert paper_table.similar_papers(documents, topics, "row-4").empty  # its only neighbour is unknown
    assert paper_table.similar_papers(
        documents.drop(columns=["neighbor_ids", "neighbor_scores"]), topics, "row-3"
    ).empty


def test_known_papers_come_in_the_asked_order_without_unknown_ids_and_first_of_a_repeat():
    documents = pd.DataFrame({"doc_id": ["a", "b", "c", "b"], "title": ["A", "B", "C", "B again"]})
    found = paper_table.known_papers(documents, ["c", "nope", "b", "a"])
    assert [(doc_id, row["title"]) for doc_id, row in found] == [("c", "C"), ("b", "B"), ("a", "A")]
    assert paper_table.known_papers(documents, []) == []


def test_representative_papers_in_topic_order(documents, topics):
    table = paper_table.representative_papers(documents, topics, [1, 0])
    assert table["topic"].tolist() == [1, 0, 0]
    assert table["title"].tolist() == ["Graph nets", "Diffusion Models (v2)", "Only an abstract about Diffusion here."]


def test_markdown_escape_neutralises_markup():
    escaped = paper_table.markdown_escape("**bold** $x$ <b>t</b> [a](b)\n_i_")
    assert "\\*\\*bold\\*\\*" in escaped and "\\$x\\$" in escaped and "\\<b\\>" in escaped and "\n" not in escaped


def test_manifest_helpers():
    manifest = {
        "input_path": "/data/iclr2025/papers.parquet",
        "n_topics": 3,
        "notes": ["n1"],
        "warnings": ["w1", "n1"],
        "dropped": {"empty": 2},
    }
    assert paper_table.corpus_name(manifest) == "ICLR 2025"  # a generic file name: its folder's
    assert paper_table.corpus_name({**manifest, "corpus_name": "ICLR 2025 (all)"}) == "ICLR 2025 (all)"
    assert paper_table.corpus_name({"input_path": "/x/iclr2025_abstracts.parquet"}) == "ICLR 2025"
    assert not paper_table.no_topics_found(manifest)
    assert paper_table.no_topics_found({"n_topics": 0, "notes": []})
    assert paper_table.no_topics_found({"n_topics": 1, "notes": ["No topics found: all 5 documents ..."]})
    assert paper_table.build_messages(manifest) == ["n1", "w1", "Records dropped while cleaning: empty: 2"]


def test_precomputed_haystack_gives_the_same_rows(documents):
    haystack = paper_table.search_haystack(documents)
    subset = documents.iloc[[0, 2, 3]]
    for query in ("diffusion", "TRANSFORMERS", "(v2)", "absent"):
        assert ids(paper_table.filter_documents(subset, query=query, haystack=haystack)) == ids(
            paper_table.filter_documents(subset, query=query)
        )


def test_the_lowered_haystack_finds_what_a_case_folding_search_finds(documents):
    """search_haystack lower-cases its texts once, so matches_query(lowered=True) tests a plain substring first: the
    same papers as the case-folding search over the texts as written, for queries in any case."""
    papers = documents.drop(columns=["keywords"], errors="ignore")
    as_written = papers["title"].fillna("") + "\n" + papers["abstract"].fillna("")
    lowered = paper_table.search_haystack(papers)
    assert (lowered == lowered.str.lower()).all()
    for query in ("diffusion", "TRANSFORMERS", "Diffusion Models", "(v2)", "absent"):
        found = paper_table.matches_query(lowered, query, lowered=True)
        assert found.tolist() == paper_table.matches_query(as_written, query).tolist(), query


def test_relevance_order_puts_title_matches_first_then_probability(documents):
    """The table sorted by relevance within its filter: with a search, a title match ("Diffusion Models") before a
    paper matched only in its abstract, whatever their probabilities; without one, probability, highest first."""
    ranked = documents.assign(probability=[0.2, 0.9, 0.8, 0.1])
    assert paper_table.relevance_order(ranked, "diffusion model")["doc_id"].tolist()[:2] == ["rUxr9Ll5FQ", "ykuc5q381b"]
    found = ranked[paper_table.matches_query(paper_table.search_haystack(ranked), "diffusion")]
    assert paper_table.relevance_order(found, "diffusion")["doc_id"].tolist() == ["rUxr9Ll5FQ", "row-3"]
    assert paper_table.relevance_order(ranked)["doc_id"].tolist() == ["ykuc5q381b", "row-3", "rUxr9Ll5FQ", "row-4"]
