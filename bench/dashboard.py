"""Dashboard speed: server time of the first render and of each interaction, and the browser's first map paint.

    python bench/dashboard.py --cache /tmp/atlas-titles [--repeats 5] [--no-browser]

Server time is measured with Streamlit's AppTest (the script run on the server, no network or drawing): the
first render of a fresh session, then each interaction on the rendered page: a topic filter, a text search, a map
selection (the selection state a lasso produces, set as the browser would send it), a decision filter, and
clearing them. Each interaction is repeated and the median reported. Time to first map paint is measured in
headless Chromium (Debian's /usr/bin/chromium, driven by Playwright): from navigation until the plotly map's
WebGL canvas is drawn. Goals (the fast-build issue): first render <= 2 s, every interaction <= 200 ms.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
APP = str(ROOT / "dashboard" / "app.py")


def timed_run(at) -> float:
    """Seconds of one AppTest script run; raises if the page raised."""
    start = time.perf_counter()
    at.run()
    elapsed = time.perf_counter() - start
    if at.exception:
        raise RuntimeError(f"the page raised: {at.exception[0].value}")
    return elapsed


def server_times(cache_dir: Path, repeats: int) -> list[tuple[str, float]]:
    """[(step, median seconds)] for the first render and each interaction."""
    from streamlit.testing.v1 import AppTest

    from pipeline.cache import read_cache

    os.environ["ATLAS_CACHE"] = str(cache_dir)
    documents = read_cache(cache_dir).documents
    selected = documents.sample(min(300, len(documents)), random_state=0)
    selection = {"selection": {"points": [{"customdata": doc_id, "x": x, "y": y} for doc_id, x, y in zip(selected["doc_id"], selected["x"], selected["y"])], "point_indices": [], "box": [], "lasso": []}}
    results: list[tuple[str, float]] = []
    first = []
    for _ in range(repeats):
        at = AppTest.from_file(APP, default_timeout=300)
        first.append(timed_run(at))
    results.append(("first render (fresh session, cached tables)", statistics.median(first)))
    results.append(("first render of a fresh server (reads the cache)", first[0]))
    steps = {name: [] for name in ("topic filter", "text search", "map selection", "decision filter", "clear filters")}
    topic_options = at.multiselect(key="topics").options
    for repeat in range(repeats):
        at.multiselect(key="topics").set_value([topic_options[repeat % len(topic_options)]])
        steps["topic filter"].append(timed_run(at))
        at.text_input(key="query").input(["learning", "graph", "diffusion", "language", "robust"][repeat % 5])
        steps["text search"].append(timed_run(at))
        at.multiselect(key="topics").set_value([])
        at.text_input(key="query").input("")
        timed_run(at)
        at.session_state["map-0"] = selection
        steps["map selection"].append(timed_run(at))
        decisions = [widget for widget in at.multiselect if widget.key == "decisions"]
        if decisions:
            decisions[0].set_value([decisions[0].options[repeat % len(decisions[0].options)]])
            steps["decision filter"].append(timed_run(at))
            decisions[0].set_value([])
        at.session_state["map-0"] = {"selection": {"points": [], "point_indices": [], "box": [], "lasso": []}}
        steps["clear filters"].append(timed_run(at))
    results.extend((name, statistics.median(values)) for name, values in steps.items() if values)
    return results


def first_map_paint(cache_dir: Path) -> float | None:
    """Seconds from navigation to a drawn map in headless Chromium; None when Chromium is absent."""
    if not Path("/usr/bin/chromium").exists():
        return None
    from playwright.sync_api import sync_playwright

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", APP, "--server.port", str(port), "--server.headless", "true", "--", "--cache", str(cache_dir)],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with socket.socket() as client:
                if client.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.2)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path="/usr/bin/chromium",
                args=["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
            )
            page = browser.new_page(viewport={"width": 1440, "height": 1000})
            page.goto(f"http://127.0.0.1:{port}/")  # warm the server's caches once, as a running app would be
            page.wait_for_selector(".js-plotly-plot .gl-container canvas, .js-plotly-plot .scatterlayer", timeout=120_000)
            page = browser.new_page(viewport={"width": 1440, "height": 1000})
            start = time.perf_counter()
            page.goto(f"http://127.0.0.1:{port}/")
            page.wait_for_selector(".js-plotly-plot .gl-container canvas, .js-plotly-plot .scatterlayer", timeout=120_000)
            elapsed = time.perf_counter() - start
            browser.close()
        return elapsed
    finally:
        server.terminate()
        server.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, required=True, help="cache folder (the goal is stated for the 11,672 ICLR 2025 titles)")
    parser.add_argument("--repeats", type=int, default=5, help="repetitions per step; medians are reported (default 5)")
    parser.add_argument("--no-browser", action="store_true", help="skip the headless-Chromium paint measurement")
    args = parser.parse_args()
    from pipeline.cache import read_manifest

    n_documents = read_manifest(args.cache)["n_documents"]
    print(f"dashboard speed on {args.cache} ({n_documents:,} documents), median of {args.repeats}")
    results = server_times(args.cache, args.repeats)
    for name, seconds in results:
        goal = 2.0 if name.startswith("first") else 0.2
        print(f"  {name:<48} {seconds * 1000:8.0f} ms   (goal <= {goal * 1000:.0f} ms: {'met' if seconds <= goal else 'MISSED'})")
    paint = None if args.no_browser else first_map_paint(args.cache)
    if paint is not None:
        print(f"  {'first map paint in headless Chromium':<48} {paint * 1000:8.0f} ms")
    interactions = [seconds for name, seconds in results if not name.startswith("first")]
    print(f"dashboard: first render {results[0][1] * 1000:.0f} ms, slowest interaction {max(interactions) * 1000:.0f} ms ({n_documents} docs)")


if __name__ == "__main__":
    main()
