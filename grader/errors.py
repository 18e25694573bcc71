"""The grading errors, and the verdict each one becomes.

Part of the application's one error tree (its root, ``AppError``, is in
``sandbox/errors.py``, the bottom layer; ``web/errors.py`` maps every class
to an HTTP answer)::

    AppError (sandbox/errors.py)
    +-- SandboxStartError   (sandbox/errors.py) the grader turns it into a
    |                       PlatformError when a grading meets it
    +-- GraderError
        +-- InvalidSubmission   the code cannot be graded at all (not UTF-8, empty,
        |                       over the size limit): refused before any sandbox
        |                       starts; the caller shows the message, no verdict
        +-- PackageError        a challenge package is malformed, or its reference
        |                       does not pass its own probes: the coach's fault;
        |                       the message names the file and the field
        +-- PlatformError       the platform failed (a sandbox did not start, the
                                runner broke the protocol before any candidate
                                code ran): never the candidate's fault; the task
                                retries it, and after the last try the submission
                                gets the verdict ``internal_error``

Everything the candidate's code can cause (syntax errors, exceptions, time,
memory and output limits, a killed runner) is *not* an exception here: it is
a verdict in the GradeResult.
"""

from __future__ import annotations

from sandbox.errors import AppError


class GraderError(AppError):
    """Base of every error the grader raises on purpose."""


class InvalidSubmission(GraderError):
    """The submitted code cannot be graded; the message is for the candidate."""


class PackageError(GraderError):
    """A challenge package is invalid; the message names the file and field."""

    def __init__(self, message: str, *, path: str | None = None, field: str | None = None) -> None:
        where = path or ""
        if field:
            where = f"{where}: field '{field}'" if where else f"field '{field}'"
        super().__init__(f"{where}: {message}" if where else message)
        self.path = path
        self.field = field


class PlatformError(GraderError):
    """The grading platform failed; retry. Not the candidate's fault."""


class GradingCancelled(GraderError):
    """The candidate cancelled the grading while it ran: the sandbox was killed, and there is no result to judge."""


class HostLoadError(PlatformError):
    """The host's other work, not the code, decided the run: its probes were refused as overloaded, or the wall
    clock ran out while probes were being given time back. Retried like any platform fault; named apart so that
    what counts load faults (tests, logs) need not read the message."""
