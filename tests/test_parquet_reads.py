"""Parquet files are read by path (pipeline/runtime/parquet.py): a process that read one exits 0.

``pandas.read_parquet`` hands Arrow a Python file object, and Arrow's threads can drop it during the interpreter's
finalization, which aborts the process after its work is done (a bench run of CI died so: exit -6, "terminate
called without an active exception"). The abort is rare per process, so the guard here is on the source: no module
of the project calls ``pandas.read_parquet``; ``bench.exit_aborts`` measures the rates.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from pipeline.runtime.parquet import read_frame

ROOT = Path(__file__).resolve().parents[1]
PANDAS_READ = re.compile(r"\b(pd|pandas)\.read_parquet\(")
# the reader's reason, the bench that measures both readers, and this file's comparison with pandas
ALLOWED = {"pipeline/runtime/parquet.py", "bench/exit_aborts.py", "tests/test_parquet_reads.py"}


def test_no_module_reads_parquet_through_pandas() -> None:
    """Every .py file of the packages, bench/ and tests/ reads Parquet through read_frame."""
    callers = [
        path.relative_to(ROOT).as_posix()
        for folder in ("pipeline", "dashboard", "topic_atlas", "bench", "tests")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if path.relative_to(ROOT).as_posix() not in ALLOWED and PANDAS_READ.search(path.read_text(encoding="utf-8"))
    ]
    assert not callers, f"read Parquet with pipeline.runtime.parquet.read_frame, not pandas.read_parquet: {callers}"


def test_read_frame_gives_what_pandas_gives(tmp_path: Path) -> None:
    """A frame written by pandas (a named index, categories, lists, missing values) reads back equal, whole and by
    columns, from a path and from the file's bytes."""
    frame = pd.DataFrame(
        {
            "title": ["A", None, "C"],
            "area": pd.Categorical(["x", "y", "x"]),
            "terms": [["a", "b"], [], ["c"]],
            "x": [0.5, 1.5, float("nan")],
        },
        index=pd.Index(["p1", "p2", "p3"], name="doc_id"),
    )
    path = tmp_path / "frame.parquet"
    frame.to_parquet(path)
    pd.testing.assert_frame_equal(read_frame(path), pd.read_parquet(path))
    pd.testing.assert_frame_equal(read_frame(str(path), columns=["x"]), pd.read_parquet(path, columns=["x"]))
    pd.testing.assert_frame_equal(read_frame(path.read_bytes()), pd.read_parquet(path))
    assert read_frame(path).index.name == "doc_id"


def test_read_frame_of_a_missing_file_raises(tmp_path: Path) -> None:
    """A missing path raises FileNotFoundError, which the cache and corpus readers turn into their one-line errors."""
    with pytest.raises(FileNotFoundError):
        read_frame(tmp_path / "absent.parquet")


def test_a_process_that_reads_an_atlas_exits_zero(tmp_path: Path) -> None:
    """A fresh process reading a written table with read_frame ends with exit code 0 and its output whole."""
    path = tmp_path / "rows.parquet"
    pd.DataFrame({"n": range(1000)}).to_parquet(path)
    program = f"from pipeline.runtime.parquet import read_frame\nprint(int(read_frame({str(path)!r})['n'].sum()))"
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=False, cwd=ROOT)
    assert (done.returncode, done.stdout.strip()) == (0, str(sum(range(1000)))), done.stderr
