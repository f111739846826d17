"""The writer lock of a cache folder as the commands meet it: busy becomes a one-line TargetError."""

from __future__ import annotations

import errno
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from pipeline import cache
from pipeline.runtime.errors import TargetError


@contextmanager
def held(cache_dir: Path | str) -> Iterator[None]:
    """Hold ``cache_dir``'s writer lock (pipeline.cache.writer_lock) for the block: build, add and rename each take
    it from their read of the old atlas to the swap of the new one, so two writers never interleave.

    Raises TargetError (the holder's pid and command, how long it waited) when another writer keeps it past
    pipeline.cache.LOCK_WAIT_S, and TargetError naming the folder when the disk fills (ENOSPC, EDQUOT) inside the
    block: pipeline.cache.staged_cache has then removed the staging folder and the previous atlas is unchanged.
    """
    stack = ExitStack()
    try:
        stack.enter_context(cache.writer_lock(cache_dir))
    except cache.CacheBusyError as error:
        raise TargetError(str(error)) from error
    with stack:
        try:
            yield
        except OSError as error:
            if error.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
            raise TargetError(
                f"{cache_dir}: the disk is full ({error.strerror}) while writing the new atlas; the previous atlas "
                "is unchanged. Free some space and run the command again"
            ) from error
