"""Display text: a title or abstract as a reader should see it, whatever markup its authors typed.

OpenReview abstracts mix LaTeX, Markdown and HTML (../shared/cases/19: ``\\begin{abstract}``, ``[the
GitHub](https://...)``, ``&amp;``, ``<b>bold</b>``). :func:`readable_text` is the one function the page calls
wherever a title or abstract is shown (paper table, paper view, map hover, find results). The cache keeps the text
as written; the model text is :func:`pipeline.ingest.clean.model_text`.
"""

from __future__ import annotations

import html
import re

from pipeline.ingest.latex import inline_math_as_text, readable_latex

# [text](url), the url possibly holding one level of parentheses.
MARKDOWN_LINK = re.compile(r"\[([^\[\]]{0,300})\]\(\s*((?:[^()\s]|\([^()\s]*\))+)\s*\)")
# Formatting tags only: "<answer>" or "<think>" in an abstract about reasoning tokens are words, not markup.
_FORMAT_TAG = re.compile(
    r"</?(?:b|i|em|strong|u|sup|sub|p|br|span|div|code|tt|small|big|font|a)(?:\s[^<>]{0,200})?\s*/?>", re.IGNORECASE
)
_SPACES = re.compile(r"[ \t]{2,}")


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


def readable_text(text: str | None) -> str | None:
    """A title or abstract for display: entities decoded, formatting tags removed, Markdown links as their text and
    address, LaTeX rendered for reading (:func:`pipeline.ingest.latex.readable_latex`: ``\\begin{abstract}`` and
    ``\\emph{...}`` gone, ``$\\textbf{P}$redicting`` -> Predicting, math kept as written), runs of spaces collapsed.
    None -> None. Never raises."""
    if text is None:
        return None
    text = unescape_entities(str(text))
    if "<" in text:
        text = _FORMAT_TAG.sub("", text)
    if "](" in text:
        text = markdown_links_as_text(text)
    return _SPACES.sub(" ", readable_latex(text)).strip()


def readable_title(text: str | None) -> str | None:
    """A title for display: :func:`readable_text`, and its inline math as text (``$L_p$-Convolution`` ->
    Lₚ-Convolution, ``IT$^3$`` -> IT³, ``$\\tau$Jp`` -> τJp; :func:`pipeline.ingest.latex.inline_math_as_text`).
    None -> None. Never raises."""
    # the math first: readable_text turns an escaped dollar ("\\$5") into a dollar that would open math
    return readable_text(inline_math_as_text(text)) if text else readable_text(text)
