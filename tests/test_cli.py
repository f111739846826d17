"""The command line as a user meets it: real subprocesses, exit codes, one-line errors, SIGKILL mid-build."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pipeline import cache
from tests.conftest import CASES, ROOT, SEED, needs_shared


def run_cli(*args: str, env_store: Path, timeout: int = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "ATLAS_EMBEDDING_CACHE": str(env_store), "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "topic_atlas", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )


def test_help_lists_every_command(embedding_store: Path):
    result = run_cli("--help", env_store=embedding_store)
    assert result.returncode == 0
    for command in ("build", "evaluate", "place", "fetch"):
        assert command in result.stdout
    build_help = run_cli("build", "--help", env_store=embedding_store)
    assert "--input" in build_help.stdout and "--cache" in build_help.stdout and "--name" in build_help.stdout


def listed_commands(help_text: str) -> list[str]:
    """The subcommands a top-level ``--help`` lists, in its order (argparse indents each by four spaces)."""
    return re.findall(r"^ {4}([a-z]+)\s", help_text, flags=re.MULTILINE)


def test_the_command_line_is_topic_atlas_alone(embedding_store: Path):
    """``topic-atlas`` (topic_atlas.cli, also ``python -m topic_atlas``) lists every command in its order, ``share``
    among them; the pipeline has no command line of its own (``python -m pipeline`` is gone: issue 39, the command
    line is a client of the API above the pipeline)."""
    full = run_cli("--help", env_store=embedding_store)
    assert full.returncode == 0, full.stderr[-2000:]
    assert listed_commands(full.stdout) == ["build", "evaluate", "place", "add", "rename", "fetch", "share", "edit"]
    share_help = run_cli("share", "--help", env_store=embedding_store)
    assert share_help.returncode == 0 and all(flag in share_help.stdout for flag in ("--cache", "--out", "--folder"))
    env = {**os.environ, "ATLAS_EMBEDDING_CACHE": str(embedding_store)}
    gone = subprocess.run(
        [sys.executable, "-m", "pipeline", "--help"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert gone.returncode != 0 and "pipeline" in gone.stderr


def test_the_console_script_limits_threads_before_numpy_loads():
    """Importing the ``topic-atlas`` entry point loads no numerical library (topic_atlas/__init__.py is lazy), so
    its ``main`` still sets the BLAS thread variables before numpy loads (pipeline.runtime.threads)."""
    probe = (
        "import sys, topic_atlas.cli\n"
        "print(sorted(m for m in ('numpy', 'pandas', 'pyarrow', 'dashboard', 'topic_atlas.atlas') if m in sys.modules))"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "[]"


def test_bad_csv_is_one_line_error_without_traceback(tmp_path: Path, embedding_store: Path):
    path = CASES / "14-csv-multiline-bad-quotes" / "bad_quote.csv"
    needs_shared(path)
    result = run_cli("build", "--input", str(path), "--cache", str(tmp_path / "cache"), env_store=embedding_store)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "line 4" in result.stderr and "quote" in result.stderr
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize("flag", ["--umap-epochs", "--map-epochs", "--fit-sample-map-epochs"])
def test_no_epochs_is_a_one_line_error(tmp_path: Path, embedding_store: Path, flag: str):
    result = run_cli(
        "build", "--input", str(SEED), "--cache", str(tmp_path / "cache"), flag, "0", env_store=embedding_store
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"{flag} 0: give 1 or more epochs" in result.stderr
    assert not (tmp_path / "cache").exists()


def test_tiny_corpus_cli_adapts_without_scipy_errors(tmp_path: Path, embedding_store: Path):
    """Case 01 through the command line: 5 documents build; the log records the adapted UMAP settings."""
    path = CASES / "01-tiny-corpus" / "abstracts_5.txt"
    needs_shared(path)
    result = run_cli(
        "build", "--input", str(path), "--cache", str(tmp_path / "cache"), "--name", "Tiny 5", env_store=embedding_store
    )
    output = result.stdout + result.stderr
    for forbidden in ("Traceback", "scipy.linalg.eigh", "k >= N", "k must be less than or equal"):
        assert forbidden not in output
    assert result.returncode == 0, output
    manifest = json.loads((tmp_path / "cache" / cache.MANIFEST_FILE).read_text())
    assert manifest["n_documents"] == 5
    assert manifest["corpus_name"] == "Tiny 5"  # --name, shown by the page's header and figure titles
    assert manifest["params"]["umap_n_neighbors"] <= 4 and manifest["params"]["umap_n_components"] <= 3
    assert "n_neighbors" in output


def test_refuses_a_foreign_folder_unless_forced(tmp_path: Path, embedding_store: Path):
    target = tmp_path / "notes"
    target.mkdir()
    (target / "todo.txt").write_text("keep me", encoding="utf-8")
    result = run_cli("build", "--input", str(SEED), "--cache", str(target), env_store=embedding_store)
    assert result.returncode == 2 and "--force" in result.stderr
    assert (target / "todo.txt").read_text() == "keep me"


@pytest.mark.parametrize("stage", ["embed", "topics", "save_model"])
def test_sigkill_during_a_stage_leaves_the_previous_cache(
    stage: str, tmp_path: Path, seed_cache: Path, embedding_store: Path
):
    """Kill -9 the build when a stage starts; the previous cache stays byte-identical and readable. The last stage,
    save_model, writes into the staging folder and swaps it in within milliseconds, so the kill, sent when this test
    has read the stage's line, may land after the swap (seed 7 / 2 threads did): then the folder holds the new atlas
    whole, never a mix (pipeline.cache.publish)."""
    target = tmp_path / "cache"
    shutil.copytree(seed_cache, target)
    before = {path.relative_to(target): path.read_bytes() for path in target.rglob("*") if path.is_file()}
    env = {**os.environ, "ATLAS_EMBEDDING_CACHE": str(embedding_store), "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "topic_atlas", "build", "--input", str(SEED), "--cache", str(target), "--seed", "7"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 240
    killed = False
    for line in process.stderr:
        if f"stage {stage} ..." in line:
            process.send_signal(signal.SIGKILL)
            killed = True
            break
        if time.monotonic() > deadline:
            break
    process.wait(timeout=60)
    assert killed, f"stage {stage} never started"
    assert process.returncode == -signal.SIGKILL
    after = {path.relative_to(target): path.read_bytes() for path in target.rglob("*") if path.is_file()}
    if stage == "save_model" and after != before:  # swapped before the kill: the new atlas, complete
        assert cache.read_cache(target).manifest["created_at"] != cache.read_manifest(seed_cache)["created_at"]
        assert {path.name for path in target.iterdir()} == {path.name for path in seed_cache.iterdir()}
    else:
        assert after == before
    cache.read_cache(target)
