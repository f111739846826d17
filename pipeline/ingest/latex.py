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
# Math as a reader sees it (readable_pieces): single-dollar math by pandoc's rule, so that money is not math.
SHOWN_MATH = re.compile(
    r"\\begin\{(" + MATH_ENVIRONMENTS + r")\*?\}.*?\\end\{\1\*?\}"
    r"|\$\$.*?\$\$|\\\(.*?\\\)|\\\[.*?\\\]|\$(?=[^\s$])[^$]{1,400}?(?<=[^\s$])\$(?!\d)",
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
# Every rule of strip_latex needs one of these: a backslash (commands, escapes, environments, \( \[ math), a dollar
# (math, formatted letters), a tilde (ties) or a doubled quote.
_MAY_HOLD_LATEX = re.compile(r"[\\$~]|``|''")


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
    made spaces. Braces are left for the caller (pipeline.ingest.clean removes them). Never raises.

    A text without a backslash, dollar, tilde or doubled quote holds nothing any of the rules matches and comes back
    as it is (most abstracts: a third of cleaning's time was these rules finding nothing)."""
    if not _MAY_HOLD_LATEX.search(text):
        return text
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
    """A LaTeX-flavoured abstract as a reader expects it: ``\\emph{x}`` and ``{\\em x}`` -> x (also around math),
    citations and labels removed, ``\\footnote{x}`` -> (x), ``\\%`` -> %, ``Fig.~3`` -> Fig. 3, ````x''`` -> “x”,
    ``---`` -> —, ``--`` -> –, ``\\textsuperscript{2}`` -> ², ``\\begin{abstract}`` markers removed,
    ``$\\textbf{P}$redicting`` -> Predicting; math between dollars and math environments (``align*``) kept as
    written (:func:`readable_pieces`). Text without LaTeX comes back unchanged. Never raises."""
    if "\\" not in text and "~" not in text and "``" not in text and "--" not in text:
        return text
    return "".join(piece for _, piece in readable_pieces(text))


def readable_pieces(text: str) -> list[tuple[str, str]]:
    """``text`` rendered as :func:`readable_latex` does, cut into ("prose", text) and ("math", math as written with
    its delimiters) pieces, in order, so that a page can typeset the math (KaTeX) and show the prose literally.

    Math is a math environment (``\\begin{align*}...\\end{align*}``), ``$$...$$``, ``\\[...\\]``, ``\\(...\\)`` or
    ``$...$`` by pandoc's rule: a non-space right after the opening dollar, a non-space right before the closing
    one and no digit right after it, so "costs $5 and $6" is prose. An escaped dollar (``\\$``) is a dollar of the
    prose. Never raises."""
    text = _unwrap(_protect_dollars(text)).strip()
    pieces: list[tuple[str, str]] = []
    last = 0
    for match in SHOWN_MATH.finditer(text):  # leave math alone, render the prose between
        if match.start() > last:
            pieces.append(("prose", _readable_prose(text[last : match.start()])))
        pieces.append(("math", match.group(0)))
        last = match.end()
    if last < len(text) or not pieces:
        pieces.append(("prose", _readable_prose(text[last:])))
    return [(kind, piece.replace(_PROTECTED_DOLLAR, "$")) for kind, piece in pieces]


def _readable_prose(text: str) -> str:
    text = _REFERENCE.sub("", text)
    text = _FOOTNOTE.sub(r" (\1)", text)
    text = _TEXT_SCRIPT.sub(_text_script, text)
    text = _OLD_FONT_GROUP.sub(r"\1", text)
    for _ in range(3):  # nested formatting: \textbf{\emph{x}}
        text = _TEXT_COMMAND.sub(r"\1", text)
    text = _ESCAPED_SPECIAL.sub(r"\1", text)
    text = _TIE.sub(" ", text)
    text = _OPEN_QUOTE.sub("“", _CLOSE_QUOTE.sub("”", text))
    text = text.replace("---", "—").replace("--", "–")
    return re.sub(r"[ \t]{2,}", " ", text)


# \textsuperscript{2} -> ², \textsubscript{2} -> ₂ (as Unicode where it has every character, else ^2 / _2).
_TEXT_SCRIPT = re.compile(r"\\text(super|sub)script\s*\{([^{}]{0,40})\}")
# Old font switches inside a group: {\em word} -> word, {\bf x}, {\it x}, {\sc x}, {\tt x} ... (the group holding
# no other group).
_OLD_FONT_GROUP = re.compile(r"\{\\(?:em|it|bf|sc|tt|sl|rm|sf|small|large|Large)\b\s*([^{}]*)\}")


def _text_script(match: re.Match[str]) -> str:
    """``\\textsuperscript{st}`` -> ˢᵗ, ``\\textsubscript{2}`` -> ₂; ``^{q}`` / ``_{q}`` when Unicode lacks one."""
    table = _SUPERSCRIPTS if match.group(1) == "super" else _SUBSCRIPTS
    body = match.group(2).strip()
    if body and all(char in table for char in body):
        return "".join(table[char] for char in body)
    return ("^" if match.group(1) == "super" else "_") + body


# Inline math of a short text, by pandoc's rule as in SHOWN_MATH ("a prize of $5 and $6" is no math).
_INLINE_MATH = re.compile(r"(?<!\\)\$(?=[^\s$])([^$]{1,120}?)(?<=[^\s$\\])\$(?!\d)")
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


# A command name directly before a script or a space: pylatexenc reads a command's name as every letter that follows
# (str.isalpha, so "\\ellᵖ" after the scripts are Unicode is one unknown command) and swallows the space after it
# ("\\log n" -> "logn"); an empty group after the name ends it and keeps the space.
_NAME_BEFORE_SCRIPT = re.compile(r"(\\[A-Za-z]+)(?=[_^])")
_NAME_BEFORE_SPACE = re.compile(r"(\\[A-Za-z]+)(\s+)(?=[^\s}])")
_MATH_SYMBOLS = {"\\|": "‖", "\\lVert": "‖", "\\rVert": "‖", "\\Vert": "‖", "\\lvert": "|", "\\rvert": "|"}


def math_as_text(math: str) -> str:
    """The body of a formula (no dollars) as Unicode text: sub- and superscripts in Unicode where it has every
    character (``\\ell^p`` -> ℓᵖ, ``\\sum_{i=1}^n`` -> ∑ᵢ₌₁ⁿ, else ``x_{q}`` -> x_q), commands by pylatexenc's
    ``LatexNodes2Text`` (``\\tau`` -> τ, ``\\mathbb{R}`` -> ℝ, ``\\frac{1}{2}`` -> 1/2), the spaces written after a
    command kept (``O(n \\log n)`` -> O(n log n), ``a \\leq b`` -> a ≤ b), ``\\|x\\|`` -> ‖x‖.

    Raises pylatexenc's errors for math it cannot read (the caller keeps it as written)."""
    from pylatexenc.latex2text import LatexNodes2Text

    for command, symbol in _MATH_SYMBOLS.items():
        math = math.replace(command, symbol)
    math = _NAME_BEFORE_SPACE.sub(r"\1{}\2", _NAME_BEFORE_SCRIPT.sub(r"\1{}", math))
    shown = LatexNodes2Text(math_mode="text").latex_to_text(_scripts_as_unicode(math))
    return " ".join(shown.split())


_ENVIRONMENT_BODY = re.compile(r"\\begin\{[a-zA-Z]+\*?\}(.*)\\end\{[a-zA-Z]+\*?\}", re.DOTALL)
_DELIMITED = re.compile(r"\$\$(.*)\$\$|\$(.*)\$|\\\((.*)\\\)|\\\[(.*)\\\]", re.DOTALL)


def math_piece_as_text(piece: str) -> str:
    """A math piece of :func:`readable_pieces` (with its delimiters) as Unicode text (:func:`math_as_text`): a math
    environment's rows joined by "; " without its alignment marks (``\\begin{align*} a &= b \\\\ c &= d
    \\end{align*}`` -> a = b; c = d). Math that cannot be read comes back as written. Never raises."""
    if environment := _ENVIRONMENT_BODY.fullmatch(piece.strip()):
        rows = [row.replace("&", " ") for row in re.split(r"\\\\(?:\[[^\]]*\])?", environment.group(1))]
        body = "; ".join(row.strip() for row in rows if row.strip())
    elif delimited := _DELIMITED.fullmatch(piece.strip()):
        body = next(group for group in delimited.groups() if group is not None)
    else:
        return piece
    try:
        return math_as_text(body).strip() or piece
    except Exception:  # pylatexenc's own parse errors: the math as written is still readable
        return piece


def inline_math_as_text(text: str) -> str:
    """Inline math between single dollars as a reader of a title expects it (issue 19: "$L_p$-Convolution" and
    "IT$^3$" in the paper table; issue 40: ``$\\ell^p$`` -> ℓᵖ, ``$O(n \\log n)$`` -> O(n log n)), by
    :func:`math_as_text`. For short texts (titles, the start of an abstract in a hover); the paper panel typesets an
    abstract's mathematics (:func:`readable_pieces`). Text without inline math comes back unchanged; math that
    cannot be read stays as written. Never raises."""
    if "$" not in text:
        return text

    def readable(match: re.Match[str]) -> str:
        try:
            shown = math_as_text(match.group(1)).strip()
        except Exception:  # pylatexenc's own parse errors: the math as written is still readable
            return match.group(0)
        return shown or match.group(0)

    return _INLINE_MATH.sub(readable, text)
