"""`streamlit run dashboard/app.py` as a subprocess on a free port, for the tests that drive the page in Chromium;
Debian's Chromium for them (a test fails in one line when it is absent), and what those tests wait on in the page:
Streamlit's script runs (:data:`RUN_TRACKER`, :func:`rerun`) and plotly's drawing (:data:`PLOTS_DRAWN`)."""

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
from typing import Any

REPO = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
# The papers table's grid: any dataframe but the map tab's table of contents (dashboard.views.contents, keyed
# "contents-..."; Streamlit gives a keyed element's container the class st-key-<key>).
PAPERS_GRID = '[data-testid="stDataFrame"]:not([class*="st-key-contents-"] [data-testid="stDataFrame"])'


def chromium_path() -> str:
    """Debian's Chromium, which the browser tests drive (never `playwright install`); fails the calling test or
    fixture in one line when it is absent (.ci/run installs it)."""
    import pytest  # here: bench/ imports this module outside pytest

    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is not installed: apt-get install chromium (.ci/run installs it)", pytrace=False)
    return str(CHROMIUM)


@contextlib.contextmanager
def chromium_browser(args: list[str]) -> Iterator[Any]:
    """Debian's Chromium launched through Playwright with ``args``, closed on leaving; fails in one line when the
    browser is absent (:func:`chromium_path`)."""
    import playwright.sync_api as playwright_api

    executable = chromium_path()
    with playwright_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, args=args)
        yield chromium
        chromium.close()


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


# An init script (page.add_init_script) that follows Streamlit's script runs over its websocket, for waits that need
# a run to have ended: window.__runs = {sent, done, covered, running}. ``sent`` counts the page's requests for a run
# (BackMsg.rerun_script, field 11: a widget's change, a tab, a component's value, the first load); the server starts
# a run with ForwardMsg.new_session (field 4) and ends it with ForwardMsg.script_finished (field 6: 2 is "stopped
# early for a rerun", another run follows). ``covered`` is how many requests had been sent when the latest finished
# run started: a run that started after a request has that request's widget values. Only the top-level field
# numbers of each message are read (protobuf's wire format), so no Streamlit internals are needed.
RUN_TRACKER = """window.__runs = {sent: 0, done: 0, covered: 0, running: false, startedAfter: 0};
(() => {
  const runs = window.__runs;
  const fieldsOf = (bytes) => {
    const found = new Map();
    let i = 0;
    const varint = () => {
      let value = 0;
      let shift = 0;
      let byte;
      do {
        byte = bytes[i++];
        value += (byte & 0x7f) * 2 ** shift;
        shift += 7;
      } while (byte & 0x80 && i < bytes.length);
      return value;
    };
    while (i < bytes.length) {
      const tag = varint();
      const field = Math.floor(tag / 8);
      const wire = tag % 8;
      if (wire === 0) found.set(field, varint());
      else if (wire === 2) {
        const length = varint();
        found.set(field, true);
        i += length;
      } else if (wire === 1) i += 8;
      else if (wire === 5) i += 4;
      else break;
    }
    return found;
  };
  const bytesOf = (data) => (data instanceof ArrayBuffer ? new Uint8Array(data)
    : ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : null);
  const Native = window.WebSocket;
  const send = Native.prototype.send;
  Native.prototype.send = function (data) {
    const bytes = bytesOf(data);
    if (bytes && fieldsOf(bytes).has(11)) runs.sent += 1;
    return send.call(this, data);
  };
  const received = (event) => {
    const bytes = bytesOf(event.data);
    if (!bytes) return;
    const fields = fieldsOf(bytes);
    if (fields.has(4)) {
      runs.running = true;
      runs.startedAfter = runs.sent;
    }
    if (fields.has(6) && fields.get(6) !== 2) {
      runs.running = false;
      runs.done += 1;
      runs.covered = runs.startedAfter;
    }
  };
  window.WebSocket = new Proxy(Native, {
    construct(target, args) {
      const socket = Reflect.construct(target, args);
      socket.addEventListener('message', received);
      return socket;
    },
  });
})();"""

# With RUN_TRACKER: no run is under way, every request for one has been run, and more than ``n`` (the argument)
# runs have finished.
RUNS_DONE = "(n) => !window.__runs.running && window.__runs.covered >= window.__runs.sent && window.__runs.done > n"

# Every plotly chart of the page has been drawn: plotly sets _fullLayout._replotting while it plots, and clears it
# once the data (scattergl's points through WebGL too), the annotations and the shapes are drawn.
PLOTS_DRAWN = """() => {
  const plots = [...document.querySelectorAll('.js-plotly-plot')];
  return plots.length > 0 && plots.every((gd) => gd._fullLayout && gd._fullLayout._replotting === false);
}"""


def runs_done(page: Any) -> int:
    """How many script runs the page (with :data:`RUN_TRACKER`) has seen finish."""
    return int(page.evaluate("() => window.__runs.done"))


def wait_until_run(page: Any, timeout_ms: float = 120_000) -> None:
    """Wait until the page (with :data:`RUN_TRACKER`) has run the script at least once and has no run under way or
    asked for."""
    page.wait_for_function(RUNS_DONE, arg=0, timeout=timeout_ms)


@contextlib.contextmanager
def rerun(page: Any, timeout_ms: float = 120_000) -> Iterator[None]:
    """Around an action that makes Streamlit run the script again (a widget's change, a tab): on entering, waits
    until no run is under way or asked for; on leaving, until the run the action asked for has finished."""
    wait_until_run(page, timeout_ms)
    before = runs_done(page)
    yield
    page.wait_for_function(RUNS_DONE, arg=before, timeout=timeout_ms)
