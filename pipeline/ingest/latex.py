"""LaTeX in abstracts: removed from the text that is modelled, rendered lightly in the text that is read.

Authors type abstracts into OpenReview in LaTeX habits: ``\\emph{...}``, ``\\cite{...}``, escaped specials
(``\\%``, ``\\&``, ``\\_``, ``\\#``, ``\\$``), ties (``Fig.~3``), ``\\`\\`quotes''`` and ``--`` dashes, and math
between dollars. :func:`strip_latex` turns them into plain words for c-TF-IDF and the encoder (math and citations
dropped, a formatted word kept); :func:`readable_latex` turns them into what a reader expects to see (math kept as
written, since researchers read it; citations and labels dropped; quotes and dashes typeset).

Only LaTeX that can be recognised without a parser is touched: a ``%`` that is not escaped stays ("50% fewer"),
since abstracts use it as a percent sign far more often than as a LaTeX comment.
"""

from __future__ import annotations

import re

_PROTECTED_DOLLAR = "\x00"
_ESCAPED_SPECIAL = re.compile(r"\\([%&_#{}])")
_MATH = re.compile(r"\$\$.*?\$\$|\$[^$]{0,400}?\$|\\\(.*?\\\)|\\\[.*?\\\]", re.DOTALL)
# References whose argument is a key, not words: removed with their argument (and a tie or space before them).
_REFERENCE = re.compile(
    r"[~ ]?\\(?:cite[a-zA-Z]*|ref|eqref|autoref|cref|Cref|label|footnotemark)\*?(?:\[[^\]]*\])*\{[^}]*\}"
)
# Commands whose argument is text to keep: \emph{word} -> word.
_TEXT_COMMAND = re.compile(
    r"\\(?:emph|textbf|textit|texttt|textsc|textrm|textsf|underline|mbox|text|url|href\{[^}]*\})\*?\{([^{}]*)\}"
)
_FOOTNOTE = re.compile(r"\\footnote\{([^{}]*)\}")
_COMMAND = re.compile(r"\\[a-zA-Z]+\*?")
_TIE = re.compile(r"(?<=[^\s~])~(?=[^\s~])")
_OPEN_QUOTE = re.compile(r"``")
_CLOSE_QUOTE = re.compile(r"''")


def _protect_dollars(text: str) -> str:
    return text.replace("\\$", _PROTECTED_DOLLAR)


def strip_latex(text: str) -> str:
    """Plain words of a LaTeX-flavoured text, for modelling: math and references removed, formatting commands
    replaced by their argument, other command names removed, escaped specials unescaped, ties made spaces.
    Braces are left for the caller (pipeline.ingest.clean removes them). Never raises."""
    text = _protect_dollars(text)
    text = _MATH.sub(" ", text)
    text = _REFERENCE.sub(" ", text)
    text = _FOOTNOTE.sub(r" \1 ", text)
    text = _TEXT_COMMAND.sub(r"\1", text)
    text = _ESCAPED_SPECIAL.sub(r"\1", text)
    text = _COMMAND.sub(" ", text)
    text = _TIE.sub(" ", text)
    text = _OPEN_QUOTE.sub('"', _CLOSE_QUOTE.sub('"', text))
    return text.replace(_PROTECTED_DOLLAR, "$")


def readable_latex(text: str) -> str:
    """A LaTeX-flavoured abstract as a reader expects it: ``\\emph{x}`` -> x, citations and labels removed,
    ``\\footnote{x}`` -> (x), ``\\%`` -> %, ``Fig.~3`` -> Fig. 3, ````x''`` -> “x”, ``---`` -> —, ``--`` -> –;
    math between dollars is kept as written. Text without LaTeX comes back unchanged. Never raises."""
    if "\\" not in text and "~" not in text and "``" not in text and "--" not in text:
        return text
    text = _protect_dollars(text)
    pieces = []
    last = 0
    for match in _MATH.finditer(text):  # leave math alone, render the prose between
        pieces.append(_readable_prose(text[last : match.start()]))
        pieces.append(match.group(0))
        last = match.end()
    pieces.append(_readable_prose(text[last:]))
    return "".join(pieces).replace(_PROTECTED_DOLLAR, "$")


def _readable_prose(text: str) -> str:
    text = _REFERENCE.sub("", text)
    text = _FOOTNOTE.sub(r" (\1)", text)
    for _ in range(3):  # nested formatting: \textbf{\emph{x}}
        text = _TEXT_COMMAND.sub(r"\1", text)
    text = _ESCAPED_SPECIAL.sub(r"\1", text)
    text = _TIE.sub(" ", text)
    text = _OPEN_QUOTE.sub("“", _CLOSE_QUOTE.sub("”", text))
    text = text.replace("---", "—").replace("--", "–")
    return re.sub(r"[ \t]{2,}", " ", text)
