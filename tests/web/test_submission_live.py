"""Live progress on the web side: services/live.py stores the grader's lines, the status JSON shows them as the policy allows.

The writer is a thread with its own database connection, as in the worker:
these tests use the transactional database so that it sees the rows.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from grader.live import ProbeProgress
from tests.fake_backend import FakeBackend, raised
from web.challenges.models import Challenge
from web.submissions.models import Status, Submission
from web.submissions.services import live as live_service
from web.submissions.services.grading import submission_grade
from web.submissions.services.live import live_progress

from .conftest import reads_no_package_files

CODE = "def add(a, b):\n    return a + b\n"


def running(user: User, challenge: Challenge, *, kind: str = "submit", attempts: int = 1, **fields: Any) -> Submission:
    assert challenge.current_version is not None
    return Submission.objects.create(
        user=user, challenge=challenge, version=challenge.current_version, kind=kind, code=CODE, status=Status.RUNNING, attempts=attempts,
        **fields,
    )  # fmt: skip


def stored_live(pk: int, probes: int) -> dict[str, Any]:
    """The row's live lines once they hold ``probes`` probes (the writer is a thread: wait for it, generously)."""
    deadline = time.monotonic() + 30
    while True:
        live = Submission.objects.values_list("live", flat=True).get(pk=pk)
        if len(live.get("probes") or []) >= probes or time.monotonic() > deadline:
            return dict(live)
        time.sleep(0.02)


def progress(name: str, finished: int, outcome: str = "passed", status: str = "ok", total: int = 3) -> ProbeProgress:
    return ProbeProgress(name, finished, total, outcome, status, time.time())


# --- the service ------------------------------------------------------------------------


def test_each_probe_is_stored_on_the_running_submission_in_the_order_it_finished(
    transactional_db: Any, user: User, challenge: Challenge
) -> None:
    submission = running(user, challenge)
    with live_progress(submission.pk, 1) as on_progress:
        on_progress(progress("positives", 1))
        first = stored_live(submission.pk, 1)
        on_progress(progress("negatives", 2, "failed", "error"))
        on_progress(progress("small", 3, "done"))
        both = stored_live(submission.pk, 3)
    assert first["total"] == 3 and [p["name"] for p in first["probes"]] == ["positives"]
    assert [(p["name"], p["outcome"], p["status"], p["finished"]) for p in both["probes"]] == [
        ("positives", "passed", "ok", 1),
        ("negatives", "failed", "error", 2),
        ("small", "done", "ok", 3),
    ]
    assert all(isinstance(p["at"], float) for p in both["probes"])


def test_a_write_never_lands_on_a_submission_this_claim_no_longer_holds(transactional_db: Any, user: User, challenge: Challenge) -> None:
    submission = running(user, challenge, attempts=2)  # claimed again since: attempt 1's lines are stale
    assert not live_service.live_write(submission.pk, 1, {"total": 1, "probes": [{"name": "small"}]})
    Submission.objects.filter(pk=submission.pk).update(status=Status.DONE)
    assert not live_service.live_write(submission.pk, 2, {"total": 1, "probes": [{"name": "small"}]})
    assert Submission.objects.get(pk=submission.pk).live == {}


def test_a_failing_write_is_logged_and_the_grading_goes_on(
    transactional_db: Any, user: User, challenge: Challenge, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    submission = running(user, challenge)
    tried: list[int] = []

    def locked(submission_id: int, attempt: int, live: dict[str, Any]) -> bool:
        tried.append(len(live["probes"]))
        raise RuntimeError("database is locked")

    monkeypatch.setattr(live_service, "live_write", locked)
    with live_progress(submission.pk, 1) as on_progress:
        on_progress(progress("positives", 1))
        deadline = time.monotonic() + 30
        while not tried and time.monotonic() < deadline:
            time.sleep(0.02)
    assert tried == [1]
    assert "live progress could not be stored" in caplog.text


def test_grading_passes_the_probes_to_the_store_and_the_claim_starts_empty(
    transactional_db: Any, user: User, challenge: Challenge, fake_sandbox: FakeBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine = "def add(a, b):\n    return b + a\n"
    fake_sandbox.script(mine, negatives=raised("ValueError", "no negatives"))
    assert challenge.current_version is not None
    submission = Submission.objects.create(
        user=user, challenge=challenge, version=challenge.current_version, kind="submit", code=mine, live={"total": 9, "probes": [{"name": "old"}]}
    )
    seen_at_claim: list[dict[str, Any]] = []
    writes: list[dict[str, Any]] = []
    real_write = live_service.live_write

    def recording(submission_id: int, attempt: int, live: dict[str, Any]) -> bool:
        seen_at_claim.append(Submission.objects.values_list("live", flat=True).get(pk=submission_id))
        writes.append(live)
        return real_write(submission_id, attempt, live)

    monkeypatch.setattr(live_service, "live_write", recording)
    # The fake answers all at once; hold the writer's last chance open by making the result wait for the first write.
    real_grade = live_service.live_progress

    def grading_waits_for_a_write(submission_id: int, attempt: int, **kw: Any) -> Any:
        manager = real_grade(submission_id, attempt, **kw)

        class Waiting:
            def __enter__(self) -> Any:
                callback = manager.__enter__()

                def on_progress(p: ProbeProgress) -> None:
                    callback(p)
                    deadline = time.monotonic() + 30
                    while len(writes) < 1 and time.monotonic() < deadline:
                        time.sleep(0.01)

                return on_progress

            def __exit__(self, *exc: Any) -> Any:
                return manager.__exit__(*exc)

        return Waiting()

    monkeypatch.setattr("web.submissions.services.grading.live_progress", grading_waits_for_a_write)
    assert submission_grade(submission.pk).state == "graded"
    assert seen_at_claim[0] == {}  # the claim emptied the old lines
    assert writes[0]["total"] == 2 and writes[0]["probes"][0]["name"] == "positives"
    final = Submission.objects.get(pk=submission.pk)
    assert final.status == Status.DONE and [p["passed"] for p in final.probes] == [True, False]


# --- the status JSON ---------------------------------------------------------------------

HOSTILE_LIVE = {
    "total": 3,
    "probes": [
        {"name": "positives", "outcome": "passed", "status": "ok", "finished": 1, "at": 1.5, "message": "expected [3, 30, 15]"},
        {"name": "negatives", "outcome": "failed", "status": "error: the hidden input was -7", "finished": 2, "at": 2.5},
    ],
}


def status_json(client: Client, submission: Submission) -> dict[str, Any]:
    response = client.get(reverse("submission-status", args=[submission.pk]))
    assert response.status_code == 200
    return dict(response.json())


def test_a_running_submit_shows_each_finished_probe_by_name_and_outcome_only(alice: Client, user: User, challenge: Challenge) -> None:
    data = status_json(alice, running(user, challenge, live=HOSTILE_LIVE))
    assert data["live"] == {
        "total": 3, "finished": 2, "passed": 1, "failed": 1,
        "probes": [{"name": "positives", "outcome": "passed"}, {"name": "negatives", "outcome": "failed"}],
    }  # fmt: skip
    assert "hidden input" not in str(data) and "expected [3" not in str(data)


def test_polling_a_running_submission_costs_what_polling_a_finished_one_does(alice: Client, user: User, challenge: Challenge) -> None:
    # The page polls every 250 ms while it runs: the lines come with the row, no query and no package file more.
    submission = running(user, challenge, live=HOSTILE_LIVE)
    with reads_no_package_files(max_queries=4):
        assert status_json(alice, submission)["live"]["finished"] == 2


def test_a_running_run_also_shows_each_probes_status(alice: Client, user: User, challenge: Challenge) -> None:
    live = {"total": 1, "probes": [{"name": "small", "outcome": "failed", "status": "timeout", "finished": 1, "at": 1.0}]}
    data = status_json(alice, running(user, challenge, kind="run", live=live))
    assert data["live"]["probes"] == [{"name": "small", "outcome": "failed", "status": "timeout"}]
    assert (data["live"]["finished"], data["live"]["total"]) == (1, 1)


@pytest.mark.parametrize("status", [Status.QUEUED, Status.DONE])
def test_only_a_running_submission_has_live_lines(alice: Client, user: User, challenge: Challenge, status: str) -> None:
    submission = running(user, challenge, live=HOSTILE_LIVE)
    Submission.objects.filter(pk=submission.pk).update(status=status)
    assert status_json(alice, submission)["live"] is None


def test_the_api_gives_the_same_live_lines(client: Client, user: User, challenge: Challenge) -> None:
    submission = running(user, challenge, live=HOSTILE_LIVE)
    client.force_login(user)
    data = client.get(reverse("api-submission", args=[submission.pk])).json()
    assert data["live"]["probes"] == [{"name": "positives", "outcome": "passed"}, {"name": "negatives", "outcome": "failed"}]
