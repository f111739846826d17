"""The topic map's WebGL scatter as a Streamlit component (``frontend/src/index.js``, regl-scatterplot).

The built bundle in ``build/`` is committed, so the page needs no JavaScript toolchain; ``npm install && npm run
build`` in ``frontend/`` rebuilds it. The component is served by Streamlit from that folder (no CDN). Its messages
to and from Streamlit go through streamlit-component-lib's ``Streamlit`` object (``dist/streamlit.js``, no React);
the build stands ``frontend/src/no-arrow.js`` in for apache-arrow, which the library needs only for dataframes, so
the bundle grew by 6 KB (2 KB gzip) instead of 208 KB (51 KB gzip). Its value is the latest event: {kind: "click",
index} (a paper, sent at once), {kind: "double_click", cancels} (the second press of a double-click: take back click
``cancels``), {kind: "lasso", indices} (positions in the listing), {kind: "need_points"} (the browser lost the
points: send them again), {kind: "shown"} (once a frame, after its first draw: the page may send what waits for the
map), each with a sequence number ``seq``.

Labels: each label may carry ``level`` (0 theme, 1 topic, 2 subtopic) and ``size`` (papers); with ``label_mode``
"zoom" the browser shows the shallowest level sent at the fitted view and the deeper ones as the user zooms in
(``frontend/src/labels.js``: from 1.8x and 4x the fitted scale), else ("fixed", or no ``label_mode``) every label
sent that fits. Either way labels never overlap and stay at their anchors as the camera moves.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit.components.v1 as components

BUILD = Path(__file__).resolve().parent / "build"
_component = components.declare_component("atlas_scatter", path=str(BUILD))


def available() -> bool:
    """Whether the built bundle is present (else the page falls back to the plotly map)."""
    return (BUILD / "bundle.js").is_file() and (BUILD / "index.html").is_file()


def scatter(
    layers: dict[str, Any],
    cache_key: str,
    points: bytes | None,
    key: str,
    on_change: Any = None,
    titles: bytes | None = None,
) -> Any:
    """Draw the map: ``layers`` from :func:`dashboard.figures.map_layers.view_layers`, ``points`` from
    :func:`dashboard.figures.map_layers.point_block` (bytes: Streamlit sends them as they are, not as JSON) or None
    when this browser session has them already; ``titles`` (:func:`dashboard.figures.map_layers.title_block`) the
    points' titles for the hover, when the points came without them (None: none this time; the hover shows only the
    topic until they come).
    Returns the latest event (see the module docstring) or None."""
    return _component(
        **layers,
        cache_key=cache_key,
        points=points,
        titles=titles,
        key=key,
        default=None,
        on_change=on_change,
    )
