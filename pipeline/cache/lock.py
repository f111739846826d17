"""The one writer lock of a cache folder (:func:`writer_lock`: an exclusive ``flock`` through filelock on
``.<name>.lock`` beside it), thread-safe and re-entrant within a thread; a writer that waits too long gets a
:class:`CacheBusyError` naming the holder."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pipeline.runtime.settings import settings


class CacheBusyError(Exception):
    """Another writer (a process, or another thread of this one) holds the writer lock of a cache folder for longer
    than the wait allowed."""


def lock_wait_s() -> float:
    """Seconds a writer waits for another one's lock by default: $ATLAS_LOCK_WAIT_S, else 30
    (pipeline.runtime.settings), read when asked."""
    return settings().lock_wait_s


def lock_path(target: Path) -> Path:
    """The writer lock file of cache folder ``target``: ``.<name>.lock`` beside it (the folder itself is swapped)."""
    target = Path(target).expanduser().resolve()
    return target.parent / f".{target.name}.lock"


def _note_holder(fd: int) -> None:
    """Write who holds the lock into the lock file (``pid N (command)``), for a waiting writer's message."""
    os.ftruncate(fd, 0)
    os.write(fd, f"pid {os.getpid()} ({' '.join(sys.argv[:3])})".encode(errors="replace"))


def _busy(path: Path, waited_s: float) -> CacheBusyError:
    """The error for a writer that waited ``waited_s`` seconds for the lock file ``path``, naming its holder."""
    try:
        holder = path.read_text(encoding="utf-8").strip() or "another process"
    except OSError:
        holder = "another process"
    return CacheBusyError(
        f"{path.parent / path.name[1:-5]} is being written by {holder}; waited "
        f"{waited_s:g} s for it to finish. Try again when that command has ended"
    )


@contextmanager
def writer_lock(target: Path | str, wait_s: float | None = None) -> Iterator[None]:
    """Hold the one writer lock of cache folder ``target`` (an exclusive ``flock`` on :func:`lock_path`).

    Waits up to ``wait_s`` seconds (default :func:`lock_wait_s`: 30, or $ATLAS_LOCK_WAIT_S) for another writer, a
    process or another thread of this one, to finish, then raises CacheBusyError naming the holder's pid and command.
    Re-entrant within one thread, so ``add`` and ``rename`` hold it from their read to their :func:`staged_cache`
    (filelock's ``FileLock``: an ``flock`` on the file). The kernel releases the lock
    when its holder dies (SIGKILL included), so a killed writer never leaves a stale lock; the file is removed on
    release. Readers take no lock: they see whole caches only (:func:`publish_folder`).
    """
    from filelock import FileLock, Timeout

    path = lock_path(Path(target))
    path.parent.mkdir(parents=True, exist_ok=True)
    # One FileLock per path in the process (is_singleton), its nesting counted per thread (thread_local): a nested
    # call in the holding thread passes, another thread waits as another process does.
    lock = FileLock(path, is_singleton=True, on_acquired=_note_holder)
    wait = lock_wait_s() if wait_s is None else wait_s
    try:
        lock.acquire(timeout=max(wait, 0.0), poll_interval=0.1)
    except Timeout:
        raise _busy(path, wait) from None
    try:
        yield
    finally:
        if lock.lock_counter == 1:  # the outermost hold: remove the file while holding it (a waiter that opened
            path.unlink(missing_ok=True)  # it sees it unlinked and locks a new one), then release
        lock.release()
