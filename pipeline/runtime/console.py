"""What the command line prints: the pipeline's own messages once each, third-party noise only in the log file.

Libraries print things a user cannot act on: BERTopic's warning about a custom list of topic assignments (the
pipeline assigns topics on purpose), tqdm bars of BERTopic's hierarchy and the encoder, scikit-learn's
``RuntimeWarning: invalid value encountered in divide``, transformers' "Token indices sequence length is longer than
the specified maximum sequence length" and the browser's watchdog line. :func:`configure_output` sends every log
record and Python warning to a log file (``<log folder>/<command>-<time>.log``, pipeline.runtime.crashlog's folder)
and to the terminal only the records of the ``pipeline`` loggers plus other loggers' errors, with those known noise
lines filtered; library progress bars are turned off (``TQDM_DISABLE``), and the pipeline's own fetch bar keeps
showing since it passes ``disable=False``. :func:`counted` gives the right plural ("1 document", "2 documents").
"""

from __future__ import annotations

import logging
import os
import re
import sys
import warnings
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

# Third-party lines the terminal never shows (they stay in the log file).
NOISE = re.compile(
    r"Using a custom list of topic assignments"
    r"|invalid value encountered in (?:divide|true_divide|scalar divide)"
    r"|divide by zero encountered"
    r"|Token indices sequence length is longer than the specified maximum"
    r"|watchdog"
    r"|n_jobs value .* overridden to 1 by setting random_state",
    re.IGNORECASE,
)
_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class _TerminalFilter(logging.Filter):
    """Pass the pipeline's records and other loggers' errors, never a NOISE line, and each message once."""

    def __init__(self) -> None:
        super().__init__()
        self.shown: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        own = record.name == "pipeline" or record.name.startswith("pipeline.")
        if NOISE.search(message) or not (own or record.levelno >= logging.ERROR) or message in self.shown:
            return False
        self.shown.add(message)
        return True


_TERMINAL = _TerminalFilter()


def shown_on_terminal(message: str) -> bool:
    """True when ``message`` was already printed by the terminal handler (so a summary need not repeat it)."""
    return message in _TERMINAL.shown


def configure_output(command: str, log_folder: Path | None = None) -> Path | None:
    """Route logging and warnings as the module docstring says; returns the log file's path (None when no folder
    can be written, in which case the terminal still gets the filtered records). Idempotent per process."""
    os.environ.setdefault("TQDM_DISABLE", "1")  # library bars (BERTopic's hierarchy, the encoder)
    root = logging.getLogger()
    root.setLevel(logging.INFO)
    for handler in list(root.handlers):
        if getattr(handler, "_atlas", False):
            root.removeHandler(handler)
            handler.close()  # the previous call's log file (a command run twice in one process)
    terminal = _CurrentStderr()
    terminal.setFormatter(logging.Formatter(_FORMAT, datefmt="%H:%M:%S"))
    terminal.addFilter(_TERMINAL)
    handlers: list[logging.Handler] = [terminal]
    path = _log_path(command, log_folder)
    if path is not None:
        file_handler = logging.FileHandler(path, encoding="utf-8", delay=True)
        file_handler.setFormatter(logging.Formatter(_FORMAT))
        handlers.append(file_handler)
    for handler in handlers:
        handler._atlas = True  # type: ignore[attr-defined]
        root.addHandler(handler)
    logging.captureWarnings(True)  # warnings.warn(...) -> logger "py.warnings": in the file, not on the terminal
    warnings.simplefilter("default")
    # BERTopic's logger does not propagate and adds a stream handler unless one is there (it keeps the first): give
    # it one that hands its records to the handlers above.
    bertopic = logging.getLogger("BERTopic")
    bertopic.handlers = [_Forward(handlers)]
    # transformers' warnings reach these handlers too: pipeline.represent.encoder_backends turns its own stderr handler
    # off.
    return path


class _CurrentStderr(logging.StreamHandler):
    """A stream handler that writes to whatever ``sys.stderr`` is when a record comes, so a command run twice in one
    process (tests run ``main`` in-process under a captured stderr) never writes to a stream closed since."""

    @property
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:  # StreamHandler.__init__ assigns it; the current sys.stderr is always used
        pass


class _Forward(logging.Handler):
    """Hands a record to the given handlers (the terminal's filter then decides whether it is shown)."""

    def __init__(self, targets: list[logging.Handler]) -> None:
        super().__init__()
        self.targets = targets

    def emit(self, record: logging.LogRecord) -> None:
        for target in self.targets:
            target.handle(record)


def _log_path(command: str, log_folder: Path | None) -> Path | None:
    from pipeline.runtime.crashlog import log_folder as default_folder

    folder = log_folder or default_folder()
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    path = folder / f"{command or 'topic-atlas'}-{stamp}-{os.getpid()}.log"
    try:
        path.touch()
    except OSError:
        return None
    return path


def counted(count: int, singular: str, plural: str | None = None) -> str:
    """``count`` and the noun in the right number: counted(1, "document") -> "1 document", counted(2, "paper") ->
    "2 papers", counted(1_741, "paper") -> "1,741 papers", counted(3, "entry", "entries") -> "3 entries"."""
    return f"{count:,} {singular if count == 1 else (plural or singular + 's')}"
