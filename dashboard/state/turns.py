"""One script run of the page at a time, first come first served (issue 21, many users).

Streamlit runs each session's script in a thread of its own, and the threads of all sessions share one interpreter
lock. Twenty users' runs at once then share the lock in 5 ms slices: every run takes as long as the whole burst,
and the server's event loop, which sends the finished pages and serves the downloads, waits for a slice after
every socket write. With :data:`PAGE`'s turn around the page's script, runs go one after another in the order
they asked, each at full speed; ``python -m bench.load`` measures the effect (docs/benchmarks.md, "Many users").

A run that would make everyone wait on something that needs no interpreter lock, an image drawn by a child
process or text encoded by torch's threads, calls :meth:`Turns.give_up` first and finishes without the turn. It
never takes the turn back in that run: a run that holds the turn may be waiting for the same Streamlit cache entry
that the given-up run is computing, so taking it back could deadlock. A run that waits longer than the wait limit
(a stuck run ahead of it) goes on without the turn, and says so in the log.
"""

from __future__ import annotations

import collections
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

LOG = logging.getLogger(__name__)
WAIT_LIMIT_S = 30.0


class Turns:
    """A first-come-first-served turn for threads: at most one holds it; the others wait in the order they asked.

    ``wait_limit_s``: how long a thread waits before it goes on without the turn (seconds, > 0)."""

    def __init__(self, wait_limit_s: float = WAIT_LIMIT_S) -> None:
        self.wait_limit_s = wait_limit_s
        self._guard = threading.Lock()
        self._holder: int | None = None
        self._queue: collections.deque[tuple[int, threading.Event]] = collections.deque()

    @property
    def holder(self) -> int | None:
        """The thread identifier (threading.get_ident) holding the turn, None when free."""
        return self._holder

    def take(self) -> bool:
        """Wait for the turn. Returns True once the calling thread holds it, False when it waited
        ``wait_limit_s`` and goes on without it. Raises RuntimeError when the thread already holds it."""
        ticket = (threading.get_ident(), threading.Event())
        with self._guard:
            if self._holder == ticket[0]:
                raise RuntimeError("this thread already holds the turn")
            if self._holder is None:
                self._holder = ticket[0]
                return True
            self._queue.append(ticket)
        if ticket[1].wait(self.wait_limit_s):
            return True
        with self._guard:
            if ticket[1].is_set():  # handed over at the limit
                return True
            self._queue.remove(ticket)
        LOG.warning("a page run waited %.0f s for its turn and runs beside the one ahead of it", self.wait_limit_s)
        return False

    def give_up(self) -> None:
        """Hand the turn to the longest-waiting thread (or leave it free). Nothing happens when the calling thread
        does not hold it, so calling it twice, or from a run that never took the turn, is harmless."""
        with self._guard:
            if self._holder != threading.get_ident():
                return
            if self._queue:
                self._holder, handed = self._queue.popleft()
                handed.set()
            else:
                self._holder = None

    @contextmanager
    def turn(self) -> Iterator[bool]:
        """Hold the turn for the block (see :meth:`take`; yields its result); given up when the block ends or
        raises, unless the block gave it up already."""
        taken = self.take()
        try:
            yield taken
        finally:
            self.give_up()


PAGE = Turns()
