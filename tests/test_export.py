"""dashboard.export.download_bytes: CSV without formula injection, standalone HTML, PNG/SVG through kaleido and
Chromium."""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from dashboard.export import download_bytes, kaleido_images
from dashboard.tables import paper_table

CHROMIUM = Path("/usr/bin/chromium")
needs_chromium = pytest.mark.usefixtures("chromium")  # fails in one line when Chromium is absent


def parse_csv(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8"))))


@pytest.mark.parametrize("value", ["=1+1", "+SUM(A1)", "-2+3", "@cmd", "\tx", "\rx", '=HYPERLINK("http://x")'])
def test_formula_prefixes_get_a_quote(value):
    assert download_bytes.neutralise_formula(value) == "'" + value


@pytest.mark.parametrize("value", ["plain", " =space first", "a=b", "", "'already"])
def test_other_text_is_unchanged(value):
    assert download_bytes.neutralise_formula(value) == value


def test_csv_bytes_neutralises_quotes_joins_and_keeps_utf8():
    table = pd.DataFrame(
        {
            "title": ["=cmd|' /C calc'!A0", "Café, “quotes” and 中文", None],
            "keywords": [np.array(["-neg", "ok"]), ["a", "b"], []],
            "topic": [-1, 2, 3],
            "score": [0.5, float("nan"), -1.25],
        }
    )
    rows = parse_csv(download_bytes.csv_bytes(table))
    assert rows[0] == ["title", "keywords", "topic", "score"]
    assert rows[1] == ["'=cmd|' /C calc'!A0", "'-neg; ok", "-1", "0.5"]
    assert rows[2] == ["Café, “quotes” and 中文", "a; b", "2", ""]
    assert rows[3] == ["", "", "3", "-1.25"]


def test_csv_round_trips_through_pandas():
    table = pd.DataFrame({"title": ["multi\nline, with comma", 'say "hi"'], "topic": [0, 1]})
    back = pd.read_csv(io.BytesIO(download_bytes.csv_bytes(table)))
    assert back["title"].tolist() == table["title"].tolist()
    assert back["topic"].tolist() == [0, 1]


def test_the_csv_table_is_the_papers_table_with_abstracts():
    documents = pd.DataFrame(
        {
            "doc_id": ["rUxr9Ll5FQ", "row-2"],
            "title": ["T", None],
            "abstract": ["A", "B"],
            "topic": [0, -1],
            "probability": [0.91234, 0.0],
            "x": [0.0, 1.0],
            "y": [0.0, 1.0],
            "keywords": [np.array(["k1", "k2"]), None],
            "decision": ["Oral", None],
        }
    )
    topics = pd.DataFrame({"topic": [-1, 0], "label": ["Outliers", "zero"], "size": [1, 1]})
    table = paper_table.papers_table(documents, topics, full=True)
    assert list(table.columns) == [
        "doc_id",
        "title",
        "abstract",
        "topic",
        "topic_label",
        "keywords",
        "probability",
        "decision",
        "link",
    ]
    assert table["topic_label"].tolist() == ["zero", "Outliers"]
    assert table["keywords"].tolist() == ["k1; k2", ""]
    assert table["link"].iloc[0] == "https://openreview.net/forum?id=rUxr9Ll5FQ" and pd.isna(table["link"].iloc[1])


@pytest.fixture
def figure() -> go.Figure:
    return go.Figure(go.Bar(x=[3, 1], y=["a", "b"], orientation="h"), layout={"height": 300})


def test_html_is_standalone(figure):
    page = download_bytes.figure_html_bytes(figure, "Topic <sizes>")
    assert page.lstrip().lower().startswith((b"<!doctype html", b"<html"))
    assert b"<title>Topic &lt;sizes&gt;</title>" in page
    assert b"<script src=" not in page and len(page) > 1_000_000  # plotly.js is inlined, nothing fetched


def test_html_of_an_unvalidated_figure_like_the_map():
    # The map is built with _validate=False for speed: its template stays the name "plotly_white", on which
    # plotly.io.to_html raised AttributeError ('str' object has no attribute 'get') and the map's HTML never came.
    figure = go.Figure(
        {"data": [{"type": "scattergl", "x": [0, 1], "y": [1, 0]}], "layout": {"template": "plotly_white"}},
        _validate=False,
    )
    page = download_bytes.figure_html_bytes(figure, "Topic map")
    assert b"<title>Topic map</title>" in page and b"scattergl" in page
    assert b'"plot_bgcolor":"white"' in page.replace(b" ", b"")  # the template itself travelled, not its name


def test_download_name_is_safe():
    assert download_bytes.download_name("topic atlas/../x", "csv") == "topic-atlas----x.csv"
    assert download_bytes.download_name("", "png") == "topic-atlas.png"


def test_missing_browser_gives_the_install_hint(figure, monkeypatch):
    monkeypatch.setenv("BROWSER_PATH", "/nonexistent/chromium")
    assert not kaleido_images.image_export_available()
    with pytest.raises(
        download_bytes.ImageExportUnavailable, match="PNG/SVG export needs Chromium: apt-get install chromium"
    ):
        kaleido_images.figure_image_bytes(figure, "png")


def test_unknown_image_format(figure):
    with pytest.raises(ValueError):
        kaleido_images.figure_image_bytes(figure, "gif")


@needs_chromium
def test_browser_path_defaults_to_debian_chromium(monkeypatch):
    monkeypatch.delenv("BROWSER_PATH", raising=False)
    assert kaleido_images.ensure_browser_path() == str(CHROMIUM)
    assert os.environ["BROWSER_PATH"] == str(CHROMIUM)


@needs_chromium
def test_png_and_svg_through_kaleido(figure, monkeypatch):
    monkeypatch.delenv("BROWSER_PATH", raising=False)
    png = kaleido_images.figure_image_bytes(figure, "png", width=400)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    from PIL import Image

    assert Image.open(io.BytesIO(png)).size == (400, 300)
    svg = kaleido_images.figure_image_bytes(figure, "SVG", width=400)
    assert svg.lstrip().startswith(b"<svg") and b"</svg>" in svg
