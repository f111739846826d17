"""The render server and the in-process renderer under faults: the page gone while the server starts, a browser that
does not answer, the default timeout, and messages that name the cause (issue 21, item 9)."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from dashboard.export import download_bytes, kaleido_images, render_process, render_worker

REPO = Path(__file__).resolve().parent.parent


def test_the_render_server_ends_without_a_traceback_when_the_page_ends_while_it_starts():
    server = subprocess.Popen(
        [sys.executable, "-m", "dashboard.export.render_worker", "--serve"],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert server.stdout is not None and server.stdin is not None and server.stderr is not None
    server.stdout.close()  # the page's process is gone before the server has written "ready"
    server.stdin.write(b"/nonexistent-job\n")
    server.stdin.close()
    assert server.wait(120) == 0
    stderr = server.stderr.read().decode(errors="replace")
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr


class ClosedPipe(io.RawIOBase):
    def write(self, data) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_serve_returns_quietly_when_its_answers_cannot_be_written_and_leaves_sigchld_as_it_was():
    before = signal.getsignal(signal.SIGCHLD)
    render_worker.serve(jobs=io.BytesIO(b""), answers=ClosedPipe())
    assert signal.getsignal(signal.SIGCHLD) == before
    # Ignored, SIGCHLD would make subprocess report exit code 0 for every child of this process.
    assert subprocess.run([sys.executable, "-c", "raise SystemExit(3)"]).returncode == 3


def test_the_default_export_timeout_answers_within_30_s(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv(download_bytes.EXPORT_TIMEOUT_ENV, raising=False)
    assert download_bytes.export_timeout_s() <= 30
    assert kaleido_images.IN_PROCESS_TIMEOUT_S <= 30


def test_a_drawing_that_runs_out_of_time_says_so_and_a_smaller_selection_helps():
    message = render_process._timed_out("PNG of the topic map", 30, [])
    assert "not ready after 30 s: it was still being drawn" in message and "smaller selection" in message


TIMED_OUT_RENDER = """
import plotly.graph_objects as go
from dashboard.export import kaleido_images
from dashboard.export.errors import ExportTimedOut
for timeout_s in (0.01, 0.3, 1.0):
    try:
        kaleido_images.figure_image_bytes(go.Figure(go.Scatter(x=[1, 2], y=[1, 2])), "png", 200, timeout_s=timeout_s)
    except ExportTimedOut as error:
        print("timed out:", error)
"""


@pytest.mark.usefixtures("chromium")
def test_the_in_process_render_has_a_timeout_that_names_the_browser_and_leaves_nothing_running():
    """Cancelled while Chromium starts, or while it draws; after each the process can still exit (a render that
    skipped the browser's close left a non-daemon thread reading Chromium's log, and the process never ended)."""
    result = subprocess.run(
        [sys.executable, "-c", TIMED_OUT_RENDER],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.splitlines()
    assert len(lines) == 3 and all(line.startswith("timed out: Chromium did not answer within") for line in lines)
    assert "smaller selection" not in result.stdout
