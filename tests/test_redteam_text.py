"""Red-team findings of issue 40 about text the page and its downloads pass on: items 12 and 13.

12. Markdown injection: the corpus name (``build --name``), a topic label (``topic-atlas rename``) and the search of
    a shared address (``?q=``) reached Streamlit's Markdown unescaped (the Downloads caption) or escaped but still
    auto-linked (a bare ``http://`` or ``www.`` address in the header and the Structure caption). Checked with a real
    CommonMark parser (markdown-it-py: no ``<a>``, no ``<img>``) and with GFM's autolink-literal patterns, which
    remark-gfm (Streamlit's Markdown) applies to the text after backslash escapes are resolved.
13. CSV formula neutralisation bypassed by a lone carriage return: checked by reading the bytes back with Python's
    csv module and with pandas.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from markdown_it import MarkdownIt
from streamlit.testing.v1 import AppTest

from dashboard.export import download_bytes
from dashboard.figures import publication
from dashboard.views import downloads, structure
from pipeline.cache import read_cache
from pipeline.config import BuildConfig
from pipeline.operations.build import run_build
from pipeline.operations.rename import rename_topic
from tests.conftest import CASES, needs_shared

REPO = Path(__file__).resolve().parent.parent
APP = REPO / "dashboard" / "app.py"
TINY = CASES / "01-tiny-corpus" / "abstracts_5.txt"

EVIL_CORPUS = "Evil http://evil.example/x [click](http://evil.example) ![t](http://evil.example/pixel.png)"
EVIL_LABEL = "Label www.evil.example me@evil.example [x](https://evil.example)"
EVIL_QUERY = "[win](http://evil.example) ![t](http://evil.example/q.png) HTTPS://evil.example <http://evil.example>"

# CommonMark's backslash escapes (any ASCII punctuation), resolved before remark-gfm looks for autolink literals.
BACKSLASH_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
# mdast-util-gfm-autolink-literal (remark-gfm): a URL literal and an e-mail literal.
GFM_URL = re.compile(r"(?:https?://|www(?=\.))[-.\w]+", re.IGNORECASE)
GFM_EMAIL = re.compile(r"[-.\w+]+@[-\w]+(?:\.[-\w]+)+")


def links_in(markdown: str) -> list[str]:
    """The links and images ``markdown`` would show: CommonMark's ``<a>`` and ``<img>`` (markdown-it-py), and GFM's
    autolink literals in the text left after its backslash escapes."""
    rendered = MarkdownIt("commonmark").render(markdown)
    text = BACKSLASH_ESCAPE.sub(r"\1", markdown)
    return re.findall(r"<(?:a|img)\b[^>]*>", rendered) + GFM_URL.findall(text) + GFM_EMAIL.findall(text)


def visible(markdown: str) -> str:
    """What ``markdown`` reads as: escapes resolved, the invisible word joiner gone."""
    return BACKSLASH_ESCAPE.sub(r"\1", markdown).replace("\u2060", "")


def test_the_checker_finds_what_the_red_team_found():
    """The checker itself: unescaped links and images, and escaped bare addresses, are found."""
    assert len(links_in("[a](http://x.example) ![i](http://x.example/p.png)")) >= 2
    assert links_in("http\\://evil\\.example") == ["http://evil.example"]
    assert links_in("www\\.evil\\.example") == ["www.evil.example"]
    assert links_in("me@evil\\.example") == ["me@evil.example"]
    assert links_in("plain text: no address") == []


def test_the_downloads_caption_shows_a_hostile_caption_as_text():
    caption = publication.caption_text(
        {"created_at": "2025-01-01T00:00:00"},
        EVIL_CORPUS,
        3,
        publication.filter_note([EVIL_LABEL], EVIL_QUERY),
    )
    shown = downloads.caption_markdown(caption)
    assert links_in(shown) == []
    assert visible(shown) == "Caption: " + caption  # every character still there, read as written


def test_the_structure_caption_shows_shortened_names_as_text():
    shown = structure.shortened_caption([EVIL_LABEL, EVIL_CORPUS])
    assert links_in(shown) == []
    assert visible(shown).endswith(f"{EVIL_LABEL} · {EVIL_CORPUS}")


@pytest.fixture(scope="module")
def hostile_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 4-abstract cache (UMAP and HDBSCAN skipped: a few seconds) named with links and images, its one topic
    renamed to a label with bare addresses."""
    needs_shared(TINY)
    root = tmp_path_factory.mktemp("redteam-text")
    paragraphs = [part for part in TINY.read_text(encoding="utf-8").split("\n\n") if part.strip()]
    corpus = root / "four.txt"
    corpus.write_text("\n\n".join(paragraphs[:4]), encoding="utf-8")
    cache = root / "cache"
    run_build(
        corpus, cache, replace(BuildConfig(), corpus_name=EVIL_CORPUS), embedding_store=root / "embeddings.sqlite"
    )
    rename_topic(cache, 0, EVIL_LABEL)
    return cache


def test_a_shared_address_and_a_hostile_cache_draw_no_link(hostile_cache, monkeypatch):
    """The page opened from an address with a hostile ``?q=`` and a topic filter, on a cache whose name and label
    carry links, images and bare addresses: the header and the Downloads caption show them as text."""
    assert read_cache(hostile_cache).topics["label"].tolist() == [EVIL_LABEL]
    monkeypatch.setenv("ATLAS_CACHE", str(hostile_cache))
    monkeypatch.setenv("ATLAS_MAP_RENDERER", "plotly")
    app = AppTest.from_file(str(APP), default_timeout=60)
    app.query_params["q"] = EVIL_QUERY
    app.query_params["topic"] = "0"
    app.session_state["tab"] = "Downloads"
    app.run()
    assert not app.exception, [item.value for item in app.exception]
    header = next(caption.value for caption in app.caption if " · built " in caption.value)
    assert visible(header).startswith(EVIL_CORPUS + " · built ")
    assert links_in(header) == []
    shown = next(caption.value for caption in app.caption if caption.value.startswith("Caption: "))
    assert EVIL_QUERY in visible(shown) and EVIL_LABEL in visible(shown) and EVIL_CORPUS in visible(shown)
    assert links_in(shown) == []
    bodies = [element.value for kind in ("caption", "markdown", "info", "warning") for element in app.get(kind)]
    assert [body for body in bodies if links_in(str(body))] == []


# --- item 13: CSV ------------------------------------------------------------------------------------------------

FORMULA_STARTS = tuple(download_bytes.FORMULA_PREFIXES)
HOSTILE_CELLS = [
    'harmless\r=HYPERLINK("http://evil.example","click")',
    "harmless\r\n=1+1",
    "\r=cmd|' /C calc'!A0",
    "two\rbreaks\r@SUM(A1)",
    "line\n-2+3",
    "plain",
]


def hostile_table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "title": HOSTILE_CELLS,
            "keywords": [np.array(["ok", "x\r+1"])] + [["a"]] * (len(HOSTILE_CELLS) - 1),
            "topic": list(range(len(HOSTILE_CELLS))),
        }
    ).rename(columns={"keywords": "key\rwords"})


def test_a_carriage_return_cannot_start_a_row_in_python_csv():
    table = hostile_table()
    rows = list(csv.reader(io.StringIO(download_bytes.csv_bytes(table).decode("utf-8"), newline="")))
    assert len(rows) == len(table) + 1  # the header and one row per paper: no row split at a "\r"
    assert all(len(row) == 3 for row in rows)
    assert [cell for row in rows for cell in row if cell.startswith(FORMULA_STARTS)] == []
    assert [row[2] for row in rows[1:]] == [str(topic) for topic in table["topic"]]
    assert rows[0][1] == "key\nwords"  # the header's break kept, inside its quoted cell
    assert rows[1][0] == 'harmless\n=HYPERLINK("http://evil.example","click")'  # the text kept, in its own cell
    assert rows[3][0] == "'\n=cmd|' /C calc'!A0"  # a cell starting with "\r" still neutralised


def test_a_carriage_return_cannot_start_a_row_in_pandas():
    table = hostile_table()
    back = pd.read_csv(io.BytesIO(download_bytes.csv_bytes(table)), dtype=str, keep_default_na=False)
    assert back.shape == table.shape
    assert back["topic"].tolist() == [str(topic) for topic in table["topic"]]
    cells = [str(cell) for cell in back.to_numpy().ravel()] + [str(column) for column in back.columns]
    assert [cell for cell in cells if cell.startswith(FORMULA_STARTS)] == []
    expected = [
        download_bytes.neutralise_formula(cell).replace("\r\n", "\n").replace("\r", "\n") for cell in HOSTILE_CELLS
    ]
    assert back["title"].tolist() == expected
    assert back["key\nwords"].iloc[0] == "ok; x\n+1"
