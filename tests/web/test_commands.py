"""Management commands: sync_challenges, check_challenges, grade, create_demo_user."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse

from tests.fake_backend import FakeBackend
from web.challenges.models import Challenge
from web.submissions.models import Submission
from web.submissions.services.grading import code_grade

from .conftest import REFERENCE, SUM_WRONG


def call(*args: Any) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_sync_challenges_prints_what_changed(db: None, package_root: Path, settings: Any) -> None:
    settings.CHALLENGES_DIR = package_root
    first, _ = call("sync_challenges")
    second, _ = call("sync_challenges")

    assert "created   add-two" in first and "1 created, 0 updated, 0 unchanged, 0 malformed" in first
    assert "unchanged add-two" in second


def test_sync_challenges_fails_on_a_malformed_package(db: None, package_root: Path, settings: Any) -> None:
    settings.CHALLENGES_DIR = package_root
    toml = package_root / "basics" / "add-two" / "challenge.toml"
    toml.write_text(toml.read_text().replace('runtime = "python"', 'runtime = "cobol"'))

    err = StringIO()
    with pytest.raises(CommandError, match="1 malformed"):
        call_command("sync_challenges", stdout=StringIO(), stderr=err)
    assert "challenge.toml" in err.getvalue() and "runtime" in err.getvalue() and "cobol" in err.getvalue()


def test_sync_challenges_missing_folder(db: None, tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="does not exist"):
        call("sync_challenges", "--dir", str(tmp_path / "nope"))


def test_grade_unknown_slug(db: None, tmp_path: Path) -> None:
    solution = tmp_path / "s.py"
    solution.write_text(REFERENCE)
    with pytest.raises(CommandError, match="no challenge 'nope'; did you run sync_challenges\\?"):
        call("grade", "nope", str(solution))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read"),
        (b"", "empty"),
        (b"\xff\xfe", "not valid UTF-8"),
        (b"#" * (300 * 1024), "the limit is 256 KiB"),
    ],
)
def test_grade_refuses_bad_files(challenge: Challenge, tmp_path: Path, content: bytes | None, message: str) -> None:
    path = tmp_path / "solution.py"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(CommandError, match=message):
        call("grade", "add-two", str(path))


def test_grade_goes_through_code_grade_and_stores_nothing(challenge: Challenge, tmp_path: Path, fake_sandbox: FakeBackend) -> None:
    path = tmp_path / "solution.py"
    path.write_text(SUM_WRONG)

    as_json, _ = call("grade", "add-two", str(path), "--json")
    summary, _ = call("grade", "add-two", str(path), "--public")

    result = json.loads(as_json)
    assert (result["verdict"], result["score"]) == ("partial", pytest.approx(33.3, abs=0.1))
    assert result["version"] == challenge.current_version.version
    assert {p["name"]: p["passed"] for p in result["probes"]} == {"positives": False, "negatives": True}
    assert "add-two @" in summary and "wrong_answer" in summary and "FAIL small" in summary and "expected 5, got 6" in summary
    assert [job["public"] for job in fake_sandbox.runs_of(SUM_WRONG)] == [False, True]
    # the same function the worker calls gives the same answer
    again = code_grade(challenge.current_version, SUM_WRONG, public=False)
    assert (again["verdict"], again["score"]) == (result["verdict"], result["score"])
    assert not Submission.objects.exists()


def test_grade_as_candidate_prints_the_pages_json_for_that_result(
    challenge: Challenge, tmp_path: Path, fake_sandbox: FakeBackend, alice: Client, django_capture_on_commit_callbacks: Any
) -> None:
    # SUM_WRONG fails hidden probes whose full messages name the expected values.
    path = tmp_path / "solution.py"
    path.write_text(SUM_WRONG)

    full, _ = call("grade", "add-two", str(path), "--json")
    out, _ = call("grade", "add-two", str(path), "--as-candidate")
    with django_capture_on_commit_callbacks(execute=True):
        created = alice.post(reverse("challenge-submit", args=[challenge.slug]), data=SUM_WRONG, content_type="text/plain").json()
    page = alice.get(created["url"]).json()

    printed = json.loads(out)
    failed = [p for p in json.loads(full)["probes"] if not p["passed"]]
    assert failed and all(p["message"] not in out for p in failed), "no hidden probe's full message reaches the candidate"
    # Exactly the page's JSON, but for what only a stored submission has: its id, URLs and times.
    unsaved = {"id", "url", "created_at", "started_at", "finished_at"}
    assert {k: v for k, v in printed.items() if k not in unsaved} == {
        **{k: v for k, v in page.items() if k not in unsaved}, "hints": [{**h, "reveal_url": None} for h in page["hints"]]
    }  # fmt: skip
    assert not Submission.objects.filter(pk__gt=created["id"]).exists()


def test_grade_refuses_json_and_as_candidate_together(challenge: Challenge, tmp_path: Path) -> None:
    path = tmp_path / "solution.py"
    path.write_text(REFERENCE)
    with pytest.raises(CommandError, match="not allowed with"):
        call("grade", "add-two", str(path), "--json", "--as-candidate")


def test_grade_says_when_the_platform_failed(challenge: Challenge, tmp_path: Path, fake_sandbox: FakeBackend) -> None:
    path = tmp_path / "solution.py"
    path.write_text(SUM_WRONG)
    fake_sandbox.fail_starts(1, "the Docker engine is not reachable")
    with pytest.raises(CommandError, match=r"grading failed \(PlatformError\): the Docker engine is not reachable"):
        call("grade", "add-two", str(path))


@pytest.mark.usefixtures("fake_sandbox")
def test_check_challenges_passes_a_valid_package(package_root: Path, settings: Any) -> None:
    settings.CHALLENGES_DIR = package_root
    out, _ = call("check_challenges")
    assert "PASS basics/add-two" in out and "1 passed, 0 failed" in out


@pytest.mark.usefixtures("fake_sandbox")
def test_check_challenges_fails_when_the_starter_already_passes(package_root: Path, settings: Any) -> None:
    settings.CHALLENGES_DIR = package_root
    (package_root / "basics" / "add-two" / "starter" / "solution.py").write_text(REFERENCE)
    out = StringIO()
    with pytest.raises(CommandError, match="1 package"):
        call_command("check_challenges", "add-two", stdout=out)
    assert "FAIL basics/add-two" in out.getvalue() and "starter" in out.getvalue()


def test_check_challenges_unknown_slug(package_root: Path, settings: Any) -> None:
    settings.CHALLENGES_DIR = package_root
    with pytest.raises(CommandError, match="no package folder for nope"):
        call("check_challenges", "nope")


def test_create_demo_user_prints_a_working_login(db: None) -> None:
    out, _ = call("create_demo_user")
    again, _ = call("create_demo_user")

    assert "login: demo  password: demo-password-123" in out and "Reset" in again
    assert authenticate(username="demo", password="demo-password-123") is not None
