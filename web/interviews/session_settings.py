"""A session's settings at work: the hint policy (off, on request, on request with a penalty) and hidden-probe detail.

The coach chooses them on the create form or in a template (models.SessionSettings).
They act in three places, all server side:

- Reveals. ``hint_reveal_refusal`` is registered as a reveal guard of the
  submissions app (apps.py): with hints off, a reveal on a submission made in
  the interview is refused, and so is one on any submission of that
  challenge while the candidate's interview with hints off is live (the
  practice page would otherwise be a way round it).
- The candidate's results. ``candidate_submission_payload`` is what the
  interview page polls (views.interview_submission_status): the submissions
  app's payload with the interview's hidden-probe detail and URLs under the
  private link, and no hints at all when they are off.
- The score the interviewer reads. ``score_line`` takes the penalty off the
  best submit's score, for the live view and the scorecard: "100 - 10 for 1
  hint = 90". Submission.score stays the grader's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.urls import reverse
from django.utils import timezone

from web.interviews.models import HiddenFeedback, HintPolicy, Interview, InterviewSubmission, State
from web.submissions.models import Submission
from web.submissions.presenters import SubmissionRoutes, submission_payload

HINTS_OFF = "Hints are switched off in this mock interview."
HINTS_OFF_ELSEWHERE = "Hints for this challenge are switched off until your mock interview ends."


def policy_text(interview_or_template: Any) -> str:
    """What the candidate (and the coach) reads about hints before anyone asks for one."""
    policy = interview_or_template.hint_policy
    if policy == HintPolicy.OFF:
        return "Hints are off in this interview."
    if policy == HintPolicy.PENALTY:
        n = interview_or_template.hint_penalty
        return f"Hints on request; each hint you reveal costs {n} point{'s' if n != 1 else ''} of that challenge's score."
    return "Hints on request: none is shown unless you ask."


def feedback_text(interview_or_template: Any) -> str:
    if interview_or_template.hidden_feedback == HiddenFeedback.FULL:
        return "Submit results show every hidden test in full: inputs' results, expected values and output."
    return "Submit results summarise hidden tests: which property failed and how far, without expected values."


# --- Reveals -----------------------------------------------------------------------------------


def hint_reveal_refusal(user: AbstractBaseUser, submission: Submission) -> str | None:
    """The reveal guard (web.submissions.services.reveal): a refusal when hints are off for this submission."""
    link = InterviewSubmission.objects.filter(submission_id=submission.pk).select_related("interview").first()
    if link is not None:
        return HINTS_OFF if link.interview.hint_policy == HintPolicy.OFF else None
    # A practice submission: refused while a live interview of this user with hints off includes the challenge.
    running = Interview.objects.filter(
        candidate_id=submission.user_id, hint_policy=HintPolicy.OFF, started_at__isnull=False, items__challenge_id=submission.challenge_id
    )
    now = timezone.now()
    return HINTS_OFF_ELSEWHERE if any(i.state(now) == State.LIVE for i in running) else None


# --- The candidate's results -------------------------------------------------------------------


def interview_routes(interview: Interview) -> SubmissionRoutes:
    """Status, reveal and regrade under the private link, so the page keeps the interview's settings."""
    return SubmissionRoutes(
        status="interview-submission-status",
        hint_reveal="interview-hint-reveal",
        regrade="interview-submission-regrade",
        cancel="interview-submission-cancel",
        args=(interview.token,),
    )


def interview_status_url(interview: Interview, submission_id: int) -> str:
    return reverse("interview-submission-status", args=[interview.token, submission_id])


def candidate_submission_payload(interview: Interview, submission: Submission, revealed_ids: set[str]) -> dict[str, Any]:
    """The candidate's view of one of their interview submissions, under the interview's settings."""
    payload = submission_payload(submission, revealed_ids, interview_routes(interview), hidden_probes=interview.hidden_feedback)  # type: ignore[arg-type]
    if interview.hint_policy == HintPolicy.OFF:
        payload["hints"] = []  # nothing to offer, not even a count
    payload["hint_policy"] = {"policy": interview.hint_policy, "penalty": interview.hint_penalty, "text": policy_text(interview)}
    return payload


# --- The score the interviewer reads -----------------------------------------------------------


def _points(value: float) -> str:
    return f"{round(value, 1):g}"


@dataclass(frozen=True)
class ScoreLine:
    best: float | None  # the best submit's score, as graded
    hints: int  # hints revealed in the interview for this challenge
    penalty: float  # points taken off
    score: float | None  # what counts: best - penalty, never below 0
    text: str


def score_line(best: float | None, hints: int, policy: str, penalty_per_hint: int) -> ScoreLine:
    """The challenge's score after the hint penalty: "100 - 10 for 1 hint = 90" (floored at 0)."""
    if policy != HintPolicy.PENALTY or hints == 0:
        text = _points(best) if best is not None else "no submit yet"
        return ScoreLine(best, hints, 0.0, best, text)
    penalty = float(hints * penalty_per_hint)
    for_hints = f"{_points(penalty)} for {hints} hint{'s' if hints != 1 else ''}"
    if best is None:
        return ScoreLine(None, hints, penalty, None, f"no submit yet; {for_hints} to take off")
    score = max(0.0, best - penalty)
    return ScoreLine(best, hints, penalty, score, f"{_points(best)} - {for_hints} = {_points(score)}")
