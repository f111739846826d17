"""Display text: a title or abstract as a reader should see it, whatever markup its authors typed.

OpenReview abstracts mix LaTeX, Markdown and HTML (../shared/cases/19: ``\\begin{abstract}``, ``[the
GitHub](https://...)``, ``&amp;``, ``<b>bold</b>``). One rule for every place a title or abstract is shown (paper
table, map hover, paper panel, find results, exports; issue 40, item 8): **what the author wrote**, with

- HTML as typed: an entity or a tag is text (``&amp;`` reads "&amp;", ``<br>`` reads "<br>"), since a page cannot
  tell markup from an abstract that writes about markup, and removing it changed what authors wrote;
- LaTeX's prose commands rendered (``\\emph{x}``, ``{\\em x}``, ``\\textsuperscript{2}``, citations, ties,
  quotes; :func:`pipeline.ingest.latex.readable_latex`), and its math either typeset (the paper panel, by
  Streamlit's KaTeX: :func:`readable_parts`) or, where only text can go (table, hover), converted to Unicode
  (:func:`readable_title`: ``$\\ell^p$`` -> ℓᵖ, ``$O(n \\log n)$`` -> O(n log n));
- a Markdown link as its text and address (``[the GitHub](https://x)`` -> "the GitHub (https://x)").

The CSV export keeps the cells exactly as written. The cache keeps the text as written; the model text is
:func:`pipeline.ingest.clean.model_text` (entities decoded and tags removed there: they are no words).
"""

from __future__ import annotations

import html
import re

from pipeline.ingest.latex import math_piece_as_text, readable_pieces

# [text](url), the url possibly holding one level of parentheses.
MARKDOWN_LINK = re.compile(r"\[([^\[\]]{0,300})\]\(\s*((?:[^()\s]|\([^()\s]*\))+)\s*\)")
_SPACES = re.compile(r"[ \t]{2,}")
# What :func:`readable_title` changes beyond runs of spaces: LaTeX (a backslash, braces, math between dollars, ties,
# quotes written `` and '', dashes written -- or ---), Markdown links ("]("), HTML entities, line breaks. A text with
# none of these comes back as written, runs of spaces and tabs collapsed and the ends stripped, without the reading
# (about 40 us a title: 6 s of a fresh server's first page at 154,761 papers; most titles are plain).
_NEEDS_READING = re.compile(r"[\\{}$~`&<>^_\r\n]|--|''|\]\(")


def unescape_entities(text: str) -> str:
    """HTML entities decoded, also when escaped twice (``&amp;amp;`` -> ``&``, ``&quot;`` -> ``"``). Never raises."""
    for _ in range(3):
        decoded = html.unescape(text)
        if decoded == text:
            break
        text = decoded
    return text


def markdown_links_as_text(text: str) -> str:
    """``[the GitHub](https://x)`` -> ``the GitHub (https://x)``; a link whose text is its address -> the address."""

    def link(match: re.Match[str]) -> str:
        label, url = match.group(1).strip(), match.group(2)
        return url if not label or label == url or label.rstrip("/") == url.rstrip("/") else f"{label} ({url})"

    return MARKDOWN_LINK.sub(link, text)


def readable_parts(text: str) -> list[tuple[str, str]]:
    """``text`` cut into ("prose", readable text) and ("math", LaTeX math with its delimiters) pieces, in order:
    Markdown links as text and address, LaTeX prose rendered (:func:`pipeline.ingest.latex.readable_pieces`), runs
    of spaces collapsed, HTML left as typed. Never raises."""
    if "](" in text:
        text = markdown_links_as_text(text)
    return [(kind, _SPACES.sub(" ", piece) if kind == "prose" else piece) for kind, piece in readable_pieces(text)]


def readable_text(text: str | None) -> str | None:
    """A title or abstract for display, math kept as written: :func:`readable_parts` joined (``\\begin{abstract}``
    and ``\\emph{...}`` gone, ``$\\textbf{P}$redicting`` -> Predicting, ``&amp;`` and ``<b>`` as typed). None ->
    None. Never raises."""
    if text is None:
        return None
    return "".join(piece for _, piece in readable_parts(str(text))).strip()


def readable_title(text: str | None) -> str | None:
    """A title (or an abstract's start) for a place that shows only text (table, hover): :func:`readable_parts` with
    the math as Unicode text (``$L_p$-Convolution`` -> Lₚ-Convolution, ``IT$^3$`` -> IT³, ``$\\tau$Jp`` -> τJp,
    ``$\\ell^p$`` -> ℓᵖ, ``$O(n \\log n)$`` -> O(n log n): :func:`pipeline.ingest.latex.math_piece_as_text`).
    None -> None. Never raises."""
    if text is None:
        return None
    text = str(text)
    if not _NEEDS_READING.search(text):
        return _SPACES.sub(" ", text.strip()).strip()
    parts = readable_parts(text)
    return "".join(piece if kind == "prose" else math_piece_as_text(piece) for kind, piece in parts).strip()
