"""The topic map's WebGL scatter as a Streamlit component (``frontend/src/index.js``, regl-scatterplot).

The built bundle in ``build/`` is committed, so the page needs no JavaScript toolchain; ``npm install && npm run
build`` in ``frontend/`` rebuilds it. The component is served by Streamlit from that folder (no CDN). Its value is
the latest event: {kind: "click", index} (a paper), {kind: "lasso", indices} (positions in the listing),
{kind: "need_points"} (the browser lost the points: send them again), each with a sequence number ``seq``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import streamlit.components.v1 as components

BUILD = Path(__file__).resolve().parent / "build"
DEFAULT_CLICK_WAIT_MS = 300
_component = components.declare_component("atlas_scatter", path=str(BUILD))


def available() -> bool:
    """Whether the built bundle is present (else the page falls back to the plotly map)."""
    return (BUILD / "bundle.js").is_file() and (BUILD / "index.html").is_file()


def click_wait_ms() -> int:
    """Milliseconds a click on a point waits for a second click (a double-click fits the view and opens no paper)
    before it opens its paper: ``ATLAS_MAP_CLICK_WAIT_MS`` when it is a whole number from 100 to 5000, else 300.
    Raise it for people who double-click slowly, at the cost of that much more before every click opens its paper
    (the click's wait is part of bench/dashboard.py's click -> paper figure)."""
    value = os.environ.get("ATLAS_MAP_CLICK_WAIT_MS", "")
    return int(value) if value.isdigit() and 100 <= int(value) <= 5000 else DEFAULT_CLICK_WAIT_MS


def scatter(
    layers: dict[str, Any], cache_key: str, points: dict[str, Any] | None, key: str, on_change: Any = None
) -> Any:
    """Draw the map: ``layers`` from :func:`dashboard.figures.map_layers.view_layers`, ``points`` from
    :func:`dashboard.figures.map_layers.point_payload` or None when this browser session has them already.
    Returns the latest event (see the module docstring) or None."""
    return _component(
        **layers,
        cache_key=cache_key,
        points=points,
        click_wait_ms=click_wait_ms(),
        key=key,
        default=None,
        on_change=on_change,
    )
