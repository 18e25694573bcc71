"""Challenges and submissions for the progress tests (test_submission_progress, test_submission_pages, test_api_progress).

The ``catalogue`` fixture (tests/web/conftest.py) syncs three copies of the fixture package in two
tracks; ``make`` adds a submission a minute after the one before, so their order is known.
"""

from __future__ import annotations

import shutil
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User
from django.utils import timezone

from web.challenges.models import Challenge
from web.challenges.services import challenge_sync_from_dir
from web.submissions.models import Status, Submission, Verdict


def clone_package(root: Path, slug: str, *, track: str = "basics", title: str | None = None) -> None:
    """A copy of add-two under another slug (and track): a second challenge for the same fixture package."""
    target = root / track / slug
    target.parent.mkdir(exist_ok=True)
    shutil.copytree(root / "basics" / "add-two", target)
    toml = target / "challenge.toml"
    text = toml.read_text().replace('slug = "add-two"', f'slug = "{slug}"').replace('track = "basics"', f'track = "{track}"')
    toml.write_text(text.replace('title = "Add two integers"', f'title = "{title or slug}"'))


def catalogue_world(package_root: Path, settings: Any) -> dict[str, Challenge]:
    """add-two and add-again in track basics, mul-two in track more."""
    clone_package(package_root, "add-again", title="Add again")
    clone_package(package_root, "mul-two", track="more", title="Multiply two")
    settings.CHALLENGES_DIR = package_root
    assert challenge_sync_from_dir(package_root).ok
    return {c.slug: c for c in Challenge.objects.select_related("current_version")}


_clock = [timezone.now() - timedelta(days=1)]


def make(
    user: User, challenge: Challenge, kind: str = "submit", verdict: str = Verdict.WRONG_ANSWER, score: float | None = 0.0, **extra: Any
) -> Submission:
    """A submission, each one a minute after the one before (created_at is auto_now_add: set after)."""
    status = extra.pop("status", Status.DONE)
    done = status == Status.DONE
    s = Submission.objects.create(
        user=user, challenge=challenge, version=challenge.current_version, kind=kind, code="x = 1\n", status=status,
        verdict=verdict if done else "", score=score if done else None,
        categories={"correctness": {"score": score or 0.0, "passed": 1 if score else 0, "total": 1}} if done else {}, **extra,
    )  # fmt: skip
    _clock[0] += timedelta(minutes=1)
    Submission.objects.filter(pk=s.pk).update(created_at=_clock[0])
    s.refresh_from_db()
    return s
