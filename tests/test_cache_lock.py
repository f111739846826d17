"""The writer lock of a cache folder (pipeline.cache.writer_lock, filelock underneath) among the threads of one
process: a second thread waits for the holder as another process does, the holding thread may nest it, and two
threads writing one folder through staged_cache take turns. Real locks and real folders; events, no sleeps."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from pipeline import cache


def run_in_thread(work) -> dict[str, object]:
    """Run ``work()`` in another thread, wait for it, and return what it returned or raised."""
    outcome: dict[str, object] = {}

    def target() -> None:
        try:
            outcome["value"] = work()
        except Exception as error:  # handed back to the test
            outcome["error"] = error

    thread = threading.Thread(target=target)
    thread.start()
    thread.join(timeout=60)
    assert not thread.is_alive()
    return outcome


def enter_from_another_thread(target: Path) -> dict[str, object]:
    """Take ``target``'s writer lock in another thread without waiting: {"value": "entered"} or {"error": ...}."""

    def try_to_write() -> str:
        with cache.writer_lock(target, wait_s=0):
            return "entered"

    return run_in_thread(try_to_write)


def test_a_second_thread_does_not_pass_a_lock_this_thread_holds(tmp_path: Path):
    target = tmp_path / "atlas"
    with cache.writer_lock(target):
        assert f"pid {os.getpid()}" in cache.lock_path(target).read_text(encoding="utf-8")
        outcome = enter_from_another_thread(target)
    assert isinstance(outcome.get("error"), cache.CacheBusyError), outcome
    assert f"is being written by pid {os.getpid()}" in str(outcome["error"])
    assert enter_from_another_thread(target) == {"value": "entered"}  # released: the other thread gets it
    assert not cache.lock_path(target).exists()  # the lock file goes with the last holder


def test_the_holding_thread_may_nest_the_lock(tmp_path: Path):
    target = tmp_path / "atlas"
    with cache.writer_lock(target):
        with cache.writer_lock(target, wait_s=0):  # add and rename hold it from their read to their write
            assert cache.lock_path(target).exists()
        assert cache.lock_path(target).exists()  # the inner release keeps the outer hold
        assert isinstance(enter_from_another_thread(target).get("error"), cache.CacheBusyError)
    assert not cache.lock_path(target).exists()


def test_two_threads_writing_one_folder_take_turns(tmp_path: Path):
    target = tmp_path / "atlas"
    events: list[str] = []
    first_inside, second_called = threading.Event(), threading.Event()

    def write(name: str, started: threading.Event | None, release: threading.Event | None) -> None:
        if release is not None:
            release.set()
        with cache.staged_cache(target) as staging:
            events.append(f"{name} in")
            if started is not None:
                started.set()
                assert second_called.wait(timeout=60)
            (staging / "writer.txt").write_text(name, encoding="utf-8")
            events.append(f"{name} out")

    first = threading.Thread(target=write, args=("first", first_inside, None))
    first.start()
    assert first_inside.wait(timeout=60)
    second = threading.Thread(target=write, args=("second", None, second_called))
    second.start()
    first.join(timeout=60)
    second.join(timeout=60)
    assert events == ["first in", "first out", "second in", "second out"]
    assert (target / "writer.txt").read_text(encoding="utf-8") == "second"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["atlas"]  # no staging folder, no lock file left


def test_the_wait_comes_from_the_settings_when_not_given(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("ATLAS_LOCK_WAIT_S", "2.5")
    assert cache.lock_wait_s() == 2.5 and cache.LOCK_WAIT_S == 2.5
    monkeypatch.delenv("ATLAS_LOCK_WAIT_S")
    assert cache.lock_wait_s() == 30.0
