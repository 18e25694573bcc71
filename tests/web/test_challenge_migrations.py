"""Data migrations of web/challenges that recompute what a stored version holds (its ``graded`` hash)."""

from __future__ import annotations

import importlib

from django.apps import apps

from grader.package import graded_version
from web.challenges.models import Challenge, ChallengeVersion
from web.challenges.storage import files_decode


def test_0006_gives_every_stored_version_the_hash_of_todays_definition(challenge: Challenge) -> None:
    """A version stored under the old definition (prose fields counted) gets today's hash."""
    version = challenge.current_version
    assert version is not None
    ChallengeVersion.objects.filter(pk=version.pk).update(graded="0" * 64)
    migration = importlib.import_module("web.challenges.migrations.0006_version_graded_without_prose")
    migration.refill_graded(apps, None)
    version.refresh_from_db()
    assert version.graded == graded_version(files_decode(version.files))
