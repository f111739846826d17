"""Publication figures as bytes: a :class:`dashboard.figures.publication.MapView` drawn by DataMapPlot (matplotlib)
or by plotly and kaleido, saved as PNG, SVG or PDF."""

from __future__ import annotations

import io
from collections.abc import Iterable

from dashboard.export.kaleido_images import figure_images_here
from dashboard.figures.publication import (
    DEFAULT_RENDERER,
    POINT_DPI,
    RENDERERS,
    MapView,
    checked_format,
    datamapplot_figure,
    plotly_figure,
)


def render_datamapplot_all(view: MapView, formats: Iterable[str]) -> dict[str, bytes]:
    """``view`` drawn once by DataMapPlot (label placement is most of the time) and saved in each of ``formats``:
    {format: bytes}. Raises ValueError for an unknown format or an invalid view."""
    formats = [checked_format(image_format) for image_format in formats]
    import matplotlib
    from matplotlib import pyplot

    figure = datamapplot_figure(view)
    try:
        images = {}
        # Text stays text: <text> elements in SVG, embedded TrueType in PDF (selectable, editable, small files).
        with matplotlib.rc_context({"svg.fonttype": "none", "pdf.fonttype": 42}):
            for image_format in formats:
                buffer = io.BytesIO()
                metadata = {"Creator": "Topic Atlas"} if image_format in ("svg", "pdf") else None
                figure.savefig(
                    buffer,
                    format=image_format,
                    dpi=POINT_DPI,
                    facecolor="white",
                    metadata=metadata,
                    bbox_inches="tight",
                    pad_inches=0.15,
                )
                images[image_format] = buffer.getvalue()
        return images
    finally:
        pyplot.close(figure)


def render_plotly_all(view: MapView, formats: Iterable[str], browser_path: str | None = None) -> dict[str, bytes]:
    """``view`` drawn by plotly once and exported by one kaleido Chromium in each of ``formats``: {format: bytes}."""

    formats = [checked_format(image_format) for image_format in formats]
    figure = plotly_figure(view)
    return figure_images_here(
        figure, formats, width=figure.layout.width, height=figure.layout.height, browser_path=browser_path
    )


def render_all(
    view: MapView, formats: Iterable[str], renderer: str = DEFAULT_RENDERER, browser_path: str | None = None
) -> dict[str, bytes]:
    """``view`` in each of ``formats`` ({format: bytes}) drawn by ``renderer``: "datamapplot" (figure drawn once)
    or "plotly" (one kaleido Chromium for all formats). Raises ValueError for an unknown renderer or format."""
    formats = [checked_format(image_format) for image_format in formats]
    if renderer == "datamapplot":
        return render_datamapplot_all(view, formats)
    if renderer == "plotly":
        return render_plotly_all(view, formats, browser_path)
    raise ValueError(f"renderer must be one of {RENDERERS}, not {renderer!r}")
