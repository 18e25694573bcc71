"""The root of the application's error tree, at the bottom layer so every layer can share it.

Imports only go down (web -> grader -> sandbox), so the base every layer
extends lives here, in a module that imports nothing::

    AppError                    raised on purpose; the message is written for a person
    +-- SandboxStartError       (here) a sandbox could not start or never became ready
    |   +-- SandboxNotReady     its runner lived but never said ready: worth one more sandbox
    +-- GraderError             (grader/errors.py) InvalidSubmission, PackageError, PlatformError
    +-- Refused                 (web/errors.py) a request refused: NotFound, Conflict,
                                LimitReached (too much pending) and Throttled (too often)

``web/errors.py`` turns every one of them into an HTTP answer, in one table
used by the pages and the API alike. An exception that is not an AppError
is a bug: it gets the server's 500 and a traceback in the log.
"""

from __future__ import annotations


class AppError(Exception):
    """Base of every error the application raises on purpose."""


class SandboxStartError(AppError):
    """The sandbox could not be started or never became ready (a platform failure)."""


class SandboxNotReady(SandboxStartError):
    """The runner was alive but did not say "ready" in time; no job had been sent, so a new sandbox may be tried."""
