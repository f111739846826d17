"""The server's long-lived objects kept out of Python's full garbage collections (issue 21, many users).

A full collection visits every object the collector tracks: after the page's imports (Streamlit, pandas, plotly,
pyarrow, the pipeline) that is about 120,000 objects, and the collection holds the interpreter lock for all of it,
so every other session's run waits. :func:`freeze_long_lived` collects once, then moves what survives into the
collector's permanent generation (``gc.freeze``, Python's public API for exactly this), so later collections visit
only the objects made since. Called when something long-lived and large has just been made (the cache read, the
embedding model loaded).

Streamlit would also run ``gc.collect(2)`` after every script run of every session (``runner.postScriptGC``); the
page's ``.streamlit/config.toml`` turns that off. Even with the freezes, the figures, tables and session state made
after them made that collection 5-20 ms of a 50-90 ms run (``python -m bench.server_cpu``; docs/benchmarks.md).
CPython's own generational collections still free the runs' cyclic garbage, when enough of it has accumulated.

The price: a frozen object that later becomes part of unreachable cyclic garbage is never collected (objects
freed by reference counting, most of them, are freed as usual). What is alive at a freeze is the imported code,
the cache's tables, the session whose run made them and, at the model load (whose run has given up its turn,
dashboard.state.turns), whatever other runs were under way; that is what such a leak can hold. The freezes happen
once per cache read and model load, not per run.
"""

from __future__ import annotations

import gc


def freeze_long_lived() -> int:
    """Collect garbage, then freeze every object still tracked (gc.freeze). Returns how many objects are now
    frozen in all (gc.get_freeze_count)."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
