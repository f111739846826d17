"""Names that fit the topic tree's blocks. Pure.

Plotly draws a treemap's labels at one size (``uniformtext``) and hides a label wider or taller than its block, so
the tree's labels are chosen for the blocks they will get: each block's size is estimated with a squarified layout
(the ``squarify`` package, Bruls, Huizing and van Wijk 2000; plotly's treemap tiles with d3's squarify, of the same
family) of the chart at 1280 x 720 and 1500 x 1000 (TREE_WIDTHS_PX beside the sidebar), themes first and each
theme's topics inside it below its header; then each label takes the first of its forms that fits its block at
10 px: the name and count wrapped, the count on a line of its own, the name's acronym, else the name cut with "…".
Counted in Chromium on the whole conference (76 names): hidden at 1280 x 720 24 before, 5 after; 2 at 1500 x 1000.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence

import squarify

TREE_WIDTHS_PX = (812, 1032)  # the chart's width at 1280 x 720 and 1500 x 1000 with the sidebar open (Chromium)
# Plotly's blocks came out 0.85 of the estimate's area (median of the 57 topics at 1280 x 720): its padding, and
# d3's squarify ratio (the golden ratio, where this package's is 1) cut other rows.
BLOCK_SCALE = 0.85
CHAR_PX = 5.0  # an average character at 10 px (plotly's treemap text in Chromium: 4.8)
LINE_PX = 12.5  # a line at 10 px (measured: 15 px at 12 px)
TEXT_PAD_PX = 8  # the block's inner padding and a margin for wider characters
HEADER_PX = 22  # a theme's header line above its topics
THEME_PAD_PX = 4
ACRONYM = re.compile(r"^(?P<name>.+?)\s*\((?P<acronym>[^()\s]{2,8})\)$")  # "Machine unlearning (MU)"

Block = tuple[float, float]  # (width, height) in pixels


def squarified(sizes: Sequence[float], width: float, height: float) -> list[Block]:
    """(width, height) of each of ``sizes``'s blocks, in their order, tiling a width x height rectangle (squarify).
    Zero or negative sizes get (0, 0)."""
    positive = [(i, float(s)) for i, s in enumerate(sizes) if s > 0]
    blocks: list[Block] = [(0.0, 0.0)] * len(sizes)
    if not positive or width <= 0 or height <= 0:
        return blocks
    rects = squarify.squarify(squarify.normalize_sizes([s for _, s in positive], width, height), 0, 0, width, height)
    for (i, _), rect in zip(positive, rects):
        blocks[i] = (rect["dx"], rect["dy"])
    return blocks


def tree_blocks(
    themes: Sequence[tuple[int, int, Sequence[tuple[int, int]]]],
    height: float,
    widths: Sequence[float] = TREE_WIDTHS_PX,
) -> tuple[dict[int, Block], dict[int, Block]]:
    """({theme: block}, {topic: block}) for ``themes``: (theme id, papers, [(topic id, papers)]) in drawing order,
    each block the smallest width and the smallest height it gets at the chart's ``widths`` and with each theme's
    block turned (a squarified layout turns rows into columns as the chart widens, so a label must fit every shape
    its block may take)."""
    by_theme: dict[int, Block] = {}
    by_topic: dict[int, Block] = {}

    def keep(into: dict[int, Block], key: int, block: Block) -> None:
        old = into.get(key, (float("inf"), float("inf")))
        into[key] = (min(old[0], block[0]), min(old[1], block[1]))

    for width in widths:
        theme_blocks = squarified([size for _, size, _ in themes], width, height)
        for (theme, _, topics), (w, h) in zip(themes, theme_blocks):
            # d3's squarify cuts rows where this one cuts columns, and the other way round: a theme of 287 x 184 px
            # here was 199 x 246 in Chromium, so each theme's topics are laid out in both of its orientations.
            for theme_w, theme_h in ((w, h), (h, w)):
                keep(by_theme, theme, (theme_w, theme_h))
                inner_w, inner_h = theme_w - 2 * THEME_PAD_PX, theme_h - HEADER_PX - THEME_PAD_PX
                for (topic, _), block in zip(topics, squarified([size for _, size in topics], inner_w, inner_h)):
                    keep(by_topic, topic, block)
    return by_theme, by_topic


def fits(lines: Sequence[str], block: Block) -> bool:
    """Whether ``lines`` at 10 px fit inside ``block`` shrunk by BLOCK_SCALE (what plotly's "hide" decides on the
    real block)."""
    if not lines:
        return False
    width = max(len(line) for line in lines) * CHAR_PX + TEXT_PAD_PX
    return width <= block[0] * BLOCK_SCALE and len(lines) * LINE_PX + TEXT_PAD_PX <= block[1] * BLOCK_SCALE


def _wrapped(text: str, block: Block) -> list[str]:
    chars = max(int((block[0] * BLOCK_SCALE - TEXT_PAD_PX) / CHAR_PX), 1)
    return textwrap.wrap(text, chars, break_long_words=False)


def topic_lines(label: str, papers: int, block: Block) -> list[str]:
    """A topic's block text as lines (plain text): the first that fits of "name (count)" wrapped to the block's
    width, the name wrapped with the count below it, the acronym with its count, the acronym alone; else the name
    (or acronym) cut with "…" to the block's width, with its count when that fits (the hover names every block in
    full)."""
    count = f"({papers:,})"
    found = ACRONYM.match(label.strip())
    acronym = found.group("acronym") if found else None
    candidates = [_wrapped(f"{label} {count}", block), [*_wrapped(label, block), count]]
    if acronym:
        candidates += [[f"{acronym} {count}"], [acronym, count], [acronym]]
    for lines in candidates:
        if fits(lines, block):
            return lines
    cut = [shortened(acronym or label, block), count]  # a word wider than the block: cut, the hover names it
    return cut if fits(cut, block) else [cut[0]]


def shortened(text: str, block: Block) -> str:
    """``text`` cut with "…" to the characters that fit the block's width (at least 4 and the "…")."""
    chars = max(int((block[0] * BLOCK_SCALE - TEXT_PAD_PX) / CHAR_PX), 5)
    return text if len(text) <= chars else text[: chars - 1].rstrip(" -") + "…"


def theme_line(label: str, block: Block) -> str:
    """A theme's header (one line): its name, else the name without its acronym, else the acronym, else the last of
    these cut with "…" to the block's width (the hover names it in full)."""
    found = ACRONYM.match(label.strip())
    forms = [label] + ([found.group("name"), found.group("acronym")] if found else [])
    wide_enough = block[0] * BLOCK_SCALE - TEXT_PAD_PX
    return next((form for form in forms if len(form) * CHAR_PX <= wide_enough), shortened(forms[-1], block))
