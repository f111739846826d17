"""How long a fresh session's first run takes, with and without Streamlit's file watcher.

    python -m bench.session_open --cache DIR [--sessions 8]

For each watcher setting (``none``, the project's `.streamlit/config.toml`; ``auto``, Streamlit's default, set
through ``STREAMLIT_SERVER_FILE_WATCHER_TYPE``) one real ``streamlit run`` server is started on the atlas; after a
first session that fills the server's shared caches, ``--sessions`` fresh sessions open one after another (each
connects, runs the page once and closes: what opening the address in a new tab costs on the server). Prints one
row per setting: the median, fastest and slowest first run in ms, from the websocket connect to ``script_finished``
(bench/load_client.py). Figures, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
from pathlib import Path

from bench.load import page_server
from bench.load_client import PageClient

WATCHERS = ("none", "auto")


async def first_runs(url: str, sessions: int) -> list[float]:
    """Seconds of each fresh session's first run, after one untimed session (which fills the shared caches).
    Raises bench.load_client.SessionError when a run does not finish or the page shows an exception."""
    times = []
    for index in range(sessions + 1):
        client = PageClient(url)
        try:
            result = await client.open()
        finally:
            await client.close()
        if result.exceptions:
            raise RuntimeError(f"the page showed an exception: {result.exceptions[0]}")
        if index:
            times.append(result.latency_s)
    return times


def measure(cache: Path, watcher: str, sessions: int, log_dir: Path) -> list[float]:
    """First-run seconds of ``sessions`` fresh sessions on a server started with file watcher ``watcher``."""
    os.environ["STREAMLIT_SERVER_FILE_WATCHER_TYPE"] = watcher
    try:
        with page_server(cache, log_dir / f"server-{watcher}.log") as (url, _process):
            return asyncio.run(first_runs(url, sessions))
    finally:
        os.environ.pop("STREAMLIT_SERVER_FILE_WATCHER_TYPE", None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", type=Path, required=True, help="an atlas built by topic-atlas build")
    parser.add_argument("--sessions", type=int, default=8, help="fresh sessions timed per setting")
    args = parser.parse_args(argv)
    print("| file watcher | sessions | median ms | fastest ms | slowest ms |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as log_dir:
        for watcher in WATCHERS:
            ms = [seconds * 1000 for seconds in measure(args.cache, watcher, args.sessions, Path(log_dir))]
            print(f"| {watcher} | {len(ms)} | {statistics.median(ms):,.0f} | {min(ms):,.0f} | {max(ms):,.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
