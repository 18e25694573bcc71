"""Authoring services: versions, import, the validation run (real sandbox), sandboxed custom checks, publishing, sync."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from grader.package_load import package_from_files, read_package_files
from grader.validate import validation_runs
from web.authoring import services
from web.authoring.draft import Draft, draft_from_package, draft_to_files, new_draft
from web.authoring.models import RunStatus, ValidationRun
from web.authoring.services import AuthoringError
from web.authoring.zipfiles import write_package_zip
from web.challenges.models import Challenge, ChallengeVersion, Source
from web.challenges.selectors import challenge_list
from web.challenges.services import challenge_package, challenge_sync_from_dir
from web.challenges.storage import files_decode, files_encode
from web.submissions.models import Submission

FIXTURE = Path(__file__).parent / "fixtures" / "challenges" / "basics" / "add-two"
CHECKS = b"def same(actual, expected):\n    return actual == expected\n"


def fixture_draft(slug: str = "add-three", **changes: Any) -> Draft:
    """The add-two fixture as a browser draft under another slug."""
    draft = draft_from_package(package_from_files(read_package_files(FIXTURE)))
    return Draft(**{**draft.__dict__, "slug": slug, **changes})


def zip_of(draft: Draft, extra: dict[str, bytes] | None = None) -> bytes:
    return write_package_zip({**draft_to_files(draft), **(extra or {})}, draft.slug)


def validated(version: ChallengeVersion, ok: bool = True) -> ValidationRun:
    now = timezone.now()
    return ValidationRun.objects.create(version=version, status=RunStatus.DONE, ok=ok, started_at=now, finished_at=now)


# --- Create and save: versions ---------------------------------------------------------------


def test_create_makes_an_unpublished_browser_challenge_with_one_version(coach: User) -> None:
    outcome = services.challenge_create(user=coach, draft=fixture_draft())
    challenge = outcome.challenge
    assert (challenge.source, challenge.author, challenge.published, challenge.current_version) == (Source.BROWSER, coach, False, None)
    assert challenge.draft_version == outcome.version and outcome.version.created_by == coach
    assert package_from_files(files_decode(outcome.version.files)).version == outcome.version.version
    assert not challenge_list(user=coach).filter(slug="add-three").exists()


def test_every_changed_save_is_a_new_version_and_an_unchanged_save_creates_nothing(coach: User) -> None:
    first = services.challenge_create(user=coach, draft=fixture_draft()).challenge
    same = services.challenge_save(user=coach, challenge=first, draft=fixture_draft())
    assert not same.created and ChallengeVersion.objects.filter(challenge=first).count() == 1
    changed = services.challenge_save(user=coach, challenge=first, draft=fixture_draft(statement="# New words\n"))
    assert changed.created and changed.version.statement == "# New words\n"
    assert ChallengeVersion.objects.filter(challenge=first).count() == 2
    assert Challenge.objects.get(pk=first.pk).draft_version == changed.version
    # Going back to the first content points the draft at the stored version again, no new row.
    back = services.challenge_save(user=coach, challenge=changed.challenge, draft=fixture_draft())
    assert not back.created and back.version.pk == same.version.pk and ChallengeVersion.objects.filter(challenge=first).count() == 2


def test_a_save_the_grader_rejects_is_refused_with_its_message(coach: User) -> None:
    challenge = services.challenge_create(user=coach, draft=fixture_draft()).challenge
    with pytest.raises(AuthoringError, match=r"probes/hidden.py.*declares no probes"):
        services.challenge_save(user=coach, challenge=challenge, draft=fixture_draft(hidden_probes="x = 1\n"))
    probes = 'from probekit import probe\n\n@probe(category="c", check="missing")\ndef p(solution):\n    return 1\n'
    with pytest.raises(AuthoringError, match="check 'missing'"):
        services.challenge_save(user=coach, challenge=challenge, draft=fixture_draft(public_probes=probes))
    assert ChallengeVersion.objects.filter(challenge=challenge).count() == 1


def test_slugs_are_unique_across_the_catalogue_and_the_repository_folder(coach: User, challenge: Challenge, settings: Any) -> None:
    with pytest.raises(AuthoringError, match="belongs to a repository package"):
        services.challenge_create(user=coach, draft=fixture_draft("add-two"))
    # A repository folder not yet synced counts too.
    unsynced = Path(settings.CHALLENGES_DIR) / "basics" / "add-four"
    unsynced.mkdir()
    (unsynced / "challenge.toml").write_text('slug = "add-four"\n')
    with pytest.raises(AuthoringError, match="repository package basics/add-four"):
        services.challenge_create(user=coach, draft=fixture_draft("add-four"))
    services.challenge_create(user=coach, draft=fixture_draft())
    with pytest.raises(AuthoringError, match="already used"):
        services.challenge_create(user=coach, draft=fixture_draft())
    with pytest.raises(AuthoringError, match="reserved"):
        services.challenge_create(user=coach, draft=fixture_draft("import"))


def test_only_the_author_or_staff_may_save(coach: User, other_coach: User, staff: User, challenge: Challenge) -> None:
    mine = services.challenge_create(user=coach, draft=fixture_draft()).challenge
    with pytest.raises(AuthoringError, match="Only the coach who wrote"):
        services.challenge_save(user=other_coach, challenge=mine, draft=fixture_draft(title="Hijack"))
    assert services.challenge_save(user=staff, challenge=mine, draft=fixture_draft(title="Fixed by staff")).created
    with pytest.raises(AuthoringError, match="repository package"):
        services.challenge_save(user=staff, challenge=challenge, draft=fixture_draft("add-two"))
    candidate = User.objects.create_user("cand", password="pw-cand-12345")
    with pytest.raises(AuthoringError):
        services.challenge_create(user=candidate, draft=fixture_draft("add-five"))


# --- Import ---------------------------------------------------------------------------------------


def test_import_creates_then_adds_versions_and_keeps_untouched_files(coach: User) -> None:
    extra = {"solutions/expected.toml": b'[zero]\nverdict = "wrong_answer"\n', "solutions/zero.py": b"def add(a, b):\n    return 0\n"}
    created = services.package_import(user=coach, data=zip_of(fixture_draft(), extra))
    assert created.created and created.challenge.source == Source.BROWSER
    again = services.package_import(user=coach, data=zip_of(fixture_draft(), extra))
    assert not again.created and again.version.pk == created.version.pk
    # Editing in the form keeps solutions/.
    saved = services.challenge_save(user=coach, challenge=again.challenge, draft=fixture_draft(title="Add three"))
    assert files_decode(saved.version.files)["solutions/zero.py"] == extra["solutions/zero.py"]


def test_given_modules_travel_through_import_save_and_export(coach: User) -> None:
    given = {"given/pipeline.py": b"STAGES = ('fx', 'onnx')\n"}
    imported = services.package_import(user=coach, data=zip_of(fixture_draft(), given))
    assert files_decode(imported.version.files)["given/pipeline.py"] == given["given/pipeline.py"]
    saved = services.challenge_save(user=coach, challenge=imported.challenge, draft=fixture_draft(title="Add three"))
    files = files_decode(saved.version.files)
    assert files["given/pipeline.py"] == given["given/pipeline.py"]
    assert package_from_files(files).given_sources == {"pipeline": given["given/pipeline.py"]}
    with pytest.raises(AuthoringError, match=r"given/pipeline.py: syntax error at line 1"):
        services.package_import(user=coach, data=zip_of(fixture_draft("add-eight"), {"given/pipeline.py": b"def (:\n"}))


def test_import_refusals_name_the_problem(coach: User, other_coach: User, challenge: Challenge) -> None:
    with pytest.raises(AuthoringError, match="not a zip"):
        services.package_import(user=coach, data=b"hello")
    with pytest.raises(AuthoringError, match="repository package"):
        services.package_import(user=coach, data=zip_of(fixture_draft("add-two")))
    services.package_import(user=other_coach, data=zip_of(fixture_draft()))
    with pytest.raises(AuthoringError, match="another coach"):
        services.package_import(user=coach, data=zip_of(fixture_draft()))
    broken = {**draft_to_files(fixture_draft("add-six"))}
    del broken["reference/solution.py"]
    with pytest.raises(AuthoringError, match=r"reference/solution.py: file is missing"):
        services.package_import(user=coach, data=write_package_zip(broken, "add-six"))


def test_export_of_a_stored_version_imports_to_the_same_version_hash(coach: User, challenge: Challenge) -> None:
    version = challenge.current_version
    assert version is not None
    data = write_package_zip(files_decode(version.files), challenge.slug)
    renamed = {**files_decode(version.files)}
    renamed["challenge.toml"] = renamed["challenge.toml"].replace(b'slug = "add-two"', b'slug = "add-seven"')
    imported = services.package_import(user=coach, data=write_package_zip(renamed, "add-seven"))
    assert imported.version.version == package_from_files(renamed).version
    with pytest.raises(AuthoringError, match="repository package"):
        services.package_import(user=coach, data=data)  # the repository zip itself: its slug is taken


# --- Validation -----------------------------------------------------------------------------------


@pytest.mark.sandbox
def test_validation_runs_the_real_validator_on_the_draft(coach: User, django_capture_on_commit_callbacks: Callable[..., Any]) -> None:
    version = services.challenge_create(user=coach, draft=fixture_draft()).version
    with django_capture_on_commit_callbacks(execute=True):
        run = services.validation_request(user=coach, version=version)
    run.refresh_from_db()
    assert run.status == RunStatus.DONE and run.ok is True, (run.message, run.lines)
    assert any("reference, hidden: 100%" in line for line in run.lines)
    assert any(line.startswith("  ok starter:") for line in run.lines)
    assert run.requested_by == coach and run.seconds is not None


@pytest.mark.sandbox
def test_a_failing_package_gets_a_report_saying_why(coach: User, django_capture_on_commit_callbacks: Callable[..., Any]) -> None:
    # The starter already solves it: validation must fail on "starter scores 100%".
    draft = fixture_draft()
    version = services.challenge_create(user=coach, draft=Draft(**{**draft.__dict__, "starter": draft.reference})).version
    with django_capture_on_commit_callbacks(execute=True):
        run = services.validation_request(user=coach, version=version)
    run.refresh_from_db()
    assert run.status == RunStatus.DONE and run.ok is False
    assert "FAIL starter: scores 100% on the hidden probes; it must score less" in run.lines


def test_a_crash_ends_the_run_failed_with_its_message(coach: User, monkeypatch: pytest.MonkeyPatch) -> None:
    version = services.challenge_create(user=coach, draft=fixture_draft()).version
    run = ValidationRun.objects.create(version=version, requested_by=coach)

    def boom(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("the sandbox exploded")

    monkeypatch.setattr(services, "validate_package", boom)
    finished = services.validation_execute(run.pk)
    assert finished is not None and finished.status == RunStatus.FAILED
    assert "RuntimeError: the sandbox exploded" in finished.message
    assert services.validation_execute(run.pk) is None  # a second delivery does nothing


def test_the_task_failure_handler_and_the_stale_rule_end_a_run(coach: User, settings: Any) -> None:
    from web.authoring.tasks import validate_version

    version = services.challenge_create(user=coach, draft=fixture_draft()).version
    run = ValidationRun.objects.create(version=version, requested_by=coach, status=RunStatus.RUNNING, started_at=timezone.now())
    validate_version.on_failure(TimeoutError("hard limit"), "task-id", (run.pk,), {}, None)
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED and "TimeoutError: hard limit" in run.message

    # Running, but its worker's heartbeat stopped: it died, and the page says so within a minute.
    silent_since = timezone.now() - timedelta(seconds=settings.GRADING_STALE_SECONDS + 1)
    stuck = ValidationRun.objects.create(
        version=version, requested_by=coach, status=RunStatus.RUNNING, started_at=silent_since, heartbeat_at=silent_since
    )
    assert services.validation_run_status(stuck).status == RunStatus.FAILED
    message = ValidationRun.objects.get(pk=stuck.pk).message
    assert "without a report" in message and f"stopped answering {settings.GRADING_STALE_SECONDS} s ago" in message
    # A long validation whose worker still beats is left alone, however old its start.
    long_ago = timezone.now() - timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT)
    slow = ValidationRun.objects.create(
        version=version, requested_by=coach, status=RunStatus.RUNNING, started_at=long_ago, heartbeat_at=timezone.now()
    )
    assert services.validation_run_status(slow).status == RunStatus.RUNNING
    # Queued, never taken: only past the task's time limit is its message surely lost.
    queued = ValidationRun.objects.create(version=version, requested_by=coach)
    assert services.validation_run_status(queued).status == RunStatus.QUEUED
    ValidationRun.objects.filter(pk=queued.pk).update(created_at=timezone.now() - timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT + 61))
    queued.refresh_from_db()
    assert services.validation_run_status(queued).status == RunStatus.FAILED
    assert "waited in the queue" in ValidationRun.objects.get(pk=queued.pk).message


def test_a_pending_run_is_reused_instead_of_queueing_another(coach: User, monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[tuple[int, str]] = []
    monkeypatch.setattr(services, "_enqueue_validation", lambda run_id, runtime: sent.append((run_id, runtime)))
    version = services.challenge_create(user=coach, draft=fixture_draft()).version
    first = services.validation_request(user=coach, version=version)
    assert services.validation_request(user=coach, version=version).pk == first.pk
    assert ValidationRun.objects.filter(version=version).count() == 1


def test_the_task_goes_to_the_runtimes_grading_queue(coach: User, settings: Any, monkeypatch: pytest.MonkeyPatch,
                                                      django_capture_on_commit_callbacks: Callable[..., Any]) -> None:  # fmt: skip
    from web.authoring import tasks

    settings.GRADING_QUEUES = {"python": "grade-python"}
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(tasks.validate_version, "apply_async", lambda args, **kw: calls.append({"args": args, **kw}))
    version = services.challenge_create(user=coach, draft=fixture_draft()).version
    with django_capture_on_commit_callbacks(execute=True):
        run = services.validation_request(user=coach, version=version)
    [call] = calls
    assert (call["args"], call["queue"]) == ((run.pk,), "grade-python")
    # Time for every run the validation may make, each up to the package's wall clock, and never below the settings.
    package = challenge_package(version)
    assert call["soft_time_limit"] >= max(settings.CELERY_TASK_SOFT_TIME_LIMIT, validation_runs(package) * package.limits.wall_seconds)
    assert call["time_limit"] - call["soft_time_limit"] == settings.CELERY_TASK_TIME_LIMIT - settings.CELERY_TASK_SOFT_TIME_LIMIT


def test_a_long_package_validation_gets_more_than_the_settings_limits(coach: User, settings: Any, monkeypatch: pytest.MonkeyPatch,
                                                                        django_capture_on_commit_callbacks: Callable[..., Any]) -> None:  # fmt: skip
    from web.authoring import tasks

    settings.CELERY_TASK_SOFT_TIME_LIMIT, settings.CELERY_TASK_TIME_LIMIT = 2, 4
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(tasks.validate_version, "apply_async", lambda args, **kw: calls.append(kw))
    version = services.challenge_create(user=coach, draft=fixture_draft()).version
    with django_capture_on_commit_callbacks(execute=True):
        services.validation_request(user=coach, version=version)
    package = challenge_package(version)
    runs = validation_runs(package)
    assert runs >= 4 + 1 + 1 + len(package.solutions)  # the reference twice per probe file, the starter, the leaker, the solutions
    assert calls[0]["soft_time_limit"] >= runs * package.limits.wall_seconds > 2


# --- probes/checks.py: run in a sandbox of their own ------------------------------------------------

MARKING_CHECKS = """
def same(actual, expected):
    # In the worker this would write to the host's /tmp; in its sandbox, to the sandbox's own.
    with open(MARKER, "w") as fh:
        fh.write("a browser author's check ran here")
    return actual == expected
"""


@pytest.mark.sandbox
def test_a_coachs_custom_checks_validate_and_grade_in_a_sandbox_not_in_the_worker(
    coach: User, tmp_path: Path, django_capture_on_commit_callbacks: Callable[..., Any]
) -> None:
    from web.challenges.services import challenge_package

    marker = Path(f"/tmp/author-marker-{tmp_path.name}-{id(coach)}")
    checks = MARKING_CHECKS.replace("MARKER", repr(str(marker))).encode()
    hidden = FIXTURE.joinpath("probes", "hidden.py").read_text().replace('hints=["sum"])', 'hints=["sum"], check="same")')
    outcome = services.package_import(
        user=coach, data=zip_of(fixture_draft(hidden_probes=hidden), {"probes/checks.py": checks})
    )  # fmt: skip
    with django_capture_on_commit_callbacks(execute=True):
        run = services.validation_request(user=coach, version=outcome.version)  # no staff needed any more

    run.refresh_from_db()
    assert run.status == RunStatus.DONE and run.ok, [*run.lines, run.message]
    assert not marker.exists(), "a browser author's check ran in the worker"
    assert services.challenge_publish(user=coach, challenge=outcome.challenge, version=outcome.version).published
    # Grading a submission takes the same road: the web's Package asks for sandboxed checks.
    assert challenge_package(outcome.version).checks_in_sandbox


def test_repository_packages_keep_their_checks_in_the_worker(challenge: Challenge) -> None:
    from web.challenges.services import challenge_package

    assert challenge.source == Source.REPOSITORY and not challenge_package(challenge.current_version).checks_in_sandbox


# --- Publish ------------------------------------------------------------------------------------------


def test_publish_needs_a_passed_latest_validation(coach: User) -> None:
    outcome = services.challenge_create(user=coach, draft=fixture_draft())
    with pytest.raises(AuthoringError, match="has not been validated"):
        services.challenge_publish(user=coach, challenge=outcome.challenge, version=outcome.version)
    validated(outcome.version, ok=True)
    validated(outcome.version, ok=False)  # the latest one counts
    with pytest.raises(AuthoringError, match="did not pass"):
        services.challenge_publish(user=coach, challenge=outcome.challenge, version=outcome.version)
    ValidationRun.objects.create(version=outcome.version, status=RunStatus.QUEUED)  # pending runs do not count
    validated(outcome.version, ok=True)
    published = services.challenge_publish(user=coach, challenge=outcome.challenge, version=outcome.version)
    assert published.published and published.current_version == outcome.version
    assert challenge_list(user=None).filter(slug="add-three").exists()


def test_later_edits_do_not_change_what_candidates_get_until_the_next_publish(coach: User, user: User) -> None:
    outcome = services.challenge_create(user=coach, draft=fixture_draft(title="Add three"))
    validated(outcome.version)
    challenge = services.challenge_publish(user=coach, challenge=outcome.challenge, version=outcome.version)
    submission = Submission.objects.create(user=user, challenge=challenge, version=outcome.version, kind="submit", code="x")
    edit = services.challenge_save(user=coach, challenge=challenge, draft=fixture_draft(title="Add three, harder", statement="# v2\n"))
    challenge.refresh_from_db()
    assert challenge.current_version == outcome.version and challenge.title == "Add three"
    assert challenge.draft_version == edit.version
    validated(edit.version)
    challenge = services.challenge_publish(user=coach, challenge=challenge, version=edit.version)
    assert challenge.current_version == edit.version and challenge.title == "Add three, harder"
    assert Submission.objects.get(pk=submission.pk).version == outcome.version


def test_publish_refuses_a_version_of_another_challenge_and_unpublish_hides_it(coach: User) -> None:
    a = services.challenge_create(user=coach, draft=fixture_draft("add-a"))
    b = services.challenge_create(user=coach, draft=fixture_draft("add-b", title="B"))
    validated(b.version)
    with pytest.raises(AuthoringError, match="another challenge"):
        services.challenge_publish(user=coach, challenge=a.challenge, version=b.version)
    validated(a.version)
    services.challenge_publish(user=coach, challenge=a.challenge, version=a.version)
    hidden = services.challenge_unpublish(user=coach, challenge=a.challenge)
    assert not hidden.published and hidden.current_version == a.version
    assert not challenge_list(user=None).filter(slug="add-a").exists()


# --- Sync never clobbers a browser-authored challenge --------------------------------------------------


def test_sync_reports_a_repository_folder_with_a_browser_authored_slug(coach: User, package_root: Path, settings: Any, tmp_path: Path) -> None:
    # The coach took the slug before a repository folder with it appeared.
    settings.CHALLENGES_DIR = tmp_path / "empty"
    outcome = services.challenge_create(user=coach, draft=fixture_draft("add-two"))
    validated(outcome.version)
    services.challenge_publish(user=coach, challenge=outcome.challenge, version=outcome.version)
    settings.CHALLENGES_DIR = package_root
    report = challenge_sync_from_dir(package_root)
    assert [error.path.name for error in report.errors] == ["add-two"]
    assert "authored in the browser" in report.errors[0].message
    challenge = Challenge.objects.get(slug="add-two")
    assert (challenge.source, challenge.current_version, challenge.published) == (Source.BROWSER, outcome.version, True)
    assert ChallengeVersion.objects.filter(challenge=challenge).count() == 1


def test_stored_files_encoding_keeps_binary_files(coach: User) -> None:
    blob = bytes(range(256))
    outcome = services.package_import(user=coach, data=zip_of(fixture_draft(), {"data/blob.bin": blob}))
    assert files_decode(outcome.version.files)["data/blob.bin"] == blob
    assert files_encode({"x": blob})["x"]["encoding"] == "base64"


def test_new_draft_defaults_validate_to_a_message_about_the_title(coach: User) -> None:
    with pytest.raises(AuthoringError, match="title"):
        services.challenge_create(user=coach, draft=new_draft(slug="fresh-one", track="basics"))


@pytest.mark.sandbox
def test_validate_fails_the_untouched_new_challenge_template_and_says_what_to_write(
    coach: User, django_capture_on_commit_callbacks: Callable[..., Any]
) -> None:
    draft = Draft(**{**new_draft(slug="fresh-one", track="basics").__dict__, "title": "Fresh", "summary": "New."})
    version = services.challenge_create(user=coach, draft=draft).version
    with django_capture_on_commit_callbacks(execute=True):
        run = services.validation_request(user=coach, version=version)
    run.refresh_from_db()
    assert run.status == RunStatus.DONE and run.ok is False
    assert run.lines[0].startswith("FAIL statement.md: the statement is still the new-challenge template")
    assert any(line.startswith("FAIL reference/solution.py") for line in run.lines)
    # The template itself is a working package: the grader's own checks pass on it.
    assert not [line for line in run.lines if line.startswith("FAIL") and "template" not in line]
    assert any("reference, hidden: 100%" in line for line in run.lines)
