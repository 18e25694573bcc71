"""Creating, grading and failing submissions, and the hint ladder: web/submissions/services/ (intake, grading, sweeper, reveal)."""

from __future__ import annotations

import threading
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from kombu.exceptions import OperationalError

from grader.errors import PlatformError
from tests.fake_backend import FakeBackend, ok
from web.challenges.models import Challenge
from web.challenges.services import challenge_sync_from_dir
from web.submissions.errors import HintUnavailable, SubmissionRejected, TooManyPending
from web.submissions.models import HintReveal, Status, Submission
from web.submissions.services.grading import PLATFORM_FAILURE_MESSAGE, submission_grade, submission_grade_failed
from web.submissions.services.intake import code_clean, submission_create
from web.submissions.services.reveal import hint_reveal
from web.submissions.services.sweeper import submission_requeue_stale
from web.submissions.tasks import grade_submission as grade_task

from .conftest import ALL_SUM_HINTS, CORRECT, SUM_WRONG

CODE = CORRECT


ZEROS_PROBE = '''

@probe(category="correctness", hints=["sum"])
def zeros(solution):
    """Zero plus zero."""
    return solution.add(0, 0)
'''


def add_hidden_probe(package_root: Path, fake: FakeBackend) -> None:
    """A new version of the package, one its hidden probes tell apart: it adds the probe "zeros"."""
    hidden = package_root / "basics" / "add-two" / "probes" / "hidden.py"
    hidden.write_text(hidden.read_text() + ZEROS_PROBE)
    fake.answers["zeros"] = 0
    challenge_sync_from_dir(package_root)


def probe_names(job: dict[str, Any]) -> list[str]:
    return [p["name"] for p in job["probes_list"]]


def make_submission(user: User, challenge: Challenge, **fields: Any) -> Submission:
    assert challenge.current_version is not None
    values = {"kind": "submit", "code": CODE, "version": challenge.current_version, **fields}
    return Submission.objects.create(user=user, challenge=challenge, **values)


# --- code_clean ---------------------------------------------------------------------


def test_code_clean_accepts_text_and_utf8_bytes() -> None:
    assert code_clean(CODE) == CODE
    assert code_clean("x = 'ü'\n".encode()) == "x = 'ü'\n"


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("", "empty"),
        ("   \n\t", "empty"),
        (b"\xff\xfe x = 1", "not valid UTF-8"),
        ("x = '\ud800'", "not valid UTF-8"),
        ("a" * (10 * 1024 * 1024), "10.0 MB; the limit is 256 KiB"),
        ("x = 1\x00", "NUL"),
    ],
)
def test_code_clean_refuses_with_a_clear_message(raw: str | bytes, message: str) -> None:
    with pytest.raises(SubmissionRejected, match=message):
        code_clean(raw)


# --- submission_create ------------------------------------------------------------


def test_create_saves_queued_on_current_version_and_queues_after_commit(
    user: User, challenge: Challenge, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    queued: list[int] = []
    monkeypatch.setattr(grade_task, "apply_async", lambda args, **kwargs: queued.append(args[0]))

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        submission = submission_create(user, challenge, CODE, "run")
    assert queued == []  # nothing is sent before the row is committed
    for callback in callbacks:
        callback()

    assert queued == [submission.pk]
    assert submission.status == Status.QUEUED
    assert submission.version_id == challenge.current_version_id
    assert submission.code == CODE


def test_create_then_eager_task_grades_it(
    user: User, challenge: Challenge, fake_sandbox: FakeBackend, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        submission = submission_create(user, challenge, CODE.encode(), "submit")

    submission.refresh_from_db()
    assert submission.status == Status.DONE and submission.verdict == "accepted" and submission.score == 100.0
    (job,) = fake_sandbox.runs_of(CODE)
    assert job["public"] is False and [p["name"] for p in job["probes_list"]] == ["positives", "negatives"]


def test_create_refuses_bad_kind_and_bad_code(user: User, challenge: Challenge) -> None:
    with pytest.raises(SubmissionRejected, match="Unknown kind"):
        submission_create(user, challenge, CODE, "explode")
    with pytest.raises(SubmissionRejected, match="empty"):
        submission_create(user, challenge, "  ", "run")
    assert not Submission.objects.exists()


def test_create_refuses_unpublished_challenge(user: User, challenge: Challenge) -> None:
    challenge.published = False
    with pytest.raises(SubmissionRejected, match="not open"):
        submission_create(user, challenge, CODE, "run")


def test_create_limits_unfinished_submissions(user: User, challenge: Challenge, settings: Any) -> None:
    settings.SUBMISSIONS_MAX_PENDING = 2
    make_submission(user, challenge)
    make_submission(user, challenge, status=Status.RUNNING, started_at=timezone.now())
    make_submission(user, challenge, status=Status.DONE)

    with pytest.raises(TooManyPending):
        submission_create(user, challenge, CODE, "run")


def test_broker_down_leaves_the_submission_queued_for_the_sweeper(
    user: User, challenge: Challenge, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any, settings: Any,
    fake_sandbox: FakeBackend,
) -> None:  # fmt: skip
    def broker_down(*args: Any, **kwargs: Any) -> None:
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    with monkeypatch.context() as patch:
        patch.setattr(grade_task, "apply_async", broker_down)
        with django_capture_on_commit_callbacks(execute=True):
            submission = submission_create(user, challenge, CODE, "run")

    submission.refresh_from_db()
    assert submission.status == Status.QUEUED, "saved, not lost and not failed: the broker being down is not the candidate's problem"
    assert fake_sandbox.starts == 0
    # The broker is back; once the submission has waited long enough the sweeper sends it again.
    Submission.objects.filter(pk=submission.pk).update(queued_at=timezone.now() - timedelta(seconds=settings.GRADING_QUEUED_SECONDS + 1))
    assert submission_requeue_stale() == [submission.pk]
    submission.refresh_from_db()
    assert submission.status == Status.DONE and submission.verdict == "accepted"


@pytest.mark.parametrize(("queues", "expected"), [({}, None), ({"python": "quick"}, "quick"), ({"torch": "heavy"}, None)])
def test_gradings_are_routed_by_runtime_profile(
    user: User, challenge: Challenge, settings: Any, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any,
    queues: dict[str, str], expected: str | None,
) -> None:  # fmt: skip
    settings.GRADING_QUEUES = queues
    sent: list[dict[str, Any]] = []
    monkeypatch.setattr(grade_task, "apply_async", lambda args, **kwargs: sent.append({"args": args, **kwargs}))
    with django_capture_on_commit_callbacks(execute=True):
        submission = submission_create(user, challenge, CODE, "run")
    # The fixture's 60 s wall clock sizes the task's time limits no higher than the settings' floor.
    floor = (float(settings.CELERY_TASK_SOFT_TIME_LIMIT), float(settings.CELERY_TASK_TIME_LIMIT))
    assert sent == [{"args": (submission.pk,), "queue": expected, "soft_time_limit": floor[0], "time_limit": floor[1]}]


# --- submission_grade: idempotency and versions ----------------------------------


def test_grade_stores_the_result_and_timestamps(user: User, challenge: Challenge, fake_sandbox: FakeBackend) -> None:
    submission = make_submission(user, challenge, kind="run", code=SUM_WRONG)

    outcome = submission_grade(submission.pk)

    submission.refresh_from_db()
    assert outcome.state == "graded"
    assert (submission.status, submission.verdict, submission.score) == (Status.DONE, "wrong_answer", 0.0)
    assert submission.categories == {"correctness": {"score": 0.0, "passed": 0, "total": 1}}
    (probe,) = submission.probes
    assert (probe["name"], probe["passed"], probe["observation"], probe["expected"]) == ("small", False, 6, 5)
    assert submission.hints == [{**hint, "probes": ["small"]} for hint in ALL_SUM_HINTS]  # each names the failing probe it is about
    assert submission.attempts == 1
    assert submission.started_at is not None and submission.finished_at is not None
    assert submission.finished_at >= submission.started_at
    (job,) = fake_sandbox.runs_of(SUM_WRONG)
    assert job["public"] is True  # a Run grades the public probes


def test_grading_twice_stores_one_result(user: User, challenge: Challenge, fake_sandbox: FakeBackend) -> None:
    submission = make_submission(user, challenge)

    first = submission_grade(submission.pk)
    finished_at = Submission.objects.get(pk=submission.pk).finished_at
    fake_sandbox.script(CODE, positives=ok([0, 0, 0]))  # a second grading would now fail
    second = submission_grade(submission.pk)

    submission.refresh_from_db()
    assert (first.state, second.state) == ("graded", "already_done")
    assert len(fake_sandbox.runs_of(CODE)) == 1
    assert submission.verdict == "accepted" and submission.finished_at == finished_at and submission.attempts == 1


def test_finished_submission_is_left_unchanged_by_every_path(user: User, challenge: Challenge, fake_sandbox: FakeBackend) -> None:
    submission = make_submission(user, challenge)
    submission_grade(submission.pk)
    before = Submission.objects.filter(pk=submission.pk).values().get()

    grade_task.delay(submission.pk)
    submission_grade_failed(submission.pk)

    assert Submission.objects.filter(pk=submission.pk).values().get() == before


def test_submission_records_and_keeps_the_version_it_was_graded_on(
    user: User, challenge: Challenge, fake_sandbox: FakeBackend, package_root: Path
) -> None:
    old_version = challenge.current_version
    assert old_version is not None
    earlier = make_submission(user, challenge)
    submission_grade(earlier.pk)
    before = Submission.objects.filter(pk=earlier.pk).values().get()

    add_hidden_probe(package_root, fake_sandbox)
    challenge.refresh_from_db()
    later = make_submission(user, challenge)
    submission_grade(later.pk)

    assert challenge.current_version_id != old_version.pk
    assert Submission.objects.filter(pk=earlier.pk).values().get() == before
    assert Submission.objects.get(pk=later.pk).version_id == challenge.current_version_id
    # Each was graded on its own version's probes.
    assert [probe_names(job) for job in fake_sandbox.runs_of(CODE)] == [["positives", "negatives"], ["positives", "negatives", "zeros"]]


def test_queued_submission_is_graded_on_its_own_version_after_a_sync(
    user: User, challenge: Challenge, fake_sandbox: FakeBackend, package_root: Path
) -> None:
    submission = make_submission(user, challenge)
    add_hidden_probe(package_root, fake_sandbox)
    challenge.refresh_from_db()
    assert submission.version_id != challenge.current_version_id

    submission_grade(submission.pk)

    (job,) = fake_sandbox.runs_of(CODE)
    assert probe_names(job) == ["positives", "negatives"]  # the version it was queued on, without "zeros"


# --- submission_grade: workers that die, platforms that fail ----------------------


def test_a_running_submission_of_a_live_worker_is_not_taken(user: User, challenge: Challenge, fake_sandbox: FakeBackend) -> None:
    submission = make_submission(user, challenge, status=Status.RUNNING, started_at=timezone.now(), attempts=1)

    outcome = submission_grade(submission.pk)

    assert outcome.state == "busy" and outcome.retry_after > 0
    assert fake_sandbox.starts == 0


def test_a_stale_running_submission_is_taken_over(user: User, challenge: Challenge, fake_sandbox: FakeBackend, settings: Any) -> None:
    long_ago = timezone.now() - timedelta(seconds=settings.GRADING_STALE_SECONDS + 5)
    submission = make_submission(user, challenge, status=Status.RUNNING, started_at=long_ago, attempts=1)

    outcome = submission_grade(submission.pk)

    submission.refresh_from_db()
    assert outcome.state == "graded"
    assert submission.status == Status.DONE and submission.attempts == 2


def test_a_long_grading_whose_worker_still_beats_is_not_taken_over(
    user: User, challenge: Challenge, fake_sandbox: FakeBackend, settings: Any
) -> None:
    # Claimed long ago, but its worker stamped it a moment ago: slow, not dead.
    long_ago = timezone.now() - timedelta(seconds=settings.GRADING_STALE_SECONDS * 10)
    submission = make_submission(user, challenge, status=Status.RUNNING, started_at=long_ago, heartbeat_at=timezone.now(), attempts=1)

    assert submission_grade(submission.pk).state == "busy"
    assert submission_requeue_stale() == []
    assert fake_sandbox.starts == 0


def test_a_grading_whose_heartbeat_stopped_is_taken_over(user: User, challenge: Challenge, fake_sandbox: FakeBackend, settings: Any) -> None:
    silent_since = timezone.now() - timedelta(seconds=settings.GRADING_STALE_SECONDS + 5)
    submission = make_submission(user, challenge, status=Status.RUNNING, started_at=silent_since, heartbeat_at=silent_since, attempts=1)

    assert submission_requeue_stale() == [submission.pk]
    submission.refresh_from_db()
    assert submission.status == Status.DONE and submission.attempts == 2


@pytest.mark.django_db(transaction=True)  # the heartbeat thread has its own connection: it must see committed rows
def test_the_worker_stamps_its_heartbeat_while_it_grades(user: User, challenge: Challenge, fake_sandbox: FakeBackend, settings: Any) -> None:
    settings.GRADING_HEARTBEAT_SECONDS = 0.05
    submission = make_submission(user, challenge)
    seen: list[Any] = []

    beating: list[threading.Thread] = []

    def grade_slowly() -> None:
        claimed_at = Submission.objects.get(pk=submission.pk).heartbeat_at
        deadline = time.monotonic() + 30
        # Until three distinct stamps were seen: the event itself, polled, with a generous deadline.
        while time.monotonic() < deadline and len(set(seen)) < 3:
            seen.append(Submission.objects.get(pk=submission.pk).heartbeat_at)
            time.sleep(0.02)
        assert claimed_at is not None and min(seen) >= claimed_at
        beating.extend(t for t in threading.enumerate() if t.name == "heartbeat")

    fake_sandbox.script(CODE, during=grade_slowly)
    assert submission_grade(submission.pk).state == "graded"
    assert len(set(seen)) >= 3, "the heartbeat did not move while the grading ran"
    # The grading joined its heartbeat thread before it returned: no stamp can come after the result.
    assert beating and not any(t.is_alive() for t in beating)


def test_a_worker_that_lost_its_claim_does_not_overwrite(user: User, challenge: Challenge, fake_sandbox: FakeBackend) -> None:
    submission = make_submission(user, challenge)

    def taken_over_meanwhile() -> None:
        # Another worker took the (presumed stale) submission and finished it.
        Submission.objects.filter(pk=submission.pk).update(attempts=2, status=Status.DONE, verdict="partial", score=50.0)

    fake_sandbox.script(CODE, during=taken_over_meanwhile)
    outcome = submission_grade(submission.pk)

    submission.refresh_from_db()
    assert outcome.state == "superseded"
    assert (submission.verdict, submission.score) == ("partial", 50.0)


def test_a_submission_that_keeps_killing_workers_is_given_up(user: User, challenge: Challenge, fake_sandbox: FakeBackend, settings: Any) -> None:
    settings.GRADING_MAX_ATTEMPTS = 2
    long_ago = timezone.now() - timedelta(seconds=settings.GRADING_STALE_SECONDS + 5)
    submission = make_submission(user, challenge, status=Status.RUNNING, started_at=long_ago, attempts=2)

    assert submission_grade(submission.pk).state == "given_up"
    submission.refresh_from_db()
    assert submission.verdict == "internal_error" and fake_sandbox.starts == 0


def test_platform_error_hands_the_submission_back_and_propagates(user: User, challenge: Challenge, fake_sandbox: FakeBackend) -> None:
    fake_sandbox.fail_starts(1)
    submission = make_submission(user, challenge)

    with pytest.raises(PlatformError):
        submission_grade(submission.pk)

    submission.refresh_from_db()
    assert submission.status == Status.QUEUED
    assert submission_grade(submission.pk).state == "graded"  # the retry can claim it at once


def test_task_retries_platform_errors_then_succeeds(user: User, challenge: Challenge, fake_sandbox: FakeBackend) -> None:
    fake_sandbox.fail_starts(2)
    submission = make_submission(user, challenge)

    grade_task.apply(args=(submission.pk,), throw=False)

    submission.refresh_from_db()
    assert submission.verdict == "accepted" and submission.attempts == 3
    assert len(fake_sandbox.runs_of(CODE)) == 1  # the third attempt's


def test_task_gives_internal_error_after_the_last_retry(user: User, challenge: Challenge, fake_sandbox: FakeBackend) -> None:
    fake_sandbox.fail_starts(100)
    submission = make_submission(user, challenge)

    result = grade_task.apply(args=(submission.pk,), throw=False)

    assert isinstance(result.result, PlatformError)
    submission.refresh_from_db()
    assert fake_sandbox.starts == 4  # the first try and three retries
    assert submission.status == Status.DONE and submission.verdict == "internal_error"
    assert submission.message == PLATFORM_FAILURE_MESSAGE
    assert submission.score is None


def test_an_unexpected_error_also_ends_in_internal_error(user: User, challenge: Challenge, fake_sandbox: FakeBackend) -> None:
    def bug() -> None:
        raise KeyError("oops")

    fake_sandbox.script(CODE, during=bug)
    submission = make_submission(user, challenge)

    result = grade_task.apply(args=(submission.pk,), throw=False)

    assert isinstance(result.result, KeyError)  # not retried: only platform and database errors are
    submission.refresh_from_db()
    assert submission.verdict == "internal_error" and len(fake_sandbox.runs_of(CODE)) == 1


def test_grading_a_missing_submission_is_a_no_op(db: None, fake_sandbox: FakeBackend) -> None:
    assert submission_grade(123456).state == "missing"


# --- hints ------------------------------------------------------------------------------


@pytest.fixture
def graded_with_hints(user: User, challenge: Challenge, fake_sandbox: FakeBackend) -> Submission:
    submission = make_submission(user, challenge, code=SUM_WRONG)
    submission_grade(submission.pk)
    submission.refresh_from_db()
    return submission


def test_no_hint_is_recorded_as_seen_when_the_result_is_stored(graded_with_hints: Submission) -> None:
    # Nothing is shown unasked, so nothing counts as seen (an interview's "hints used") until the candidate asks.
    assert graded_with_hints.hints and not HintReveal.objects.exists()


def test_hints_are_revealed_one_tier_at_a_time(user: User, graded_with_hints: Submission) -> None:
    with pytest.raises(HintUnavailable, match="tier-1"):
        hint_reveal(user, graded_with_hints, "concept")

    nudge = hint_reveal(user, graded_with_hints, "nudge")
    with pytest.raises(HintUnavailable, match="tier-2"):
        hint_reveal(user, graded_with_hints, "near")
    concept = hint_reveal(user, graded_with_hints, "concept")
    near = hint_reveal(user, graded_with_hints, "near")

    assert (nudge.tier, nudge.text) == (1, "Look at what `add` **returns**.")
    assert (concept.tier, concept.text) == (2, "The `+` operator adds two integers.")
    assert near.text == "`return a + b`"
    assert list(HintReveal.objects.order_by("tier").values_list("hint_id", "submission_id")) == [
        ("nudge", graded_with_hints.pk),
        ("concept", graded_with_hints.pk),
        ("near", graded_with_hints.pk),
    ]


def test_revealing_twice_records_once(user: User, graded_with_hints: Submission) -> None:
    hint_reveal(user, graded_with_hints, "nudge")
    hint_reveal(user, graded_with_hints, "nudge")
    assert HintReveal.objects.filter(hint_id="nudge").count() == 1


def test_only_unlocked_hints_of_ones_own_finished_submission(
    user: User, other_user: User, challenge: Challenge, graded_with_hints: Submission
) -> None:
    with pytest.raises(HintUnavailable, match="did not unlock"):
        hint_reveal(user, graded_with_hints, "negatives")
    with pytest.raises(HintUnavailable, match="not your"):
        hint_reveal(other_user, graded_with_hints, "concept")
    running = make_submission(user, challenge, status=Status.RUNNING)
    with pytest.raises(HintUnavailable, match="finished"):
        hint_reveal(user, running, "concept")


# --- lost tasks ---------------------------------------------------------------------------


def test_requeue_stale_grades_lost_submissions_and_skips_live_ones(
    user: User, challenge: Challenge, fake_sandbox: FakeBackend, settings: Any
) -> None:
    long_ago = timezone.now() - timedelta(seconds=max(settings.GRADING_STALE_SECONDS, settings.GRADING_QUEUED_SECONDS) + 5)
    lost_queued = make_submission(user, challenge)
    Submission.objects.filter(pk=lost_queued.pk).update(created_at=long_ago)
    lost_running = make_submission(user, challenge, status=Status.RUNNING, started_at=long_ago, attempts=1)
    fresh = make_submission(user, challenge)
    done = make_submission(user, challenge, status=Status.DONE, verdict="accepted")
    Submission.objects.filter(pk=done.pk).update(created_at=long_ago)

    requeued = submission_requeue_stale()

    assert requeued == [lost_queued.pk, lost_running.pk]
    statuses = dict(Submission.objects.values_list("pk", "status"))
    assert statuses[lost_queued.pk] == statuses[lost_running.pk] == Status.DONE
    assert statuses[fresh.pk] == Status.QUEUED


def test_a_result_with_non_json_numbers_is_stored_as_strict_json(user: User, challenge: Challenge, fake_sandbox: FakeBackend) -> None:
    # A Run shows the observation, and this one holds what PostgreSQL's json types refuse.
    overflowing = "def add(a, b):\n    return [float('inf'), float('nan')]\n"
    fake_sandbox.script(overflowing, small=ok([float("inf"), float("nan")]))
    submission = make_submission(user, challenge, kind="run", code=overflowing)

    submission_grade(submission.pk)

    submission.refresh_from_db()
    assert submission.verdict == "wrong_answer"
    assert submission.probes[0]["observation"] == ["inf", "nan"]
