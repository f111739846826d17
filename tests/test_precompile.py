"""Install-time compilation (topic_atlas.precompile): the packaged sample built into a scratch folder that is gone
afterwards, the kernels left in numba's cache, one line printed."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from topic_atlas import precompile


def test_precompile_builds_the_sample_and_leaves_only_the_kernels(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # its scratch folder goes here
    precompile.main()
    printed = capsys.readouterr()
    assert printed.out.startswith("compiled the build's kernels in ") and printed.out.count("\n") == 1
    assert "skipped" not in printed.err
    assert list(tmp_path.iterdir()) == []  # the sample's atlas removed, no store kept
    where = os.environ.get("NUMBA_CACHE_DIR")
    if where:  # make's setting (.cache/numba): UMAP's cached kernels are there
        assert any(Path(where).glob("umap_*/*.nbi"))
