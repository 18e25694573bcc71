"""The Learn page of a challenge: who may open it, giving up, and what it shows.

Place in the flow: the challenge page links here once the page is open to the
user (web/challenges/views.py: ``learn_page``, ``give_up``); the content
comes from the grader (grader/learn.py: the package's learn.md and its
shipped wrong solutions with their diffs against the reference).

It opens after an accepted submission of the challenge (any version) or
after giving up, which is recorded (``GiveUp``) and shown on progress; a coach
may always open it. It stays shut while the challenge is part of an interview
of the user's that has not ended (scheduled or live): the lesson walks
through the reference, and giving up must not open it mid-interview.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils import timezone

from grader.learn import Lesson, lesson
from web.accounts.roles import is_coach
from web.challenges.models import Challenge
from web.challenges.services import challenge_package
from web.errors import Conflict
from web.submissions.models import GiveUp, Submission
from web.submissions.progress import ACCEPTED_SUBMIT

# The longest an interview's clock can run: its duration is a PositiveSmallIntegerField of minutes.
LONGEST_INTERVIEW = timedelta(minutes=32767)


@dataclass(frozen=True)
class LearnAccess:
    open: bool
    solved: bool  # an accepted Submit of the challenge, any version
    gave_up: bool
    in_interview: bool  # part of an interview of theirs that has not ended
    reason: str  # why it is shut, in the words the page shows ("" when open)


def learn_access(user: AbstractBaseUser, challenge: Challenge) -> LearnAccess:
    """Whether ``user`` may open the challenge's Learn page, and why not (one query; the challenge page shows it)."""
    now = timezone.now()
    # Interviews that may not have ended: not ended early, and started (if at all) less than the longest a duration
    # can be ago. The exact clock is read in Python, only for these (rarely any).
    maybe_unfinished = _not_ended_early(user, OuterRef("pk"), now).filter(Q(started_at__isnull=True) | Q(started_at__gt=now - LONGEST_INTERVIEW))
    accepted = Submission.objects.filter(ACCEPTED_SUBMIT, user=user, challenge=OuterRef("pk"))
    solved, gave_up, maybe_in_interview = (
        Challenge.objects.filter(pk=challenge.pk)
        .annotate(
            solved=Exists(accepted),
            gave_up=Exists(GiveUp.objects.filter(user=user, challenge=OuterRef("pk"))),
            maybe_in_interview=Exists(maybe_unfinished),
        )
        .values_list("solved", "gave_up", "maybe_in_interview")
        .get()
    )
    in_interview = bool(maybe_in_interview) and _in_unfinished_interview(user, challenge)
    if in_interview:
        return LearnAccess(False, solved, gave_up, True, "This challenge is part of your interview; its lesson opens when the interview has ended.")
    if is_coach(user) or solved or gave_up:
        return LearnAccess(True, solved, gave_up, False, "")
    return LearnAccess(False, solved, gave_up, False, "The lesson opens once you have solved the challenge (an accepted Submit) or given up on it.")


def _not_ended_early(user: AbstractBaseUser, challenge: Challenge | OuterRef, now: datetime) -> QuerySet[Any]:
    """The user's interviews holding ``challenge`` that the coach did not end before ``now``."""
    from web.interviews.models import Interview  # interviews build on challenges, not the other way round

    return Interview.objects.filter(candidate=user, items__challenge=challenge).filter(Q(ended_at__isnull=True) | Q(ended_at__gt=now))


def _in_unfinished_interview(user: AbstractBaseUser, challenge: Challenge) -> bool:
    from web.interviews.models import State

    now = timezone.now()
    return any(interview.state(now) != State.ENDED for interview in _not_ended_early(user, challenge, now))


def give_up(user: AbstractBaseUser, challenge: Challenge) -> GiveUp:
    """Record that ``user`` gave up on ``challenge`` (once; giving up again keeps the first date)."""
    if _in_unfinished_interview(user, challenge):
        raise Conflict("This challenge is part of your interview, which has not ended: you cannot give up on it here.")
    return GiveUp.objects.get_or_create(user=user, challenge=challenge)[0]


def challenge_lesson(challenge: Challenge) -> Lesson:
    """The lesson of the challenge's current version (grader/learn.py)."""
    assert challenge.current_version is not None
    return lesson(challenge_package(challenge.current_version))
