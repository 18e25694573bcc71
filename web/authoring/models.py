"""Validation runs: one press of Validate on one stored challenge version, and its report.

A run is saved (queued) before its Celery task is sent, claimed by the
worker (running), and ends done (with the validator's verdict ``ok`` and its
report lines) or failed (the platform broke: the message says how). The
page polls the run; services.validation_run_status makes sure a run whose
worker vanished ends failed instead of showing "running" forever.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from web.challenges.models import ChallengeVersion


class RunStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class ValidationRun(models.Model):
    version = models.ForeignKey(ChallengeVersion, on_delete=models.CASCADE, related_name="validation_runs")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+")
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.QUEUED)
    ok = models.BooleanField(null=True, help_text="The validator's verdict; empty until done.")
    lines = models.JSONField(default=list, help_text="The report, one line per check, as check_challenges prints it.")
    message = models.TextField(blank=True, help_text="Why a failed run failed.")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True, help_text="The validating worker's last sign of life.")
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["version", "-created_at"], name="validationrun_version_recent")]

    def __str__(self) -> str:
        return f"validation {self.pk} of {self.version}"

    @property
    def finished(self) -> bool:
        return self.status in (RunStatus.DONE, RunStatus.FAILED)

    @property
    def passed(self) -> bool:
        return self.status == RunStatus.DONE and bool(self.ok)

    @property
    def seconds(self) -> float | None:
        if self.started_at is None or self.finished_at is None:
            return None
        return (self.finished_at - self.started_at).total_seconds()
