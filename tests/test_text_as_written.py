"""Issue 40, item 8: every title and abstract is shown as its author wrote it, by one rule (pipeline.ingest.readable):
HTML as typed (``&amp;`` reads "&amp;", ``<br>`` and ``<b>`` read as typed) in the table, the hover, the paper panel
and the CSV; LaTeX's prose commands rendered (``\\textsuperscript{2}`` -> ², ``{\\em x}`` -> x); its math typeset by
KaTeX in the panel and converted to Unicode where only text goes (``$\\ell^p$`` -> ℓᵖ, ``$O(n \\log n)$`` ->
O(n log n), not "O(n logn)"). The conversion is tested as functions; the panel and the hover in Chromium over a
4-paper cache (UMAP and HDBSCAN skipped: a few seconds).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path

import pytest

from dashboard import display
from dashboard.export import download_bytes
from dashboard.tables import paper_table
from pipeline.cache import read_cache
from pipeline.ingest.readable import readable_parts, readable_text, readable_title
from pipeline.operations.build import run_build
from tests.streamlit_server import chromium_browser, streamlit_server
from tests.test_browser_map import CHROMIUM_ARGS, MAP_FRAME, POINT_TITLES, open_map, settle_camera
from tests.test_redteam_text import links_in

LITERAL = "&amp; appears literally, a stray <br> tag and <b>bold</b> as typed"
ABSTRACT = (
    f"{LITERAL}. We bound the $\\ell^p$ norm and the $\\ell_p$ ball of sparse vectors, ranked "
    "1\\textsuperscript{st} with x\\textsuperscript{2} growth, and {\\em really} sort in $O(n \\log n)$ time:\n"
    "\\begin{align*} a &= b + c \\\\ d &= e \\end{align*} which holds for every sparse vector we tried."
)
TITLE = "Sparse $\\ell^p$ recovery in $O(n \\log n)$ with <b>bold</b> &amp; more"
TITLE_SHOWN = "Sparse ℓᵖ recovery in O(n log n) with <b>bold</b> &amp; more"


@pytest.mark.parametrize(
    ("written", "as_text"),
    [
        ("$\\ell^p$ norms", "ℓᵖ norms"),
        ("the $\\ell_p$ ball", "the ℓₚ ball"),
        ("in $O(n \\log n)$ time", "in O(n log n) time"),
        ("$a \\leq b$ and $\\|x\\|_2$", "a ≤ b and ‖x‖₂"),
        ("$\\sum_{i=1}^n x_i$", "∑ᵢ₌₁ⁿ xᵢ"),
        ("ranked 1\\textsuperscript{st}, x\\textsuperscript{2}", "ranked 1ˢᵗ, x²"),
        ("we {\\em really} do", "we really do"),
        ("see \\begin{align*} a &= b \\\\ c &= d \\end{align*} here", "see a = b; c = d here"),
        ("costs $5 and $6", "costs $5 and $6"),  # money, not math (pandoc's rule)
        (LITERAL, LITERAL),  # HTML as typed
    ],
)
def test_latex_converts_to_faithful_text_and_html_stays_as_typed(written, as_text):
    assert readable_title(written) == as_text
    assert display.document_heading(written, None) == as_text  # the table, the hovers, the search results
    assert display.document_heading(None, written, 500) == as_text  # a paper without a title: its abstract's start


def test_the_panel_s_markdown_typesets_the_math_and_shows_the_rest_literally():
    markdown = display.markdown_with_math(ABSTRACT)
    assert "$\\ell^p$" in markdown and "$\\ell_p$" in markdown and "$O(n \\log n)$" in markdown
    assert "\n$$\n\\begin{align*} a &= b + c \\\\ d &= e \\end{align*}\n$$\n" in markdown  # display math for KaTeX
    assert "\\&amp; appears literally, a stray \\<br\\> tag and \\<b\\>bold\\</b\\>" in markdown
    assert "1ˢᵗ with x² growth, and really sort" in markdown
    prose = [piece for kind, piece in readable_parts(ABSTRACT) if kind == "prose"]
    assert not any("\\" in piece for piece in prose)
    hostile = "[click](http://evil.example) ![i](http://evil.example/p.png) www.evil.example *x* # h"
    assert links_in(display.markdown_with_math(hostile)) == []
    assert display.markdown_with_math("costs $5 and $6") == "costs \\$5 and \\$6"
    labelled = display.markdown_with_math("so \\begin{equation}\\label{eq:a} x = 1 \\end{equation} holds")
    assert "\\label" not in labelled and "$$\n\\begin{equation} x = 1 \\end{equation}\n$$" in labelled


def test_every_place_applies_the_same_rule(text_cache: Path):
    """Over a built cache: the table's title as :func:`readable_title` gives it, the panel's title the same and its
    abstract as written, the CSV's cells exactly as written."""
    atlas = read_cache(text_cache)
    documents = atlas.documents
    table = paper_table.papers_table(documents, atlas.topics)
    assert TITLE_SHOWN in table["title"].tolist()
    details = paper_table.paper_details(documents, atlas.topics, "w1")
    assert details is not None and details["title"] == TITLE_SHOWN and details["abstract_as_written"] == ABSTRACT
    assert LITERAL in details["abstract"] and readable_text(ABSTRACT) == details["abstract"]
    download = download_bytes.csv_bytes(paper_table.papers_table(documents, atlas.topics, full=True))
    rows = {row["doc_id"]: row for row in csv.DictReader(io.StringIO(download.decode("utf-8")))}
    assert rows["w1"]["title"] == TITLE and rows["w1"]["abstract"] == ABSTRACT


CORPUS_ROWS = [
    ("w1", TITLE, ABSTRACT),
    ("w2", "Sparse vector recovery for large graphs", "We recover sparse vectors of large graphs from few samples."),
    ("w3", "Sparse sampling of graph vectors", "Sampling sparse graph vectors with bounds on every norm we tried."),
    ("w4", "Norm bounds of sparse recovery", "Bounds on the norm of sparse recovery from graph samples and vectors."),
]


@pytest.fixture(scope="module")
def text_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("text-as-written")
    corpus = root / "papers.csv"
    with corpus.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "title", "abstract"])
        writer.writerows(CORPUS_ROWS)
    cache = root / "cache"
    run_build(corpus, cache, embedding_store=root / "embeddings.sqlite")
    return cache


@pytest.fixture(scope="module")
def server_url(text_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("text-as-written-log") / "server.log"
    with streamlit_server(text_cache, log, {"ATLAS_MAP_RENDERER": "webgl"}) as (url, _):
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with chromium_browser(CHROMIUM_ARGS) as chromium:
        yield chromium


# The abstract's prose as a reader sees it: the text of the panel's abstract without KaTeX's typeset formulas.
PROSE_OF_ABSTRACT = """() => {
  const node = document.querySelector('.st-key-paper-abstract').cloneNode(true);
  node.querySelectorAll('.katex').forEach((formula) => formula.replaceWith(' [math] '));
  return node.textContent;
}"""


def test_the_panel_and_the_hover_show_the_text_as_written(browser, server_url):
    """In Chromium: the paper panel shows "&amp;", "<br>" and "<b>" as typed and typesets ``$\\ell^p$``, ``$\\ell_p$``,
    ``$O(n \\log n)$`` and the ``align*`` environment with KaTeX (no formula failed, no LaTeX left in the prose); the
    map's hover shows the title with its math as text and its tags as typed."""
    page, frame = open_map(browser, f"{server_url}/?paper=w1", 1500, 1000)
    try:
        abstract = page.locator(".st-key-paper-abstract")
        abstract.wait_for(timeout=90_000)
        abstract.locator(".katex").first.wait_for(timeout=30_000)
        assert abstract.locator(".katex").count() == 4  # ℓ^p, ℓ_p, O(n log n), the aligned block
        assert abstract.locator(".katex-display").count() == 1
        assert abstract.locator(".katex-error").count() == 0
        annotations = abstract.evaluate("(node) => [...node.querySelectorAll('annotation')].map((a) => a.textContent)")
        assert "\\ell^p" in annotations and "O(n \\log n)" in annotations, annotations
        prose = " ".join(page.evaluate(PROSE_OF_ABSTRACT).split())
        assert LITERAL in prose and "1ˢᵗ with x² growth, and really sort in [math] time" in prose, prose
        assert "\\" not in prose and "$" not in prose, prose
        assert abstract.locator("b").count() == 0  # "<b>" is text, never bold
        title = page.locator(".st-key-paper-panel [data-testid='stText']").first.inner_text()
        assert title.strip() == TITLE_SHOWN
        page.keyboard.press("Escape")
        page.locator('[role="dialog"]').wait_for(state="detached")
        settle_camera(frame)
        index = page.evaluate(POINT_TITLES).index(TITLE_SHOWN)
        plot = frame.locator("#plot").bounding_box()
        x, y = frame.evaluate(f"() => window.__atlas.screen({index})")
        page.mouse.move(plot["x"] + x, plot["y"] + y)
        tooltip = page.frame_locator(MAP_FRAME).locator("#tooltip")
        tooltip.wait_for(state="visible", timeout=10_000)
        assert tooltip.inner_text().startswith(TITLE_SHOWN), tooltip.inner_text()
    finally:
        page.close()
