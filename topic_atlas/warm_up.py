"""Warm a fresh dashboard server before its first visitor: ``python -m topic_atlas.warm_up --port 8501``.

Waits until the server answers its health check (``/_stcore/health``), then asks once for Streamlit's script health
check (``/_stcore/script-health-check``; the page's settings turn it on: ``server.scriptHealthCheckEnabled``), which
runs the page's script in a session of its own. That run reads the cache and makes what every session shares (the
listing, the map's points, the papers table: Streamlit's ``st.cache_data`` / ``st.cache_resource``), so the first
person to open the page waits as the second does. ``python -m bench.page_speed --cache /tmp/r7/mlanthology``
(154,761 papers, a loaded 2-core machine, 2026-12-05): the first visitor's first paint 9.3 s on a cold server,
2.7-3.2 s on a warmed one. ``make run`` and ``Atlas.serve`` start it beside the server.
"""

from __future__ import annotations

import argparse
import sys
import time
import urllib.request

HEALTH = "/_stcore/health"
SCRIPT_CHECK = "/_stcore/script-health-check"
# Streamlit stops a script health check's run after 60 s and answers with an error; a slower first run still fills
# what it reached.
CHECK_TIMEOUT_S = 120


def wait_for_server(url: str, timeout_s: float = 300) -> bool:
    """True once ``url`` answers its health check with 200, False when ``timeout_s`` seconds pass first."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + HEALTH, timeout=2) as answer:
                if answer.status == 200:
                    return True
        except OSError:
            pass
        time.sleep(0.5)
    return False


def warm(url: str, timeout_s: float = 300) -> str:
    """Run the page once on the server at ``url`` (module docstring); returns the script check's answer ("ok" when
    the page ran without an error), or a one-line reason it could not (no server within ``timeout_s``, the check
    turned off or timed out)."""
    if not wait_for_server(url, timeout_s):
        return f"no server answered at {url} within {timeout_s:.0f} s"
    try:
        with urllib.request.urlopen(url + SCRIPT_CHECK, timeout=CHECK_TIMEOUT_S) as answer:
            text = answer.read().decode("utf-8", errors="replace").strip()
    except OSError as error:  # urllib's HTTPError (the run failed or was stopped: 503) included
        return f"the page's first run was not completed: {error}"
    if text.startswith("<"):  # the check turned off: the route falls through to the page's HTML
        return "the page's first run was not completed: the server's script health check is off"
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8501)
    parser.add_argument("--address", default="127.0.0.1")
    parser.add_argument("--timeout", type=float, default=300, help="seconds to wait for the server (default 300)")
    args = parser.parse_args(argv)
    began = time.monotonic()
    answer = warm(f"http://{args.address}:{args.port}", args.timeout)
    print(f"dashboard warmed ({answer}) in {time.monotonic() - began:.1f} s", file=sys.stderr)
    return 0 if answer == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
