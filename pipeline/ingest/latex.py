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
# Environments whose body is mathematics: treated as math, like $$...$$ (case 19: \begin{align*} ... \end{align*}).
MATH_ENVIRONMENTS = (
    "equation|align|alignat|gather|multline|eqnarray|displaymath|math|split|flalign|array|cases|matrix|[pbvBV]matrix"
)
_MATH = re.compile(
    r"\\begin\{(" + MATH_ENVIRONMENTS + r")\*?\}.*?\\end\{\1\*?\}"
    r"|\$\$.*?\$\$|\$[^$]{0,400}?\$|\\\(.*?\\\)|\\\[.*?\\\]",
    re.DOTALL,
)
# Other environments (\begin{abstract}, \begin{itemize}): the markers go, with their name; the body stays;
# and a line break ``\\`` outside math (a title typed "Fine-Tuning \\ for Code Models") becomes a space.
_ENVIRONMENT = re.compile(r"\\(?:begin|end)\{[a-zA-Z]+\*?\}(?:\[[^\]]*\])?|\\\\(?:\[[^\]]*\])?")
# Math that only formats letters, as in titles: $\textbf{P}$redicting -> Predicting, ($\texttt{PEEP}$) -> (PEEP).
_FORMATTED_LETTERS = re.compile(
    r"\$\s*\\(?:textbf|textit|texttt|textsc|textrm|textsf|text|mathbf|mathit|mathrm|mathtt|mathsf|mathcal|mathbb"
    r"|boldsymbol|bm)\s*\{([A-Za-z][A-Za-z0-9 .'-]*)\}\s*\$"
)
# Formatting commands whose argument may hold math or braces: \emph{Dynamic $\ell_{p}$-Lewis ...} (brace-matched).
_FORMATTING_OPEN = re.compile(r"\\(?:emph|textbf|textit|textsc|textrm|textsf|texttt|underline)\*?\{")
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


def _unwrap_formatting(text: str) -> str:
    """``\\emph{x}`` -> x for every formatting command, its argument found by matching braces (so it may hold math
    or nested braces); an unclosed brace leaves the rest as written. Never raises."""
    pieces: list[str] = []
    last = 0
    while match := _FORMATTING_OPEN.search(text, last):
        depth, end = 1, match.end()
        while end < len(text) and depth:
            if text[end] == "\\":
                end += 2
                continue
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            end += 1
        if depth:  # unclosed: leave as written
            break
        pieces.append(text[last : match.start()])
        pieces.append(_unwrap_formatting(text[match.end() : end - 1]))
        last = end
    pieces.append(text[last:])
    return "".join(pieces)


def _unwrap(text: str) -> str:
    """Steps shared by both renderings: formatted letters out of math, formatting commands unwrapped, environment
    markers removed (math environments are left for the caller's math rule)."""
    text = _FORMATTED_LETTERS.sub(r"\1", text)
    text = _unwrap_formatting(text)
    pieces = []
    last = 0
    for match in _MATH.finditer(text):
        pieces.append(_ENVIRONMENT.sub(" ", text[last : match.start()]))
        pieces.append(match.group(0))
        last = match.end()
    pieces.append(_ENVIRONMENT.sub(" ", text[last:]))
    return "".join(pieces)


def strip_latex(text: str) -> str:
    """Plain words of a LaTeX-flavoured text, for modelling: math (also math environments such as ``align*``) and
    references removed, formatting commands replaced by their argument (``$\\textbf{P}$redicting`` -> Predicting),
    environment markers (``\\begin{abstract}``) and other command names removed, escaped specials unescaped, ties
    made spaces. Braces are left for the caller (pipeline.ingest.clean removes them). Never raises."""
    text = _unwrap(_protect_dollars(text))
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
    """A LaTeX-flavoured abstract as a reader expects it: ``\\emph{x}`` -> x (also around math), citations and labels
    removed, ``\\footnote{x}`` -> (x), ``\\%`` -> %, ``Fig.~3`` -> Fig. 3, ````x''`` -> “x”, ``---`` -> —,
    ``--`` -> –, ``\\begin{abstract}`` markers removed, ``$\\textbf{P}$redicting`` -> Predicting; math between
    dollars and math environments (``align*``) kept as written. Text without LaTeX comes back unchanged. Never
    raises."""
    if "\\" not in text and "~" not in text and "``" not in text and "--" not in text:
        return text
    text = _unwrap(_protect_dollars(text)).strip()
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


_INLINE_MATH = re.compile(r"(?<!\\)\$([^$]{1,120})(?<!\\)\$")
_SUPERSCRIPTS = dict(
    zip(
        "0123456789+-=()abcdefghijklmnoprstuvwxyzABDEGHIJKLMNOPRTUVW",
        "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻᴬᴮᴰᴱᴳᴴᴵᴶᴷᴸᴹᴺᴼᴾᴿᵀᵁⱽᵂ",
        strict=True,
    )
)
_SUBSCRIPTS = dict(zip("0123456789+-=()aehijklmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ", strict=True))
_SCRIPT = re.compile(r"([_^])(?:\{([^{}\\]{1,12})\}|([A-Za-z0-9]))")


def _scripts_as_unicode(math: str) -> str:
    """``L_p`` -> Lₚ, ``IT^3`` -> IT³, ``x_{t+1}`` -> xₜ₊₁ where Unicode has every character's sub- or superscript;
    others stay as written (``x_{q}``: Unicode has no subscript q)."""

    def script(match: re.Match[str]) -> str:
        table = _SUBSCRIPTS if match.group(1) == "_" else _SUPERSCRIPTS
        body = match.group(2) if match.group(2) is not None else match.group(3)
        if body and all(char in table for char in body):
            return "".join(table[char] for char in body)
        return match.group(0)

    return _SCRIPT.sub(script, math)


def inline_math_as_text(text: str) -> str:
    """Inline math between single dollars as a reader of a title expects it (issue 19: "$L_p$-Convolution" and
    "IT$^3$" in the paper table): sub- and superscripts in Unicode where it has them, then commands by pylatexenc's
    ``LatexNodes2Text`` (``\\tau`` -> τ, ``\\mathbb{R}`` -> ℝ, ``\\frac{1}{2}`` -> 1/2, ``\\text{O}`` -> O). For short
    texts (titles); an abstract's mathematics stays as written (:func:`readable_latex`). Text without inline math
    comes back unchanged; math that cannot be read stays as written. Never raises."""
    if "$" not in text:
        return text
    from pylatexenc.latex2text import LatexNodes2Text

    converter = LatexNodes2Text(math_mode="text")

    def readable(match: re.Match[str]) -> str:
        try:
            shown = converter.latex_to_text(_scripts_as_unicode(match.group(1))).strip()
        except Exception:  # pylatexenc's own parse errors: the math as written is still readable
            return match.group(0)
        return shown or match.group(0)

    return _INLINE_MATH.sub(readable, text)
