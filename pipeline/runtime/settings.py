"""The ``ATLAS_*`` environment variables, read in one place into one frozen :class:`Settings`.

Every module that honours one of them asks :func:`settings` when it runs, never at import time, so a variable set
after ``import topic_atlas`` (in a notebook, by a test's ``monkeypatch``, by the suite's ``--atlas-seed``) is seen by
the next call. :func:`settings` looks the variables up on each call (nine dictionary reads) and parses each distinct
set of values once (:func:`functools.lru_cache`). It never raises: a value that cannot be parsed falls back to the
default, except ``ATLAS_SEED``, whose error :func:`pipeline.config.default_seed` raises when a build needs the seed.

An empty variable counts as unset. The variables:

``ATLAS_SEED``
    every build's default seed (pipeline.config.default_seed); an integer, default 42.
``ATLAS_THREADS``
    threads per library pool: BLAS/OpenMP, numba, torch, faiss, onnxruntime (pipeline.runtime.threads); a positive
    integer, default 1; anything else means 1.
``ATLAS_EMBEDDING_CACHE``
    the SQLite embedding cache (pipeline.represent.embedding_store); the layout store ``layouts/`` lies beside it;
    default ``.cache/embeddings.sqlite`` of the project root (pipeline.runtime.paths).
``ATLAS_MODEL_CACHE``
    the folder of encoders derived from the packaged MiniLM (pipeline.represent.derived_encoders); default
    ``.cache/encoders``.
``ATLAS_LOG_DIR``
    the folder of failure logs, tried before ``.cache/logs`` (pipeline.runtime.crashlog); default none.
``ATLAS_LOCK_WAIT_S``
    seconds a writer waits for another writer's lock on a cache folder (pipeline.cache); a number >= 0, default 30.
``ATLAS_CACHE``
    the cache folder the page shows when no ``--cache`` is given (dashboard/app.py), ``~`` expanded; default none
    (then ``caches/default``).
``ATLAS_MAP_RENDERER``
    ``plotly`` draws the page's plotly map instead of the WebGL one (dashboard/views/map.py); default ``webgl``.
``ATLAS_EXPORT_TIMEOUT_S``
    seconds an image export may take before its renderer is killed (dashboard/export/download_bytes.py); a positive
    number, default 30.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TypeVar

from pipeline.runtime.paths import CACHE_FOLDER

VARIABLES = (
    "ATLAS_SEED",
    "ATLAS_THREADS",
    "ATLAS_EMBEDDING_CACHE",
    "ATLAS_MODEL_CACHE",
    "ATLAS_LOG_DIR",
    "ATLAS_LOCK_WAIT_S",
    "ATLAS_CACHE",
    "ATLAS_MAP_RENDERER",
    "ATLAS_EXPORT_TIMEOUT_S",
)
DEFAULT_SEED = 42
DEFAULT_THREADS = 1
DEFAULT_LOCK_WAIT_S = 30.0
DEFAULT_EXPORT_TIMEOUT_S = 30.0
Number = TypeVar("Number", int, float)


@dataclass(frozen=True)
class Settings:
    """The process's ``ATLAS_*`` settings (see the module docstring for each variable).

    ``seed``: the build seed, None when ``ATLAS_SEED`` is set but not an integer (``seed_text`` holds what it was).
    ``threads``: threads per library pool, >= 1. ``embedding_cache``, ``model_cache``: paths. ``log_dir``,
    ``cache``: paths or None. ``lock_wait_s``, ``export_timeout_s``: seconds. ``map_renderer``: ``webgl`` or
    ``plotly`` (or what the variable says).
    """

    seed: int | None = DEFAULT_SEED
    seed_text: str = ""
    threads: int = DEFAULT_THREADS
    embedding_cache: Path = CACHE_FOLDER / "embeddings.sqlite"
    model_cache: Path = CACHE_FOLDER / "encoders"
    log_dir: Path | None = None
    lock_wait_s: float = DEFAULT_LOCK_WAIT_S
    cache: Path | None = None
    map_renderer: str = "webgl"
    export_timeout_s: float = DEFAULT_EXPORT_TIMEOUT_S


def settings() -> Settings:
    """The settings the environment gives now (parsed once per distinct set of values). Never raises."""
    return _parse(tuple(os.environ.get(name, "").strip() for name in VARIABLES))


@lru_cache(maxsize=16)
def _parse(values: tuple[str, ...]) -> Settings:
    """:class:`Settings` of the variables' stripped values, in :data:`VARIABLES` order ("" when unset)."""
    raw = dict(zip(VARIABLES, values))
    defaults = Settings()
    threads = _number(raw["ATLAS_THREADS"], int, DEFAULT_THREADS)
    lock_wait_s = _number(raw["ATLAS_LOCK_WAIT_S"], float, DEFAULT_LOCK_WAIT_S)
    export_timeout_s = _number(raw["ATLAS_EXPORT_TIMEOUT_S"], float, DEFAULT_EXPORT_TIMEOUT_S)
    return Settings(
        seed=_number(raw["ATLAS_SEED"], int, DEFAULT_SEED) if _is_int(raw["ATLAS_SEED"]) else None,
        seed_text=raw["ATLAS_SEED"],
        threads=threads if threads > 0 else DEFAULT_THREADS,
        embedding_cache=Path(raw["ATLAS_EMBEDDING_CACHE"])
        if raw["ATLAS_EMBEDDING_CACHE"]
        else defaults.embedding_cache,
        model_cache=Path(raw["ATLAS_MODEL_CACHE"]) if raw["ATLAS_MODEL_CACHE"] else defaults.model_cache,
        log_dir=Path(raw["ATLAS_LOG_DIR"]) if raw["ATLAS_LOG_DIR"] else None,
        lock_wait_s=lock_wait_s if lock_wait_s >= 0 else DEFAULT_LOCK_WAIT_S,
        cache=Path(raw["ATLAS_CACHE"]).expanduser() if raw["ATLAS_CACHE"] else None,
        map_renderer=raw["ATLAS_MAP_RENDERER"] or "webgl",
        export_timeout_s=export_timeout_s if export_timeout_s > 0 else DEFAULT_EXPORT_TIMEOUT_S,
    )


def _is_int(text: str) -> bool:
    """Whether ``text`` is empty (unset) or an integer as ``int`` reads one."""
    try:
        int(text or "0")
    except ValueError:
        return False
    return True


def _number(text: str, kind: type[Number], default: Number) -> Number:
    """``text`` read as ``kind``, or ``default`` when it is empty or unreadable."""
    try:
        return kind(text) if text else default
    except ValueError:
        return default
