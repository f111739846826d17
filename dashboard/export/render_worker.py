"""The render server and the job each of its children runs (the parent side is :mod:`dashboard.export.render_process`).

``python -m dashboard.export.render_worker --serve`` imports plotly, kaleido and matplotlib once, writes ``ready`` on
stdout, then reads job folders from stdin, one per line, forks a child for each and answers ``<pid> <folder>``. Children
are reaped by the kernel (SIGCHLD ignored); what a job did is in its folder, never in an exit code.

A job folder holds ``job.json``: ``{"kind": "figure" | "publication", "formats": [...], "browser_path": str | None,
"width": int, "height": int, "timeout_s": float}`` plus ``figure.json`` (a plotly figure, kind
"figure") or ``points.parquet`` and ``view.json`` (a :class:`dashboard.figures.publication.MapView`, kind
"publication"). The child writes ``out.<format>`` per format, or ``error.json`` (``{"kind": "unavailable" | "failed",
"message": str}``), then ``done``.
"""

from __future__ import annotations

import json
import logging
import math
import os
import signal
import sys
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")  # never a display in a server

import plotly.io  # noqa: E402

from dashboard.export import download_bytes, kaleido_images, publication_images  # noqa: E402
from dashboard.export.process_tree import JOB_TAG  # noqa: E402
from dashboard.export.render_process import DONE_FILE, ERROR_FILE, JOB_FILE, output_path  # noqa: E402
from dashboard.figures import publication  # noqa: E402

try:  # imported here so the server pays for it once; a broken install is reported by the job that needs it
    import matplotlib.figure  # noqa: F401
except ImportError:
    pass

MESSAGE_CHARS = 400
ALARM_MARGIN_S = 10  # the child's own deadline, past the parent's timeout, for when the parent is gone


def render_job(folder: Path) -> dict[str, bytes]:
    """Render the job in ``folder``: {format: bytes}. Raises what the renderer raises."""
    job = json.loads((folder / JOB_FILE).read_text(encoding="utf-8"))
    formats = list(job["formats"])
    if job["kind"] == "figure":
        figure = plotly.io.from_json((folder / "figure.json").read_text(encoding="utf-8"), skip_invalid=True)
        return kaleido_images.figure_images_here(
            figure,
            formats,
            width=job["width"],
            height=job["height"],
            browser_path=job.get("browser_path"),
            timeout_s=float(job.get("timeout_s") or kaleido_images.IN_PROCESS_TIMEOUT_S),
        )
    if job["kind"] == "publication":
        return publication_images.render_all(publication.load_view(folder), formats)
    raise ValueError(f"unknown render job kind {job['kind']!r}")


def run(folder: str) -> None:
    """Render the job in ``folder`` and write its outputs or ``error.json``, then ``done``. Never raises: every
    failure becomes the message the page shows."""
    path = Path(folder)
    logging.getLogger("matplotlib.font_manager").setLevel(logging.ERROR)  # a missing family is not the page's news
    try:
        images = render_job(path)
        for image_format, data in images.items():
            output_path(path, image_format).write_bytes(data)
    except Exception as error:  # every failure becomes a message for the page
        kind = "unavailable" if isinstance(error, download_bytes.ImageExportUnavailable) else "failed"
        message = str(error) if isinstance(error, download_bytes.ExportError) else f"{type(error).__name__}: {error}"
        (path / ERROR_FILE).write_text(json.dumps({"kind": kind, "message": message[:MESSAGE_CHARS]}), encoding="utf-8")
    (path / DONE_FILE).write_text("", encoding="utf-8")


def _child(folder: str) -> None:
    """In a freshly forked child: default signals, stdin from /dev/null, stdout onto stderr (stdout is the
    server's answer channel), the job tag in the environment (process_tree.JOB_TAG, inherited by the browser), a
    deadline of its own, then the job; never returns."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the job starts processes (Chromium) and waits for them
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.dup2(2, 1)
    os.environ[JOB_TAG] = folder
    try:
        timeout_s = float(json.loads((Path(folder) / JOB_FILE).read_text(encoding="utf-8")).get("timeout_s") or 0)
        if timeout_s > 0:
            signal.alarm(math.ceil(timeout_s) + ALARM_MARGIN_S)
        run(folder)
    finally:
        os._exit(0)


def serve(jobs=None, answers=None) -> None:
    """The render server loop: a job folder per line of ``jobs`` (stdin), the forked child's pid per line of
    ``answers`` (stdout); returns at end of input, or quietly when the page's process has gone (its pipe closed
    while this server was still starting or answering: a BrokenPipeError is the normal end then, not a fault)."""
    jobs = jobs if jobs is not None else sys.stdin.buffer
    answers = answers if answers is not None else sys.stdout.buffer
    previous = signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    try:
        answers.write(b"ready\n")
        answers.flush()
        for line in jobs:
            folder = line.decode("utf-8").strip()
            if not folder:
                continue
            pid = os.fork()
            if pid == 0:
                _child(folder)
            answers.write(f"{pid} {folder}\n".encode())
            answers.flush()
    except (BrokenPipeError, ConnectionResetError):
        return
    finally:
        # An ignored SIGCHLD makes every later wait() in this process answer "no child" (subprocess then reports
        # exit code 0 for any child) and is inherited across exec: leave it as it was.
        signal.signal(signal.SIGCHLD, previous)


def main(argv: list[str]) -> int:
    """``--serve``: run :func:`serve` on stdin and stdout; exits 0 without a traceback when the page ended first."""
    if argv != ["--serve"]:
        print("usage: python -m dashboard.export.render_worker --serve", file=sys.stderr)
        return 2
    serve()
    # Python flushes stdout again at exit: with the reader gone that would print a BrokenPipeError, so point it at
    # /dev/null first.
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
