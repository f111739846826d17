"""What every smoke run of a benchmark shares (tests/test_bench_smoke.py, tests/test_bench_smoke_page.py): running
``python -m bench.NAME ...`` in a subprocess, checking what it printed, writing small corpora and collection files,
and the environment of every run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.runtime.parquet import read_frame
from tests.conftest import ROOT, needs_shared

BENCH_TIMEOUT_S = 600


def run_bench(module: str, *arguments: object, env: dict[str, str], expect_code: int = 0) -> str:
    """Run ``python -m bench.MODULE ARGUMENTS`` from the checkout; assert its exit code; return its stdout."""
    result = subprocess.run(
        [sys.executable, "-m", f"bench.{module}", *map(str, arguments)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=BENCH_TIMEOUT_S,
    )
    assert result.returncode == expect_code, (
        f"bench.{module} exited {result.returncode}:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    )
    return result.stdout


def assert_printed(output: str, *expected: str) -> None:
    """Each of ``expected`` occurs in the benchmark's output."""
    missing = [text for text in expected if text not in output]
    assert not missing, f"missing {missing} in:\n{output[-3000:]}"


def write_slice(source: Path, rows: int, target: Path) -> Path:
    """The first ``rows`` records of the Parquet file ``source``, written to ``target``."""
    needs_shared(source)
    read_frame(source).head(rows).to_parquet(target, index=False)
    return target


def write_collections(target: Path, collections: dict[str, Path]) -> Path:
    """A collection file (TOML, as data/collections/*.toml) of ``collections`` ({"ICLR 2024": path, ...}: the
    venue and year are the name's two words)."""
    entries = []
    for name, path in collections.items():
        venue, year = name.split()
        entries.append(
            f"[[collection]]\nname = {json.dumps(name)}\nvenue = {json.dumps(venue)}\nyear = {year}\n"
            f"path = {json.dumps(str(path))}\n"
        )
    target.write_text("\n".join(entries), encoding="utf-8")
    return target


@pytest.fixture(scope="module")
def bench_env(embedding_store: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of every run: offline, the session's embedding cache, the checkout's numba cache, and a
    temporary folder of pytest's (the page servers' logs of bench.load and bench.server_cpu go there, not to /tmp)."""
    return {
        **os.environ,
        "TMPDIR": str(tmp_path_factory.mktemp("bench-tmp")),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "ATLAS_EMBEDDING_CACHE": str(embedding_store),
        "NUMBA_CACHE_DIR": os.environ.get("NUMBA_CACHE_DIR", str(ROOT / ".cache" / "numba")),
    }
