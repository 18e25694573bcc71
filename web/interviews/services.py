"""State changes of mock interviews: create, open (the clock starts), run and submit, autosave, assess, end.

The flow: a coach calls ``interview_create`` (candidate, ordered challenges,
duration, the session settings: hint policy and penalty, hidden-probe
detail; every field checked and all refusals raised at once, by field, as
``InterviewInvalid``) and sends the candidate the private link. ``interview_open``, on
the candidate's first visit, starts the clock. While the interview is live,
``interview_submission_create`` hands Runs and Submits to the one way
submissions are made, ``web.submissions.services.intake.submission_create`` (rate
limits, code size, versions and grading all apply), and ties each to the
interview; ``snapshot_save`` stores the editor's autosaves. Once the time is
up or the coach called ``interview_end``, every one of these refuses with
``InterviewLocked``: the server enforces the end, the page only mirrors it.
Submissions queued before the end are graded as usual. The coach's
``interview_assess`` (notes, rubric, recommendation) works during and after.

Every refusal is an ``InterviewError`` whose message is for the person who
made the request; its class places it in the web's error tree, which
decides its HTTP answer (web/errors.py).
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from web.accounts.roles import is_coach
from web.challenges.models import Challenge
from web.errors import Conflict, NotFound, Refused, Throttled
from web.interviews import selectors
from web.interviews.models import (
    HINT_PENALTY_DEFAULT,
    Criterion,
    HiddenFeedback,
    HintPolicy,
    Interview,
    InterviewChallenge,
    InterviewSubmission,
    InterviewTemplate,
    Recommendation,
    RubricScore,
    Snapshot,
    State,
)
from web.ratelimit import window_wait
from web.submissions.errors import SubmissionRejected
from web.submissions.models import Submission
from web.submissions.services.intake import code_clean, submission_create

DURATION_MIN_MINUTES = 10
DURATION_MAX_MINUTES = 180
DURATION_DEFAULT_MINUTES = 30
MAX_CHALLENGES = 8
# The page autosaves every 3 s when the code changed; 30 a minute leaves room
# for switching challenges, and a client posting faster gets 429, not rows.
SNAPSHOTS_PER_MINUTE = 30
NOTES_MAX_CHARS = 20_000
COMMENT_MAX_CHARS = 500
SCORE_RANGE = range(1, 5)
# A penalty above a challenge's whole score would say nothing more.
HINT_PENALTY_MAX = 100


class InterviewError(Refused):
    """A refused request; the message is for the person who made it."""


class InterviewLocked(InterviewError, Conflict):
    """The interview is not running (not started, or over): nothing may change the candidate's work."""


class NotInInterview(InterviewError, NotFound):
    """The challenge named is not one of the interview's: the same as a page that does not exist."""


class SnapshotRateLimited(InterviewError, Throttled):
    """Autosaves come faster than SNAPSHOTS_PER_MINUTE."""


# --- Create ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ChallengePlan:
    """One challenge of an interview or template, in order: the challenge and the minutes planned for it (optional)."""

    challenge: Challenge
    minutes: int | None = None


class InterviewInvalid(InterviewError):
    """A form's fields refused, every refusal at once: ``errors`` is {field: [message, ...]} (``None``: the whole form)."""

    def __init__(self, errors: Mapping[str | None, list[str]]) -> None:
        self.errors = {name: list(messages) for name, messages in errors.items() if messages}
        super().__init__(" ".join(m for messages in self.errors.values() for m in messages))


class FieldErrors:
    """Collects refusals by field, so a form hears all of them at once instead of the first."""

    def __init__(self) -> None:
        self.by_field: dict[str | None, list[str]] = {}

    def add(self, name: str | None, message: str) -> None:
        self.by_field.setdefault(name, []).append(message)

    def raise_any(self) -> None:
        if self.by_field:
            raise InterviewInvalid(self.by_field)


def _plans(items: Sequence[Challenge | ChallengePlan]) -> list[ChallengePlan]:
    return [item if isinstance(item, ChallengePlan) else ChallengePlan(item) for item in items]


def validate_challenges(errors: FieldErrors, plans: Sequence[ChallengePlan], *, minutes_required: bool = False) -> None:
    """The ordered challenges: 1 to MAX_CHALLENGES, each once, published; minutes per challenge in range."""
    if not plans:
        errors.add("challenges", "Choose at least one challenge.")
        return
    if len(plans) > MAX_CHALLENGES:
        errors.add("challenges", f"Choose at most {MAX_CHALLENGES} challenges; these are {len(plans)}.")
    if len({p.challenge.pk for p in plans}) != len(plans):
        errors.add("challenges", "A challenge appears twice; list each once.")
    closed = [p.challenge.slug for p in plans if not p.challenge.published or p.challenge.current_version_id is None]
    if closed:
        errors.add("challenges", f"Not published, so not open for submissions: {', '.join(closed)}.")
    for p in plans:
        if p.minutes is None:
            if minutes_required:
                errors.add("challenges", f"Give the minutes planned for {p.challenge.slug}.")
        elif not 1 <= p.minutes <= DURATION_MAX_MINUTES:
            errors.add("challenges", f"The minutes for {p.challenge.slug} must be between 1 and {DURATION_MAX_MINUTES}, not {p.minutes}.")


def validate_settings(errors: FieldErrors, *, hint_policy: str, hint_penalty: int | None, hidden_feedback: str) -> None:
    if hint_policy not in HintPolicy.values:
        errors.add("hint_policy", f"Unknown hint policy {hint_policy!r}; use one of {', '.join(HintPolicy.values)}.")
    if hint_policy == HintPolicy.PENALTY and (hint_penalty is None or not 1 <= hint_penalty <= HINT_PENALTY_MAX):
        errors.add("hint_penalty", f"With a penalty per hint, give the points it costs: 1 to {HINT_PENALTY_MAX}.")
    elif hint_penalty is not None and not 0 <= hint_penalty <= HINT_PENALTY_MAX:
        errors.add("hint_penalty", f"The penalty per hint is 0 to {HINT_PENALTY_MAX} points.")
    if hidden_feedback not in HiddenFeedback.values:
        errors.add("hidden_feedback", f"Unknown hidden-probe feedback {hidden_feedback!r}; use one of {', '.join(HiddenFeedback.values)}.")


def interview_validate(
    coach: AbstractBaseUser,
    *,
    candidate_username: str,
    challenges: Sequence[Challenge | ChallengePlan],
    duration_minutes: int | None,
    hint_policy: str = HintPolicy.ON_REQUEST,
    hint_penalty: int | None = HINT_PENALTY_DEFAULT,
    hidden_feedback: str = HiddenFeedback.SUMMARY,
    template: InterviewTemplate | None = None,
) -> AbstractBaseUser:
    """Check every field of a new interview and refuse with all the problems at once; the candidate if none.

    ``InterviewInvalid.errors`` names each problem's field (candidate,
    challenges, duration_minutes, hint_policy, hint_penalty, hidden_feedback).
    """
    if not is_coach(coach):
        raise InterviewError("Only coaches can run mock interviews.")
    errors = FieldErrors()
    username = (candidate_username or "").strip()
    candidate = None
    if not username:
        errors.add("candidate", "Name the candidate: their username.")
    else:
        candidate = get_user_model().objects.filter(username=username, is_active=True).first()
        if candidate is None:
            errors.add("candidate", f"No active user {username!r}; the candidate must have an account.")
        elif candidate.pk == coach.pk:
            errors.add("candidate", "You cannot interview yourself; name the candidate's username.")
    if duration_minutes is None:
        errors.add("duration_minutes", f"Give the duration in minutes ({DURATION_MIN_MINUTES} to {DURATION_MAX_MINUTES}).")
    elif not DURATION_MIN_MINUTES <= int(duration_minutes) <= DURATION_MAX_MINUTES:
        errors.add("duration_minutes", f"The duration must be between {DURATION_MIN_MINUTES} and {DURATION_MAX_MINUTES} minutes.")
    validate_challenges(errors, _plans(challenges))
    validate_settings(errors, hint_policy=hint_policy, hint_penalty=hint_penalty, hidden_feedback=hidden_feedback)
    if template is not None and template.coach_id != coach.pk:
        errors.add(None, "That template is another coach's.")
    errors.raise_any()
    assert candidate is not None
    return candidate


def interview_create(
    coach: AbstractBaseUser,
    *,
    candidate_username: str,
    challenges: Sequence[Challenge | ChallengePlan],
    duration_minutes: int | None,
    hint_policy: str = HintPolicy.ON_REQUEST,
    hint_penalty: int | None = HINT_PENALTY_DEFAULT,
    hidden_feedback: str = HiddenFeedback.SUMMARY,
    template: InterviewTemplate | None = None,
) -> Interview:
    """A scheduled interview with its private link's token; the clock starts when the candidate opens it.

    Refused, with every problem at once, by ``interview_validate``.
    """
    candidate = interview_validate(
        coach, candidate_username=candidate_username, challenges=challenges, duration_minutes=duration_minutes,
        hint_policy=hint_policy, hint_penalty=hint_penalty, hidden_feedback=hidden_feedback, template=template,
    )  # fmt: skip
    plans = _plans(challenges)
    assert duration_minutes is not None
    with transaction.atomic():
        interview = Interview.objects.create(
            coach=coach, candidate=candidate, duration_minutes=int(duration_minutes), token=secrets.token_urlsafe(32),
            hint_policy=hint_policy, hint_penalty=HINT_PENALTY_DEFAULT if hint_penalty is None else hint_penalty,
            hidden_feedback=hidden_feedback, template=template,
        )  # fmt: skip
        InterviewChallenge.objects.bulk_create(
            InterviewChallenge(interview=interview, challenge=p.challenge, position=i, minutes=p.minutes) for i, p in enumerate(plans, start=1)
        )
    return interview


# --- The clock -------------------------------------------------------------------------


def require_candidate(interview: Interview, user: AbstractBaseUser) -> None:
    """Refuse anyone but the interview's candidate (every candidate-side service starts here: autosave, keys, focus)."""
    if interview.candidate_id != user.pk:
        raise InterviewError("This is not your interview.")


def interview_open(interview: Interview, user: AbstractBaseUser) -> Interview:
    """The candidate opened the link: start the clock if it has not started (and the coach has not ended it)."""
    require_candidate(interview, user)
    if interview.started_at is None and interview.ended_at is None:
        now = timezone.now()
        # Conditional, so two tabs opened at once start the clock once.
        Interview.objects.filter(pk=interview.pk, started_at__isnull=True).update(started_at=now)
        interview.refresh_from_db(fields=["started_at"])
    return interview


def _locked_message(interview: Interview) -> str:
    if interview.started_at is None and interview.ended_at is None:
        return "The interview has not started; open its page to start the clock."
    if interview.ended_by_coach:
        return "The interviewer ended the interview; your work is saved and can no longer change."
    return "Time is up: the interview is over and your work can no longer change."


def require_live(interview: Interview) -> None:
    """Refuse with InterviewLocked unless the clock runs now: the server's end, whatever the page shows."""
    # Re-read the clock fields: the coach may have ended it since the caller loaded the row.
    interview.refresh_from_db(fields=["started_at", "ended_at"])
    if interview.state(timezone.now()) != State.LIVE:
        raise InterviewLocked(_locked_message(interview))


def interview_end(interview: Interview, user: AbstractBaseUser) -> Interview:
    """The coach ends the interview now; work already queued is still graded."""
    if not may_run(interview, user):
        raise InterviewError("Only the interview's coach can end it.")
    now = timezone.now()
    if interview.state(now) == State.ENDED:
        raise InterviewLocked("The interview has already ended.")
    Interview.objects.filter(pk=interview.pk, ended_at__isnull=True).update(ended_at=now)
    interview.refresh_from_db(fields=["ended_at"])
    return interview


def may_run(interview: Interview, user: AbstractBaseUser) -> bool:
    """Whether ``user`` runs this interview: its coach, or staff."""
    return bool(interview.coach_id == user.pk or getattr(user, "is_staff", False))


def _interview_challenge(interview: Interview, slug: str) -> Challenge:
    item = (
        InterviewChallenge.objects.select_related("challenge", "challenge__current_version")
        .defer("challenge__current_version__files")  # autosaves come every few seconds; none needs the package
        .filter(interview=interview, challenge__slug=slug)
        .first()
    )
    if item is None:
        raise NotInInterview(f"The challenge {slug!r} is not part of this interview.")
    return item.challenge


# --- Runs, submits, autosaves ------------------------------------------------------------


def interview_submission_create(interview: Interview, user: AbstractBaseUser, slug: str, code: str | bytes, kind: str) -> Submission:
    """A Run or Submit during the interview: submission_create's rules, plus the clock."""
    require_candidate(interview, user)
    challenge = _interview_challenge(interview, slug)
    require_live(interview)
    with transaction.atomic():
        submission = submission_create(user, challenge, code, kind)
        InterviewSubmission.objects.create(interview=interview, submission=submission)
        # The code sent is a point on the timeline too, even if no autosave caught it.
        _snapshot_store(interview, challenge, submission.code, submission.created_at)
    return submission


@dataclass(frozen=True)
class SnapshotSaved:
    snapshot: Snapshot
    created: bool  # False: the code equals the latest snapshot's, nothing was stored


def _snapshot_store(interview: Interview, challenge: Challenge, code: str, now: Any) -> SnapshotSaved:
    latest = selectors.latest_snapshot(interview, challenge.pk)
    if latest is not None and latest.code == code:
        return SnapshotSaved(latest, False)
    return SnapshotSaved(Snapshot.objects.create(interview=interview, challenge=challenge, code=code, created_at=now), True)


def snapshot_text(code: str | bytes) -> str:
    """The submissions' rules for code (size, UTF-8, no NUL byte), except that an empty editor may be saved."""
    try:
        return code_clean(code, allow_empty=True)
    except SubmissionRejected as exc:
        raise InterviewError(str(exc)) from None


def snapshot_save(interview: Interview, user: AbstractBaseUser, slug: str, code: str | bytes) -> SnapshotSaved:
    """Autosave the candidate's code for one challenge; unchanged code stores nothing.

    Empty code is allowed (the candidate may clear the editor); the size
    limit is the submissions'. The rate limit counts stored snapshots, so a
    client that repeats the same code costs reads only.
    """
    require_candidate(interview, user)
    challenge = _interview_challenge(interview, slug)
    text = snapshot_text(code)
    require_live(interview)
    now = timezone.now()
    wait = window_wait(Snapshot.objects.filter(interview=interview), SNAPSHOTS_PER_MINUTE, now)
    if wait is not None:
        latest = selectors.latest_snapshot(interview, challenge.pk)
        if latest is not None and latest.code == text:
            return SnapshotSaved(latest, False)
        raise SnapshotRateLimited(f"Autosaving too often ({SNAPSHOTS_PER_MINUTE} a minute); try again in {wait} s.", wait)
    return _snapshot_store(interview, challenge, text, now)


# --- The interviewer's assessment -------------------------------------------------------


def interview_assess(
    interview: Interview,
    user: AbstractBaseUser,
    *,
    notes: str | None = None,
    rubric: Mapping[str, Mapping[str, Any]] | None = None,
    recommendation: str | None = None,
) -> Interview:
    """Save what the coach gave: notes, rubric scores ({criterion: {score, comment}}), the recommendation.

    Everything is validated before anything is written, so a bad field
    changes nothing. A recommendation of "" clears it.
    """
    if not may_run(interview, user):
        raise InterviewError("Only the interview's coach can assess it.")
    if notes is not None:
        if not isinstance(notes, str):
            raise InterviewError("Notes must be text.")
        if len(notes) > NOTES_MAX_CHARS:
            raise InterviewError(f"Notes are limited to {NOTES_MAX_CHARS} characters; these are {len(notes)}.")
    if recommendation is not None and recommendation != "" and recommendation not in Recommendation.values:
        raise InterviewError(f"Unknown recommendation {recommendation!r}; use one of {', '.join(Recommendation.values)}.")
    rows: list[tuple[str, int, str]] = []
    for criterion, entry in (rubric or {}).items():
        if criterion not in Criterion.values:
            raise InterviewError(f"Unknown rubric criterion {criterion!r}; use one of {', '.join(Criterion.values)}.")
        if not isinstance(entry, Mapping):
            raise InterviewError(f"Rubric {criterion}: send {{'score': 1-4, 'comment': '...'}}.")
        score = entry.get("score")
        if isinstance(score, str) and score.strip().isdigit():
            score = int(score)
        if isinstance(score, bool) or not isinstance(score, int) or score not in SCORE_RANGE:
            raise InterviewError(f"Rubric {criterion}: the score must be a whole number from 1 to 4, not {score!r}.")
        comment = entry.get("comment", "") or ""
        if not isinstance(comment, str):
            raise InterviewError(f"Rubric {criterion}: the comment must be text.")
        if len(comment) > COMMENT_MAX_CHARS:
            raise InterviewError(f"Rubric {criterion}: comments are limited to {COMMENT_MAX_CHARS} characters.")
        rows.append((criterion, score, comment.strip()))

    with transaction.atomic():
        fields = []
        if notes is not None:
            interview.notes = notes
            fields.append("notes")
        if recommendation is not None:
            interview.recommendation = recommendation
            fields.append("recommendation")
        if fields:
            interview.save(update_fields=fields)
        for criterion, score, comment in rows:
            RubricScore.objects.update_or_create(interview=interview, criterion=criterion, defaults={"score": score, "comment": comment})
    return interview
