"""Temporary folders a process keeps while it works, named after that process, so that those of a process that died
without removing them (SIGKILL, out of memory, a power cut) are removed by the next one to make a folder of the
same kind.

A folder is ``<TMPDIR>/<prefix><pid>-<random>``. The process that made it removes it when it is done; this module
only sweeps the folders whose process is gone, owned by this user, so that a fresh folder never costs another's.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import psutil


def scratch_folder(prefix: str) -> Path:
    """A new empty folder ``<TMPDIR>/<prefix><this pid>-<random>`` (mode 0700), after removing the folders of the
    same prefix that :func:`orphaned_folders` finds. The caller removes it when done. Raises OSError when the
    temporary folder cannot be written."""
    for folder in orphaned_folders(prefix):
        shutil.rmtree(folder, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-"))


def orphaned_folders(prefix: str) -> list[Path]:
    """The folders ``<TMPDIR>/<prefix><pid>-*`` owned by this user whose process no longer runs, sorted. A name
    whose pid cannot be read, and an entry that vanishes while it is looked at, are left alone."""
    orphans = []
    for entry in Path(tempfile.gettempdir()).glob(f"{prefix}*-*"):
        pid_text = entry.name[len(prefix) :].split("-", 1)[0]
        if not pid_text.isdigit():
            continue
        try:
            if not entry.is_dir() or (hasattr(os, "getuid") and entry.stat().st_uid != os.getuid()):
                continue
        except OSError:
            continue
        if not psutil.pid_exists(int(pid_text)):
            orphans.append(entry)
    return sorted(orphans)
