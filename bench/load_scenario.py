"""What one simulated user does on the page (for bench/load.py), through bench.load_client's PageClient.

A visit: open the page (and, as the browser does once the WebGL map has drawn, its "shown" event, which brings the
papers table); choose a topic in the sidebar filter; search the titles; click a paper on the map (the
WebGL map's click event) and choose a row of the papers table; lasso a run of points on the map; clear the
filters; switch to the Topics, Structure, Find and place (a semantic search there), Decisions and Downloads tabs;
export the papers as CSV (the Downloads tab's deferred download, fetched over HTTP); back to the map; close. Each
step waits ``think`` seconds (uniform in [0.5, 1.5] x think, seeded) before it, as a person reads the page.
A widget the page does not draw (no Decisions tab, the plotly map instead of the WebGL one) is skipped.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from bench.load_client import PageClient, RunResult, SessionError, json_state

SEARCH_TERMS = ("language", "graph", "diffusion", "reinforcement", "agent", "robust", "vision", "protein")
FIND_QUERIES = ("large language model reasoning", "graph neural networks", "diffusion models for images")
TABS = ("Topics", "Structure", "Find and place", "Decisions", "Downloads")
MAP_TAB = "Map and papers"
LASSO_SIZE = 300


@dataclass
class Record:
    """What the sessions of one load level saw: rerun latencies (s) per interaction kind, export times (s) and
    the errors (page exceptions, disconnects, timeouts, failed downloads), each a message."""

    reruns: dict[str, list[float]] = field(default_factory=dict)
    exports: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    visits: int = 0

    def add(self, kind: str, result: RunResult) -> None:
        self.reruns.setdefault(kind, []).append(result.latency_s)
        self.errors.extend(f"{kind}: {message}" for message in result.exceptions)

    def latencies(self) -> list[float]:
        return [value for values in self.reruns.values() for value in values]


async def visit(
    base_url: str,
    rng: random.Random,
    think_s: float,
    n_papers: int,
    record: Record,
    deadline: float,
    tabs: tuple[str, ...] = TABS,
) -> None:
    """One user's visit, stopped early (after the step under way) at ``deadline`` (time.monotonic seconds);
    ``tabs``: the tabs it opens, in order. Errors are recorded, not raised: a session that fails ends its visit."""
    client = PageClient(base_url)

    async def pause() -> bool:
        await asyncio.sleep(rng.uniform(0.5, 1.5) * think_s)
        return time.monotonic() < deadline

    async def step(kind: str, action: Callable[[], Awaitable[RunResult | None]]) -> None:
        if await pause():
            result = await action()
            if result is not None:
                record.add(kind, result)

    try:
        record.add("open", await client.open())
        record.visits += 1
        scatter = client.find("component_instance")
        if scatter is not None:  # the map drew: the page sends the papers table it held back
            record.add("shown", await client.set(scatter, json_value=json_state({"kind": "shown"})))
        topics = client.find("multiselect", "Topics")
        if topics is not None and topics.options:
            await step("filter", lambda: client.set(topics, string_array_value=[rng.choice(topics.options)]))
        search = client.find("text_input", "Search titles")
        if search is not None:
            await step("search", lambda: client.set(search, string_value=rng.choice(SEARCH_TERMS)))
        await map_steps(client, rng, n_papers, step)
        if topics is not None:
            await step("filter", lambda: client.set(topics, string_array_value=[]))
        if search is not None:
            await step("search", lambda: client.set(search, string_value=""))
        await tab_steps(client, rng, step, record, tabs)
    except SessionError as error:
        record.errors.append(f"session: {error}")
    except Exception as error:  # a protocol surprise is an error of this session, not the end of the benchmark
        record.errors.append(f"client: {type(error).__name__}: {error}")
    finally:
        await client.close()


async def map_steps(client: PageClient, rng: random.Random, n_papers: int, step) -> None:
    """Click a point, choose a table row, lasso a run of points (when the page draws those widgets)."""
    scatter = client.find("component_instance")
    if scatter is not None and n_papers:
        index = rng.randrange(n_papers)
        await step("click", lambda: client.set(scatter, json_value=json_state({"kind": "click", "index": index})))
    table = client.find("dataframe")
    if table is not None:
        row = rng.randrange(20)
        chosen = json_state({"selection": {"rows": [row], "columns": [], "cells": []}})
        await step("row", lambda: client.set(table, string_value=chosen))
    scatter = client.find("component_instance")
    if scatter is not None and n_papers:
        first = rng.randrange(max(1, n_papers - LASSO_SIZE))
        indices = list(range(first, min(n_papers, first + LASSO_SIZE)))
        lasso = json_state({"kind": "lasso", "indices": indices})
        await step("lasso", lambda: client.set(scatter, json_value=lasso))


async def tab_steps(client: PageClient, rng: random.Random, step, record: Record, names: tuple[str, ...]) -> None:
    """Switch to each tab in turn (a semantic search on Find and place, the CSV export on Downloads), then back."""
    tabs = client.find("tab_container")
    if tabs is None:
        return
    for name in names:
        await step(f"tab {name}", lambda name=name: client.set(tabs, string_value=name))
        if name == "Find and place":
            find = client.find("text_input", "Describe")
            if find is not None:
                await step("find", lambda find=find: client.set(find, string_value=rng.choice(FIND_QUERIES)))
        if name == "Downloads":
            button = client.find("download_button", "Download CSV")
            if button is not None:

                async def export(button=button) -> None:
                    seconds, size = await client.download(button)
                    if size == 0:
                        record.errors.append("export: an empty CSV")
                    record.exports.append(seconds)

                await step("export", export)
    await step(f"tab {MAP_TAB}", lambda: client.set(tabs, string_value=MAP_TAB))
