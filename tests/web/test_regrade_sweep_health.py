"""Regrades (candidate, coach: services, admin, command), the sweeper's deadlines, /healthz and structured logs.

web/submissions/services/ (regrade: submissions_regrade, submission_regrade_own;
sweeper: submission_requeue_stale), web/submissions/views.py (regrade),
web/config/health.py, web/config/logs.py and the two management commands.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from tests.fake_backend import FakeBackend
from web.challenges.models import Challenge
from web.config.logs import ContextFilter, JsonFormatter, submission_context
from web.submissions.models import Status, Submission
from web.submissions.services.grading import PLATFORM_FAILURE_MESSAGE, submission_grade
from web.submissions.services.regrade import submissions_for_regrade, submissions_regrade
from web.submissions.services.sweeper import submission_requeue_stale

from .conftest import CORRECT

CODE = CORRECT


def done_submission(user: User, challenge: Challenge, verdict: str = "accepted", **fields: Any) -> Submission:
    values = {"kind": "submit", "code": CODE, "version": challenge.current_version, "status": Status.DONE, "verdict": verdict,
              "score": 100.0 if verdict == "accepted" else None, "attempts": 1, **fields}  # fmt: skip
    return Submission.objects.create(user=user, challenge=challenge, **values)


# --- the sweeper ----------------------------------------------------------------------------


def test_the_sweeper_resends_a_queued_submission_once_per_deadline(
    user: User, challenge: Challenge, fake_sandbox: FakeBackend, settings: Any
) -> None:
    fake_sandbox.fail_starts(99)  # keep it queued: each grading attempt fails and hands it back
    settings.GRADING_QUEUED_SECONDS = 30
    sub = Submission.objects.create(user=user, challenge=challenge, version=challenge.current_version, kind="run", code=CODE)
    Submission.objects.filter(pk=sub.pk).update(queued_at=timezone.now() - timedelta(seconds=31))
    recent = Submission.objects.create(user=user, challenge=challenge, version=challenge.current_version, kind="run", code=CODE,
                                       queued_at=timezone.now())  # fmt: skip

    assert submission_requeue_stale() == [sub.pk]
    # Sent again just now (queued_at moved): the next sweep leaves both alone.
    assert submission_requeue_stale() == []
    assert Submission.objects.get(pk=recent.pk).status == Status.QUEUED


# --- coach regrades --------------------------------------------------------------------------


def test_regrade_by_ids_grades_finished_submissions_again_and_leaves_others(
    user: User, challenge: Challenge, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any
) -> None:
    failed = done_submission(user, challenge, "internal_error", message=PLATFORM_FAILURE_MESSAGE, attempts=4)
    running = Submission.objects.create(user=user, challenge=challenge, version=challenge.current_version, kind="submit", code=CODE,
                                        status=Status.RUNNING, started_at=timezone.now(), attempts=1)  # fmt: skip

    with django_capture_on_commit_callbacks(execute=True):
        regraded = submissions_regrade(submissions_for_regrade(ids=[failed.pk, running.pk]))

    assert regraded == [failed.pk]
    failed.refresh_from_db()
    assert (failed.status, failed.verdict, failed.score, failed.message) == (Status.DONE, "accepted", 100.0, "2 of 2 probes passed")
    # A new round: attempts keep rising (the fencing token), the give-up limit counts from the regrade.
    assert (failed.attempts, failed.attempts_base) == (5, 4)
    assert Submission.objects.get(pk=running.pk).status == Status.RUNNING
    assert len(fake_sandbox.runs_of(CODE)) == 1


def test_regrade_by_version_and_since(user: User, challenge: Challenge, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any) -> None:
    old = done_submission(user, challenge)
    Submission.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=2))
    new = done_submission(user, challenge)

    since = submissions_for_regrade(since=timezone.now() - timedelta(days=1))
    assert list(since.values_list("pk", flat=True)) == [new.pk]
    on_version = submissions_for_regrade(version=challenge.current_version)
    assert set(on_version.values_list("pk", flat=True)) == {old.pk, new.pk}
    with pytest.raises(ValueError, match="name submissions"):
        submissions_for_regrade()


def test_regrade_command_selects_by_version_and_refuses_unclear_input(
    user: User, challenge: Challenge, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any
) -> None:
    sub = done_submission(user, challenge)
    version = challenge.current_version
    assert version is not None
    out = io.StringIO()
    call_command("regrade_submissions", "--challenge-version", f"{challenge.slug}@{version.version[:8]}", "--dry-run", stdout=out)
    assert out.getvalue().strip() == f"would regrade 1 submission(s): {sub.pk}"

    with pytest.raises(CommandError, match="name what to regrade"):
        call_command("regrade_submissions")
    with pytest.raises(CommandError, match="no version of"):
        call_command("regrade_submissions", "--challenge-version", f"{challenge.slug}@ffffffffff")
    with pytest.raises(CommandError, match="not a date"):
        call_command("regrade_submissions", "--since", "last tuesday")

    out = io.StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("regrade_submissions", str(sub.pk), stdout=out)
    assert f"regrading 1 submission(s): {sub.pk}" in out.getvalue()
    assert len(fake_sandbox.runs_of(CODE)) == 1


def test_admin_actions_regrade_a_selection_and_a_version(
    user: User, challenge: Challenge, fake_sandbox: FakeBackend, client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    admin_user = User.objects.create_superuser("coach", password="pw-coach-12345")
    client.force_login(admin_user)
    sub = done_submission(user, challenge, "internal_error")

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("admin:submissions_submission_changelist"), {"action": "regrade_selected", "_selected_action": [sub.pk]}, follow=True
        )
    assert response.status_code == 200
    assert "Regrading 1 submission(s)" in response.content.decode()
    assert Submission.objects.get(pk=sub.pk).verdict == "accepted"

    version = challenge.current_version
    assert version is not None
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("admin:challenges_challengeversion_changelist"), {"action": "regrade_submissions", "_selected_action": [version.pk]}, follow=True
        )
    assert "Regrading 1 submission(s)" in response.content.decode()
    assert len(fake_sandbox.runs_of(CODE)) == 2


# --- the candidate's regrade -------------------------------------------------------------------


def test_a_candidate_regrades_a_platform_failure_from_its_payload(
    alice: Client, user: User, other_user: User, challenge: Challenge, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any
) -> None:
    failed = done_submission(user, challenge, "internal_error", message=PLATFORM_FAILURE_MESSAGE)
    graded = done_submission(user, challenge, "accepted")
    theirs = done_submission(other_user, challenge, "internal_error")

    payload = alice.get(reverse("submission-status", args=[failed.pk])).json()
    assert "platform failed" in payload["message"] and "Regrade" in payload["message"]
    assert payload["regrade_url"] == reverse("submission-regrade", args=[failed.pk])
    assert alice.get(reverse("submission-status", args=[graded.pk])).json()["regrade_url"] is None

    with django_capture_on_commit_callbacks(execute=True):
        response = alice.post(payload["regrade_url"])
    assert response.status_code == 202
    assert (response.json()["status"], response.json()["regrade_url"]) == ("queued", None)
    assert Submission.objects.get(pk=failed.pk).verdict == "accepted"  # queued after commit, graded (eager Celery in tests)

    refused = alice.post(reverse("submission-regrade", args=[graded.pk]))
    assert refused.status_code == 409 and "Only a submission the platform failed" in refused.json()["error"]
    assert alice.post(reverse("submission-regrade", args=[theirs.pk])).status_code == 404
    assert Client().post(reverse("submission-regrade", args=[failed.pk])).status_code == 401


# --- health ---------------------------------------------------------------------------------


def test_healthz_reports_database_and_broker_with_details_for_staff(client: Client, db: Any) -> None:
    response = client.get(reverse("healthz"))
    assert response.status_code == 200
    assert response.json() == {"ok": True, "checks": {"database": {"ok": True}, "broker": {"ok": True}}}

    client.force_login(User.objects.create_superuser("ops", password="pw-ops-1234567"))
    body = client.get(reverse("healthz")).json()
    assert body["checks"]["database"]["submissions"] == {"queued": 0, "running": 0}
    assert body["checks"]["database"]["vendor"] == "sqlite"


def test_asking_the_workers_needs_staff_or_the_monitors_token(client: Client, db: Any, settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from web.config import health

    asked: list[float] = []
    monkeypatch.setattr(health, "workers_health", lambda timeout=3.0: asked.append(timeout) or {"ok": True, "workers": {"w@h": {"ready": True}}})
    settings.HEALTHZ_TOKEN = "monitor-secret"
    # Anonymous: refused before any broadcast, saying what would be accepted.
    response = client.get(reverse("healthz"), {"workers": "1"})
    assert response.status_code == 403 and "staff session or the HEALTHZ_TOKEN bearer token" in response.json()["error"]
    assert client.get(reverse("healthz"), {"workers": "1"}, HTTP_AUTHORIZATION="Bearer wrong").status_code == 403
    assert asked == []
    # The monitor's token: the workers are asked and the details shown.
    response = client.get(reverse("healthz"), {"workers": "1"}, HTTP_AUTHORIZATION="Bearer monitor-secret")
    assert response.status_code == 200 and response.json()["checks"]["workers"]["workers"] == {"w@h": {"ready": True}}
    # No token configured: no bearer opens it.
    settings.HEALTHZ_TOKEN = ""
    assert client.get(reverse("healthz"), {"workers": "1"}, HTTP_AUTHORIZATION="Bearer ").status_code == 403
    # A staff session.
    client.force_login(User.objects.create_superuser("ops2", password="pw-ops-1234567"))
    assert client.get(reverse("healthz"), {"workers": "1"}).status_code == 200
    assert len(asked) == 2
    # Without ?workers nobody is refused.
    assert Client().get(reverse("healthz")).status_code == 200


def test_healthz_is_503_and_names_an_unreachable_broker(client: Client, db: Any, settings: Any) -> None:
    from tests.services import _free_port, _reset_producer_pool
    from web.config.celery import app

    old = app.conf.broker_url
    app.conf.broker_url = f"redis://127.0.0.1:{_free_port()}/0"  # nothing listens there
    _reset_producer_pool(app)
    try:
        response = client.get(reverse("healthz"))
    finally:
        app.conf.broker_url = old
        _reset_producer_pool(app)
    assert response.status_code == 503
    assert response.json()["checks"]["broker"] == {"ok": False}


def test_health_command_without_workers_fails_loudly(db: Any) -> None:
    # The in-memory test broker has no workers to answer: unhealthy, and it says why.
    err = io.StringIO()
    with pytest.raises(SystemExit) as exit_info:
        call_command("health", "--timeout", "0.5", stdout=io.StringIO(), stderr=err)
    assert exit_info.value.code == 1
    assert "no grading worker answered" in err.getvalue()
    out = io.StringIO()
    call_command("health", "--no-workers", stdout=out)
    assert json.loads(out.getvalue())["ok"] is True


# --- structured logs --------------------------------------------------------------------------


def test_log_lines_are_json_with_the_submission_id_of_the_context() -> None:
    record = logging.LogRecord("sandbox.backend", logging.INFO, __file__, 1, "sandbox started", None, None)
    record.event = "sandbox.started"
    record.sandbox_pid = 123
    with submission_context(42, task_id="t-1"):
        ContextFilter().filter(record)
    line = json.loads(JsonFormatter().format(record))
    assert line["submission_id"] == 42 and line["task_id"] == "t-1"
    assert line["event"] == "sandbox.started" and line["sandbox_pid"] == 123 and line["message"] == "sandbox started"


def test_celerys_own_task_lines_carry_the_submission_and_task_ids() -> None:
    # As Celery's worker logs a grading task it received: outside any submission context.
    received = logging.LogRecord("celery.worker.strategy", logging.INFO, __file__, 1, "Task received", None, None)
    received.data = {"id": "t-9", "name": "submissions.grade_submission", "args": "(24,)", "kwargs": "{}", "eta": None}
    ContextFilter().filter(received)
    assert (received.submission_id, received.task_id) == (24, "t-9")  # type: ignore[attr-defined]
    # Another task's arguments are not a submission id; its task id still is its own.
    sweep = logging.LogRecord("celery.worker.strategy", logging.INFO, __file__, 1, "Task received", None, None)
    sweep.data = {"id": "t-10", "name": "authoring.validate_version", "args": "(3,)"}
    ContextFilter().filter(sweep)
    assert (sweep.submission_id, sweep.task_id) == (None, "t-10")  # type: ignore[attr-defined]


def test_every_grading_event_carries_the_submission_id(user: User, challenge: Challenge, fake_sandbox: FakeBackend,
                                                       caplog: pytest.LogCaptureFixture) -> None:  # fmt: skip
    caplog.handler.addFilter(ContextFilter())
    sub = Submission.objects.create(user=user, challenge=challenge, version=challenge.current_version, kind="run", code=CODE)
    with caplog.at_level(logging.INFO):
        submission_grade(sub.pk)
    events = {r.event: r.submission_id for r in caplog.records if hasattr(r, "event")}  # type: ignore[attr-defined]
    assert events == {"grading.claimed": sub.pk, "grading.result_stored": sub.pk, "grading.graded": sub.pk}


def test_a_result_whose_commit_fails_is_not_logged_as_stored(user: User, challenge: Challenge, fake_sandbox: FakeBackend,
                                                             caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """The commit is what stores a result: a worker whose commit never happens (killed, the database locked) must not say it stored one.

    Its log is what operators and the fault-injection test count; the row stays running, and the sweeper re-queues it.
    """
    from django.db import OperationalError, transaction

    import web.submissions.services.grading as grading

    real_atomic = transaction.atomic

    @contextlib.contextmanager
    def commit_fails(*args: Any, **kwargs: Any) -> Any:
        with real_atomic(*args, **kwargs):
            yield
            raise OperationalError("database is locked")  # rolls the block back, as a commit that never happened

    monkeypatch.setattr(grading.transaction, "atomic", commit_fails)
    sub = Submission.objects.create(user=user, challenge=challenge, version=challenge.current_version, kind="run", code=CODE)
    with caplog.at_level(logging.INFO), pytest.raises(OperationalError):
        submission_grade(sub.pk)
    assert "grading.result_stored" not in {getattr(r, "event", None) for r in caplog.records}
    sub.refresh_from_db()
    assert sub.status == Status.RUNNING and sub.verdict == ""
