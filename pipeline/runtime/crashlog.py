"""Unexpected failures: the traceback goes to a log file, the person gets one line naming the stage and what to do.

The log folder is ``$ATLAS_LOG_DIR`` when set, else ``.cache/logs`` in the checkout (git-ignored), else the
system's temporary folder when that one cannot be written.
"""

from __future__ import annotations

import os
import sys
import tempfile
import traceback
from datetime import UTC, datetime
from pathlib import Path

from pipeline.runtime.errors import stage_of
from pipeline.runtime.paths import PROJECT_ROOT
from pipeline.runtime.settings import settings

ROOT = PROJECT_ROOT
LOG_DIR_VARIABLE = "ATLAS_LOG_DIR"


def log_folder() -> Path:
    """Where failure logs go (see the module docstring); created if missing."""
    configured = settings().log_dir  # $ATLAS_LOG_DIR (pipeline.runtime.settings)
    for folder in ([configured] if configured else []) + [
        ROOT / ".cache" / "logs",
        Path(tempfile.gettempdir()) / "topic-atlas-logs",
    ]:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            if os.access(folder, os.W_OK):
                return folder
        except OSError:
            continue
    return Path(tempfile.gettempdir())


def write_failure_log(error: BaseException, command: str, argv: list[str]) -> Path | None:
    """Write the command line and the full traceback of ``error`` to a new log file; returns its path (None when
    even that fails, e.g. a full disk)."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    path = log_folder() / f"pipeline-{command or 'cli'}-{stamp}-{os.getpid()}.log"
    try:
        with path.open("w", encoding="utf-8") as handle:
            handle.write(f"command: topic-atlas {' '.join(argv)}\n")
            handle.write(f"stage: {stage_of(error) or 'unknown'}\npython: {sys.version.split()[0]}\n\n")
            handle.write("".join(traceback.format_exception(type(error), error, error.__traceback__)))
    except OSError:
        return None
    return path


def failure_line(error: BaseException, command: str, log_path: Path | None) -> str:
    """The one line printed for an unexpected failure: where, what, where the traceback is and what to do."""
    stage = stage_of(error)
    where = f"{command or 'the command'} failed in stage '{stage}'" if stage else f"{command or 'the command'} failed"
    what = " ".join(f"{type(error).__name__}: {error}".split())[:300]
    logged = f"the full traceback is in {log_path}" if log_path else "the traceback could not be written to a log file"
    return (
        f"error: {where} with an unexpected {what}. This is a fault in Topic Atlas, not in your input: {logged}. "
        "Rerun with --debug to see it here, and report it with that log."
    )
