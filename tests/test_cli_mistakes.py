"""A new user's mistakes at the command line, each refused in one line on stderr with exit code 2: no traceback and
no "This is a fault in Topic Atlas" line (a missing or file --cache for place, a share target that cannot be
written or lies inside the atlas, an unknown --embedding-model, --debug after the subcommand), and the help texts
that led to them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.represent.encoder_backends import load_encoder
from pipeline.runtime.errors import InputError
from tests.conftest import ROOT, SEED

FAULT = "fault in Topic Atlas"


def run_cli(*args: str, store: Path, timeout: int = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "ATLAS_EMBEDDING_CACHE": str(store), "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "topic_atlas", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )


def refused(result: subprocess.CompletedProcess, *words: str) -> str:
    """The one line a refused command wrote to stderr, once it is known to be one line with exit code 2, naming
    each of ``words`` and not calling itself a fault."""
    lines = [line for line in result.stderr.splitlines() if line.strip() and " INFO " not in line]
    assert result.returncode == 2, result.stderr[-2000:]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr[-2000:]
    assert FAULT not in result.stderr and "Traceback" not in result.stderr
    assert all(word in lines[0] for word in words), lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def atlas(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the 19-paper seed atlas built by the command line with the default tfidf-svd, its embedding store)."""
    folder = tmp_path_factory.mktemp("mistakes")
    store = folder / "embeddings.sqlite"
    result = run_cli("build", "--input", str(SEED), "--cache", str(folder / "atlas"), store=store)
    assert result.returncode == 0, result.stderr[-2000:]
    return folder / "atlas", store


def test_place_names_a_missing_atlas_in_one_line(tmp_path: Path, atlas: tuple[Path, Path]):
    _, store = atlas
    missing = tmp_path / "nope"
    result = run_cli(
        "place", "--cache", str(missing), "--input", str(SEED), "--out", str(tmp_path / "p.csv"), store=store
    )
    refused(result, str(missing), "no cache folder here")
    assert not (tmp_path / "p.csv").exists()


@pytest.mark.parametrize("command", ["evaluate", "place", "rename", "share"])
def test_a_file_given_as_the_atlas_is_called_a_file(tmp_path: Path, atlas: tuple[Path, Path], command: str):
    """``--cache some.csv``: a file, not an atlas folder, and no advice to build into it."""
    _, store = atlas
    extra = {
        "evaluate": [],
        "place": ["--input", str(SEED), "--out", str(tmp_path / "p.csv")],
        "rename": ["--topic", "0", "--label", "x"],
        "share": ["--out", str(tmp_path / "s.html")],
    }[command]
    line = refused(run_cli(command, "--cache", str(SEED), *extra, store=store), str(SEED), "is a file")
    assert "Rebuild" not in line and "topic-atlas build --input" not in line


def test_share_refuses_a_target_it_cannot_write(tmp_path: Path, atlas: tuple[Path, Path]):
    folder, store = atlas
    a_file = tmp_path / "a-file.txt"
    a_file.write_text("x", encoding="utf-8")
    inside_a_file = a_file / "atlas.html"
    refused(run_cli("share", "--cache", str(folder), "--out", str(inside_a_file), store=store), str(inside_a_file))
    assert a_file.read_text(encoding="utf-8") == "x"  # nothing written over the file in the way
    if Path("/proc").is_dir():  # the system refuses the write itself (root may pass the access check)
        refused(run_cli("share", "--cache", str(folder), "--out", "/proc/x.html", store=store), "/proc/x.html")


@pytest.mark.parametrize("flag", ["--out", "--folder"])
def test_share_refuses_a_target_inside_the_atlas(atlas: tuple[Path, Path], flag: str):
    """A file written into the atlas's folder would make the next build refuse the folder."""
    folder, store = atlas
    inside = folder / ("inside.html" if flag == "--out" else "inside")
    refused(run_cli("share", "--cache", str(folder), flag, str(inside), store=store), str(inside), "inside the cache")
    assert not inside.exists()


@pytest.mark.parametrize("name", ["bogus-model", "tfidf-svd+bogus-model", "tfidf-svd+"])
def test_an_unknown_embedding_model_is_refused_before_any_stage(tmp_path: Path, atlas: tuple[Path, Path], name: str):
    _, store = atlas
    cache = tmp_path / "b"
    result = run_cli("build", "--input", str(SEED), "--cache", str(cache), "--embedding-model", name, store=store)
    line = refused(result, repr(name), "tfidf-svd", "all-MiniLM-L6-v2-static", "local sentence-transformers folder")
    assert "huggingface" not in result.stderr.lower() and "stage embed" not in result.stderr, line
    assert not cache.exists()


def test_python_refuses_an_unknown_encoder_with_input_error(tmp_path: Path):
    """Without the command line's check, loading the encoder raises InputError, not the Hub's OSError; a name that
    is an existing local folder passes the check (sentence-transformers then reads it)."""
    with pytest.raises(InputError, match="bogus-model"):
        load_encoder("bogus-model")
    from pipeline.represent.encoder_registry import is_known_encoder
    from topic_atlas.commands.build import checked_representation

    assert is_known_encoder(str(tmp_path)) and checked_representation(f"tfidf-svd+{tmp_path}")


def test_debug_is_accepted_after_the_subcommand(tmp_path: Path, atlas: tuple[Path, Path]):
    """The crash line says "Rerun with --debug": after the subcommand (and after an edit action) it is accepted."""
    folder, store = atlas
    missing = tmp_path / "nope"
    for args in (["evaluate", "--cache", str(missing), "--debug"], ["--debug", "evaluate", "--cache", str(missing)]):
        result = run_cli(*args, store=store)
        assert result.returncode != 0 and "Traceback" in result.stderr and "CacheError" in result.stderr
    logged = run_cli("edit", "log", "--cache", str(folder), "--debug", store=store)
    assert logged.returncode == 0, logged.stderr[-2000:]


def test_help_names_the_formats_and_the_option(atlas: tuple[Path, Path]):
    _, store = atlas
    build_help = " ".join(run_cli("build", "--help", store=store).stdout.split())
    for word in (".xlsx", "BibTeX", "RIS", "gzip", "OpenReview", "docs/input-formats.md"):
        assert word in build_help, word
    place_help = run_cli("place", "--help", store=store).stdout
    assert "NEW_FILE" not in place_help and "--input" in place_help
