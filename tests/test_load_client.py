"""bench/load.py's websocket client against a real server: two sessions of the seed cache's page at once, each
doing a visit (open, filter, search, click, table row, lasso, two tabs and back, the CSV export), with no error.
So the benchmark's client cannot rot silently when the page or Streamlit's protocol changes."""

from __future__ import annotations

import asyncio
import gc
import json
import random
import time
from pathlib import Path

import pytest

from bench.load_client import PageClient, SessionError
from bench.load_scenario import Record, visit
from tests.streamlit_server import streamlit_server

TABS = ("Topics", "Downloads")  # a tab switch and the export; the heavier tabs' first draw would triple the time
EXPECTED_STEPS = {"open", "filter", "search", "click", "row", "lasso", "export"} | {
    f"tab {name}" for name in (*TABS, "Map and papers")
}


async def two_visits(url: str, n_papers: int) -> list[Record]:
    records = [Record(), Record()]
    deadline = time.monotonic() + 120
    await asyncio.gather(
        *(
            visit(url, random.Random(index), 0.05, n_papers, record, deadline, TABS)
            for index, record in enumerate(records)
        )
    )
    return records


async def closed_socket_is_an_error(url: str) -> None:
    client = PageClient(url, timeout_s=30)
    try:
        await client.open()
        tabs = client.find("tab_container")
        assert tabs is not None, "the client read no tabs from the page's deltas"
        assert client._connection is not None
        client._connection.close()  # as if the server dropped it: the next interaction must fail, not hang
        assert client._reader is not None
        await asyncio.wait([client._reader], timeout=30)  # the client's reader has seen the socket close
        assert client._reader.done()
        with pytest.raises(SessionError):
            await client.set(tabs, string_value="Topics")
    finally:
        await client.close()


def test_two_concurrent_sessions_complete_every_step(seed_cache: Path, tmp_path: Path) -> None:
    n_papers = int(json.loads((seed_cache / "manifest.json").read_text())["n_documents"])
    log = tmp_path / "server.log"
    with streamlit_server(seed_cache, log) as (url, _):
        records = asyncio.run(two_visits(url, n_papers))
        asyncio.run(closed_socket_is_an_error(url))
    for record in records:
        assert record.errors == [], record.errors
        assert record.visits == 1
        assert EXPECTED_STEPS <= set(record.reruns) | ({"export"} if record.exports else set()), sorted(record.reruns)
        assert all(latency > 0 for latency in record.latencies())
        assert len(record.exports) == 1
    assert "Traceback" not in log.read_text(errors="replace")
    gc.collect()  # the clients' sockets and futures are finalised here, not during a later import
