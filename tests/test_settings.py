"""pipeline.runtime.settings: the ATLAS_* variables read into one Settings, when asked (never at import), with the
same defaults and fallbacks the modules that use them had; and those modules reading through it."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.config import default_seed
from pipeline.runtime import settings as settings_module
from pipeline.runtime.errors import AtlasError
from pipeline.runtime.paths import CACHE_FOLDER
from pipeline.runtime.settings import VARIABLES, Settings, settings
from pipeline.runtime.threads import thread_count


@pytest.fixture
def bare(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No ATLAS_* variable set."""
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_the_defaults_when_nothing_is_set(bare: pytest.MonkeyPatch):
    assert settings() == Settings()
    current = settings()
    assert current.seed == 42 and current.threads == 1 and current.lock_wait_s == 30.0
    assert current.embedding_cache == CACHE_FOLDER / "embeddings.sqlite"
    assert current.model_cache == CACHE_FOLDER / "encoders"
    assert current.log_dir is None and current.cache is None
    assert current.map_renderer == "webgl" and current.export_timeout_s == 30.0


def test_each_variable_is_read(bare: pytest.MonkeyPatch, tmp_path: Path):
    values = {
        "ATLAS_SEED": " 7 ",
        "ATLAS_THREADS": "2",
        "ATLAS_EMBEDDING_CACHE": str(tmp_path / "e.sqlite"),
        "ATLAS_MODEL_CACHE": str(tmp_path / "models"),
        "ATLAS_LOG_DIR": str(tmp_path / "logs"),
        "ATLAS_LOCK_WAIT_S": "1.5",
        "ATLAS_CACHE": "~/atlas",
        "ATLAS_MAP_RENDERER": "plotly",
        "ATLAS_EXPORT_TIMEOUT_S": "120",
    }
    for name, value in values.items():
        bare.setenv(name, value)
    assert settings() == Settings(
        seed=7,
        seed_text="7",
        threads=2,
        embedding_cache=tmp_path / "e.sqlite",
        model_cache=tmp_path / "models",
        log_dir=tmp_path / "logs",
        lock_wait_s=1.5,
        cache=Path("~/atlas").expanduser(),
        map_renderer="plotly",
        export_timeout_s=120.0,
    )
    assert default_seed() == 7 and thread_count() == 2


def test_unreadable_values_fall_back_and_a_bad_seed_is_said_when_needed(bare: pytest.MonkeyPatch):
    for name, value in {"ATLAS_THREADS": "0", "ATLAS_EXPORT_TIMEOUT_S": "-1", "ATLAS_LOCK_WAIT_S": "soon"}.items():
        bare.setenv(name, value)
    bare.setenv("ATLAS_SEED", "forty-two")
    current = settings()  # never raises
    assert (current.threads, current.export_timeout_s, current.lock_wait_s) == (1, 30.0, 30.0)
    assert current.seed is None
    with pytest.raises(AtlasError, match="ATLAS_SEED must be an integer seed, got 'forty-two'"):
        default_seed()


def test_a_change_of_the_environment_is_seen_by_the_next_call(bare: pytest.MonkeyPatch):
    assert settings().threads == 1
    bare.setenv("ATLAS_THREADS", "3")
    assert settings().threads == 3 and thread_count() == 3
    assert settings() is settings()  # the same values parse once


def test_no_module_reads_an_atlas_variable_but_the_settings(bare: pytest.MonkeyPatch):
    root = Path(settings_module.__file__).resolve().parents[2]
    readers = [
        path.relative_to(root).as_posix()
        for package in ("pipeline", "dashboard", "topic_atlas")
        for path in sorted((root / package).rglob("*.py"))
        if any(f'{call}("ATLAS_' in path.read_text(encoding="utf-8") for call in ("environ.get", "getenv", "environ["))
    ]
    assert not readers, readers
