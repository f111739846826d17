"""Every failure of the command line ends in one line on stderr and exit code 2 (issue 13, items 2 and 3):
unexpected exceptions name their stage and the log file that holds the traceback; a broken numba/llvmlite
install names the packages, their versions and the mismatch; the hierarchy survives topics with identical
c-TF-IDF vectors."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pipeline.runtime.errors import stage_of
from pipeline.runtime.stages import StageTimer
from tests.conftest import CASES, ROOT, SEED, needs_shared
from topic_atlas.cli import run_guarded


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: int = 300) -> subprocess.CompletedProcess:
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "topic_atlas", *args],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def last_line(stderr: str) -> str:
    return [line for line in stderr.splitlines() if line.strip()][-1]


def test_an_unexpected_failure_names_its_stage_and_the_log(tmp_path: Path):
    """A real fault no input check catches: the embedding cache path is a folder, so SQLite cannot open it."""
    store = tmp_path / "store-is-a-folder"
    store.mkdir()
    logs = tmp_path / "logs"
    # The transformer opens the embedding cache (the default tfidf-svd representation keeps none).
    result = run_cli(
        "build",
        "--input",
        str(SEED),
        "--cache",
        str(tmp_path / "cache"),
        "--embedding-cache",
        str(store),
        "--embedding-model",
        "all-MiniLM-L6-v2",
        env={"ATLAS_LOG_DIR": str(logs)},
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    line = last_line(result.stderr)
    assert line.startswith("error: build failed in stage 'embed'") and "--debug" in line, line
    log_path = Path(re.search(r"traceback is in (\S+)\.", line).group(1))
    assert log_path.parent == logs and "Traceback" in log_path.read_text() and "stage: embed" in log_path.read_text()
    assert not (tmp_path / "cache").exists()


def test_run_guarded_never_raises_and_keeps_exit_codes(tmp_path: Path, monkeypatch, capsys):
    monkeypatch.setenv("ATLAS_LOG_DIR", str(tmp_path))

    def fail() -> int:
        timer = StageTimer()
        with timer.stage("outer"):
            with timer.stage("hierarchy"):
                raise ValueError("Distance matrix cannot contain negative values.")

    assert run_guarded(fail, "build", ["build"]) == 2
    # The failure is one line (the stage lines before it come from the terminal handler an earlier in-process
    # command of this pytest session installed).
    line = last_line(capsys.readouterr().err)
    assert line.startswith("error: ") and "stage 'hierarchy'" in line and "ValueError" in line
    assert run_guarded(lambda: 0, "build", []) == 0
    with pytest.raises(ValueError):
        run_guarded(fail, "build", [], debug=True)


def test_an_interrupt_says_whether_the_atlas_was_already_replaced(tmp_path: Path, monkeypatch, capsys):
    """Ctrl-C while a command writes an atlas: before the swap the folder keeps the old version and the line says
    nothing changed; after it (while the old copy is being removed) the folder holds the new version, and the line
    names it instead of claiming nothing changed."""
    from pipeline.cache import publish

    target = tmp_path / "atlas"
    target.mkdir()
    (target / "version").write_text("old")

    def write(version: str) -> None:
        with publish.staged_cache(target) as staging:
            (staging / "version").write_text(version)
            if version == "never":
                raise KeyboardInterrupt

    assert run_guarded(lambda: write("never"), "add", ["add"]) == 130
    assert last_line(capsys.readouterr().err) == "interrupted; no cache was changed"
    assert (target / "version").read_text() == "old"
    remove = shutil.rmtree

    def interrupted_once(path, *args, **kwargs) -> None:
        monkeypatch.setattr(shutil, "rmtree", remove)
        raise KeyboardInterrupt

    monkeypatch.setattr(shutil, "rmtree", interrupted_once)
    assert run_guarded(lambda: write("new"), "add", ["add"]) == 130
    assert (target / "version").read_text() == "new"
    line = last_line(capsys.readouterr().err)
    assert line == f"interrupted after {target} had been written: it holds the new version, whole", line


def test_stage_timer_marks_the_innermost_stage():
    timer = StageTimer()
    with pytest.raises(KeyError) as caught:
        with timer.stage("topics"):
            with timer.stage("representatives"):
                raise KeyError("x")
    assert stage_of(caught.value) == "representatives"


def fake_broken_llvmlite(folder: Path, version: str = "0.43.0") -> Path:
    """A folder that, put first on PYTHONPATH, shadows llvmlite with an older release whose import fails the way
    a mismatched binary does (numba imports llvmlite first)."""
    package = folder / "llvmlite"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        "raise SystemError('initialization of ffi failed without raising an exception')\n", encoding="utf-8"
    )
    info = folder / f"llvmlite-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: llvmlite\nVersion: {version}\n", encoding="utf-8")
    return folder


def test_a_broken_numba_stack_is_named_with_versions(tmp_path: Path):
    """Item 3: UMAP's import fails inside numba; the one line names numba, llvmlite, their versions and the mismatch.
    A fresh embedding store (so no cached layout lets the build skip UMAP)."""
    path = CASES / "01-tiny-corpus" / "abstracts_5.txt"
    needs_shared(path)
    shadow = fake_broken_llvmlite(tmp_path / "shadow")
    env = {
        "PYTHONPATH": f"{shadow}{os.pathsep}{ROOT}",
        "ATLAS_EMBEDDING_CACHE": str(tmp_path / "store" / "embeddings.sqlite"),
        "ATLAS_LOG_DIR": str(tmp_path / "logs"),
    }
    result = run_cli("build", "--input", str(path), "--cache", str(tmp_path / "cache"), env=env)
    assert result.returncode == 2, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    line = last_line(result.stderr)
    assert "UMAP cannot be imported" in line and "SystemError" in line
    assert "llvmlite 0.43.0" in line and re.search(r"numba \d+\.\d+", line)
    assert re.search(r"numba \S+ needs llvmlite[^ ]+ but llvmlite 0\.43\.0 is installed", line), line
    assert "pip install" in line
    assert not (tmp_path / "cache").exists()


def test_requirement_mismatches_agree_on_this_machine():
    from pipeline.runtime.environment import requirement_mismatches

    assert requirement_mismatches() == []


def identical_topic_texts(seed: int) -> tuple[list[str], np.ndarray]:
    """Six documents in three topics; topics 0 and 1 join to the same word sequence (so identical c-TF-IDF rows)
    from different documents."""
    rng = np.random.default_rng(seed)
    words = "coral reef acidity carbonate lagoon salinity seagrass plankton".split()
    sequence = list(rng.permutation([word for word in words for _ in range(int(rng.integers(1, 4)))]))
    bag = sequence + sequence  # each topic's two documents share their words, so both are coherent topics
    half = len(sequence)
    texts = [
        " ".join(bag[:half]),
        " ".join(bag[half:]),
        " ".join(bag[: half + 3]),
        " ".join(bag[half + 3 :]),
        "graph neural network message passing over graph nodes",
        "graph neural network attention over graph nodes",
    ]
    return texts, np.array([0, 0, 1, 1, 2, 2])


def test_topics_with_identical_ctfidf_vectors_get_a_hierarchy():
    """Item 2's crash at its root: 1 - cosine similarity of identical rows is -4e-16, which BERTopic refuses."""
    from sklearn.metrics.pairwise import cosine_similarity

    from pipeline.adapters.bertopic_import import import_bertopic_lean
    from pipeline.config import BuildConfig
    from pipeline.topics.model import fit_topic_model, hierarchy_table

    import_bertopic_lean()
    # No fit check: it would move a paper of these random embeddings and the two topics would differ.
    config = BuildConfig(reduce_outliers=False, learn_stop_words=False, fit_share=0).resolved_for(6)
    negative_seen = 0
    for seed in range(1, 6):
        texts, clusters = identical_topic_texts(seed)
        embeddings = np.random.default_rng(seed).normal(size=(6, 8)).astype(np.float32)
        embeddings /= np.linalg.norm(embeddings, axis=1, keepdims=True)
        fit = fit_topic_model(texts, embeddings, clusters, config)
        rows = fit.topic_model.c_tf_idf_[fit.topic_model._outliers :]
        negative_seen += bool(((1 - cosine_similarity(rows)) < 0).any())
        tree = hierarchy_table(fit.topic_model, texts, fit.labels)
        assert len(tree) == 2 and (tree["distance"] >= 0).all()
        first = tree.loc[tree["distance"].idxmin()]
        assert sorted(first["topics"]) == [0, 1] and first["distance"] == pytest.approx(0.0, abs=1e-12)
    assert negative_seen, "no seed produced the negative distance this test is about"
