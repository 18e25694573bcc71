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

from web.challenges.models import Challenge
from web.submissions.models import Submission
from web.submissions.services import code_grade

from .conftest import FakeGrader, grade_result

REFERENCE = "def add(a, b):\n    return a + b\n"


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


def test_grade_goes_through_code_grade_and_stores_nothing(challenge: Challenge, tmp_path: Path, fake_grader: FakeGrader) -> None:
    fake_grader.result = grade_result("partial", 66.7)
    path = tmp_path / "solution.py"
    path.write_text(REFERENCE)

    out, _ = call("grade", "add-two", str(path), "--json")

    assert json.loads(out) == fake_grader.result
    assert fake_grader.calls == [{"version": challenge.current_version.version, "code": REFERENCE, "public": False}]
    assert not Submission.objects.exists()


def test_grade_as_candidate_prints_the_pages_json_for_that_result(
    challenge: Challenge, tmp_path: Path, fake_grader: FakeGrader, alice: Client, django_capture_on_commit_callbacks: Any
) -> None:
    # A hidden probe whose message names the expected value and whose output is the candidate's.
    fake_grader.result = grade_result("wrong_answer", 0.0, hints=[{"id": "nudge", "tier": 1, "tags": ["sum"], "text": "Look at **add**."}])
    path = tmp_path / "solution.py"
    path.write_text(REFERENCE)

    out, _ = call("grade", "add-two", str(path), "--as-candidate")
    with django_capture_on_commit_callbacks(execute=True):
        created = alice.post(reverse("challenge-submit", args=[challenge.slug]), data=REFERENCE, content_type="text/plain").json()
    page = alice.get(created["url"]).json()

    printed = json.loads(out)
    assert "expected 3, got 0" not in out and "printed" not in out
    assert printed["probes"][0]["message"] == "the result does not pass this probe's check"
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


@pytest.mark.usefixtures("real_grader")
def test_grade_really_grades_with_the_local_backend(challenge: Challenge, tmp_path: Path) -> None:
    path = tmp_path / "solution.py"
    path.write_text(REFERENCE)

    as_json, _ = call("grade", "add-two", str(path), "--json")
    summary, _ = call("grade", "add-two", str(path), "--public")

    result = json.loads(as_json)
    assert result["verdict"] == "accepted" and result["score"] == 100
    assert result["version"] == challenge.current_version.version
    assert "add-two @" in summary and "accepted" in summary and "PASS small" in summary
    # the same function the worker calls gives the same answer
    again = code_grade(challenge.current_version, REFERENCE, public=False)
    assert (again["verdict"], again["score"]) == (result["verdict"], result["score"])


@pytest.mark.usefixtures("real_grader")
def test_check_challenges_passes_a_valid_package(package_root: Path, settings: Any) -> None:
    settings.CHALLENGES_DIR = package_root
    out, _ = call("check_challenges")
    assert "PASS basics/add-two" in out and "1 passed, 0 failed" in out


@pytest.mark.usefixtures("real_grader")
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
