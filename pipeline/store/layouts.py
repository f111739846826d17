"""The layout store: a folder of what a rebuild reuses (the cleaned corpus, tokens, the lexical fit, neighbour lists,
UMAP layouts, the map refinement and metrics, c-TF-IDF counts, phrase counts), and the null store a build without
one uses.

Every entry is filed under the digest of its stage's key (pipeline.store.keys), made where the stage is computed;
the store itself knows nothing of what goes into a key. Both stores have one interface (:class:`StageStore`), so a
stage never asks whether there is a store: it calls ``store.cached(key, compute)``, which a :class:`NullStore`
answers by computing.
"""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

import numpy as np

from pipeline.store.keys import StageKey

if TYPE_CHECKING:
    from pipeline.cache.manifest import LayoutCache

log = logging.getLogger(__name__)

Value = TypeVar("Value")
Arrays = dict[str, np.ndarray]


class StageStore(Protocol):
    """What a stage needs of a store (:class:`LayoutStore` or :class:`NullStore`).

    Attributes
    ----------
    hits : stage name -> True when its output came from the store in this build (last call wins); empty for the
        null store.
    """

    hits: dict[str, bool]

    @property
    def folder(self) -> Path | None:
        """Where entries are kept, None for the null store."""
        ...

    def contains(self, key: StageKey) -> bool:
        """Whether something is stored under ``key`` (it may still prove unreadable: ``cached`` then computes)."""
        ...

    def cached(self, key: StageKey, compute: Callable[[], Arrays]) -> Arrays:
        """``compute()`` (a dict of arrays, no objects), or what was stored under ``key``."""
        ...

    def cached_folder(
        self,
        key: StageKey,
        compute: Callable[[], Value],
        load: Callable[[Path], Value | None],
        save: Callable[[Value, Path], None],
    ) -> Value:
        """``compute()``, or ``load(folder)`` of what ``save(value, folder)`` kept under ``key``."""
        ...

    def manifest_entry(self) -> LayoutCache:
        """The manifest's ``layout_cache``: ``{"folder": str or None, "hits": {stage: bool}}``."""
        ...


class LayoutStore:
    """Folder of stored stage outputs: arrays as ``<digest>.npz`` (numpy, no pickle) and folders (the cleaned corpus)
    as ``<stage>/<digest>/``, ``digest`` being the stage key's (pipeline.store.keys).

    Writes go to a temporary file or folder renamed into place, so concurrent builds never read a partial entry; an
    unreadable entry is logged and computed again, and a failure to write is logged, never raised. Entries are never
    evicted (about 2.5 MB per 12,000 documents and parameter set); delete the folder to reclaim space.
    """

    def __init__(self, folder: Path | str):
        self.folder = Path(folder)
        self.hits: dict[str, bool] = {}

    def get(self, key: StageKey) -> Arrays | None:
        """The arrays stored under ``key``, or None (also for an unreadable file, which is then recomputed)."""
        path = self.folder / f"{key.digest}.npz"
        if not path.is_file():
            return None
        try:
            with np.load(path, allow_pickle=False) as stored:
                return {name: stored[name] for name in stored.files}
        except (OSError, ValueError) as error:
            log.warning("ignoring unreadable layout cache file %s: %s", path, error)
            return None

    def contains(self, key: StageKey) -> bool:
        """Whether an entry is stored under ``key``: an array file (``cached``) or a folder (``cached_folder``) exists;
        it is read, and checked, when it is asked for."""
        return (self.folder / f"{key.digest}.npz").is_file() or (self.folder / key.stage / key.digest).is_dir()

    def put(self, key: StageKey, arrays: Arrays) -> None:
        """Store arrays under ``key`` (atomic rename). A failure to write is logged, never raised."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(prefix=f"{key.digest}.", suffix=".tmp.npz", dir=self.folder)
            with os.fdopen(handle, "wb") as stream:
                np.savez(stream, **arrays)  # type: ignore[arg-type]  # numpy's stubs read **arrays as allow_pickle
            os.replace(temporary, self.folder / f"{key.digest}.npz")
        except OSError as error:
            log.warning("could not write the layout cache in %s: %s", self.folder, error)

    def cached(self, key: StageKey, compute: Callable[[], Arrays]) -> Arrays:
        """``compute()`` (a dict of arrays) unless stored under ``key``; records hit/miss in ``hits[key.stage]``."""
        found = self.get(key)
        self.hits[key.stage] = found is not None
        if found is None:
            found = compute()
            self.put(key, found)
        return found

    def cached_folder(
        self,
        key: StageKey,
        compute: Callable[[], Value],
        load: Callable[[Path], Value | None],
        save: Callable[[Value, Path], None],
    ) -> Value:
        """``load(<folder>/<stage>/<digest>)`` when it gives something, else ``compute()`` kept there by ``save``
        (which must write atomically and log, not raise, its failures); records hit/miss in ``hits[key.stage]``."""
        entry = self.folder / key.stage / key.digest
        found = load(entry)
        self.hits[key.stage] = found is not None
        if found is None:
            found = compute()
            save(found, entry)
        return found

    def manifest_entry(self) -> LayoutCache:
        """The manifest's ``layout_cache``: the folder and this build's hits."""
        return {"folder": str(self.folder), "hits": dict(self.hits)}


class NullStore:
    """The store of a build without one (``embedding_store=None``): the same interface as :class:`LayoutStore`,
    computing every stage and keeping nothing (no key is ever hashed, no hit recorded)."""

    def __init__(self) -> None:
        self.folder = None
        self.hits: dict[str, bool] = {}

    def contains(self, key: StageKey) -> bool:
        """False: nothing is kept."""
        return False

    def cached(self, key: StageKey, compute: Callable[[], Arrays]) -> Arrays:
        """``compute()``."""
        return compute()

    def cached_folder(
        self,
        key: StageKey,
        compute: Callable[[], Value],
        load: Callable[[Path], Value | None],
        save: Callable[[Value, Path], None],
    ) -> Value:
        """``compute()``."""
        return compute()

    def manifest_entry(self) -> LayoutCache:
        """``{"folder": None, "hits": {}}``."""
        return {"folder": None, "hits": {}}


# The store of every call that is given none: it keeps nothing, so one instance serves all.
NULL_STORE = NullStore()


def open_store(folder: Path | str | None) -> StageStore:
    """A :class:`LayoutStore` in ``folder``, or a :class:`NullStore` when ``folder`` is None."""
    return NullStore() if folder is None else LayoutStore(folder)
