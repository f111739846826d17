"""Run one ``topic-atlas`` command in this process and kill it with SIGKILL at a chosen write into the staging folder.

``python tests/fault_writer.py POINT -- build|add|rename ARGS...`` where POINT is

- ``N:before``: SIGKILL just before the N-th file written into a ``.<cache>.building-*`` folder (1-based, in the order
  the writer writes: tables, embeddings, manifest, then carried-over files);
- ``N:during``: write the first half of that file's bytes, flush them to disk, then SIGKILL (a torn write);
- ``swap:before`` / ``swap:after``: SIGKILL just before or just after the atomic exchange of staging and cache;
- ``count``: run to the end and print ``writes N`` (how many points there are).

The writes are the real ones (pandas' to_parquet, numpy's save, pathlib's write_text, shutil's copies); only the
moment of death is chosen. A power cut or ``kill -9`` lands at such a point, so the cache after it must be whole.
"""

from __future__ import annotations

import io
import os
import shutil
import signal
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.cache import publish

POINT = sys.argv[1]
WRITES = [0]


def _die() -> None:
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)


def _point(path: object, data: Callable[[], bytes], write: Callable[[], object]) -> object:
    """Count a write into a staging folder; die before or halfway through it when it is the chosen one."""
    if ".building-" not in str(path):
        return write()
    WRITES[0] += 1
    number, _, mode = POINT.partition(":")
    if number.isdigit() and int(number) == WRITES[0]:
        if mode == "during":
            payload = data()
            with open(str(path), "wb") as handle:
                handle.write(payload[: max(1, len(payload) // 2)])
                handle.flush()
                os.fsync(handle.fileno())
        _die()
    return write()


def _parquet_bytes(frame: pd.DataFrame, args: tuple, kwargs: dict) -> bytes:
    buffer = io.BytesIO()
    ORIGINAL_TO_PARQUET(frame, buffer, *args, **kwargs)
    return buffer.getvalue()


def to_parquet(self: pd.DataFrame, path: object = None, *args: object, **kwargs: object) -> object:
    return _point(
        path, lambda: _parquet_bytes(self, args, kwargs), lambda: ORIGINAL_TO_PARQUET(self, path, *args, **kwargs)
    )


def save(file: object, array: object, *args: object, **kwargs: object) -> None:
    def data() -> bytes:
        buffer = io.BytesIO()
        ORIGINAL_SAVE(buffer, array, *args, **kwargs)
        return buffer.getvalue()

    _point(file, data, lambda: ORIGINAL_SAVE(file, array, *args, **kwargs))


def write_text(self: Path, text: str, encoding: str | None = None, *args: object, **kwargs: object) -> int:
    return _point(
        self,
        lambda: text.encode(encoding or "utf-8"),
        lambda: ORIGINAL_WRITE_TEXT(self, text, encoding, *args, **kwargs),
    )  # type: ignore[return-value]


def copy2(source: os.PathLike | str, target: os.PathLike | str, *args: object, **kwargs: object) -> object:
    source_path, destination = Path(os.fspath(source)), Path(os.fspath(target))  # copytree passes DirEntry objects
    if destination.is_dir():
        destination = destination / source_path.name
    return _point(destination, source_path.read_bytes, lambda: ORIGINAL_COPY2(source, target, *args, **kwargs))


def copytree(source: object, target: object, *args: object, **kwargs: object) -> object:
    kwargs.setdefault("copy_function", copy2)
    return ORIGINAL_COPYTREE(source, target, *args, **kwargs)


def swap(source: Path, target: Path) -> None:
    if POINT == "swap:before":
        _die()
    ORIGINAL_SWAP(source, target)
    if POINT == "swap:after":
        _die()


ORIGINAL_TO_PARQUET, ORIGINAL_SAVE, ORIGINAL_WRITE_TEXT = pd.DataFrame.to_parquet, np.save, Path.write_text
ORIGINAL_COPY2, ORIGINAL_COPYTREE, ORIGINAL_SWAP = shutil.copy2, shutil.copytree, publish._swap_folders

if __name__ == "__main__":
    pd.DataFrame.to_parquet = to_parquet  # type: ignore[method-assign]
    np.save = save
    Path.write_text = write_text  # type: ignore[method-assign]
    shutil.copy2, shutil.copytree, publish._swap_folders = copy2, copytree, swap  # type: ignore[assignment]
    from topic_atlas.cli import main

    code = main(sys.argv[sys.argv.index("--") + 1 :])
    print(f"writes {WRITES[0]}", flush=True)
    sys.exit(code)
