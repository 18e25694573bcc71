"""The submissions' refusals, each under the web's error tree (web/errors.py decides its HTTP answer).

The message of each is for the candidate. Views and the API let them
propagate to the one place that answers them.
"""

from __future__ import annotations

from web.errors import Conflict, Forbidden, LimitReached, Refused, Throttled


class SubmissionRejected(Refused):
    """The code or the request cannot be accepted: bad code, unknown kind, a closed challenge."""


class TooManyPending(SubmissionRejected, LimitReached):
    """The user already has SUBMISSIONS_MAX_PENDING submissions waiting to be graded."""


class RateLimitExceeded(SubmissionRejected, Throttled):
    """Too many runs or submits in the last minute (web/submissions/limits.py)."""


class RegradeRefused(SubmissionRejected, Conflict):
    """Not a submission the candidate may regrade (another's, or not an internal error)."""


class CancelRefused(SubmissionRejected, Conflict):
    """Not a grading the candidate may cancel: another's, or already finished."""


class HintUnavailable(Conflict):
    """The hint cannot be shown (yet): not unlocked, not finished, or a lower tier first."""


class HintsSwitchedOff(Forbidden, HintUnavailable):
    """A reveal guard refused: hints are off for this submission (a mock interview's setting). 403: no waiting makes it allowed."""
