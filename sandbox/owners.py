"""Whether the worker process that left something behind is still alive.

Sandboxes' scratch folders, cgroups and containers are named or labelled
with their worker's pid, so a worker that starts can remove what dead
workers left (backend.py, cgroups.py, docker.py) and never what a live
one is using.
"""

from __future__ import annotations

import os


def pid_alive(pid: int) -> bool:
    """True if ``pid`` exists, also when it belongs to another user (which we may not signal)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
