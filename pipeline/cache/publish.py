"""The staged write of a cache folder: :func:`staged_cache` gives a staging folder beside the target and, when the
block ends normally, swaps it in atomically (:func:`publish_folder`: one ``renameat2`` exchange on Linux, through
ctypes), under the writer lock (pipeline.cache.lock); a failed write leaves the target as it was."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pipeline.cache.lock import writer_lock


def _swap_folders(source: Path, target: Path) -> None:
    """Atomically exchange two existing folders (Linux ``renameat2(RENAME_EXCHANGE)``); OSError where unsupported."""
    libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        raise OSError("renameat2 is not available")
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(source), at_fdcwd, os.fsencode(target), rename_exchange) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno))


# The folders this process has written (made or replaced) with publish_folder, in order: an interrupted command
# says whether its atlas was already replaced (topic_atlas.cli.run_guarded).
_published: list[Path] = []


def published_folders() -> list[Path]:
    """The cache folders this process has made or replaced so far (:func:`publish_folder`), oldest first."""
    return list(_published)


def publish_folder(staging: Path, target: Path) -> None:
    """Move a fully written ``staging`` folder to ``target``, replacing any previous one atomically.

    On Linux the swap is one ``renameat2`` call, so ``target`` always holds either the old or the new
    cache. Elsewhere the old folder is renamed aside first (a window of two renames). ``target`` is recorded
    (:func:`published_folders`) as soon as it holds the new cache, before the old one is removed.
    """
    if not target.exists():
        os.replace(staging, target)
        _published.append(target)
        return
    try:
        _swap_folders(staging, target)
    except OSError:
        retired = target.with_name(f".{target.name}.old-{os.getpid()}")
        os.replace(target, retired)
        os.replace(staging, target)
        _published.append(target)
        shutil.rmtree(retired, ignore_errors=True)
        return
    _published.append(target)
    shutil.rmtree(staging)  # staging now holds the old cache


def staging_folder(target: Path) -> Path:
    """Create an empty temporary folder beside ``target`` (same file system, so the final rename is atomic), with
    the permissions a folder made by ``mkdir`` would have (mkdtemp's are the owner's alone, 0700, so a colleague or
    a web server could not read the atlas it becomes)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.building-", dir=target.parent))
    staging.chmod(0o777 & ~current_umask())
    return staging


def current_umask() -> int:
    """The process's umask (os.umask can only be read by setting it, so it is set back at once)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextmanager
def staged_cache(target: Path) -> Iterator[Path]:
    """Write a new version of the cache folder ``target`` in one atomic step: the one way build, add and rename write.

    Yields an empty staging folder beside ``target`` (:func:`staging_folder`, named ``.<target>.building-*``) for
    the block to fill (:func:`write_tables`, the model, :func:`carry_over`). When the block ends normally the
    staging folder replaces ``target`` (:func:`publish_folder`: one ``renameat2`` exchange on Linux), so readers
    see the old cache or the new one, never a mix. When the block or the publishing raises (any exception,
    KeyboardInterrupt included) the staging folder is removed and the exception propagates unchanged; ``target`` is
    left as it was unless the swap had already happened (an interrupt while the old copy is removed), in which case
    it holds the new cache and :func:`published_folders` names it.

    Usage::

        with staged_cache(cache_dir) as staging:
            write_tables(staging, manifest, documents, topics, hierarchy, embeddings)
    """
    with writer_lock(target):
        remove_leftovers(target)
        staging = staging_folder(target)
        try:
            yield staging
            publish_folder(staging, target)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise


def remove_leftovers(target: Path) -> list[str]:
    """Remove the staging and retired folders (``.<name>.building-*``, ``.<name>.old-*``) that a writer killed with
    SIGKILL or a power cut left beside ``target``; call only while holding :func:`writer_lock`. Returns their names."""
    target = Path(target)
    if not target.parent.is_dir():
        return []
    removed = []
    for entry in target.parent.iterdir():
        if entry.is_dir() and entry.name.startswith((f".{target.name}.building-", f".{target.name}.old-")):
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry.name)
    return sorted(removed)
