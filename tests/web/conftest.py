"""Fixtures for the web tests: a synced fixture package, users, and a sandbox to grade in.

``fake_sandbox`` puts the in-memory backend of tests/fake_backend.py under
the real grader: the web's services, the tasks and the grader run as in
production, and the sandbox answers from a script (right answers, wrong
ones, exceptions, syntax errors, start failures). The whole path with real
sandboxes and a real Celery worker is tests/integration's.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from grader.cheats import cheat_sources
from grader.package_load import load_package_dir
from grader.seal import leaker_source
from sandbox import use_backend
from tests.fake_backend import FakeBackend, ok, raised
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


# The fixture package's reference, and what each of its probes observes on it.
REFERENCE = (FIXTURES / "basics" / "add-two" / "reference" / "solution.py").read_text()
# A correct solution whose text is not the reference's, so that its jobs and the reference's are told apart.
CORRECT = "def add(a, b):\n    return b + a\n"
ADD_TWO_ANSWERS = {"small": 5, "positives": [3, 30, 15], "negatives": [-3, -2]}
STARTER = (FIXTURES / "basics" / "add-two" / "starter" / "solution.py").read_text()
HIDDEN_PROBES = (FIXTURES / "basics" / "add-two" / "probes" / "hidden.py").read_text()
LEAKER = leaker_source(load_package_dir(FIXTURES / "basics" / "add-two"))
# Validation's generic cheats (grader/cheats.py) for add-two: none, the first argument, zeros (None for ints).
CHEAT_CODES = {cheat.name: code for cheat, code in cheat_sources(load_package_dir(FIXTURES / "basics" / "add-two"))}
# Wrong on positive numbers, right on negative ones: only the "sum" hints unlock.
SUM_WRONG = "def add(a, b):\n    return a + b if a < 0 else a * b\n"
# The hints that failing the "sum" probes unlocks (challenge.toml), in the order the grader lists them.
ALL_SUM_HINTS = [
    {"id": "nudge", "tier": 1, "tags": ["sum"], "text": "Look at what `add` **returns**."},
    {"id": "concept", "tier": 2, "tags": ["sum"], "text": "The `+` operator adds two integers."},
    {"id": "near", "tier": 3, "tags": ["sum"], "text": "`return a + b`"},
]


@pytest.fixture
def fake_sandbox(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeBackend]:
    """Every grading of the test runs on an in-memory backend that knows the fixture package.

    The reference and any code not scripted observe the right answers; the
    starter and SUM_WRONG answer as their code would. The expected
    observations are cached in the test's own folder, so nothing the fake
    said is ever served to a real backend.
    """
    fake = FakeBackend(ADD_TWO_ANSWERS)
    fake.script(STARTER, small=ok(0), positives=ok([0, 0, 0]), negatives=ok([0, 0]))
    fake.script(SUM_WRONG, small=ok(6), positives=ok([2, 200, 56]))
    # Validation's leaker (grader/seal.py) reads the hidden probe file and raises with it, as it does in a real sandbox.
    leak = raised("RuntimeError", HIDDEN_PROBES)
    fake.script(LEAKER, small=leak, positives=leak, negatives=leak)
    # The cheats answer as their code would: None, or add(2, 3) -> 2 for the first argument (the other probes: wrong all the same).
    for name, code in CHEAT_CODES.items():
        first = name == "returns-first-argument"
        fake.script(code, small=ok(2 if first else None), positives=ok(None), negatives=ok(None))
    use_backend("fake", fake)
    monkeypatch.setenv("SANDBOX_BACKEND", "fake")
    # Nothing the fake said may be remembered as a passing validation.
    monkeypatch.setenv("GRADER_VALIDATION_CACHE", "0")
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "expected-cache"))
    yield fake
    use_backend("fake", None)


# The column holding every file of a package (base64 for binaries): megabytes for the heavy ones.
PACKAGE_FILES_COLUMN = '"challenges_challengeversion"."files"'


@contextmanager
def reads_no_package_files(*, max_queries: int) -> Iterator[CaptureQueriesContext]:
    """The block reads no package's files and makes at most ``max_queries`` queries: what a page or a poll must cost."""
    with CaptureQueriesContext(connection) as queries:
        yield queries
    heavy = [q["sql"] for q in queries.captured_queries if PACKAGE_FILES_COLUMN in q["sql"]]
    assert not heavy, f"read a package's files: {heavy}"
    assert len(queries.captured_queries) <= max_queries, [q["sql"] for q in queries.captured_queries]


@pytest.fixture
def catalogue(db: Any, package_root: Path, settings: Any) -> dict[str, Challenge]:
    """add-two and add-again in track basics, mul-two in track more (tests/web/progress_world.py)."""
    from tests.web.progress_world import catalogue_world

    return catalogue_world(package_root, settings)
