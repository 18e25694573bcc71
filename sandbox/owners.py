"""Who owns a sandbox's leftovers, and whether that owner still runs.

Sandboxes' scratch folders, cgroups and containers are named or labelled
with an *owner token* of the worker process that made them, so a worker can
remove what dead workers left (scratch.py, cgroups.py, docker.py) and never
what a live one is using.

A bare pid is not enough to say "dead": pids are reused (``pid_max`` is
32768 on many hosts, and sandboxes spawn many processes), and a killed
worker stays a zombie until it is reaped. So the token is
``<pid>.<start>``, where ``start`` is the process's start time in clock ticks
since boot (``/proc/<pid>/stat``, field 22): a token names one process, once.
A bare ``<pid>`` (older leftovers, hosts without ``/proc``) is still read.
"""

from __future__ import annotations

import os
from pathlib import Path

PROC = Path("/proc")


def stat_fields(pid: int) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name, or None if there is no such process."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except FileNotFoundError:
        return None
    except OSError:
        return []  # exists, but unreadable here
    # The command name is in parentheses and may itself hold spaces or ')'.
    return text[text.rfind(")") + 2 :].split()


def _start_ticks(fields: list[str] | None) -> str:
    """The start time among :func:`stat_fields`, "" if absent: fields[0] is field 3 (state), so field 22 is fields[19]."""
    return fields[19] if fields and len(fields) > 19 else ""


# This process's own token, by pid: it never changes, but a fork's child has its own.
_own_token: tuple[int, str] | None = None


def owner_token(pid: int | None = None) -> str:
    """The token naming process ``pid`` (default: this process) as the owner of what it creates."""
    global _own_token
    if pid is None:
        pid = os.getpid()
        if _own_token is None or _own_token[0] != pid:
            _own_token = (pid, owner_token(pid))
        return _own_token[1]
    start = _start_ticks(stat_fields(pid))
    return f"{pid}.{start}" if start else str(pid)


def owner_alive(token: str) -> bool | None:
    """Whether the process a token names still runs; None if ``token`` is not an owner token.

    A zombie counts as dead, and so does a live process whose start time
    differs from the token's (the pid was reused).
    """
    pid_text, _, start = token.partition(".")
    if not pid_text.isdigit() or not (start == "" or start.isdigit()):
        return None
    pid = int(pid_text)
    if not PROC.is_dir():
        return pid_alive(pid)
    fields = stat_fields(pid)
    if fields is None:
        return False
    if not fields:
        return True  # unreadable: assume it lives, never remove what might be in use
    if fields[0] in ("Z", "X"):
        return False
    return not start or _start_ticks(fields) == start


def pid_alive(pid: int) -> bool:
    """True if ``pid`` exists, also when it belongs to another user (which we may not signal)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
