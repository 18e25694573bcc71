"""web/submissions/services/expected.py: a version's expected observations prepared once, before any candidate.

On the in-memory sandbox (tests/fake_backend.py) and eager Celery; the real
worker, Redis and bwrap path is tests/integration/test_expected_prepare.py.
"""

from __future__ import annotations

import io
from typing import Any

from django.core.management import call_command

from grader import expected as expected_cache
from tests.fake_backend import FakeBackend, raised
from web.challenges.models import Challenge
from web.challenges.services import challenge_package
from web.submissions.services.expected import expected_prepare


def test_a_version_is_prepared_once_and_then_read_from_the_cache(challenge: Challenge, fake_sandbox: FakeBackend) -> None:
    version = challenge.current_version
    assert version is not None and expected_cache.load(version.version, False) is None

    first = expected_prepare(version.pk)
    assert first.state == "prepared"
    assert expected_cache.load(version.version, True) is not None and expected_cache.load(version.version, False) is not None
    assert expected_prepare(version.pk).state == "cached"
    assert expected_prepare(10**9).state == "missing"


def test_sync_prepares_every_published_version_unless_told_not_to(challenge: Challenge, fake_sandbox: FakeBackend, settings: Any) -> None:
    version = challenge.current_version
    assert version is not None
    out = io.StringIO()
    call_command("sync_challenges", "--dir", str(settings.CHALLENGES_DIR), "--no-prepare", stdout=out)
    assert expected_cache.load(version.version, False) is None and "prepare" not in out.getvalue()

    settings.EXPECTED_PREPARE = True  # eager Celery: the task runs here, on the fake sandbox
    call_command("sync_challenges", "--dir", str(settings.CHALLENGES_DIR), stdout=out)
    assert "1 version(s) sent to the workers to prepare" in out.getvalue()
    assert expected_cache.load(version.version, True) is not None and expected_cache.load(version.version, False) is not None


def test_a_reference_that_fails_its_own_probes_is_reported_not_retried(challenge: Challenge, fake_sandbox: FakeBackend) -> None:
    version = challenge.current_version
    assert version is not None
    broken = raised("ValueError", "broken")
    fake_sandbox.script(challenge_package(version).reference_code, small=broken, positives=broken, negatives=broken)
    outcome = expected_prepare(version.pk)
    assert outcome.state == "broken" and "small" in outcome.message
