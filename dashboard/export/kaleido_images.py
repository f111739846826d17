"""PNG, SVG and PDF of plotly figures through kaleido 1.x, which drives a Chromium-family browser.

kaleido takes the browser from the ``BROWSER_PATH`` environment variable when it is set, else searches PATH;
:func:`ensure_browser_path` sets ``BROWSER_PATH`` to the browser it finds (Debian's ``/usr/bin/chromium`` first,
then :data:`BROWSER_NAMES` on PATH, with the standard library's ``shutil.which``), so kaleido uses that one. A
browser downloaded by ``kaleido_get_chrome`` is not on PATH: name it with ``BROWSER_PATH``. These functions draw in
the calling process: the page goes through :func:`dashboard.export.download_bytes.figure_images`, which runs them
in a child process with a timeout.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterable
from pathlib import Path

import plotly.graph_objects as go

from dashboard.export.errors import ExportError, ExportFailed, ExportTimedOut, ImageExportUnavailable

DEBIAN_CHROMIUM = Path("/usr/bin/chromium")

# Executable names of Chromium-family browsers that kaleido can drive, searched on PATH in this order.
BROWSER_NAMES = (
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
    "chrome",
    "microsoft-edge",
    "msedge",
    "brave-browser",
)


CHROMIUM_MISSING = "PNG/SVG export needs Chromium: apt-get install chromium"


IMAGE_FORMATS = ("png", "svg", "pdf")


def find_browser() -> str | None:
    """/usr/bin/chromium when it is a file, else the first of BROWSER_NAMES that ``shutil.which`` finds on PATH (an
    executable file), as an absolute path; None when there is none."""
    if DEBIAN_CHROMIUM.is_file():
        return str(DEBIAN_CHROMIUM)
    for name in BROWSER_NAMES:
        found = shutil.which(name)
        if found:
            return os.path.abspath(found)
    return None


def ensure_browser_path(browser_path: str | None = None) -> str | None:
    """Point kaleido at a browser: ``browser_path`` when given (it becomes ``BROWSER_PATH``), else the one
    ``BROWSER_PATH`` names, else the one :func:`find_browser` finds (``BROWSER_PATH`` is then set to it).

    Returns the browser path kaleido will use (an existing file), or None when there is none.
    """
    if browser_path:
        os.environ["BROWSER_PATH"] = browser_path
    configured = os.environ.get("BROWSER_PATH")
    if configured:
        return configured if Path(configured).is_file() else None
    found = find_browser()
    if found:
        os.environ["BROWSER_PATH"] = found
    return found


def image_export_available() -> bool:
    """True when a Chromium-family browser is there for kaleido (see :func:`ensure_browser_path`)."""
    return ensure_browser_path() is not None


IN_PROCESS_TIMEOUT_S = 30.0  # the in-process render's own bound: the page's default export timeout


def figure_image_bytes(
    figure: go.Figure,
    image_format: str,
    width: int = 1400,
    height: int | None = None,
    scale: float = 1.0,
    browser_path: str | None = None,
    timeout_s: float = IN_PROCESS_TIMEOUT_S,
) -> bytes:
    """``figure`` rendered by kaleido as PNG, SVG or PDF bytes, ``width`` x ``height`` CSS pixels (height: the
    figure's own, else 800), in this process: the page calls :func:`figure_images` instead, which runs the render
    in a child process with a timeout. ``browser_path``: the browser to use (else see :func:`ensure_browser_path`).

    Raises ValueError for another format, ImageExportUnavailable (message: "PNG/SVG export needs Chromium:
    apt-get install chromium") when no browser is found, ExportFailed when it does not start, and ExportTimedOut
    when Chromium has not answered within ``timeout_s`` seconds (it is then closed).
    """
    return figure_images_here(figure, [image_format], width, height, scale, browser_path, timeout_s)[
        image_format.lower()
    ]


def figure_images_here(
    figure: go.Figure,
    formats: Iterable[str],
    width: int = 1400,
    height: int | None = None,
    scale: float = 1.0,
    browser_path: str | None = None,
    timeout_s: float = IN_PROCESS_TIMEOUT_S,
) -> dict[str, bytes]:
    """``figure`` in each of ``formats`` ({format: bytes}), drawn in this process by one kaleido Chromium (one
    start, 2-5 s on a busy machine, for all formats) within ``timeout_s`` seconds. Raises as
    :func:`figure_image_bytes`."""
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
        browser = kaleido.Kaleido(n=1)  # the browser named by $BROWSER_PATH
        try:
            await browser.open()
            return {
                image_format: await browser.calc_fig(figure, opts={**options, "format": image_format})
                for image_format in formats
            }
        finally:
            # Not ``async with``: it skips the close when the open fails or is cancelled, and the pipe kaleido
            # reads Chromium's log from then stays open, its non-daemon reader thread keeping this process alive.
            await browser.close()

    started = time.monotonic()
    try:
        return asyncio.run(asyncio.wait_for(draw(), timeout_s))  # on expiry the draw is cancelled: Chromium closes
    except Exception as error:
        # A cancelled draw surfaces as TimeoutError, or, when it was cancelled while Chromium was starting, as
        # whatever choreographer makes of the cancellation (BrowserFailedError, ChannelClosedError): past the
        # deadline, every failure is the timeout.
        if isinstance(error, TimeoutError) or time.monotonic() - started >= timeout_s:
            raise ExportTimedOut(
                f"Chromium did not answer within {timeout_s:.0f} s (the browser hung, or the server is overloaded), "
                "so it was stopped. Try again"
            ) from error
        exported = _browser_error(error)
        if exported is None:
            raise
        raise exported from error


def _browser_error(error: Exception) -> ExportError | None:
    """The ExportError for a browser that kaleido could not find or start, else None (kaleido.errors: its documented
    errors; choreographer's BrowserDepsError is a BrowserFailedError)."""
    from kaleido import errors

    if isinstance(error, errors.ChromeNotFoundError):
        return ImageExportUnavailable(f"{CHROMIUM_MISSING} ({error})")
    if isinstance(error, (errors.BrowserFailedError, errors.BrowserClosedError)):
        browser = os.environ.get("BROWSER_PATH", "the browser")
        return ExportFailed(
            f"Chromium ({browser}) closed right after it started; "
            f"check that `{browser} --headless=new --version` runs on the server"
        )
    return None
