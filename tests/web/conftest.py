"""Fixtures for the web tests: a synced fixture package, users, and two ways to grade.

``fake_grader`` replaces ``code_grade`` (the one call into the grader) with a
programmable stand-in, for tests about the web's own logic. ``real_grader``
grades for real with the grader's unisolated local backend, for tests that
must show the whole path works.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from grader.errors import PlatformError
from web.accounts.roles import coach_grant
from web.challenges.models import Challenge
from web.challenges.services import challenge_sync_from_dir

FIXTURES = Path(__file__).parent / "fixtures" / "challenges"


@pytest.fixture(autouse=True)
def _empty_cache() -> None:
    """Each test starts with an empty cache: login-throttle counts must not leak between tests."""
    from django.core.cache import cache

    cache.clear()


@pytest.fixture
def package_root(tmp_path: Path) -> Path:
    """A writable copy of the fixture challenges folder."""
    root = tmp_path / "challenges"
    shutil.copytree(FIXTURES, root)
    return root


@pytest.fixture
def package_dir(package_root: Path) -> Path:
    return package_root / "basics" / "add-two"


@pytest.fixture
def challenge(db: Any, package_root: Path, settings: Any) -> Challenge:
    settings.CHALLENGES_DIR = package_root
    report = challenge_sync_from_dir(package_root)
    assert report.ok, report.errors
    return Challenge.objects.select_related("current_version").get(slug="add-two")


@pytest.fixture
def user(db: Any) -> User:
    return User.objects.create_user("alice", password="pw-alice-123")


@pytest.fixture
def other_user(db: Any) -> User:
    return User.objects.create_user("mallory", password="pw-mallory-123")


@pytest.fixture
def coach(db: Any) -> User:
    """A coach by the coach group (not staff: no admin)."""
    user = User.objects.create_user("cora", password="pw-cora-12345")
    coach_grant(user)
    return user


@pytest.fixture
def coach_client(client: Client, coach: User) -> Client:
    """The test client, signed in as the coach."""
    client.force_login(coach)
    return client


@pytest.fixture
def other_coach(db: Any) -> User:
    user = User.objects.create_user("otto", password="pw-otto-12345")
    coach_grant(user)
    return user


@pytest.fixture
def staff(db: Any) -> User:
    return User.objects.create_user("sam", password="pw-sam-123456", is_staff=True)


@pytest.fixture
def alice(client: Client, user: User) -> Client:
    client.force_login(user)
    return client


def grade_result(
    verdict: str = "accepted",
    score: float = 100.0,
    *,
    failed_tags: tuple[str, ...] = (),
    hints: list[dict[str, Any]] | None = None,
    public: bool = False,
) -> dict[str, Any]:
    """A GradeResult.to_dict() shaped answer."""
    passed = verdict == "accepted"
    probe = {
        "name": "positives", "category": "correctness", "weight": 2.0, "passed": passed,
        "status": "passed" if passed else "wrong_answer", "message": "" if passed else "expected 3, got 0",
        "description": "Positive integers.", "duration_ms": 5, "stdout": "printed <b>text</b>",
        "observation": [0] if public else None, "expected": [3] if public else None, "details": {},
    }  # fmt: skip
    return {
        "verdict": verdict,
        "score": score,
        "categories": {"correctness": {"score": score, "passed": int(passed), "total": 1}},
        "probes": [probe],
        "hints": hints if hints is not None else [],
        "message": f"{int(passed)} of 1 probes passed",
        "version": "x" * 64,
        "public": public,
        "timings": {"total_ms": 12},
    }


ALL_SUM_HINTS = [
    {"id": "nudge", "tier": 1, "tags": ["sum"], "text": "Look at what `add` **returns**."},
    {"id": "concept", "tier": 2, "tags": ["sum"], "text": "The `+` operator adds two integers."},
    {"id": "near", "tier": 3, "tags": ["sum"], "text": "`return a + b`"},
]


class FakeGrader:
    """Stands in for ``code_grade``: records calls, answers from a script."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.result: dict[str, Any] = grade_result()
        self.platform_failures = 0  # raise PlatformError this many times first
        self.side_effect: Callable[[], None] | None = None

    def __call__(self, version: Any, code: str | bytes, *, public: bool) -> dict[str, Any]:
        self.calls.append({"version": version.version, "code": code, "public": public})
        if self.side_effect is not None:
            self.side_effect()
        if self.platform_failures > 0:
            self.platform_failures -= 1
            raise PlatformError("sandbox did not start")
        return self.result


@pytest.fixture
def fake_grader(monkeypatch: pytest.MonkeyPatch) -> FakeGrader:
    fake = FakeGrader()
    monkeypatch.setattr("web.submissions.services.code_grade", fake)
    return fake


@pytest.fixture
def real_grader(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SANDBOX_BACKEND", "local")
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "expected-cache"))
