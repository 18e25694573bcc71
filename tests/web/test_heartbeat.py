"""The heartbeat thread: web/submissions/heartbeat.py."""

from __future__ import annotations

import threading

from web.submissions.heartbeat import heartbeat


def test_it_beats_while_the_block_runs_and_stops_after() -> None:
    beaters: set[threading.Thread] = set()
    beats: list[int] = []
    third = threading.Event()

    def stamp() -> None:
        beaters.add(threading.current_thread())
        beats.append(1)
        if len(beats) >= 3:
            third.set()

    with heartbeat(stamp, 0.01):
        assert third.wait(30), "no three beats within 30 s"
        (beater,) = beaters
        assert beater is not threading.current_thread()  # on a thread of its own
    # The block's end joined that thread: nothing is left that could beat again.
    assert not beater.is_alive()


def test_a_failing_beat_is_logged_and_the_next_one_still_comes(caplog) -> None:
    calls: list[int] = []
    second = threading.Event()

    def stamp() -> None:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("database is locked")
        second.set()

    with heartbeat(stamp, 0.01):
        assert second.wait(30)
    assert "a heartbeat could not be stored: database is locked" in caplog.text
