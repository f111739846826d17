"""PNG, SVG and PDF of plotly figures through kaleido 1.x, which drives a Chromium-family browser.

kaleido takes the browser from the ``BROWSER_PATH`` environment variable when it is set, else searches PATH;
:func:`ensure_browser_path` points it at Debian's ``/usr/bin/chromium``. These functions draw in the calling
process: the page goes through :func:`dashboard.export.download_bytes.figure_images`, which runs them in a child
process with a timeout.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import plotly.graph_objects as go

from dashboard.export.errors import ExportError, ExportFailed, ImageExportUnavailable

DEBIAN_CHROMIUM = Path("/usr/bin/chromium")


CHROMIUM_MISSING = "PNG/SVG export needs Chromium: apt-get install chromium"


IMAGE_FORMATS = ("png", "svg", "pdf")


def ensure_browser_path(browser_path: str | None = None) -> str | None:
    """Point kaleido at a browser: ``browser_path`` when given (it becomes ``BROWSER_PATH``), else set
    ``BROWSER_PATH`` to /usr/bin/chromium when it is unset and that file exists.

    Returns the browser path kaleido will use (an existing file), or None when there is none.
    """
    if browser_path:
        os.environ["BROWSER_PATH"] = browser_path
    configured = os.environ.get("BROWSER_PATH")
    if not configured and DEBIAN_CHROMIUM.is_file():
        os.environ["BROWSER_PATH"] = configured = str(DEBIAN_CHROMIUM)
    if configured:
        return configured if Path(configured).is_file() else None
    try:
        from choreographer.browsers.chromium import Chromium

        return Chromium.find_browser(skip_local=False)
    except Exception:  # choreographer missing or its search failing both mean: no browser we can name
        return None


def image_export_available() -> bool:
    """True when a Chromium-family browser is there for kaleido (see :func:`ensure_browser_path`)."""
    return ensure_browser_path() is not None


def figure_image_bytes(
    figure: go.Figure,
    image_format: str,
    width: int = 1400,
    height: int | None = None,
    scale: float = 1.0,
    browser_path: str | None = None,
) -> bytes:
    """``figure`` rendered by kaleido as PNG, SVG or PDF bytes, ``width`` x ``height`` CSS pixels (height: the
    figure's own, else 800), in this process: the page calls :func:`figure_images` instead, which runs the render
    in a child process with a timeout. ``browser_path``: the browser to use (else see :func:`ensure_browser_path`).

    Raises ValueError for another format, ImageExportUnavailable (message: "PNG/SVG export needs Chromium:
    apt-get install chromium") when no browser is found, and ExportFailed when it does not start.
    """
    return figure_images_here(figure, [image_format], width, height, scale, browser_path)[image_format.lower()]


def figure_images_here(
    figure: go.Figure,
    formats: Iterable[str],
    width: int = 1400,
    height: int | None = None,
    scale: float = 1.0,
    browser_path: str | None = None,
) -> dict[str, bytes]:
    """``figure`` in each of ``formats`` ({format: bytes}), drawn in this process by one kaleido Chromium (one
    start, 2-5 s on a busy machine, for all formats). Raises as :func:`figure_image_bytes`."""
    formats = [str(image_format).lower() for image_format in formats]
    unknown = [image_format for image_format in formats if image_format not in IMAGE_FORMATS]
    if unknown:
        raise ValueError(f"image format must be one of {IMAGE_FORMATS}, not {unknown[0]!r}")
    if ensure_browser_path(browser_path) is None:
        raise ImageExportUnavailable(CHROMIUM_MISSING)
    import asyncio

    import kaleido

    options = {"width": int(width), "height": int(height or figure.layout.height or 800), "scale": scale}

    async def draw() -> dict[str, bytes]:
        async with kaleido.Kaleido(n=1) as browser:  # the browser named by $BROWSER_PATH
            return {
                image_format: await browser.calc_fig(figure, opts={**options, "format": image_format})
                for image_format in formats
            }

    try:
        return asyncio.run(draw())
    except Exception as error:
        raise _browser_error(error) or error


def _browser_error(error: Exception) -> ExportError | None:
    """The ExportError for a browser that kaleido could not find or start, else None. choreographer's errors are
    matched by name: its error classes are not part of plotly's or kaleido's API."""
    if type(error).__name__ == "ChromeNotFoundError":
        return ImageExportUnavailable(f"{CHROMIUM_MISSING} ({error})")
    if type(error).__name__ in ("BrowserFailedError", "BrowserDepsError", "BrowserClosedError"):
        browser = os.environ.get("BROWSER_PATH", "the browser")
        return ExportFailed(
            f"Chromium ({browser}) closed right after it started; check that `{browser} --headless=new --version` runs on the server"
        )
    return None


