"""The layout store: a folder of arrays a rebuild reuses (tokens, neighbour lists, UMAP layouts, metrics)."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)


class LayoutStore:
    """Folder of cached arrays (neighbour lists, UMAP layouts): ``<key>.npz``, key = SHA-256 of a JSON description.

    Writes go to a temporary file renamed into place, so concurrent builds never read a partial file. Files are
    never evicted (about 2.5 MB per 12,000 documents and parameter set); delete the folder to reclaim space.
    """

    def __init__(self, folder: Path | str):
        self.folder = Path(folder)
        self.hits: dict[str, bool] = {}

    @staticmethod
    def key(description: dict[str, Any]) -> str:
        """SHA-256 hex of ``description`` as canonical JSON."""
        return hashlib.sha256(json.dumps(description, sort_keys=True, default=str).encode("utf-8")).hexdigest()

    def get(self, key: str) -> dict[str, np.ndarray] | None:
        """The arrays stored under ``key``, or None (also for an unreadable file, which is then recomputed)."""
        path = self.folder / f"{key}.npz"
        if not path.is_file():
            return None
        try:
            with np.load(path, allow_pickle=False) as stored:
                return {name: stored[name] for name in stored.files}
        except (OSError, ValueError) as error:
            log.warning("ignoring unreadable layout cache file %s: %s", path, error)
            return None

    def put(self, key: str, arrays: dict[str, np.ndarray]) -> None:
        """Store arrays under ``key`` (atomic rename). A failure to write is logged, never raised."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(prefix=f"{key}.", suffix=".tmp.npz", dir=self.folder)
            with os.fdopen(handle, "wb") as stream:
                np.savez(stream, **arrays)
            os.replace(temporary, self.folder / f"{key}.npz")
        except OSError as error:
            log.warning("could not write the layout cache in %s: %s", self.folder, error)

    def cached(self, stage: str, description: dict[str, Any], compute: Any) -> dict[str, np.ndarray]:
        """``compute()`` (a dict of arrays) unless cached under ``description``; records hit/miss in ``hits[stage]``."""
        key = self.key({"stage": stage, **description})
        found = self.get(key)
        self.hits[stage] = found is not None
        if found is None:
            found = compute()
            self.put(key, found)
        return found


