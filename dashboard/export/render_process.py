"""Running one image render in a child process with a timeout: the server side of :mod:`dashboard.export.render_worker`.

A render server (``python -m dashboard.export.render_worker --serve``, one per dashboard process, started on first use
or by :func:`warm_up`) imports plotly, kaleido and matplotlib once (a few seconds on a busy machine) and then forks
one child per job. :func:`run_job` hands it a job folder, waits for the child at most the
timeout, and on expiry kills the child with every process it started (Chromium starts in a session of its own, so
the whole tree is found with psutil, not by process group). The child also arms ``alarm(2)`` on itself, so it dies
even if this process is gone.

At most MAX_RENDER_JOBS jobs run at once per dashboard process, and one per Streamlit session (:func:`job_slot`):
15 quick export clicks had started up to 116 Chromium and render processes and 4.4 GB more memory for 40 s (issue
40, item 14). A job waits at most SLOT_WAIT_S (and never past its own timeout) for a place, then is refused with
BUSY_MESSAGE; a session's second job while its first is drawn is refused at once. A place is given back only once the
job's child and every process it started (found by the job tag they inherit) are gone.

Why not ``multiprocessing``: its fork server and spawn start methods re-run the parent's ``__main__`` in every
child, and under Streamlit ``__main__`` is the page script itself, which would then run in every render job.
"""

from __future__ import annotations

import json
import logging
import os
import select
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from dashboard.export.errors import ExportError, ExportFailed, ExportTimedOut, ImageExportUnavailable
from dashboard.export.process_tree import descendants, kill_all, kill_tree, tagged
from pipeline.runtime.paths import PACKAGE_ROOT
from pipeline.runtime.scratch import scratch_folder

REPO_ROOT = PACKAGE_ROOT  # the folder holding the packages (the checkout, or site-packages when installed)
JOB_FILE = "job.json"
ERROR_FILE = "error.json"
DONE_FILE = "done"  # written last by the child: its outputs (or error file) are complete
POLL_S = 0.05
_LOG = logging.getLogger(__name__)
_server_lock = threading.Lock()
_server: RenderServer | None = None
_warm_up_started = threading.Event()

MAX_RENDER_JOBS = 2  # render jobs (each a child and its Chromium, ~150-300 MB) running at once per dashboard process
SLOT_WAIT_S = 15.0  # how long a job waits for a place before it is refused (never past its own timeout)
BUSY_MESSAGE = "Another export is being drawn; try again in a moment."
SESSION_BUSY_MESSAGE = "Your previous export is still being drawn; try again in a moment, once it is done."
EXIT_WAIT_S = 5.0  # how long a finished job's child may take to exit before it is killed
_job_slots = threading.BoundedSemaphore(MAX_RENDER_JOBS)
_sessions_lock = threading.Lock()
_sessions_in_flight: set[str] = set()


class ExportBusy(ExportError):
    """The export was refused because MAX_RENDER_JOBS others were being drawn (or this session's previous one)."""


def current_session() -> str | None:
    """The id of the Streamlit session whose script run calls this, or None outside one (a script, a test)."""
    try:
        from streamlit.runtime.scriptrunner import get_script_run_ctx
    except ImportError:
        return None
    context = get_script_run_ctx(suppress_warning=True)
    return context.session_id if context is not None else None


@contextmanager
def job_slot(session: str | None, wait_s: float) -> Iterator[None]:
    """Hold one of the MAX_RENDER_JOBS places for a render job of ``session`` (None: no session limit) while the
    block runs. Raises ExportBusy with SESSION_BUSY_MESSAGE at once when ``session`` already has a job in flight,
    and with BUSY_MESSAGE when no place is free within ``wait_s`` seconds."""
    if session is not None:
        with _sessions_lock:
            if session in _sessions_in_flight:
                raise ExportBusy(SESSION_BUSY_MESSAGE)
            _sessions_in_flight.add(session)
    try:
        if not _job_slots.acquire(timeout=max(0.0, wait_s)):
            raise ExportBusy(BUSY_MESSAGE)
        try:
            yield
        finally:
            _job_slots.release()
    finally:
        if session is not None:
            with _sessions_lock:
                _sessions_in_flight.discard(session)


def output_path(folder: Path, image_format: str) -> Path:
    """Where a job writes its ``image_format`` bytes."""
    return folder / f"out.{image_format}"


class RenderServer:
    """One ``python -m dashboard.export.render_worker --serve`` process and the lines it has answered.

    Protocol: the server writes ``ready`` once its imports are done, then answers each job folder line with
    ``<pid> <folder>``. A job abandoned while the server was still starting gets its answer later; whoever reads it
    kills that child. It exits when its stdin closes (this process ended).
    """

    def __init__(self) -> None:
        environment = dict(os.environ)
        environment["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT), *filter(None, [environment.get("PYTHONPATH")])])
        environment.setdefault("MPLBACKEND", "Agg")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "dashboard.export.render_worker", "--serve"],
            cwd=REPO_ROOT,
            env=environment,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            start_new_session=True,
        )
        # Both pipes exist (stdin and stdout are PIPE above); the stubs type them Optional for other Popen calls.
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin: IO[bytes] = self.process.stdin
        self.stdout: IO[bytes] = self.process.stdout
        self.buffer = b""
        self.ready = False

    def alive(self) -> bool:
        return self.process.poll() is None

    def read_line(self, deadline: float) -> str | None:
        """The next line the server wrote, or None when ``deadline`` (time.monotonic) passes first.
        Raises BrokenPipeError when the server has closed its output."""
        while b"\n" not in self.buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            readable, _, _ = select.select([self.stdout], [], [], remaining)
            if readable:
                chunk = os.read(self.stdout.fileno(), 4096)
                if not chunk:
                    raise BrokenPipeError("the render server closed its output")
                self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.decode("utf-8", "replace").strip()

    def _note(self, line: str, folder: Path | None = None) -> int | None:
        """Handle one answer line: the pid when it answers ``folder``; other jobs' children are abandoned ones."""
        if line == "ready":
            self.ready = True
            return None
        pid_text, _, answered = line.partition(" ")
        if folder is not None and answered == str(folder):
            return int(pid_text)
        if pid_text.isdigit():
            kill_tree(int(pid_text))  # its caller gave up while the server was starting
        return None

    def wait_ready(self, deadline: float) -> bool:
        """True once the server has finished its imports; False when ``deadline`` passes first."""
        while not self.ready:
            line = self.read_line(deadline)
            if line is None:
                return False
            self._note(line)
        return True

    def submit(self, folder: Path, deadline: float) -> int | None:
        """Hand ``folder`` to the server: the pid of the child running it, or None when ``deadline`` passes first."""
        self.stdin.write(f"{folder}\n".encode())
        self.stdin.flush()
        while True:
            line = self.read_line(deadline)
            if line is None:
                return None
            pid = self._note(line, folder)
            if pid is not None:
                return pid

    def stop(self) -> None:
        kill_tree(self.process.pid)


def _running_server() -> RenderServer:
    """The render server, started when there is none or the last one has died. Call with ``_server_lock`` held."""
    global _server
    if _server is None or not _server.alive():
        _server = RenderServer()
    return _server


def warm_up(delay_s: float = 5.0) -> None:
    """Start the render server ``delay_s`` seconds from now (after the page's first paint), once per process, so
    the first export does not wait for its imports. Returns at once."""
    if _warm_up_started.is_set():
        return
    _warm_up_started.set()

    def start() -> None:
        with _server_lock:
            _running_server()

    timer = threading.Timer(delay_s, start)
    timer.name, timer.daemon = "atlas-render-warm-up", True
    timer.start()


def wait_until_ready(timeout_s: float) -> bool:
    """Start the render server if needed and wait at most ``timeout_s`` for its imports: True when it is ready."""
    with _server_lock:
        try:
            return _running_server().wait_ready(time.monotonic() + timeout_s)
        except (BrokenPipeError, OSError):
            return False


def _submit(folder: Path, deadline: float, what: str, timeout_s: float) -> int:
    """Hand ``folder`` to the render server and return the pid of the child running it. Waiting for the server
    (it may still be importing) counts against ``deadline``."""
    global _server
    # Another session may be waiting for a starting server under the lock: that wait counts against our deadline too.
    if not _server_lock.acquire(timeout=max(0.0, deadline - time.monotonic())):
        raise ExportTimedOut(
            f"The {what} was not ready after {timeout_s:.0f} s (other "
            "exports were waiting for the renderer to start). Try again."
        )
    try:
        server = _running_server()
        try:
            pid = server.submit(folder, deadline)
        except (BrokenPipeError, ValueError, OSError) as error:
            server.stop()
            _server = None
            raise ExportFailed(
                f"The {what} could not be drawn: the render server stopped ({error}). Try again."
            ) from error
        if pid is None:
            starting = (
                ""
                if server.ready
                else " (the renderer was still starting: its first start imports plotly, kaleido and matplotlib)"
            )
            raise ExportTimedOut(f"The {what} was not ready after {timeout_s:.0f} s{starting}. Try again.")
        return pid
    finally:
        _server_lock.release()


def _timed_out(what: str, timeout_s: float, started: list) -> str:
    """The timeout message, naming the cause: the browser not answering (the child had started processes: kaleido's
    Chromium is the only thing it starts) or a drawing still running (a smaller selection does help then)."""
    if started:
        return (
            f"The {what} was not ready after {timeout_s:.0f} s: the browser (Chromium) did not answer (it hung, or "
            "the server is overloaded), so it was stopped. Try again"
        )
    return (
        f"The {what} was not ready after {timeout_s:.0f} s: it was still being drawn, so the renderer was stopped. "
        "Try again; a smaller selection draws faster"
    )


def _alive(pid: int) -> bool:
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def run_job(
    job: dict[str, Any],
    write_inputs: Callable[[Path], None],
    what: str,
    timeout_s: float,
    session: str | None = None,
    slot_wait_s: float = SLOT_WAIT_S,
) -> dict[str, bytes]:
    """Run one render job in a child process and return {format: bytes} for ``job["formats"]``.

    ``job``: the job description (see :mod:`dashboard.export.render_worker`); ``write_inputs(folder)`` writes its input
    files; ``what`` names it in messages ("PNG of the topic map"). The child gets at most ``timeout_s`` seconds,
    waiting for a place and for the render server included, and is then killed with every process it started.
    ``session``: whose job it is (default: the calling Streamlit session, :func:`current_session`); see
    :func:`job_slot` for the limits, ``slot_wait_s`` for how long it waits for a place.

    Raises ExportBusy (no place: others are being drawn), ImageExportUnavailable (no renderer), ExportTimedOut
    (passed the timeout) or ExportFailed (the renderer's error, or the child died), each with a message for the page.
    """
    started = time.monotonic()
    deadline = started + timeout_s
    with job_slot(session if session is not None else current_session(), min(slot_wait_s, timeout_s)):
        folder = scratch_folder("atlas-render-")
        try:
            (folder / JOB_FILE).write_text(json.dumps({**job, "timeout_s": timeout_s}), encoding="utf-8")
            write_inputs(folder)
            pid = _submit(folder, deadline, what, timeout_s)
            try:
                _wait_for(pid, folder, deadline, what, timeout_s)
            finally:
                _end(pid, folder)
            _LOG.info("rendered %s in %.1f s", what, time.monotonic() - started)
            return _results(folder, job["formats"], what)
        finally:
            shutil.rmtree(folder, ignore_errors=True)


def _wait_for(pid: int, folder: Path, deadline: float, what: str, timeout_s: float) -> None:
    """Wait until the child ``pid`` has written its done file or died; at ``deadline`` kill it with everything it
    started and raise ExportTimedOut."""
    started_by_child: list = []  # psutil.Process of what the child started, refreshed while it runs
    polls = 0
    while not (folder / DONE_FILE).exists():
        if not _alive(pid):
            # the child died on its own: what it started (Chromium) would be orphaned; what the last look at its
            # tree missed is found by the job tag it inherited
            kill_all(started_by_child + [p for p in tagged(str(folder)) if p not in started_by_child])
            return
        if time.monotonic() > deadline:
            started_by_child = descendants(pid) or started_by_child
            kill_tree(pid)
            raise ExportTimedOut(_timed_out(what, timeout_s, started_by_child))
        if polls % 10 == 0:
            started_by_child = descendants(pid) or started_by_child
        polls += 1
        time.sleep(POLL_S)


def _end(pid: int, folder: Path) -> None:
    """Before the job's place is given back: let its child exit (it writes the done file just before), killing it
    after EXIT_WAIT_S, and kill whatever of the job is still running (a browser process its close left behind)."""
    exit_by = time.monotonic() + EXIT_WAIT_S
    while _alive(pid) and time.monotonic() < exit_by:
        time.sleep(POLL_S)
    if _alive(pid):
        kill_tree(pid)
    leftovers = tagged(str(folder))
    if leftovers:
        kill_all(leftovers)


def _results(folder: Path, formats: list[str], what: str) -> dict[str, bytes]:
    """The images a finished job wrote, or the error its error file stands for."""
    error_file = folder / ERROR_FILE
    if error_file.is_file():
        problem = json.loads(error_file.read_text(encoding="utf-8"))
        if problem.get("kind") == "unavailable":
            raise ImageExportUnavailable(problem["message"])
        raise ExportFailed(f"The {what} could not be drawn: {problem['message']}")
    paths = {image_format: output_path(folder, image_format) for image_format in formats}
    if not (folder / DONE_FILE).exists() or not all(path.is_file() for path in paths.values()):
        raise ExportFailed(
            f"The {what} could not be drawn: the renderer stopped without an image (out of memory, or killed)."
        )
    return {image_format: path.read_bytes() for image_format, path in paths.items()}
