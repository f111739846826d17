"""What the page shows for hostile text and broken labels (issue 13, items 4, 5, 8, 9, 11, 12): the same unique,
non-empty topic label in picker, map, hover, bars, tables and CSV; quotes not shown as &quot;; links only for
OpenReview ids; copies listed; truncated papers and LaTeX abstracts shown for reading."""

from __future__ import annotations

import io
import re

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from dashboard import display
from dashboard.export import download_bytes
from dashboard.figures import charts, plotly_map, topic_map
from dashboard.tables import paper_table


@pytest.fixture
def documents() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "doc_id": ["doc000001", "doc000002", "doc000003", "doc000004"],
            "title": ['The "Curse" of depth', "Plain title", "Another", "Fourth"],
            "abstract": [
                r"We cut error by 50\% (Fig.~3) with \emph{sparse} heads \cite{smith}; cost $O(n)$.",
                "abs two",
                "abs three",
                "abs four",
            ],
            "topic": [0, 1, 2, -1],
            "probability": [1.0, 0.9, 0.8, 0.0],
            "x": [0.0, 1.0, 2.0, 3.0],
            "y": [3.0, 2.0, 1.0, 0.0],
            "duplicate_ids": [["doc000005"], [], [], []],
            "word_pieces": [412, 90, 80, 70],
            "truncated": [True, False, False, False],
        }
    )


@pytest.fixture
def topics() -> pd.DataFrame:
    """Topic 0 has no label, topic 1 'nan', topic 2 the label of topic 1 in other case and spacing... as an old or
    hand-edited cache may hold."""
    return pd.DataFrame(
        {
            "topic": [-1, 0, 1, 2, 3],
            "label": ["Outliers", "", "Graphs,  nodes", "graphs, nodes", float("nan")],
            "size": [1, 1, 1, 1, 0],
            "top_terms": [[], [], [["graphs", 0.4]], [["nodes", 0.3]], []],
            "representative_doc_ids": [[], [], [], [], []],
            "x": [np.nan, 0.0, 1.0, 2.0, 3.0],
            "y": [np.nan, 3.0, 2.0, 1.0, 0.0],
        }
    )


def test_every_view_shows_the_same_unique_non_empty_label(documents, topics):
    labels = display.topic_labels(topics)
    assert labels == {-1: "Outliers", 0: "Topic 0", 1: "Graphs, nodes", 2: "graphs, nodes (topic 2)", 3: "Topic 3"}
    options = paper_table.topic_options(topics)
    assert options[0] == "0 · Topic 0 (1)" and options[2].startswith("2 · graphs, nodes (topic 2)")
    shown = topics.assign(label=[labels[int(topic)] for topic in topics["topic"]])  # as read_cache gives every view
    themed = shown.assign(theme=shown["topic"], theme_label=shown["label"])
    mapped = topic_map.with_themes(display.with_hover_texts(documents, topics), themed)
    figure = plotly_map.map_figure(mapped, themed, topic_map.MapState(colour_by="topic", level="topics"))
    annotations = {annotation.text for annotation in figure.layout.annotations}
    assert {"Topic 0", "Graphs, nodes", "graphs, nodes (topic 2)"} <= annotations
    hovers = " ".join(text for trace in figure.data for text in trace.hovertext)
    assert "Topic: Topic 0" in hovers and "Topic: graphs, nodes (topic 2)" in hovers and "nan" not in hovers
    bars = charts.topic_size_figure(topics).data[0].y
    assert "0 · Topic 0" in bars and "3 · Topic 3" in bars and not any(label.endswith("· ") for label in bars)
    table = paper_table.papers_table(documents, topics)
    csv = pd.read_csv(io.BytesIO(download_bytes.csv_bytes(paper_table.papers_table(documents, topics, full=True))))
    assert (
        table["topic_label"].tolist()
        == csv["topic_label"].tolist()
        == ["Topic 0", "Graphs, nodes", "graphs, nodes (topic 2)", "Outliers"]
    )


def test_the_cache_reader_gives_display_labels(tmp_path):
    from pipeline.cache import display_labels

    frame = pd.DataFrame({"topic": [0, 1, 2, 3], "label": ["None", " ", "a, b", "A,  b"]})
    assert display_labels(frame) == {0: "Topic 0", 1: "Topic 1", 2: "a, b", 3: "A, b (topic 3)"}


def test_hover_keeps_double_quotes_and_escapes_markup(documents, topics):
    hover = display.hover_texts(documents, display.topic_labels(topics))[0]
    assert '"Curse"' in hover and "&quot;" not in hover
    assert display.plotly_escape('<b> & "x"') == '&lt;b&gt; &amp; "x"'


def test_a_topic_without_keywords_says_so_in_its_panel(topics):
    figure = charts.top_terms_figure(topics, [0, 1])
    assert charts.NO_TERMS_NOTICE in {annotation.text for annotation in figure.layout.annotations}


def test_generated_ids_get_no_openreview_links(documents, topics):
    assert "link" not in paper_table.papers_table(documents, topics).columns
    assert "link" not in paper_table.papers_table(documents, topics, full=True).columns
    assert paper_table.paper_details(documents, topics, "doc000001")["link"] is None
    real = documents.assign(doc_id=["rUxr9Ll5FQ", "53kUa92R7J", "9mOs2Bxd3Q", "KJ4hQAfqVa"])
    assert paper_table.papers_table(real, topics)["link"].iloc[0] == "https://openreview.net/forum?id=rUxr9Ll5FQ"
    assert paper_table.corpus_uses_openreview_ids(["p01", "p02"], id_column="openreview_id")
    assert not paper_table.corpus_uses_openreview_ids(["doc000001", "paper-0002", "row-3"])
    assert paper_table.links_enabled({"id_column": "id"}, documents) is False


def test_copies_are_listed_searched_selected_and_exported(documents, topics):
    copies = pd.DataFrame(
        {
            "doc_id": ["doc000005"],
            "copy_of": ["doc000001"],
            "title": ["Cross-listed under another title"],
            "abstract": [documents.at[0, "abstract"]],
            "topic": [0],
            "topic_label": ["Topic 0"],
            "probability": [1.0],
            "x": [0.0],
            "y": [3.0],
        }
    )
    listing = paper_table.with_copies(display.with_hover_texts(documents, topics), copies, topics)
    assert listing["doc_id"].tolist()[-1] == "doc000005" and listing["copy_of"].tolist() == [None] * 4 + ["doc000001"]
    assert "Cross-listed" in listing["hover"].iloc[-1]
    found = paper_table.filter_documents(listing, query="cross-listed")
    assert found["doc_id"].tolist() == ["doc000005"]
    selected = paper_table.filter_documents(listing, selected_ids={"doc000001"})
    assert selected["doc_id"].tolist() == ["doc000001", "doc000005"]
    table = paper_table.papers_table(listing, topics)
    assert table.loc[4, "copy_of"] == "doc000001" and table.loc[4, "topic_label"] == "Topic 0"
    csv = pd.read_csv(io.BytesIO(download_bytes.csv_bytes(paper_table.papers_table(listing, topics, full=True))))
    assert csv["doc_id"].tolist()[-1] == "doc000005" and csv["copy_of"].tolist()[-1] == "doc000001"


def test_the_paper_view_reads_latex_and_says_when_a_paper_was_truncated(documents, topics):
    details = paper_table.paper_details(documents, topics, "doc000001", window=256)
    assert details["abstract"] == "We cut error by 50% (Fig. 3) with sparse heads; cost $O(n)$."
    assert details["abstract_as_written"] == documents.at[0, "abstract"]
    assert "256 of its 412 word pieces" in details["embedding_note"]
    assert details["copies"] == ["doc000005"]
    assert paper_table.paper_details(documents, topics, "doc000002")["embedding_note"] is None
    assert paper_table.papers_table(documents, topics)["truncated"].tolist() == [True, False, False, False]


def test_the_no_topics_notice_gives_the_builds_reason():
    why = "No topics found: the papers are on unrelated subjects. 6 candidate topics were not kept because ..."
    assert paper_table.no_topics_message({"notes": ["other", why]}) == why
    assert "--min-cluster-size" in paper_table.no_topics_message({"notes": []})


# --- every figure builder escapes the same way (issue 18): quotes kept, & < > escaped ---

HOSTILE = 'Say "hi" & <b>bye</b>'
ESCAPED = 'Say "hi" &amp; &lt;b&gt;bye&lt;/b&gt;'
# The only markup the builders themselves add.
BUILDER_MARKUP = re.compile(r"</?(?:br|b|sup|extra)>")


def figure_strings(figure) -> list[str]:
    """Every string of a figure's JSON (data and layout, the template left out), numpy arrays included."""
    found: list[str] = []

    def walk(value) -> None:
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, dict):
            for key, item in value.items():
                if key != "template":
                    walk(item)
        elif isinstance(value, (list, tuple)):
            for item in value:
                walk(item)
        elif isinstance(value, np.ndarray) and value.dtype == object:
            walk(value.tolist())

    walk(figure.to_plotly_json())
    return found


def hostile_tables():
    """A topic, a theme, a term, an area, a title and a decision class that all read HOSTILE."""
    topics = pd.DataFrame(
        {
            "topic": [-1, 0, 1],
            "label": ["Outliers", HOSTILE, "plain topic"],
            "size": [2, 6, 6],
            "top_terms": [[], [[HOSTILE, 0.5], ["heads", 0.2]], [["plain", 0.4]]],
            "representative_doc_ids": [[], [], []],
            "x": [np.nan, 0.0, 5.0],
            "y": [np.nan, 0.0, 5.0],
            "theme": [-1, 0, 1],
            "theme_label": ["Outliers", HOSTILE, "plain theme"],
        }
    )
    rng = np.random.default_rng(0)
    topic_of = [0] * 6 + [1] * 6 + [-1] * 2
    documents = pd.DataFrame(
        {
            "doc_id": [f"d{i:02d}" for i in range(len(topic_of))],
            "title": [HOSTILE] + [f"paper {i}" for i in range(1, len(topic_of))],
            "abstract": ["an abstract"] * len(topic_of),
            "topic": topic_of,
            "x": [5.0 * (topic == 1) + rng.normal(0, 0.3) for topic in topic_of],
            "y": [5.0 * (topic == 1) + rng.normal(0, 0.3) for topic in topic_of],
            "decision": ["Oral", "Reject", "Poster", "Withdrawn"] * 3 + [None, None],
            "primary_area": [HOSTILE, "plain area"] * 7,
            "rating_mean": [5.0, 6.0] * 7,
        }
    )
    return documents, topics


FIGURES = (
    "topic sizes",
    "top terms",
    "highlighted points",
    "map by theme",
    "map by topic",
    "map by area",
    "topic tree",
    "similarity",
    "areas",
    "sankey",
    "acceptance",
    "decision mix",
    "ratings",
)


@pytest.fixture(scope="module")
def built_figures() -> dict[str, go.Figure]:
    """{name: figure} for every figure builder of the page, each given HOSTILE text where it takes corpus text."""
    from dashboard.figures import decision_charts, structure_charts
    from dashboard.tables import analytics, find
    from dashboard.tables.lineage import flow_counts, sankey_figure
    from pipeline.cache import HIERARCHY_COLUMNS

    documents, topics = hostile_tables()
    labels = display.topic_labels(topics)
    mapped = topic_map.with_themes(display.with_hover_texts(documents, topics), topics)
    hierarchy = pd.DataFrame(
        [
            {
                "parent_id": 2,
                "parent_name": "",
                "child_left_id": 0,
                "child_left_name": HOSTILE,
                "child_right_id": 1,
                "child_right_name": "plain topic",
                "distance": 0.5,
                "topics": [0, 1],
            }
        ],
        columns=HIERARCHY_COLUMNS,
    )
    vectors = {0: np.array([1.0, 0.0]), 1: np.array([0.6, 0.8])}
    lineage_rows = pd.DataFrame(
        {
            "doc_id": documents["doc_id"],
            "title": documents["title"],
            "previous_topic": pd.array(documents["topic"], dtype="Int64"),
            "topic": pd.array(documents["topic"], dtype="Int64"),
        }
    )
    acceptance = analytics.acceptance_table(documents, topics)
    highlighted = find.overlay_points(documents.iloc[:1], HOSTILE)
    figures = {
        "topic sizes": charts.topic_size_figure(topics),
        "top terms": charts.top_terms_figure(topics, [0, 1]),
        "highlighted points": charts.highlight_points(go.Figure(), highlighted, "hits"),
        "map by theme": plotly_map.map_figure(mapped, topics, topic_map.MapState()),
        "map by topic": plotly_map.map_figure(mapped, topics, topic_map.MapState(colour_by="topic", level="topics")),
        "map by area": plotly_map.map_figure(mapped, topics, topic_map.MapState(colour_by="primary_area")),
        "topic tree": structure_charts.topic_tree_figure(topics),
        "similarity": structure_charts.similarity_figure(topics, hierarchy, vectors),
        "areas": structure_charts.area_share_figure(structure_charts.area_crosstab(mapped, topics, by="theme")),
        "sankey": sankey_figure(flow_counts(lineage_rows), labels, labels, min_papers=1),
        "acceptance": decision_charts.acceptance_rate_figure(acceptance, analytics.overall_rate(documents)),
        "decision mix": decision_charts.decision_mix_figure(acceptance),
        "ratings": decision_charts.rating_figure(documents, topics),
    }
    assert set(figures) == set(FIGURES)
    return figures


@pytest.mark.parametrize("name", FIGURES)
def test_every_figure_builder_escapes_corpus_text_for_plotly(name, built_figures):
    """Quotes, ampersands and angle brackets in a label: the figure shows them as written, never as markup and never
    as a literal &quot; (plotly decodes &amp; &lt; &gt; but not &quot;)."""
    strings = figure_strings(built_figures[name])
    text = "\n".join(strings)
    assert "&quot;" not in text and "&#x27;" not in text and "&#34;" not in text
    assert not [value for value in strings if "<" in BUILDER_MARKUP.sub("", value)], name
    shown = text.replace("<br>", " ").replace("\n", " ")
    assert '"hi" &amp; &lt;b&gt;' in shown, f"{name}: the hostile label did not reach the figure"
