"""destroy_soon / finish_destroys: a process that ends lets its last sandboxes finish going."""

from __future__ import annotations

import threading
import time
from typing import Any

from sandbox.backend import destroy_soon, finish_destroys


class SlowToDestroy:
    """Stands in for a sandbox whose teardown (kill, cgroup, scratch folder) takes a while."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.destroyed = threading.Event()

    def destroy(self) -> None:
        time.sleep(self.seconds)
        self.destroyed.set()


def test_finish_destroys_waits_for_every_pending_destroy() -> None:
    sandboxes = [SlowToDestroy(0.3) for _ in range(3)]
    for sandbox in sandboxes:
        destroy_soon(sandbox)  # type: ignore[arg-type]
    assert not any(s.destroyed.is_set() for s in sandboxes), "destroy_soon returns before the teardown"
    assert finish_destroys(timeout=10) == 0
    assert all(s.destroyed.is_set() for s in sandboxes)


def test_finish_destroys_gives_up_at_its_deadline_and_counts_what_is_left() -> None:
    stuck: Any = SlowToDestroy(2.0)
    destroy_soon(stuck)
    assert finish_destroys(timeout=0.1) == 1
    assert finish_destroys(timeout=10) == 0
    assert stuck.destroyed.is_set()
