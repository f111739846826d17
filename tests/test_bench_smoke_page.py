"""The smoke runs of the page's benchmarks (a Streamlit server, its websocket clients, headless Chromium), apart from
tests/test_bench_smoke.py so that the two files run on two test workers (``--dist loadfile``); SMOKE_RUNS there names
these tests too."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bench_runs import assert_printed, bench_env, run_bench
from tests.streamlit_server import chromium_path

pytestmark = pytest.mark.slow
__all__ = ["bench_env"]  # the fixture, imported so that this module's tests can use it


@pytest.mark.browser
def test_dashboard_times_server_and_browser(slice_cache: Path, bench_env: dict[str, str]) -> None:
    """bench.dashboard times each rerun on the server (AppTest) and each interaction in headless Chromium."""
    chromium_path()  # fails in one line when Debian's Chromium is absent
    output = run_bench("dashboard", "--cache", slice_cache, "--repeats", 1, env=bench_env)
    assert_printed(output, "server  first render", "server  decision filter", "click on a point -> paper shown")
    assert_printed(output, "filter change -> map redrawn", "dashboard: first render")


@pytest.mark.browser
def test_dashboard_compares_the_map_renderers(slice_cache: Path, bench_env: dict[str, str]) -> None:
    """bench.dashboard --renderers (bench.map_compare) times the WebGL and the plotly map side by side."""
    chromium_path()  # fails in one line when Debian's Chromium is absent
    output = run_bench("dashboard", "--cache", slice_cache, "--renderers", "--repeats", 1, env=bench_env)
    assert_printed(output, "map renderers at 1500x1000", "first paint of a fresh page", "click on a point -> paper")
    assert " plotly " in output and " webgl " in output, output


@pytest.mark.browser
def test_screenshots_shoots_a_view(slice_cache: Path, tmp_path: Path, bench_env: dict[str, str]) -> None:
    """bench.screenshots shoots a view at a window size and prints what it found."""
    chromium_path()  # fails in one line when Debian's Chromium is absent
    output = run_bench(
        "screenshots", "--cache", slice_cache, "--out", tmp_path, "--sizes", "900x1000", "--views", "map-themes",
        env=bench_env,
    )  # fmt: skip
    assert_printed(output, "map-themes-900x1000.png: ", "labels shown")
    assert (tmp_path / "map-themes-900x1000.png").stat().st_size > 0


@pytest.mark.browser
def test_share_speed_times_the_share_file(slice_cache: Path, bench_env: dict[str, str]) -> None:
    """bench.share_speed writes the share file, opens it offline in Chromium and prints its size and first paint."""
    chromium_path()  # fails in one line when Debian's Chromium is absent
    output = run_bench("share_speed", "--cache", slice_cache, "--repeats", "1", env=bench_env)
    assert_printed(output, " MB, written in ", "median first paint ")


@pytest.mark.browser
def test_map_screenshots_shoots_the_map(slice_cache: Path, tmp_path: Path, bench_env: dict[str, str]) -> None:
    """bench.map_screenshots shoots the map at both levels, its legend and a hover at a window size."""
    chromium_path()  # fails in one line when Debian's Chromium is absent
    output = run_bench(
        "map_screenshots", "--cache", slice_cache, "--out", tmp_path, "--sizes", "900x1000", env=bench_env
    )
    assert_printed(output, "map-themes-900x1000.png: ", "map-hover-900x1000.png: hover", "legend entries")


@pytest.mark.browser
def test_load_runs_one_user_and_calibrates(seed_cache: Path, bench_env: dict[str, str]) -> None:
    """bench.load calibrates its websocket client against Chromium (bench.load_browser), runs one user's visits
    (bench.load_scenario, bench.load_client) and prints the table and the goals."""
    chromium_path()  # fails in one line when Debian's Chromium is absent
    output = run_bench(
        "load", "--cache", seed_cache, "--sessions", 1, "--seconds", 1, "--think", 0, "--settle", 0,
        "--warm-up-wait", 0, "--calibrate", "--calibrate-repeats", 1, env=bench_env,
    )  # fmt: skip
    assert_printed(output, "calibration (one session at a time, 1 repeats", "| N | visits | reruns |", "goal: ")
    assert_printed(output, "rerun ms per interaction")


def test_server_cpu_measures_a_visit(seed_cache: Path, bench_env: dict[str, str]) -> None:
    """bench.server_cpu measures the server's CPU over one user's visit on a fresh server."""
    output = run_bench("server_cpu", "--cache", seed_cache, "--visits", 1, "--repeat", 1, env=bench_env)
    assert_printed(output, "1 visits per repeat", "repeat 1: server CPU", "ms per run; 0 errors")


def test_session_open_times_a_first_run(seed_cache: Path, bench_env: dict[str, str]) -> None:
    """bench.session_open times a fresh session's first run with and without Streamlit's file watcher."""
    output = run_bench("session_open", "--cache", seed_cache, "--sessions", 1, env=bench_env)
    assert_printed(output, "| file watcher | sessions |", "| none | 1 |", "| auto | 1 |")


@pytest.mark.browser
def test_page_speed_times_a_warmed_first_visitor(slice_cache: Path, bench_env: dict[str, str]) -> None:
    """bench.page_speed --warm times the first and second visitor and the interactions on a warmed server."""
    chromium_path()  # fails in one line when Debian's Chromium is absent
    output = run_bench("page_speed", "--cache", slice_cache, "--repeats", 1, "--warm", env=bench_env)
    assert_printed(output, "first visitor: first paint", "colour theme")
