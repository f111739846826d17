"""The one-file share of an atlas (``topic-atlas share``, issue 41): the page's JavaScript and its HTML template.

``frontend/src/share.js`` draws the map with regl-scatterplot and the map component's label rules (it imports
``../../scatter/frontend/src/labels.js``: themes at the fitted view, topics from 1.8x, subtopics from 4x), and adds
search, filters, the paper panel and a lasso list with a CSV download. ``npm install && npm run build`` in
``frontend/`` writes ``build/share.js`` and ``build/share.html``, both committed, so writing a share file needs no
JavaScript toolchain; :mod:`dashboard.export.share_page` inlines them with the atlas's data.
"""

from __future__ import annotations

from pathlib import Path

BUILD = Path(__file__).resolve().parent / "build"
SCRIPT = BUILD / "share.js"
TEMPLATE = BUILD / "share.html"


def available() -> bool:
    """Whether the built script and template are present."""
    return SCRIPT.is_file() and TEMPLATE.is_file()
