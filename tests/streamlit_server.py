"""`streamlit run dashboard/app.py` as a subprocess on a free port, for the tests that drive the page in Chromium."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def streamlit_server(
    cache_dir: Path, log_path: Path, environment: dict[str, str] | None = None, timeout_s: float = 60
) -> Iterator[tuple[str, subprocess.Popen]]:
    """(the page's URL, the server process) once Streamlit answers its health check; the server is stopped on exit
    (terminated, killed if it does not stop within 10 s). Raises RuntimeError with the server log's tail when it
    does not start within ``timeout_s``."""
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        "dashboard/app.py",
        "--server.port",
        str(port),
        "--server.headless",
        "true",
        "--",
        "--cache",
        str(cache_dir),
    ]
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            command, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **(environment or {})}
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"streamlit did not start: {log_path.read_text(errors='replace')[-2000:]}")
            time.sleep(0.5)
        yield url, process
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)
