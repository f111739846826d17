"""The edit log of an atlas and the files undo needs (pipeline.operations.edit), written with the rest of the cache.

``edits.jsonl`` holds one JSON object per edit, in order: ``id`` (1, 2, ...), ``op`` (merge, split, delete, move,
rename, undo), ``params``, ``at`` (ISO 8601, UTC), ``by`` (the ``by`` argument, else $USER, else the login name;
null when none is known), ``summary`` (one sentence), and for an edit ``snapshot`` (the files it replaced, kept as
``edits/<id>-<file>``) and ``state`` (SHA-256 over the documents, topics and subtopics it wrote: undo refuses when
the atlas no longer holds them, i.e. a build, add or rename came after it); an undo has ``undoes`` (an edit's id).
The kept files are hard links of the replaced ones (copies where the file system refuses links), so an edit costs
the space of the files it rewrote; those of the last UNDO_DEPTH edits are kept.
"""

from __future__ import annotations

import getpass
import hashlib
import json
import os
import re
import shutil
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pipeline import cache
from pipeline.runtime.errors import InputError, TargetError

EDITS_FILE = cache.EDITS_FILE
EDITS_DIR = cache.EDITS_DIR
UNDO_DEPTH = 10  # edits whose replaced files are kept: about 10 MB each on the 11,660 papers of ICLR 2025
# The files an edit may rewrite, so the ones kept for undo (embeddings, model and representation never change).
SNAPSHOT_FILES = (
    cache.MANIFEST_FILE,
    cache.DOCUMENTS_FILE,
    cache.TOPICS_FILE,
    cache.HIERARCHY_FILE,
    cache.TOPICS_PER_CLASS_FILE,
    cache.COPIES_FILE,
    cache.SUBTOPICS_FILE,
    cache.METRICS_FILE,
)
STATE_FILES = (cache.DOCUMENTS_FILE, cache.TOPICS_FILE, cache.SUBTOPICS_FILE)
KEPT_NAME = re.compile(r"(\d+)-(.+)")


def read_log(cache_dir: Path | str) -> list[dict[str, Any]]:
    """The entries of ``cache_dir/edits.jsonl`` (or of the log file ``cache_dir`` itself, one saved elsewhere) in
    order; [] when there is none. Raises TargetError naming the line for a line that is not a JSON object."""
    path = Path(cache_dir) if Path(cache_dir).is_file() else Path(cache_dir) / EDITS_FILE
    if not path.is_file():
        return []
    entries = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError as error:
            raise TargetError(f"{path}, line {number}: not JSON ({error})") from error
        if not isinstance(entry, dict):
            raise TargetError(f"{path}, line {number}: not a JSON object")
        entries.append(entry)
    return entries


def editor(by: str | None) -> str | None:
    """Who edits: ``by`` when given, else $USER, else the login name; None when none is known."""
    if by and str(by).strip():
        return str(by).strip()
    try:
        return os.environ.get("USER") or getpass.getuser() or None
    except (KeyError, OSError):
        return None


def new_entry(log: Sequence[dict[str, Any]], op: str, params: dict[str, Any], summary: str, by: str | None) -> dict:
    """A log entry (the module docstring's keys but ``snapshot`` and ``state``) numbered after ``log``."""
    number = max((int(entry.get("id", 0)) for entry in log), default=0) + 1
    at = datetime.now(UTC).isoformat(timespec="seconds")
    return {"id": number, "op": op, "params": params, "at": at, "by": editor(by), "summary": summary}


def state_digest(folder: Path) -> str:
    """SHA-256 (hex) over the STATE_FILES of ``folder`` (an absent file counts as empty)."""
    digest = hashlib.sha256()
    for name in STATE_FILES:
        path = folder / name
        digest.update(name.encode())
        if path.is_file():
            with path.open("rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
    return digest.hexdigest()


def link_or_copy(source: Path, target: Path) -> None:
    """``target`` as a hard link of ``source`` (no bytes copied: cache files are never changed in place), or a copy
    where the file system refuses links."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def kept_files(cache_dir: Path, ids: set[int]) -> list[Path]:
    """The files of ``cache_dir/edits/`` that belong to the edits ``ids``."""
    folder = cache_dir / EDITS_DIR
    if not folder.is_dir():
        return []
    found = []
    for path in sorted(folder.iterdir()):
        match = KEPT_NAME.fullmatch(path.name)
        if match and int(match.group(1)) in ids and path.is_file():
            found.append(path)
    return found


def write_log(cache_dir: Path, staging: Path, log: list[dict[str, Any]], entry: dict, keep: set[int]) -> None:
    """Into ``staging``: ``edits.jsonl`` (``log`` then ``entry``) and ``edits/`` holding the kept files of the edits
    ``keep`` (linked from ``cache_dir``)."""
    folder = staging / EDITS_DIR
    folder.mkdir(exist_ok=True)
    for path in kept_files(cache_dir, keep):
        link_or_copy(path, folder / path.name)
    lines = [json.dumps(item, ensure_ascii=False, sort_keys=True) for item in [*log, entry]]
    (staging / EDITS_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")


def record_edit(cache_dir: Path, staging: Path, log: list[dict[str, Any]], entry: dict[str, Any]) -> dict[str, Any]:
    """Finish the staging folder of an edit: keep the files it replaced (``edits/<id>-<file>``, with those of the
    last UNDO_DEPTH - 1 edits before it not undone) and append ``entry`` (with its ``snapshot`` and ``state``) to
    the log. Returns the entry as logged."""
    undone = {int(item["undoes"]) for item in log if item.get("op") == "undo" and "undoes" in item}
    edit_ids = [int(item["id"]) for item in log if item.get("op") != "undo" and int(item["id"]) not in undone]
    keep = set(edit_ids[-(UNDO_DEPTH - 1) :]) if UNDO_DEPTH > 1 else set()
    folder = staging / EDITS_DIR
    folder.mkdir(exist_ok=True)
    snapshot = [name for name in SNAPSHOT_FILES if (cache_dir / name).is_file()]
    for name in snapshot:
        link_or_copy(cache_dir / name, folder / f"{entry['id']}-{name}")
    entry = {**entry, "snapshot": snapshot, "state": state_digest(staging)}
    write_log(cache_dir, staging, log, entry, keep)
    return entry


def last_undoable(log: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The latest edit of ``log`` that no undo has undone. Raises InputError when there is none."""
    undone = {int(entry["undoes"]) for entry in log if entry.get("op") == "undo" and "undoes" in entry}
    for entry in reversed(log):
        if entry.get("op") != "undo" and int(entry.get("id", 0)) not in undone:
            return entry
    raise InputError("there is no edit to undo" + (" (every edit was undone already)" if log else ""))


def restore(cache_dir: Path, staging: Path, entry: dict[str, Any]) -> list[str]:
    """Fill ``staging`` with the atlas as it was before the edit ``entry``: its kept files (the manifest copied,
    so readers see a new manifest identity; the rest linked). Returns the files that did not exist then.
    Raises InputError when the kept files are gone, TargetError when the atlas changed since the edit."""
    if state_digest(cache_dir) != entry.get("state"):
        raise TargetError(
            f"{cache_dir} changed after edit {entry['id']} ({entry.get('summary', entry.get('op'))}): a build, add "
            "or rename came since, so it cannot be undone"
        )
    folder = cache_dir / EDITS_DIR
    snapshot = list(entry.get("snapshot") or [])
    missing = [name for name in snapshot if not (folder / f"{entry['id']}-{name}").is_file()]
    if not snapshot or missing:
        raise InputError(
            f"edit {entry['id']} is too old to undo: only the last {UNDO_DEPTH} edits keep the files they replaced"
        )
    for name in snapshot:
        source = folder / f"{entry['id']}-{name}"
        if name == cache.MANIFEST_FILE:
            shutil.copyfile(source, staging / name)
        else:
            link_or_copy(source, staging / name)
    return [name for name in SNAPSHOT_FILES if name not in snapshot]
