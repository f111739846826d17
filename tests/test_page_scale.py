"""The page's per-cache work at scale (issue 42): the points as one binary block, readable titles without reading
every title, topic sizes without a second listing, the plotly maps' hover texts made only for those maps."""

from __future__ import annotations

import base64
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dashboard import display
from dashboard.figures import map_layers, plotly_map, topic_map
from dashboard.state import resources
from dashboard.tables import paper_table
from pipeline.cache import read_cache
from pipeline.ingest.readable import readable_title


@pytest.fixture(scope="module")
def atlas(slice_cache: Path):
    cache = read_cache(slice_cache)
    cache.topics = topic_map.themed_topics(cache.topics, cache.hierarchy)
    cache.documents = topic_map.with_themes(cache.documents, cache.topics)
    return cache


def test_the_point_block_holds_the_payload(atlas):
    documents, topics = atlas.documents, atlas.topics
    payload = map_layers.point_payload(documents, topics)
    block = map_layers.point_block(documents, topics)
    read = map_layers.read_point_block(block)
    for name, dtype in (("x", np.float32), ("y", np.float32), ("topic_of", np.uint16)):
        assert np.array_equal(read[name], np.frombuffer(base64.b64decode(payload[name]), dtype=dtype)), name
    assert read["titles"] == payload["titles"] and len(read["titles"]) == len(documents)
    assert read["topic_texts"] == payload["topic_texts"]
    without = map_layers.read_point_block(map_layers.point_block(documents.iloc[:3]))
    assert without["topic_of"] is None and len(without["x"]) == 3 and without["titles"] == payload["titles"][:3]
    lean = map_layers.read_point_block(map_layers.point_block(documents, topics, titles=False))
    assert (
        lean["titles"] is None
        and np.array_equal(lean["x"], read["x"])
        and np.array_equal(lean["topic_of"], read["topic_of"])
    )
    titles = map_layers.read_titles(map_layers.title_block(documents), len(documents))
    assert titles == payload["titles"]  # sent after the map's first draw
    empty = map_layers.read_point_block(map_layers.point_block(documents.iloc[:0], topics))
    assert len(empty["x"]) == 0 and empty["titles"] == []


TITLES = [
    "Plain title: graph neural networks",
    "  Spaces   and\ttabs\t\tin a title  ",
    "$L_p$-Convolution and IT$^3$",
    "\\emph{Emphasis} and {\\bf bold} words",
    "``Quoted'' titles -- with dashes --- and ties~here",
    "See [the GitHub](https://github.com/x/y) for code",
    "Q&amp;A &quot;fast&quot; <b>bold</b>",
    "Costs $5 and $6 are prose",
    "snake_case and x^2 in a title",
    "a" * 250,
    "Line\nbreak inside",
    "",
    None,
    float("nan"),
]


def test_titles_are_read_as_readable_title_shows_them():
    expected = [(readable_title(title) or "")[:200] if isinstance(title, str) else "" for title in TITLES]
    assert map_layers.readable_titles(TITLES) == expected


def copies_of(documents: pd.DataFrame, with_topic: bool) -> pd.DataFrame:
    kept = documents.iloc[[0, 1, 1]]
    copies = pd.DataFrame(
        {
            "doc_id": ["copy-a", "copy-b", "copy-c"],
            "copy_of": kept["doc_id"].astype(str).to_numpy(),
            "title": ["A", "B", "C"],
            "abstract": ["a", "b", "c"],
            "x": kept["x"].to_numpy(),
            "y": kept["y"].to_numpy(),
        }
    )
    return copies.assign(topic=kept["topic"].to_numpy()) if with_topic else copies


@pytest.mark.parametrize("with_topic", [True, False])
def test_topic_sizes_count_the_listing_without_making_it(atlas, with_topic):
    documents, topics = atlas.documents, atlas.topics
    copies = copies_of(documents, with_topic)
    listed = paper_table.with_copies(documents, copies, topics)
    assert (
        resources.listed_topics(documents, copies)["topic"].astype(int).tolist() == listed["topic"].astype(int).tolist()
    )
    assert resources.with_listed_sizes(topics, resources.listed_topics(documents, copies)).equals(
        resources.with_listed_sizes(topics, listed)
    )
    assert resources.listed_topics(documents, None)["topic"].tolist() == documents["topic"].tolist()


def test_a_plotly_map_gets_the_hover_texts_the_cache_read_used_to_make(atlas):
    documents, topics = atlas.documents, atlas.topics
    expected = display.hover_texts(documents, display.topic_labels(topics))
    hovers = dict(zip(documents["doc_id"].astype(str), expected))
    rows = documents.iloc[::7]
    assert resources.with_hover(rows, hovers, topics)["hover"].tolist() == expected[::7]
    assert resources.with_hover(rows, {}, topics)["hover"].tolist() == expected[::7]  # made for rows not kept
    figure = plotly_map.map_figure(resources.with_hover(documents, hovers, topics), topics, topic_map.MapState())
    shown = {text for trace in figure.data for text in (() if trace.hovertext is None else trace.hovertext)}
    assert shown and shown <= set(expected)


@pytest.mark.parametrize("links", [True, False])
def test_a_view_s_table_is_the_listing_s_table_cut_to_its_rows(atlas, links):
    documents, topics = atlas.documents, atlas.topics
    listing = paper_table.with_copies(documents, copies_of(documents, True), topics)
    listing = listing.assign(truncated=[index % 97 == 0 for index in range(len(listing))])
    whole = paper_table.papers_table(listing, topics, links=links)
    first_topic = int(listing["topic"].iloc[0])
    subsets = {
        "every paper": listing,
        "one topic": listing[listing["topic"] == first_topic],
        "a sample": listing.sample(min(40, len(listing)), random_state=3),
        "the copies": listing[listing[paper_table.COPY_COLUMN].notna()],
        "none cut": listing[~listing["truncated"]].iloc[:25],
        "by relevance to a search": paper_table.relevance_order(listing.iloc[::3], "learning"),
    }
    for name, rows in subsets.items():
        positions = listing.index.get_indexer(rows.index)
        expected = paper_table.papers_table(rows, topics, links=links)
        pd.testing.assert_frame_equal(resources.table_of_rows(whole, positions, rows), expected, obj=name)


def test_a_view_s_layers_are_the_same_from_its_rows_as_from_their_ids(atlas):
    documents, topics = atlas.documents, atlas.topics
    first_theme = int(documents["theme"].iloc[0])
    for rows in (documents, documents[documents["theme"] == first_theme], documents.iloc[::5], documents.iloc[:0]):
        mask = resources.rows_of(documents, rows)
        assert isinstance(mask, np.ndarray) and mask.sum() == len(rows)
        for state in (topic_map.MapState(), topic_map.MapState(colour_by="topic", theme=first_theme)):
            by_ids = map_layers.view_layers(documents, frozenset(rows["doc_id"].astype(str)), topics, state)
            assert map_layers.view_layers(documents, mask, topics, state) == by_ids
    elsewhere = documents.iloc[:4].reset_index(drop=True).assign(doc_id=["a", "b", "c", "d"])
    assert resources.rows_of(documents, elsewhere) == frozenset({"a", "b", "c", "d"})  # not the listing's rows
