"""dashboard.state.turns: one page run at a time, first come first served (issue 21), with real threads; and the
real page (AppTest on the seed cache) waiting for its turn."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dashboard.state import turns

APP = Path(__file__).resolve().parent.parent / "dashboard" / "app.py"


def holder_until(line: turns.Turns, release: threading.Event, held: threading.Event) -> threading.Thread:
    """A thread that takes the turn, says so, and gives it up once ``release`` is set."""

    def hold() -> None:
        with line.turn():
            held.set()
            release.wait(10)

    thread = threading.Thread(target=hold)
    thread.start()
    assert held.wait(5)
    return thread


def queued(line: turns.Turns, order: list[int], index: int) -> threading.Thread:
    """A thread that waits for the turn, then notes its index and gives the turn up."""

    def wait() -> None:
        with line.turn() as taken:
            assert taken
            order.append(index)

    thread = threading.Thread(target=wait)
    thread.start()
    return thread


def wait_for_queue(line: turns.Turns, length: int, limit_s: float = 5) -> None:
    """Wait until ``length`` threads are queued for the turn (fails after ``limit_s`` seconds without that)."""
    deadline = time.monotonic() + limit_s
    while len(line._queue) < length and time.monotonic() < deadline:
        time.sleep(0.005)
    assert len(line._queue) == length


def test_waiting_threads_get_the_turn_in_the_order_they_asked() -> None:
    line, release, held = turns.Turns(), threading.Event(), threading.Event()
    holder = holder_until(line, release, held)
    order: list[int] = []
    waiting = []
    for index in range(5):
        waiting.append(queued(line, order, index))
        wait_for_queue(line, index + 1)  # each asks after the one before
    assert order == []  # nobody runs while the holder holds the turn
    release.set()
    for thread in [holder, *waiting]:
        thread.join(5)
    assert order == [0, 1, 2, 3, 4]
    assert line.holder is None


def test_give_up_hands_over_at_once_and_is_harmless_when_not_held() -> None:
    line = turns.Turns()
    line.give_up()  # never taken: nothing happens
    assert line.holder is None
    order: list[int] = []
    with line.turn():
        assert line.holder == threading.get_ident()
        waiter = queued(line, order, 1)
        wait_for_queue(line, 1)
        line.give_up()  # as an export does before it waits on its child process
        waiter.join(5)
        assert order == [1]  # the waiter ran while this block was still going
    assert line.holder is None  # the block's own give_up at its end did nothing more
    with pytest.raises(RuntimeError, match="already holds"):
        with line.turn():
            line.take()


def test_a_thread_waits_at_most_the_limit_then_goes_on_without_the_turn(caplog) -> None:
    """While another thread holds the turn past the limit, a second thread is told it did not get the turn and goes
    on (its block runs while the holder still holds), and the log says so; the holder is untouched."""
    line, release, held = turns.Turns(wait_limit_s=0.2), threading.Event(), threading.Event()
    holder = holder_until(line, release, held)
    with line.turn() as taken:
        assert not taken and line.holder == holder.ident  # the holder still holds: this block runs beside it
    assert "waited 0 s for its turn" in caplog.text  # the limit, rounded to whole seconds
    assert not line._queue  # it left the queue, so the holder's give_up leaves the turn free
    release.set()
    holder.join(5)
    assert line.holder is None


def test_the_page_waits_for_its_turn(seed_cache, monkeypatch) -> None:
    """The page's script asks for the turn and waits in the queue while another session's run holds it; it runs,
    without error, once that run gives the turn up."""
    monkeypatch.setenv("ATLAS_CACHE", str(seed_cache))
    app = AppTest.from_file(str(APP), default_timeout=120).run()  # cache read and shared tables made
    release, held = threading.Event(), threading.Event()
    holder = holder_until(turns.PAGE, release, held)  # another session's run
    seen_queued: list[int] = []

    def release_once_the_page_queues() -> None:
        wait_for_queue(turns.PAGE, 1, limit_s=60)  # the page's run has asked and waits behind the holder
        seen_queued.append(len(turns.PAGE._queue))
        release.set()

    releaser = threading.Thread(target=release_once_the_page_queues)
    releaser.start()
    app.run()
    releaser.join(60)
    holder.join(5)
    assert seen_queued == [1]  # the page's run queued behind the holder before it ran
    assert not app.exception, [item.value for item in app.exception]
    assert turns.PAGE.holder is None
