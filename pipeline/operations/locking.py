"""The writer lock of a cache folder as the commands meet it: busy becomes a one-line TargetError."""

from __future__ import annotations

import errno
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import NoReturn

from pipeline import cache
from pipeline.runtime.errors import TargetError


@contextmanager
def held(cache_dir: Path | str) -> Iterator[None]:
    """Hold ``cache_dir``'s writer lock (pipeline.cache.writer_lock) for the block: build, add and rename each take
    it from their read of the old atlas to the swap of the new one, so two writers never interleave.

    Raises TargetError (the holder's pid and command, how long it waited) when another writer keeps it past
    pipeline.cache.LOCK_WAIT_S, and TargetError naming the folder when the disk fills (ENOSPC, EDQUOT) or the place
    may not be written (EACCES, EPERM, EROFS: permissions, an immutable folder, a read-only file system) while taking
    the lock or inside the block: pipeline.cache.staged_cache has then removed the staging folder and the previous
    atlas is unchanged.
    """
    stack = ExitStack()
    try:
        stack.enter_context(cache.writer_lock(cache_dir))
    except cache.CacheBusyError as error:
        raise TargetError(str(error)) from error
    except OSError as error:
        _raise_write_error(cache_dir, error)
    with stack:
        try:
            yield
        except OSError as error:
            _raise_write_error(cache_dir, error)


def _raise_write_error(cache_dir: Path | str, error: OSError) -> NoReturn:
    """Raise the one-line TargetError for a failed write the user can remedy (a full disk, a place that may not be
    written), from ``error``; any other ``error`` is a fault and is raised as it is, with its traceback."""
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        message = f"the disk is full ({error.strerror}) while writing the new atlas"
        remedy = "Free some space and run the command again"
    elif error.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        where = f": {error.filename}" if error.filename else ""
        message = f"cannot write the new atlas there ({error.strerror}{where})"
        remedy = "Give --cache a folder you may write to, or change the folder's permissions"
    else:
        raise error
    raise TargetError(f"{cache_dir}: {message}; the previous atlas is unchanged. {remedy}") from error
