"""The server's CPU per script run: one user's visits, one after another with no pause, on a fresh server (issue 21).

    python -m bench.server_cpu --cache DIR [--visits 25] [--repeat 2] [--seed 1]

Why: with many users, every session's script runs in one Streamlit process and they take turns at its interpreter
lock, so the latency under load grows with the CPU one run takes (bench/load.py's tables: at 20 users the server
spends most of each second running scripts). That CPU is the figure to cut, and unlike a latency under load it
hardly depends on what else the machine does.

What: ``--repeat`` times, a fresh ``streamlit run dashboard/app.py`` on 127.0.0.1 (as bench/load.py starts it:
the repository's config, MALLOC_ARENA_MAX=2), one warm-up visit (the cache read and the shared tables built), then
``--visits`` visits of bench/load_scenario.py by one client with no think time (the same visits each time: the
client's choices come from ``--seed``). Printed per repeat: the server process's CPU seconds (user + system, all
its threads, psutil) over those visits, the runs they made, CPU ms per run, and the median rerun latency (ms) per
interaction kind. The render server (a child process that draws exported images) is not counted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import psutil

from bench.load import page_server
from bench.load_scenario import Record, visit


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, required=True, help="the cache folder the server shows")
    parser.add_argument("--visits", type=int, default=25, help="visits per repeat, one after another")
    parser.add_argument("--repeat", type=int, default=2, help="fresh servers, one after another")
    parser.add_argument("--seed", type=int, default=1, help="the client's choices (topics, points, queries)")
    return parser.parse_args(argv)


def cpu_seconds(process: psutil.Process) -> float:
    """User + system CPU seconds of ``process`` (every thread; children not counted)."""
    times = process.cpu_times()
    return times.user + times.system


async def visits(url: str, count: int, seed: int, n_papers: int) -> Record:
    """``count`` visits of one user with no pause between steps; their record."""
    record, rng = Record(), random.Random(seed)
    for _ in range(count):
        await visit(url, rng, 0.0, n_papers, record, time.monotonic() + 3600)
    return record


def measure(cache: Path, count: int, seed: int, n_papers: int) -> tuple[float, Record]:
    """(server CPU seconds over the visits, their record) on a fresh, warmed server."""
    log_path = Path(tempfile.mkdtemp(prefix="atlas-cpu-")) / "server.log"
    with page_server(cache, log_path) as (url, server):
        asyncio.run(visits(url, 1, seed + 1000, n_papers))  # warm-up: the cache read and the shared tables
        before = cpu_seconds(server)
        record = asyncio.run(visits(url, count, seed, n_papers))
        return cpu_seconds(server) - before, record


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    n_papers = int(json.loads((args.cache / "manifest.json").read_text())["n_documents"])
    print(f"{n_papers:,} papers ({args.cache}); {args.visits} visits per repeat, no pause, seed {args.seed}")
    for repeat in range(args.repeat):
        seconds, record = measure(args.cache, args.visits, args.seed, n_papers)
        runs = len(record.latencies())
        kinds = ", ".join(
            f"{kind} {1000 * statistics.median(values):.0f}" for kind, values in sorted(record.reruns.items())
        )
        print(
            f"repeat {repeat + 1}: server CPU {seconds:.1f} s over {runs} runs = {1000 * seconds / max(runs, 1):.1f} "
            f"ms per run; {len(record.errors)} errors; median ms per interaction: {kinds}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
