"""Display text and style shared by the page's figures and tables: topic labels and colours, paper headings, hover
text, shortening, and the one escape rule for text that reaches plotly.

Plotly renders a subset of HTML (``<b>``, ``<br>``, ``<a>`` ...) in hover labels, annotations and category tick
labels, so every string that comes from the corpus goes through :func:`plotly_escape` before it reaches a figure.
Plotly decodes ``&amp;``, ``&lt;`` and ``&gt;`` but not ``&quot;`` or ``&#x27;``, so quotes are left as they are (7
ICLR 2025 titles have a double quote). Corpus text that reaches Streamlit's Markdown goes through
``unlinked(paper_table.markdown_escape(text))`` (:func:`unlinked`: no bare address becomes a link). Topic labels come
from :func:`topic_labels` (pipeline.cache.display_labels), the same unique, non-empty text everywhere.
"""

from __future__ import annotations

import html
import re
import textwrap
from typing import Any

import numpy as np
import pandas as pd

from pipeline.cache import display_labels
from pipeline.ingest.readable import readable_parts, readable_title

OUTLIER_TOPIC = -1
OUTLIER_COLOUR = "#9E9E9E"
OUTLIER_LABEL = "Outliers"

# 60 qualitative colours readable on white: plotly's D3, Dark24, Alphabet, Set1, Dark2, Bold, Vivid, Prism and
# Safe palettes, keeping a colour only when it has some chroma (not grey, which marks outliers), CIE L* between
# 25 and 80, and a CIE76 distance of at least 15 from every colour already kept.
TOPIC_PALETTE: tuple[str, ...] = (
    "#1F77B4",
    "#FF7F0E",
    "#2CA02C",
    "#D62728",
    "#9467BD",
    "#8C564B",
    "#E377C2",
    "#BCBD22",
    "#17BECF",
    "#2E91E5",
    "#E15F99",
    "#FB0D0D",
    "#DA16FF",
    "#B68100",
    "#750D86",
    "#EB663B",
    "#511CFB",
    "#00A08B",
    "#FB00D1",
    "#FC0080",
    "#6C7C32",
    "#862A16",
    "#A777F1",
    "#DA60CA",
    "#6C4516",
    "#AF0038",
    "#AA0DFE",
    "#3283FE",
    "#85660D",
    "#782AB6",
    "#1C8356",
    "#DEA0FD",
    "#FEAF16",
    "#F8A19F",
    "#90AD1C",
    "#B10DA1",
    "#C075A6",
    "#B00068",
    "#A65628",
    "#7570B3",
    "#66A61E",
    "#7F3C8D",
    "#E73F74",
    "#80BA5A",
    "#008695",
    "#CF1C90",
    "#F97B72",
    "#24796C",
    "#479B55",
    "#00B5F7",
    "#86CE00",
    "#E48F72",
    "#CC503E",
    "#94346E",
    "#6F4070",
    "#88CCEE",
    "#CC6677",
    "#999933",
    "#3366CC",
    "#0099C6",
)

HOVER_SNIPPET_CHARS = 100
HOVER_LINE_CHARS = 70
FONT_FAMILY = "Inter, 'Source Sans Pro', Arial, sans-serif"


def topic_colour(topic: int) -> str:
    """Colour of a topic id: grey for the outlier topic -1, else ``TOPIC_PALETTE[topic % 60]`` (distinct up to 60
    topics)."""
    if topic == OUTLIER_TOPIC:
        return OUTLIER_COLOUR
    return TOPIC_PALETTE[int(topic) % len(TOPIC_PALETTE)]


def shorten(text: str, max_chars: int) -> str:
    """``text`` cut at a word boundary to at most ``max_chars`` characters, with "…" when cut."""
    text = " ".join(str(text).split())
    if len(text) <= max_chars:
        return text
    cut = text[: max_chars - 1].rsplit(" ", 1)[0] if " " in text[: max_chars - 1] else text[: max_chars - 1]
    return cut.rstrip(" ,;:") + "…"


def plotly_escape(text: Any) -> str:
    """``text`` with ``&``, ``<`` and ``>`` escaped, so plotly shows it literally; quotes stay (plotly does not decode
    ``&quot;``, so :func:`html.escape`'s default would show it as ``&quot;``)."""
    return html.escape(str(text), quote=False)


# Streamlit renders Markdown with remark-gfm, whose autolink literals turn "http://…", "https://…", "www.…" and
# "name@host.tld" in plain text into links. They are found in the text *after* backslash escapes are resolved, so
# paper_table.markdown_escape ("http\://") does not stop them (issue 40, item 12). An invisible U+2060 WORD JOINER
# (no width, no line break, not a word character for the autolink rules) goes before the ":" of "://", between
# "www" and its ".", and after every "@": none of the patterns matches any more and the text reads the same.
WORD_JOINER = "\u2060"
_AUTOLINK_POINTS = re.compile(r"(?<=[a-z0-9])(?=\\?://)|(?<=www)(?=\\?\.)|(?<=@)", re.IGNORECASE)


def unlinked(text: str) -> str:
    """``text`` with a :data:`WORD_JOINER` where a GFM autolink literal would start (before the ":" of "://",
    between "www" and ".", after "@"), so Streamlit's Markdown shows a bare address as text, never as a link.
    Apply it to Markdown that is already escaped (``unlinked(paper_table.markdown_escape(text))``); escaping after
    it is safe too (the joiner is no Markdown)."""
    return _AUTOLINK_POINTS.sub(WORD_JOINER, str(text))


# Every character Markdown, GFM or remark-math gives a meaning to (paper_table.markdown_escape's set).
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$&:^=])")
# Math environments KaTeX typesets as they are; the other math environments' bodies go in KaTeX's "aligned".
KATEX_ENVIRONMENTS = frozenset(
    "align align* aligned alignat alignat* gather gather* gathered equation equation* split cases array matrix"
    " pmatrix bmatrix Bmatrix vmatrix Vmatrix".split()
)
_MATH_ENVIRONMENT = re.compile(r"\\begin\{([a-zA-Z]+\*?)\}(.*)\\end\{\1\}", re.DOTALL)
_MATH_DELIMITERS = re.compile(r"\$\$(.*)\$\$|\\\[(.*)\\\]|\$(.*)\$|\\\((.*)\\\)", re.DOTALL)


def literal_markdown(text: str) -> str:
    """``text`` as Markdown that shows exactly these characters: every Markdown character backslash-escaped, a bare
    address unlinked (:func:`unlinked`), a line break kept (a blank line as a new paragraph)."""
    lines = [unlinked(_MARKDOWN_SPECIAL.sub(r"\\\1", re.sub(r"\s+", " ", line))) for line in str(text).split("\n")]
    return "  \n".join(lines)


_MATH_LABEL = re.compile(r"\\(?:label|nonumber|notag)(?:\{[^{}]*\})?")


def _katex_math(piece: str) -> str:
    """A math piece (its delimiters included) as remark-math Markdown: inline ``$...$``, or a ``$$`` block for display
    math and environments (KaTeX typesets ``align*`` only in display mode). ``\\label{...}`` and ``\\nonumber``,
    which KaTeX does not know, are left out."""
    piece = _MATH_LABEL.sub("", piece)
    if environment := _MATH_ENVIRONMENT.fullmatch(piece.strip()):
        name, body = environment.groups()
        shown = piece.strip() if name in KATEX_ENVIRONMENTS else f"\\begin{{aligned}}{body}\\end{{aligned}}"
        return "\n\n$$\n" + shown.replace("$", "") + "\n$$\n\n"
    delimited = _MATH_DELIMITERS.fullmatch(piece.strip())
    if delimited is None:
        return literal_markdown(piece)
    display_body, bracket_body, inline_body, paren_body = delimited.groups()
    if display_body is not None or bracket_body is not None:
        shown = (display_body if display_body is not None else bracket_body).replace("$", "").strip()
        return "\n\n$$\n" + shown + "\n$$\n\n"
    body = " ".join((inline_body if inline_body is not None else paren_body).split())
    return f"${body}$" if body else ""


def markdown_with_math(text: str | None) -> str:
    """A title or abstract as Markdown for st.markdown, written as the author wrote it (issue 40, item 8): the prose
    shows literally (``&amp;``, ``<br>``, ``**`` as typed: :func:`literal_markdown`; LaTeX prose commands rendered:
    pipeline.ingest.readable.readable_parts) and the math is typeset by Streamlit's KaTeX (``$\\ell^p$``,
    ``\\begin{align*}...\\end{align*}`` in a display block). KaTeX runs without ``trust``, so a formula cannot
    make a link, a class or a style. None or blank -> ""."""
    if not text or not str(text).strip():
        return ""
    parts = readable_parts(str(text))
    markdown = "".join(literal_markdown(piece) if kind == "prose" else _katex_math(piece) for kind, piece in parts)
    return markdown.strip()


def escaped_lines(text: str, width: int = HOVER_LINE_CHARS) -> str:
    """Escape ``text`` (:func:`plotly_escape`) and wrap it at ``width`` characters with ``<br>`` (the only markup in the
    result)."""
    return "<br>".join(plotly_escape(line) for line in textwrap.wrap(" ".join(str(text).split()), width) or [""])


def topic_labels(topics: pd.DataFrame) -> dict[int, str]:
    """{topic id: label} from a topics table (columns topic, label): the outlier topic is "Outliers", an empty or
    missing label "Topic N", a repeated one "label (topic N)" (pipeline.cache.display_labels)."""
    labels = display_labels(topics)
    labels[OUTLIER_TOPIC] = OUTLIER_LABEL
    return labels


def document_heading(title: Any, abstract: Any, max_chars: int = HOVER_SNIPPET_CHARS) -> str:
    """What names a document in one line: its title, else the first ``max_chars`` characters of its abstract, else "(no
    text)"; as written, LaTeX rendered and its math as Unicode text (pipeline.ingest.readable.readable_title). Not
    escaped."""
    if isinstance(title, str) and title.strip():
        return " ".join((readable_title(title) or title).split())
    if isinstance(abstract, str) and abstract.strip():
        return shorten(readable_title(abstract) or abstract, max_chars)
    return "(no text)"


def hover_texts(documents: pd.DataFrame, labels: dict[int, str]) -> list[str]:
    """Escaped hover text per document row: heading (title or abstract start), then "Topic: label".

    ``documents`` needs columns title, abstract, topic. Returns one string per row, in row order. When
    ``documents`` has a ``hover`` column (see :func:`with_hover_texts`) it is returned as is.
    """
    if "hover" in documents.columns:
        return documents["hover"].tolist()
    texts = []
    for title, abstract, topic in zip(documents["title"], documents["abstract"], documents["topic"]):
        heading = escaped_lines(document_heading(title, abstract))
        label = plotly_escape(labels.get(int(topic), f"Topic {int(topic)}"))
        texts.append(f"<b>{heading}</b><br>Topic: {label}")
    return texts


def with_hover_texts(documents: pd.DataFrame, topics: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``documents`` with a ``hover`` column, so maps of any subset skip rebuilding hover text
    (about 0.2 s for 11,672 papers)."""
    return documents.assign(hover=hover_texts(documents.drop(columns="hover", errors="ignore"), topic_labels(topics)))


def as_text_list(value: Any) -> list[str]:
    """A list cell as a list of non-empty strings: accepts list, tuple, numpy array, a single string or None/NaN."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, (list, tuple, np.ndarray, pd.Series)):
        return [str(item) for item in value if item is not None and str(item).strip()]
    if isinstance(value, float) and np.isnan(value):
        return []
    return [str(value)]
