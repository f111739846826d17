"""Scratch folders: one a process killed with SIGKILL left behind is removed by the next process to make one of its
kind, and nobody else's (a running process's, another kind's, a name without a pid) is touched."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from pipeline.operations.build_state import ColumnsAside
from pipeline.runtime.scratch import orphaned_folders, scratch_folder

PREFIX = "atlas-test-scratch-"


@pytest.fixture
def own_tmpdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """TMPDIR pointed at a folder of this test's own (tempfile reads it again once its cache is cleared)."""
    import tempfile

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    return tmp_path


def test_a_folder_of_a_dead_process_goes_and_the_others_stay(own_tmpdir: Path) -> None:
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(finished.stdout)  # reaped: no process has this pid unless the system reused it at once
    dead = own_tmpdir / f"{PREFIX}{dead_pid}-abc"
    living = own_tmpdir / f"{PREFIX}{os.getppid()}-def"
    no_pid = own_tmpdir / f"{PREFIX}notapid-ghi"
    other_kind = own_tmpdir / f"atlas-other-{dead_pid}-jkl"
    for folder in (dead, living, no_pid, other_kind):
        folder.mkdir()
        (folder / "file").write_text("kept while its process runs")
    assert orphaned_folders(PREFIX) == [dead]

    made = scratch_folder(PREFIX)

    assert made.is_dir() and made.parent == own_tmpdir and made.name.startswith(f"{PREFIX}{os.getpid()}-")
    assert not dead.exists()
    assert living.is_dir() and no_pid.is_dir() and other_kind.is_dir()
    assert orphaned_folders(PREFIX) == []


def test_the_abstracts_set_aside_by_a_killed_build_go_with_the_next_one(own_tmpdir: Path) -> None:
    """A real process sets abstracts aside (pipeline.operations.build_state.ColumnsAside) and is killed with
    SIGKILL, so nothing of its own removes the folder; the next ColumnsAside in this process removes it."""
    child = textwrap.dedent(
        """
        import os, signal, sys
        import pandas as pd
        from pipeline.operations.build_state import ColumnsAside
        aside = ColumnsAside(pd.DataFrame({"abstract": ["one", "two"]}), ["abstract"])
        print(aside.path, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    killed = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, env=dict(os.environ))
    assert killed.returncode == -signal.SIGKILL
    left = Path(killed.stdout.strip()).parent
    assert left.is_dir() and left.parent == own_tmpdir

    aside = ColumnsAside(pd.DataFrame({"abstract": ["three"], "title": ["T"]}), ["abstract"])

    assert not left.exists()
    assert aside.put_back(pd.DataFrame({"title": ["T"]}))["abstract"].tolist() == ["three"]
    aside.close()
    assert list(own_tmpdir.iterdir()) == []
