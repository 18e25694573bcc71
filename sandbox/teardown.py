"""Destroying used sandboxes behind the grading, and waiting for them before a process ends.

Place in the flow: a sandbox's ``run`` (``session.py``) hands itself to
:func:`destroy_soon` once the result is in hand, so killing its processes,
removing its cgroup, scratch folder or container costs the grading nothing.
:func:`finish_destroys` is the other end: ``sandbox.shutdown`` (a worker's
pool process stopping) and the interpreter's exit wait there, or the last
sandboxes' leftovers would outlive the process that made them.
"""

from __future__ import annotations

import atexit
import contextvars
import threading
import time
from typing import Protocol


class Destroyable(Protocol):
    def destroy(self) -> None: ...


# The destroys under way: daemon threads, so the process can still end if one is stuck.
_destroying: set[threading.Thread] = set()
_destroying_lock = threading.Lock()


def destroy_soon(sandbox: Destroyable) -> None:
    """Destroy ``sandbox`` on a thread of its own: the result is already in hand.

    The thread runs in a copy of the caller's context, so its log lines carry
    the same submission id as the grading that used the sandbox. It is a
    daemon (a stuck destroy must not hold the process forever), so a process
    that ends calls :func:`finish_destroys` first, or its last sandboxes'
    scratch folders and cgroups would outlive it.
    """
    context = contextvars.copy_context()

    def run() -> None:
        try:
            context.run(sandbox.destroy)
        finally:
            with _destroying_lock:
                _destroying.discard(threading.current_thread())

    thread = threading.Thread(target=run, name="sandbox-destroy", daemon=True)
    with _destroying_lock:
        _destroying.add(thread)
    thread.start()


def finish_destroys(timeout: float = 15.0) -> int:
    """Wait (up to ``timeout`` in all) for the destroys :func:`destroy_soon` started; return how many are left."""
    deadline = time.monotonic() + timeout
    with _destroying_lock:
        pending = list(_destroying)
    for thread in pending:
        thread.join(max(0.0, deadline - time.monotonic()))
    return sum(thread.is_alive() for thread in pending)


# Interpreter exit (the CLI, tests, a worker's main process); Celery's pool
# processes end without atexit and call it through sandbox.shutdown from
# worker_process_shutdown.
atexit.register(finish_destroys)
