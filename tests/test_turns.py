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


def wait_for_queue(line: turns.Turns, length: int) -> None:
    deadline = time.monotonic() + 5
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
    line, release, held = turns.Turns(wait_limit_s=0.2), threading.Event(), threading.Event()
    holder = holder_until(line, release, held)
    started = time.monotonic()
    with line.turn() as taken:
        waited = time.monotonic() - started
        assert not taken and line.holder != threading.get_ident()
    assert 0.2 <= waited < 2
    assert "waited 0 s for its turn" in caplog.text  # the limit, rounded to whole seconds
    assert not line._queue  # it left the queue, so the holder's give_up leaves the turn free
    release.set()
    holder.join(5)
    assert line.holder is None


def test_the_page_waits_for_its_turn(seed_cache, monkeypatch) -> None:
    monkeypatch.setenv("ATLAS_CACHE", str(seed_cache))
    app = AppTest.from_file(str(APP), default_timeout=120).run()  # cache read and shared tables made
    release, held = threading.Event(), threading.Event()
    holder = holder_until(turns.PAGE, release, held)  # another session's run
    threading.Timer(1.5, release.set).start()
    started = time.monotonic()
    app.run()
    waited = time.monotonic() - started
    holder.join(5)
    assert not app.exception, [item.value for item in app.exception]
    assert waited >= 1.4, waited  # it ran only once the other run gave the turn up
    assert turns.PAGE.holder is None
