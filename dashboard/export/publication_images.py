"""Publication figures as bytes: a :class:`dashboard.figures.publication.MapView` drawn by matplotlib, saved as PNG,
SVG or PDF. (The plotly and kaleido renderer beside it was removed: slower, points as an image in SVG and PDF, a
browser needed, and no format that only it made; docs/decisions/publication-renderer.md.)"""

from __future__ import annotations

import io
from collections.abc import Iterable

from dashboard.figures.publication import POINT_DPI, MapView, checked_format, matplotlib_figure


def render_all(view: MapView, formats: Iterable[str]) -> dict[str, bytes]:
    """``view`` drawn once by matplotlib and saved in each of ``formats``: {format: bytes}. The figure's own frame is
    kept (no tight bounding box, which draws the figure once more per format). Raises ValueError for an unknown
    format or an invalid view."""
    formats = [checked_format(image_format) for image_format in formats]
    import matplotlib

    figure = matplotlib_figure(view)
    images = {}
    # Text stays text: <text> elements in SVG, embedded TrueType in PDF (selectable, editable, small files).
    with matplotlib.rc_context({"svg.fonttype": "none", "pdf.fonttype": 42}):
        for image_format in formats:
            buffer = io.BytesIO()
            # zlib level 1 for the PNG: 1.0 s instead of 2.4 s for the whole conference, 15% larger
            options = (
                {"pil_kwargs": {"compress_level": 1}}
                if image_format == "png"
                else {"metadata": {"Creator": "Topic Atlas"}}
            )
            figure.savefig(buffer, format=image_format, dpi=POINT_DPI, facecolor="white", **options)
            images[image_format] = buffer.getvalue()
    return images
