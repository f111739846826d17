"""Lists of short texts (terms, phrase keys, their writings) as the layout store keeps them (pipeline.store.layouts,
.npz without pickle): one UTF-8 text, an item a line, in a uint8 array. A fixed-width str array would give every item
the longest one's width (7,739,111 word pairs as '<U109' took 3.4 GB at a million documents, docs/benchmarks.md)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def lines_array(items: Sequence[str] | np.ndarray) -> np.ndarray:
    """``items`` as one UTF-8 text, an item a line (uint8, its length in bytes).

    Raises ValueError when an item holds a line break: it would read back as two."""
    text = "\n".join(items)
    if text.count("\n") != max(len(items) - 1, 0):
        raise ValueError("lines_array: an item holds a line break")
    return np.frombuffer(text.encode("utf-8"), dtype=np.uint8)


def lines_of_array(array: np.ndarray) -> np.ndarray:
    """The inverse of :func:`lines_array`: the items as str objects in an object array (n_items,). An empty array is
    no items (one empty item cannot be told from none: callers that keep such lists store their length too)."""
    lines = array.tobytes().decode("utf-8").split("\n") if len(array) else []
    items = np.empty(len(lines), dtype=object)
    items[:] = lines
    return items
