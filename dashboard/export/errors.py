"""The errors of an export that gave no file; each message is one sentence for the page."""

from __future__ import annotations


class ExportError(RuntimeError):
    """An image export that did not give an image; the message is one sentence for the page."""


class ImageExportUnavailable(ExportError):
    """PNG/SVG export cannot run: no Chromium-family browser for kaleido. The message says what to install."""


class ExportTimedOut(ExportError):
    """The renderer passed the export timeout; it was stopped, with every process it started."""


class ExportFailed(ExportError):
    """The renderer stopped with an error (its message is kept) or died."""
