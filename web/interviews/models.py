"""A mock interview: who, which challenges, how long; and what happened in it.

``services.interview_create`` makes an Interview (scheduled). The clock
starts when the invited candidate first opens the private link
(``services.interview_open`` sets ``started_at``); it is over at
``started_at + duration`` or when the coach ends it early (``ended_at``),
whichever comes first. While it runs, the candidate's editor autosaves
``Snapshot`` rows, and every Run or Submit made through the interview is a
normal Submission (``web.submissions.services.intake.submission_create``) tied to
the interview by an ``InterviewSubmission`` row, so the submissions app
knows nothing of interviews. The coach's notes, rubric scores
(``RubricScore``) and recommendation live here too and are never shown to
the candidate.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import models

from web.challenges.models import Challenge
from web.submissions.models import Submission


class Recommendation(models.TextChoices):
    # Four points and no middle: the interviewer has to lean one way.
    STRONG_NO = "strong_no", "Strong no"
    NO = "no", "No"
    YES = "yes", "Yes"
    STRONG_YES = "strong_yes", "Strong yes"


class Criterion(models.TextChoices):
    CORRECTNESS = "correctness", "Correctness"
    DEBUGGING = "debugging", "Debugging"
    NUMERICS = "numerics", "Numerics judgement"
    COMMUNICATION = "communication", "Communication"


class State(models.TextChoices):
    SCHEDULED = "scheduled", "Scheduled"
    LIVE = "live", "Live"
    ENDED = "ended", "Ended"


class Interview(models.Model):
    coach = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="interviews_run")
    candidate = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="interviews_taken")
    token = models.CharField(max_length=64, unique=True, help_text="The private link's secret part.")
    duration_minutes = models.PositiveSmallIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True, help_text="When the candidate first opened the link.")
    ended_at = models.DateTimeField(null=True, blank=True, help_text="When the coach ended it early.")
    notes = models.TextField(blank=True, help_text="The interviewer's private notes.")
    recommendation = models.CharField(max_length=16, choices=Recommendation.choices, blank=True)
    challenges = models.ManyToManyField(Challenge, through="InterviewChallenge", related_name="+")

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"interview #{self.pk} of user {self.candidate_id}"

    @property
    def deadline(self) -> datetime | None:
        """When the clock runs out (None until it starts)."""
        return self.started_at + timedelta(minutes=self.duration_minutes) if self.started_at else None

    @property
    def ended_by_coach(self) -> bool:
        """The coach ended it before the clock ran out (or before it started)."""
        deadline = self.deadline
        return self.ended_at is not None and (deadline is None or self.ended_at < deadline)

    def ends_at(self) -> datetime | None:
        """When it ended or will end: the early end if there was one, else the deadline."""
        deadline = self.deadline
        if self.ended_at is not None:
            return min(self.ended_at, deadline) if deadline else self.ended_at
        return deadline

    def state(self, now: datetime) -> State:
        end = self.ends_at()
        if end is not None and now >= end:
            return State.ENDED
        return State.LIVE if self.started_at else State.SCHEDULED

    def remaining_seconds(self, now: datetime) -> int:
        """Whole seconds left on the clock (the full duration before it starts, 0 after the end)."""
        state = self.state(now)
        if state == State.SCHEDULED:
            return self.duration_minutes * 60
        end = self.ends_at()
        if state == State.ENDED or end is None:
            return 0
        return max(0, int((end - now).total_seconds()))


class InterviewChallenge(models.Model):
    interview = models.ForeignKey(Interview, on_delete=models.CASCADE, related_name="items")
    challenge = models.ForeignKey(Challenge, on_delete=models.PROTECT, related_name="+")
    position = models.PositiveSmallIntegerField()

    class Meta:
        ordering = ["position"]
        constraints = [
            models.UniqueConstraint(fields=["interview", "challenge"], name="interview_challenge_once"),
            models.UniqueConstraint(fields=["interview", "position"], name="interview_position_once"),
        ]


class InterviewSubmission(models.Model):
    """A Run or Submit made during the interview (the Submission itself is the submissions app's)."""

    interview = models.ForeignKey(Interview, on_delete=models.CASCADE, related_name="links")
    submission = models.OneToOneField(Submission, on_delete=models.CASCADE, related_name="interview_link")


class Snapshot(models.Model):
    """The candidate's code for one challenge at one moment (autosaved by the page)."""

    interview = models.ForeignKey(Interview, on_delete=models.CASCADE, related_name="snapshots")
    challenge = models.ForeignKey(Challenge, on_delete=models.CASCADE, related_name="+")
    code = models.TextField(blank=True)
    created_at = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["interview", "challenge", "created_at"], name="snapshot_timeline")]


class RubricScore(models.Model):
    interview = models.ForeignKey(Interview, on_delete=models.CASCADE, related_name="rubric")
    criterion = models.CharField(max_length=16, choices=Criterion.choices)
    score = models.PositiveSmallIntegerField(help_text="1 (weak) to 4 (strong).")
    comment = models.CharField(max_length=500, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["interview", "criterion"], name="rubric_once_per_criterion")]


class FocusState(models.TextChoices):
    LOST = "lost", "Left the interview page"
    REGAINED = "regained", "Came back to the interview page"


class FocusReason(models.TextChoices):
    TAB = "tab", "tab hidden or shown"  # Page Visibility API: another tab, minimised
    WINDOW = "window", "window lost or regained focus"  # blur/focus: another window or application


class FocusEvent(models.Model):
    """The candidate's page left or came back (reported by their browser; services: web/interviews/replay.py).

    Only transitions are stored: the page reports "lost" when it stops being
    visible and focused, "regained" when it is both again, so a tab switch,
    which fires both visibilitychange and blur, is one row, not two.
    """

    interview = models.ForeignKey(Interview, on_delete=models.CASCADE, related_name="focus_events")
    state = models.CharField(max_length=8, choices=FocusState.choices)
    reason = models.CharField(max_length=8, choices=FocusReason.choices)
    created_at = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["created_at", "id"]


class TimelineNote(models.Model):
    """A note the interviewer took at one moment of the interview; the free ``Interview.notes`` stays beside it."""

    interview = models.ForeignKey(Interview, on_delete=models.CASCADE, related_name="timeline_notes")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    text = models.CharField(max_length=500)
    created_at = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["created_at", "id"]
