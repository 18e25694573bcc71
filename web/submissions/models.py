"""A candidate's Run or Submit, its grading state and result; and the hints they revealed.

A Submission is created ``queued`` by ``services.intake.submission_create``, moved to
``running`` by the worker that grades it, and to ``done`` with the grader's
result in one write. ``attempts`` counts the starts and doubles as a fencing
token: a worker may only store its result if the submission is still running
under the attempt it started, so a worker that was presumed dead and taken
over cannot overwrite the newer result. ``queued_at`` is when its grading was
last sent to the broker: the sweeper re-sends one whose message seems lost.
``heartbeat_at`` is stamped every few seconds while a worker grades it
(heartbeat.py): a running one whose stamp is old belongs to a dead worker.
A regrade (``services.regrade.submissions_regrade``) puts a done submission back to
queued; ``attempts_base`` then holds the attempts made before it, so the
give-up limit counts the new round only while the fencing token keeps rising.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from web.challenges.models import Challenge, ChallengeVersion


class Kind(models.TextChoices):
    RUN = "run", "Run"  # public probes, observations shown
    SUBMIT = "submit", "Submit"  # hidden probes, the score that counts


class Status(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"


class Verdict(models.TextChoices):
    ACCEPTED = "accepted", "Accepted"
    PARTIAL = "partial", "Partial"
    WRONG_ANSWER = "wrong_answer", "Wrong answer"
    SYNTAX_ERROR = "syntax_error", "Syntax error"
    RULE_VIOLATION = "rule_violation", "Breaks a rule"
    RUNTIME_ERROR = "runtime_error", "Runtime error"
    TIME_LIMIT = "time_limit", "Time limit exceeded"
    MEMORY_LIMIT = "memory_limit", "Memory limit exceeded"
    OUTPUT_LIMIT = "output_limit", "Output limit exceeded"
    INTERNAL_ERROR = "internal_error", "Internal error"
    # The candidate stopped it before it finished (services/cancel.py): no result, no score.
    CANCELLED = "cancelled", "Cancelled"


# A submission the platform failed to grade (retries exhausted) is not the candidate's: it counts against no rate
# limit and in no tally of their runs and submits (issue 28). Rows still being graded count: they may be charged.
CHARGED = ~models.Q(verdict=Verdict.INTERNAL_ERROR)


class Submission(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="submissions")
    challenge = models.ForeignKey(Challenge, on_delete=models.PROTECT, related_name="submissions")
    version = models.ForeignKey(ChallengeVersion, on_delete=models.PROTECT, related_name="submissions", help_text="The version graded.")
    kind = models.CharField(max_length=8, choices=Kind.choices)
    code = models.TextField()
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.QUEUED, db_index=True)
    verdict = models.CharField(max_length=16, choices=Verdict.choices, blank=True)
    score = models.FloatField(null=True, blank=True)
    categories = models.JSONField(default=dict, blank=True)
    probes = models.JSONField(default=list, blank=True)
    hints = models.JSONField(default=list, blank=True, help_text="Hints the failed probes unlocked, all tiers.")
    message = models.TextField(blank=True)
    timings = models.JSONField(default=dict, blank=True)
    live = models.JSONField(default=dict, blank=True, help_text="While it runs: each probe's outcome as it finished (services/live.py).")
    cancel_requested = models.BooleanField(
        default=False, help_text="The candidate asked to stop it while it ran; the worker kills its sandbox (services/cancel.py)."
    )
    attempts = models.PositiveIntegerField(default=0)
    attempts_base = models.PositiveIntegerField(default=0, help_text="Attempts made before the latest regrade.")
    queued_at = models.DateTimeField(null=True, blank=True, help_text="When its grading was last sent to the broker.")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True, help_text="The grading worker's last sign of life (heartbeat.py).")
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["user", "challenge", "-created_at"], name="submission_history")]

    def __str__(self) -> str:
        return f"#{self.pk} {self.kind} {self.status} {self.verdict}".strip()

    @property
    def is_done(self) -> bool:
        return self.status == Status.DONE


class HintReveal(models.Model):
    """A hint a user asked to see for a challenge (every tier is shown on request only)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="hint_reveals")
    challenge = models.ForeignKey(Challenge, on_delete=models.CASCADE, related_name="hint_reveals")
    submission = models.ForeignKey(
        Submission, on_delete=models.SET_NULL, null=True, blank=True, related_name="hint_reveals",
        help_text="The submission whose result unlocked it.",
    )  # fmt: skip
    hint_id = models.CharField(max_length=100)
    tier = models.PositiveSmallIntegerField()
    revealed_at = models.DateTimeField()

    class Meta:
        ordering = ["revealed_at"]
        constraints = [
            models.UniqueConstraint(fields=["user", "challenge", "hint_id"], name="hintreveal_once_per_user"),
        ]

    def __str__(self) -> str:
        return f"{self.user_id}:{self.challenge_id}:{self.hint_id}"


class GiveUp(models.Model):
    """A user gave up on a challenge: its Learn page opens for them, and their progress says so."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="give_ups")
    challenge = models.ForeignKey(Challenge, on_delete=models.CASCADE, related_name="give_ups")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at"]
        constraints = [
            models.UniqueConstraint(fields=["user", "challenge"], name="giveup_once_per_user"),
        ]

    def __str__(self) -> str:
        return f"{self.user_id} gave up {self.challenge_id}"


class Draft(models.Model):
    """A user's code for a challenge as they left it in the editor: kept by the server, so any device opens it.

    One per user and challenge, not per version: a new version of the
    challenge keeps it (the page says what changed since ``version``).
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="drafts")
    challenge = models.ForeignKey(Challenge, on_delete=models.CASCADE, related_name="drafts")
    code = models.TextField(blank=True)
    version = models.ForeignKey(
        ChallengeVersion, on_delete=models.SET_NULL, null=True, blank=True, related_name="+",
        help_text="The version the code was last edited against.",
    )  # fmt: skip
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "challenge"], name="draft_once_per_user"),
        ]

    def __str__(self) -> str:
        return f"draft of {self.user_id} for {self.challenge_id}"
