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

Each interview carries its session settings (``SessionSettings``: hint
policy and penalty, hidden-probe detail; session_settings.py applies them).
``InterviewTemplate`` and ``TemplateChallenge`` are the coach's question
bank: an interview without a candidate, with minutes per challenge, that
``bank.template_initial`` turns into a filled-in form.
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


class HintPolicy(models.TextChoices):
    OFF = "off", "Off: no hints"
    ON_REQUEST = "on_request", "On request"
    PENALTY = "penalty", "On request, each hint costs points"


class HiddenFeedback(models.TextChoices):
    # summary: grader.feedback.candidate_view's hidden-probe messages, as on the practice pages.
    SUMMARY = "summary", "Summary (as in practice)"
    # full: the candidate sees hidden probes as the interviewer does (observations, expected values, output).
    FULL = "full", "Full details, as the interviewer sees them"


HINT_PENALTY_DEFAULT = 10


class SessionSettings(models.Model):
    """The session settings an interview and a template share: hint policy, its penalty, hidden-probe detail."""

    hint_policy = models.CharField(max_length=16, choices=HintPolicy.choices, default=HintPolicy.ON_REQUEST)
    hint_penalty = models.PositiveSmallIntegerField(
        default=HINT_PENALTY_DEFAULT, help_text="Points off the challenge's score per revealed hint (hint policy 'penalty')."
    )
    hidden_feedback = models.CharField(max_length=16, choices=HiddenFeedback.choices, default=HiddenFeedback.SUMMARY)

    class Meta:
        abstract = True


class Interview(SessionSettings):
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
    template = models.ForeignKey(
        "InterviewTemplate", on_delete=models.SET_NULL, null=True, blank=True, related_name="interviews", help_text="The template it was made from."
    )

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
    minutes = models.PositiveSmallIntegerField(null=True, blank=True, help_text="The time planned for it (from a template).")

    class Meta:
        ordering = ["position"]
        constraints = [
            models.UniqueConstraint(fields=["interview", "challenge"], name="interview_challenge_once"),
            models.UniqueConstraint(fields=["interview", "position"], name="interview_position_once"),
        ]


class InterviewTemplate(SessionSettings):
    """A coach's reusable interview (the question bank): ordered challenges with minutes each, and the settings."""

    coach = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="interview_templates")
    name = models.CharField(max_length=120)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "id"]
        constraints = [models.UniqueConstraint(fields=["coach", "name"], name="template_name_once_per_coach")]

    def __str__(self) -> str:
        return self.name


class TemplateChallenge(models.Model):
    template = models.ForeignKey(InterviewTemplate, on_delete=models.CASCADE, related_name="items")
    challenge = models.ForeignKey(Challenge, on_delete=models.PROTECT, related_name="+")
    position = models.PositiveSmallIntegerField()
    minutes = models.PositiveSmallIntegerField()

    class Meta:
        ordering = ["position"]
        constraints = [
            models.UniqueConstraint(fields=["template", "challenge"], name="template_challenge_once"),
            models.UniqueConstraint(fields=["template", "position"], name="template_position_once"),
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


class KeyEvent(models.Model):
    """One applied message of the candidate's keystroke stream (web/interviews/keys.py): an edit's ops, or a reset's
    whole text. Kept so the replay can show the code between two autosaves, keystroke by keystroke."""

    class Kind(models.TextChoices):
        EDIT = "edit", "Edit"
        RESET = "reset", "Reset"

    interview = models.ForeignKey(Interview, on_delete=models.CASCADE, related_name="key_events")
    challenge = models.ForeignKey(Challenge, on_delete=models.CASCADE, related_name="+")
    seq = models.PositiveIntegerField(help_text="The document's sequence number after this message.")
    kind = models.CharField(max_length=5, choices=Kind.choices)
    ops = models.JSONField(null=True, blank=True, help_text="An edit's CodeMirror changes, [{from, to, text}], in order.")
    text = models.TextField(blank=True, help_text="A reset's whole text.")
    created_at = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["interview", "challenge", "id"], name="keyevent_timeline")]


class RubricScore(models.Model):
    interview = models.ForeignKey(Interview, on_delete=models.CASCADE, related_name="rubric")
    criterion = models.CharField(max_length=16, choices=Criterion.choices)
    score = models.PositiveSmallIntegerField(help_text="1 (weak) to 4 (strong).")
    comment = models.CharField(max_length=500, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["interview", "criterion"], name="rubric_once_per_criterion")]


class Citation(models.Model):
    """A moment of the interview cited as evidence in one rubric row (web/interviews/evidence.py makes them).

    The rubric row is the interview's criterion (a RubricScore row exists
    only once it is scored; a citation may come first). The moment is named
    by its stable key from web/interviews/moments.py ("submit:123",
    "hint:45", ...), optionally with one probe of a run or submit. Its label,
    time and the probe's outcome are copied as they were when cited, so the
    printed scorecard reads the same later; the interviewer's own words go
    in ``comment``.
    """

    interview = models.ForeignKey(Interview, on_delete=models.CASCADE, related_name="citations")
    criterion = models.CharField(max_length=16, choices=Criterion.choices)
    moment_key = models.CharField(max_length=40, help_text='The moment\'s stable key, e.g. "submit:123" (moments.py).')
    kind = models.CharField(max_length=16, help_text="run, submit, hint, snapshot, ... (the key's first part).")
    moment_at = models.DateTimeField(help_text="When the moment happened.")
    label = models.CharField(max_length=300, help_text="The moment's label when it was cited.")
    challenge_title = models.CharField(max_length=200, blank=True)
    submission = models.ForeignKey(Submission, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    probe = models.CharField(max_length=200, blank=True, help_text="One probe of the run or submit, by name; blank for the whole moment.")
    probe_category = models.CharField(max_length=64, blank=True)
    probe_outcome = models.CharField(max_length=8, blank=True, help_text="failed, passed or fixed (passed after failing earlier).")
    comment = models.CharField(max_length=300, blank=True, help_text="The interviewer's own words.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["moment_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["interview", "criterion", "moment_key", "probe"], name="citation_once_per_row"),
        ]
        indexes = [models.Index(fields=["interview", "criterion"], name="citation_row")]

    def __str__(self) -> str:
        return f"{self.criterion}: {self.moment_key}{' ' + self.probe if self.probe else ''}"


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
