"""Calibration of bench/load.py's websocket client against one headless Chromium page (Playwright, Debian's
/usr/bin/chromium, --no-sandbox) on the same server.

The same rerun latency is taken on both sides of the same socket protocol: from the ``rerun_script`` BackMsg the
page sends to the ``script_finished`` ForwardMsg that ends its run, timed by Chromium's own network stack (the
DevTools protocol's ``Network.webSocketFrameSent`` / ``Network.webSocketFrameReceived`` timestamps, so Python's
event dispatch adds nothing). The browser does two interactions ``repeats`` times, typing a term into the
sidebar search (Enter; each side its own terms, so neither finds the other's search cached) and switching to the
Topics tab and back, then one PageClient does the same, one after the other on an otherwise idle server. It also
counts the reruns the page sent and the runs a second rerun cut short, which a browser could add and the client
not. The browser's own drawing after ``script_finished`` is in neither figure (bench/dashboard.py measures it),
but on a 2-core machine it competes with the server for the CPU while the run is under way.
"""

from __future__ import annotations

import asyncio
import base64
import statistics
import time
from pathlib import Path

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from bench.load_client import RUN_DONE, PageClient

CHROMIUM = Path("/usr/bin/chromium")
# Each side searches its own terms (alternate words of one list), so neither reuses the other's cached search.
TERMS = ("language", "graph", "diffusion", "agent", "robust", "vision", "policy", "attention", "reasoning", "image")
BROWSER_TERMS, CLIENT_TERMS = TERMS[0::2], TERMS[1::2]
SEARCH_LABEL = "Search titles, abstracts and keywords"


class SocketWatch:
    """Rerun latencies seen on the page's websocket: each rerun_script sent, paired with the next run's end
    (seconds, from the DevTools events' ``timestamp``; binary frames have opcode 2 and base64 payloads)."""

    def __init__(self) -> None:
        self.sent_at: float | None = None
        self.latencies: list[float] = []
        self.reruns_sent = 0  # rerun_script messages the page sent (a second one during a run restarts it)
        self.runs_cut = 0  # runs that ended early for a rerun

    def sent(self, event: dict) -> None:
        frame = event["response"]
        if frame.get("opcode") == 2:
            message = BackMsg()
            message.ParseFromString(base64.b64decode(frame["payloadData"]))
            if message.WhichOneof("type") == "rerun_script":
                self.reruns_sent += 1
                if self.sent_at is None:
                    self.sent_at = float(event["timestamp"])

    def received(self, event: dict) -> None:
        frame = event["response"]
        if frame.get("opcode") == 2 and self.sent_at is not None:
            message = ForwardMsg()
            message.ParseFromString(base64.b64decode(frame["payloadData"]))
            if message.WhichOneof("type") == "script_finished" and message.script_finished not in RUN_DONE:
                self.runs_cut += 1
            elif message.WhichOneof("type") == "script_finished":
                self.latencies.append(float(event["timestamp"]) - self.sent_at)
                self.sent_at = None


def browser_latencies(url: str, repeats: int) -> tuple[dict[str, list[float]], SocketWatch]:
    """({"search": [s], "tab": [s]}: rerun latencies of one Chromium page doing each interaction ``repeats``
    times, the socket's watch with its counts)."""
    from playwright.sync_api import sync_playwright

    watch = SocketWatch()
    found: dict[str, list[float]] = {"search": [], "tab": []}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 1000})
            devtools = page.context.new_cdp_session(page)
            devtools.send("Network.enable")
            devtools.on("Network.webSocketFrameSent", watch.sent)
            devtools.on("Network.webSocketFrameReceived", watch.received)
            page.goto(url)
            page.get_by_label(SEARCH_LABEL).wait_for(timeout=120_000)
            page.wait_for_timeout(3000)
            watch.reruns_sent = watch.runs_cut = 0

            def measured(kind: str, action) -> None:
                count = len(watch.latencies)
                action()
                deadline = time.monotonic() + 120
                while len(watch.latencies) == count and time.monotonic() < deadline:
                    page.wait_for_timeout(20)
                if len(watch.latencies) > count:
                    found[kind].append(watch.latencies[count])
                page.wait_for_timeout(1500)  # let the page settle, as the client's think time does

            for repeat in range(repeats):
                box = page.get_by_label(SEARCH_LABEL)
                term = BROWSER_TERMS[repeat % len(BROWSER_TERMS)]
                measured("search", lambda box=box, term=term: (box.fill(term), box.press("Enter")))
                measured("tab", lambda: page.get_by_role("tab", name="Topics").click())
                measured("tab", lambda: page.get_by_role("tab", name="Map and papers").click())
        finally:
            browser.close()
    return found, watch


async def client_latencies(url: str, repeats: int) -> dict[str, list[float]]:
    """The same interactions by one PageClient."""
    client = PageClient(url)
    found: dict[str, list[float]] = {"search": [], "tab": []}
    try:
        await client.open()
        await asyncio.sleep(3)
        for repeat in range(repeats):
            search, tabs = client.find("text_input", SEARCH_LABEL), client.find("tab_container")
            assert search is not None and tabs is not None, "the page lacks the sidebar search or its tabs"
            term = CLIENT_TERMS[repeat % len(CLIENT_TERMS)]
            found["search"].append((await client.set(search, string_value=term)).latency_s)
            await asyncio.sleep(1.5)
            for name in ("Topics", "Map and papers"):
                found["tab"].append((await client.set(tabs, string_value=name)).latency_s)
                await asyncio.sleep(1.5)
    finally:
        await client.close()
    return found


def calibrate(url: str, repeats: int = 5) -> str:
    """Lines comparing the browser's and the client's median rerun latency per interaction."""
    in_browser, watch = browser_latencies(url, repeats)
    by_client = asyncio.run(client_latencies(url, repeats))
    interactions = sum(len(values) for values in in_browser.values())
    lines = [
        f"calibration (one session at a time, {repeats} repeats; median [min-max] ms; the browser sent "
        f"{watch.reruns_sent} reruns for {interactions} interactions, {watch.runs_cut} runs cut short by a rerun):"
    ]
    for kind in ("search", "tab"):
        values = {"Chromium": in_browser[kind], "websocket client": by_client[kind]}
        parts = [
            f"{who} {1000 * statistics.median(v):.0f} [{1000 * min(v):.0f}-{1000 * max(v):.0f}] (n={len(v)})"
            if v
            else f"{who} none measured"
            for who, v in values.items()
        ]
        lines.append(f"  {kind}: " + "; ".join(parts))
    return "\n".join(lines)
