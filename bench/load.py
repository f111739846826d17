"""Many users at once: N concurrent sessions of the real page against one Streamlit server (issue 21).

    python -m bench.load --cache /tmp/final_cache [--sessions 1,5,10,20] [--seconds 60] [--think 3[,0]]
                         [--settle 30] [--malloc-arenas 2] [--calibrate [--calibrate-repeats 5]] [--seed 0]
                         [--warm-up-wait 15]

It starts ``streamlit run dashboard/app.py`` on a free port of 127.0.0.1 over the cache (the repository's
``.streamlit/config.toml`` applies), opens one warm-up session (the cache read and the shared tables built, as on
a server that has served once), then for each N runs N concurrent users for ``--seconds``: each user repeats a
visit of bench/load_scenario.py (open, sidebar filter, search, click a paper, choose a table row, lasso, clear,
every tab, a semantic search, the CSV export, back to the map, close) with ``--think`` seconds between steps
(uniform in [0.5, 1.5] x think), the users' starts spread over the first ``think`` seconds; with several think
times (``--think 3,0``) every level runs once per think time, in that order. Users are light
clients of Streamlit's own websocket protocol (bench/load_client.py), so 20 of them cost the 2-core machine
little beside the server. ``--calibrate`` first runs the same interactions in one headless Chromium page and
then with one client (bench/load_browser.py), to show that the client's rerun latency is what a browser sees,
each interaction ``--calibrate-repeats`` times (default 5). ``--warm-up-wait`` is the pause after the warm-up visit
(default 15 s: the page starts its render server 5 s after the Downloads tab opened, and the RSS at the start is
taken once it is steady); the test suite's smoke run shortens both.

Printed, one row per N: visits and reruns done; p50 and p95 rerun latency (ms, from the interaction sent to the
``script_finished`` of its run); CSV exports and their p95 (ms, the request sent until the file fetched);
errors (exceptions shown on the page, disconnects, runs over 120 s, failed exports); the server's RSS (MiB, the
streamlit process and its children, psutil, sampled every 0.25 s) before, at its peak during, ``--settle``
seconds after the users left ("after": Streamlit still stores their sessions, for ``server.disconnectedSessionTTL``
and until a write to its session store reaps the expired ones), and once more 3 s after one probe session opened
and closed ("reaped": its disconnect is that write, as the next visitor's would be). The server runs with
``MALLOC_ARENA_MAX`` = ``--malloc-arenas`` (as ``make run`` starts it; "" leaves glibc's default of 8 per core).
Then the issue's goals beside the figures, for each think time: 20 sessions with no error; p95 at the largest N
<= 3 x the single-session p95; RSS back within 10% of its start after the sessions end (judged on "reaped", the
"after" figure printed beside it); RSS growth per concurrent session (peak less before, over N) <= GROWTH_GOAL_MIB.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psutil

from bench.load_client import PageClient
from bench.load_scenario import Record, visit

ROOT = Path(__file__).resolve().parent.parent
GROWTH_GOAL_MIB = 20.0  # per concurrent session: its session state, widget states and message queue, not a frame copy
LATENCY_FACTOR_GOAL = 3.0
RSS_RETURN_GOAL = 0.10
MIB = 1024 * 1024
WARM_UP_WAIT_S = 15.0
REAP_WAIT_S = 3.0


@contextmanager
def page_server(
    cache_dir: Path, log_path: Path, malloc_arenas: str = "2", timeout_s: float = 120
) -> Iterator[tuple[str, psutil.Process]]:
    """(the page's URL, the server process) once ``/_stcore/health`` answers; stopped on exit (the tests' server,
    tests/streamlit_server.py), with MALLOC_ARENA_MAX=``malloc_arenas`` ("" leaves it unset). Raises RuntimeError
    with the log's tail when it does not start within ``timeout_s``."""
    from tests.streamlit_server import streamlit_server

    environment = {"MALLOC_ARENA_MAX": malloc_arenas} if malloc_arenas else {}
    if not malloc_arenas:
        os.environ.pop("MALLOC_ARENA_MAX", None)
    with streamlit_server(cache_dir, log_path, environment, timeout_s=timeout_s) as (url, process):
        yield url, psutil.Process(process.pid)


def rss_by_process(process: psutil.Process) -> str:
    """ "name MiB" for ``process`` and each of its children, largest first (what the RSS is made of)."""
    parts = []
    for member in [process, *process.children(recursive=True)]:
        try:
            parts.append((member.memory_info().rss, member.name()))
        except psutil.Error:
            pass
    return ", ".join(f"{name} {rss / MIB:.0f}" for rss, name in sorted(parts, reverse=True))


def tree_rss(process: psutil.Process) -> int:
    """Bytes resident in ``process`` and all its children now (a child that just ended counts 0)."""
    total = 0
    for member in [process, *process.children(recursive=True)]:
        try:
            total += member.memory_info().rss
        except psutil.Error:
            pass
    return total


def steady_rss(process: psutil.Process, interval_s: float = 5.0, limit_s: float = 90.0) -> int:
    """tree_rss(process) once two samples ``interval_s`` apart differ by under 1% (the render server the Downloads
    tab started has finished its imports), or after ``limit_s`` seconds."""
    deadline, previous = time.monotonic() + limit_s, tree_rss(process)
    while time.monotonic() < deadline:
        time.sleep(interval_s)
        current = tree_rss(process)
        if abs(current - previous) < 0.01 * previous:
            return current
        previous = current
    return previous


class RssSampler:
    """The peak of tree_rss(process) while running, sampled every ``interval_s`` seconds in a thread."""

    def __init__(self, process: psutil.Process, interval_s: float = 0.25) -> None:
        self.process, self.interval_s, self.peak = process, interval_s, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> RssSampler:
        self.peak = tree_rss(self.process)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.peak = max(self.peak, tree_rss(self.process))


@dataclass
class Level:
    """The figures of one load level (N concurrent users)."""

    sessions: int
    think_s: float
    record: Record
    rss_before: int
    rss_peak: int
    rss_after: int
    rss_reaped: int

    def p(self, q: float) -> float:
        """The q-quantile (0..1) of the rerun latencies, in ms (nan with none)."""
        values = sorted(self.record.latencies())
        if not values:
            return float("nan")
        return 1000 * values[min(len(values) - 1, int(q * len(values)))]

    @property
    def growth_per_session_mib(self) -> float:
        return (self.rss_peak - self.rss_before) / MIB / self.sessions


async def users(base_url: str, n: int, seconds: float, think_s: float, n_papers: int, seed: int) -> Record:
    """``n`` users visiting the page over and over for ``seconds``; their record."""
    record = Record()
    deadline = time.monotonic() + seconds

    async def user(index: int) -> None:
        rng = random.Random(seed * 1000 + index)
        await asyncio.sleep(think_s * index / max(1, n))  # starts spread over the first think time
        while time.monotonic() < deadline:
            await visit(base_url, rng, think_s, n_papers, record, deadline)

    await asyncio.gather(*(user(index) for index in range(n)))
    return record


async def probe(base_url: str) -> None:
    """One session opened and closed: its disconnect writes to Streamlit's session store, which reaps the stored
    sessions whose TTL has passed (nothing else does while no one connects)."""
    client = PageClient(base_url)
    try:
        await client.open()
    finally:
        await client.close()


def run_level(
    url: str, server: psutil.Process, args: argparse.Namespace, n: int, think_s: float, n_papers: int
) -> Level:
    """One load level: RSS before, the users with the peak sampled, RSS ``args.settle`` seconds after, and RSS
    once the expired sessions were reaped (see :func:`probe`)."""
    before = tree_rss(server)
    with RssSampler(server) as sampler:
        record = asyncio.run(users(url, n, args.seconds, think_s, n_papers, args.seed))
    time.sleep(args.settle)
    after = tree_rss(server)
    asyncio.run(probe(url))
    time.sleep(REAP_WAIT_S)
    level = Level(n, think_s, record, before, sampler.peak, after, tree_rss(server))
    print(
        f"  think {think_s:g} s, N={n}: {level.record.visits} visits, {len(record.latencies())} reruns, "
        f"p95 {level.p(0.95):.0f} ms, {len(record.errors)} errors; RSS {before / MIB:.0f} -> peak "
        f"{sampler.peak / MIB:.0f} -> {after / MIB:.0f} -> reaped {level.rss_reaped / MIB:.0f} MiB",
        flush=True,
    )
    return level


def table(levels: list[Level]) -> str:
    """The results as one fixed-width table (see the module docstring for the columns)."""
    header = (
        "| N | visits | reruns | p50 ms | p95 ms | exports | export p95 ms | errors "
        "| RSS before MiB | RSS peak MiB | RSS after MiB | RSS reaped MiB | growth MiB/session |"
    )
    lines = [header, "|" + "---|" * 13]
    for level in levels:
        exports = sorted(level.record.exports)
        export_p95 = 1000 * exports[min(len(exports) - 1, int(0.95 * len(exports)))] if exports else float("nan")
        lines.append(
            f"| {level.sessions} | {level.record.visits} | {len(level.record.latencies())} | {level.p(0.5):.0f} "
            f"| {level.p(0.95):.0f} | {len(exports)} | {export_p95:.0f} | {len(level.record.errors)} "
            f"| {level.rss_before / MIB:.0f} | {level.rss_peak / MIB:.0f} | {level.rss_after / MIB:.0f} "
            f"| {level.rss_reaped / MIB:.0f} | {level.growth_per_session_mib:.1f} |"
        )
    return "\n".join(lines)


def goals(levels: list[Level], start_rss: int) -> list[str]:
    """The issue's goals, each with the figure beside it and "met" or "NOT met"."""
    most, single = levels[-1], next((level for level in levels if level.sessions == 1), levels[0])
    verdict = {True: "met", False: "NOT met"}
    factor = most.p(0.95) / single.p(0.95) if single.p(0.95) else float("nan")
    worst_growth = max(level.growth_per_session_mib for level in levels if level.sessions > 1) if len(levels) > 1 else 0
    returned, stored = levels[-1].rss_reaped / start_rss - 1, levels[-1].rss_after / start_rss - 1
    return [
        f"{most.sessions} session{'s' * (most.sessions != 1)} with no error: {len(most.record.errors)} "
        f"error{'s' * (len(most.record.errors) != 1)} ({verdict[not most.record.errors]})",
        f"p95 at N={most.sessions} <= {LATENCY_FACTOR_GOAL:.0f} x the single-session p95: {most.p(0.95):.0f} ms = "
        f"{factor:.1f} x {single.p(0.95):.0f} ms ({verdict[factor <= LATENCY_FACTOR_GOAL]})",
        f"RSS back within {RSS_RETURN_GOAL:.0%} of its start after the sessions end: "
        f"{start_rss / MIB:.0f} MiB at the start, {levels[-1].rss_reaped / MIB:.0f} MiB after the last level once "
        f"its expired sessions were reaped ({returned:+.1%}, {verdict[returned <= RSS_RETURN_GOAL]}); "
        f"{levels[-1].rss_after / MIB:.0f} MiB before that, sessions stored ({stored:+.1%})",
        f"RSS growth per concurrent session <= {GROWTH_GOAL_MIB:.0f} MiB: at most {worst_growth:.1f} MiB "
        f"({verdict[worst_growth <= GROWTH_GOAL_MIB]})",
    ]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, required=True, help="the cache folder the server shows")
    parser.add_argument("--sessions", default="1,5,10,20", help="comma-separated concurrent users per level")
    parser.add_argument("--seconds", type=float, default=60.0, help="how long each level runs (s)")
    parser.add_argument(
        "--think", default="3", help="mean pause before each step (s), comma-separated for several runs; 0: no pause"
    )
    parser.add_argument("--settle", type=float, default=30.0, help="wait after a level before RSS 'after' (s)")
    parser.add_argument("--malloc-arenas", default="2", help='MALLOC_ARENA_MAX for the server ("": glibc default)')
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--calibrate", action="store_true", help="compare with one headless Chromium page first")
    parser.add_argument(
        "--calibrate-repeats", type=int, default=5, help="repetitions of each calibration interaction (default 5)"
    )
    parser.add_argument(
        "--warm-up-wait",
        type=float,
        default=WARM_UP_WAIT_S,
        help=f"pause after the warm-up (default {WARM_UP_WAIT_S:g} s)",
    )
    return parser.parse_args(argv)


def report(levels: list[Level], start_rss: int) -> None:
    """Print the table, the goals, the errors and the p50 and p95 per interaction of one think time's levels."""
    print(table(levels))
    print()
    for line in goals(levels, start_rss):
        print("goal: " + line)
    for level in levels:
        distinct = sorted(set(level.record.errors))
        if distinct:
            print(f"errors at N={level.sessions} ({len(level.record.errors)}): " + "; ".join(distinct[:5]))
    kinds = sorted({kind for level in levels for kind in level.record.reruns})
    print("rerun ms per interaction, p50 and p95 (N=" + ", ".join(str(level.sessions) for level in levels) + "):")
    for kind in kinds:
        figures = [kind_figures(level.record.reruns.get(kind) or []) for level in levels]
        print(f"  {kind}: " + " / ".join(figures))


def kind_figures(latencies: list[float]) -> str:
    """One interaction's latencies (s) as "p50 (p95)" in ms, "-" when there were none."""
    if not latencies:
        return "-"
    ordered = sorted(latencies)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"{1000 * statistics.median(ordered):.0f} ({1000 * p95:.0f})"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    counts = [int(value) for value in args.sessions.split(",") if value.strip()]
    thinks = [float(value) for value in str(args.think).split(",") if value.strip()]
    n_papers = int(json.loads((args.cache / "manifest.json").read_text())["n_documents"])
    log_path = Path(tempfile.mkdtemp(prefix="atlas-load-")) / "server.log"
    print(f"server log: {log_path}; load average {os.getloadavg()[0]:.2f} at the start", flush=True)
    with page_server(args.cache, log_path, args.malloc_arenas) as (url, server):
        warm = Record()
        asyncio.run(visit(url, random.Random(args.seed), 0.0, n_papers, warm, time.monotonic() + 600))
        if warm.errors:
            print("warm-up errors: " + "; ".join(warm.errors[:5]), flush=True)
        time.sleep(args.warm_up_wait)  # the page starts its render server 5 s after the Downloads tab opened
        if args.calibrate:
            from bench.load_browser import calibrate

            print(calibrate(url, args.calibrate_repeats), flush=True)
        start_rss = steady_rss(server)
        print(
            f"server RSS after a warm-up visit, once steady: {start_rss / MIB:.0f} MiB ({rss_by_process(server)})",
            flush=True,
        )
        runs = [[run_level(url, server, args, n, think, n_papers) for n in counts] for think in thinks]
        print(f"server RSS at the end: {rss_by_process(server)}", flush=True)
    print()
    print(
        f"{n_papers:,} papers ({args.cache}); {args.seconds:.0f} s per level; RSS after = {args.settle:.0f} s after "
        f"the users left, reaped = {REAP_WAIT_S:.0f} s after a probe session; MALLOC_ARENA_MAX="
        f"{args.malloc_arenas or '(unset)'}; load average {os.getloadavg()[0]:.2f} at the end"
    )
    for think, levels in zip(thinks, runs):
        print()
        print(f"think {think:g} s" + (" (no pause between steps)" if think == 0 else " between steps") + ":")
        report(levels, start_rss)
    return 0


if __name__ == "__main__":
    sys.exit(main())
