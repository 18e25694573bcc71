"""sandbox.teardown: destroys run behind the grading, and a process that ends lets its last sandboxes finish going."""

from __future__ import annotations

import contextvars
import threading

import pytest

from sandbox.teardown import destroy_soon, finish_destroys


class HeldDestroy:
    """Stands in for a sandbox whose teardown (kill, cgroup, scratch folder) goes on until the test lets it end."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.release = threading.Event()
        self.destroyed = threading.Event()
        self.thread: threading.Thread | None = None

    def destroy(self) -> None:
        self.thread = threading.current_thread()
        self.started.set()
        assert self.release.wait(30), "the test never released this destroy"
        self.destroyed.set()


@pytest.fixture(autouse=True)
def no_destroys_of_other_tests() -> None:
    """Real sandboxes of earlier tests may still be going; they must not count here."""
    assert finish_destroys(timeout=60) == 0


def test_destroy_soon_returns_while_the_teardown_goes_on_elsewhere() -> None:
    sandbox = HeldDestroy()
    destroy_soon(sandbox)
    assert sandbox.started.wait(10), "the destroy never started"
    assert sandbox.thread is not threading.current_thread()
    assert not sandbox.destroyed.is_set()  # held: destroy_soon did not wait for it
    sandbox.release.set()
    assert finish_destroys(timeout=10) == 0


def test_finish_destroys_waits_for_every_pending_destroy() -> None:
    sandboxes = [HeldDestroy() for _ in range(3)]
    for sandbox in sandboxes:
        destroy_soon(sandbox)
    for sandbox in sandboxes:
        assert sandbox.started.wait(10)
    for sandbox in sandboxes:
        sandbox.release.set()
    assert finish_destroys(timeout=10) == 0
    assert all(s.destroyed.is_set() for s in sandboxes)


def test_finish_destroys_gives_up_at_its_deadline_and_counts_what_is_left() -> None:
    stuck, quick = HeldDestroy(), HeldDestroy()
    quick.release.set()
    destroy_soon(stuck)
    destroy_soon(quick)
    assert stuck.started.wait(10)
    assert finish_destroys(timeout=0.1) == 1  # the held one; the other ended
    assert quick.destroyed.is_set() and not stuck.destroyed.is_set()
    stuck.release.set()
    assert finish_destroys(timeout=10) == 0
    assert stuck.destroyed.is_set()


def test_a_destroy_runs_in_the_context_of_the_grading_that_used_the_sandbox() -> None:
    submission: contextvars.ContextVar[int | None] = contextvars.ContextVar("submission", default=None)
    seen: list[int | None] = []

    class Remembers:
        def destroy(self) -> None:
            seen.append(submission.get())

    token = submission.set(42)
    try:
        destroy_soon(Remembers())
    finally:
        submission.reset(token)
    assert finish_destroys(timeout=10) == 0
    assert seen == [42]
