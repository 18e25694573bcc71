"""web.submissions.services.dispatch: a grading task's time limits, sized by its package's wall clock."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from web.challenges.models import Challenge, ChallengeVersion
from web.challenges.services import challenge_sync_from_dir
from web.submissions.services.dispatch import task_time_limits, version_wall_seconds

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "packages"


def test_the_settings_limits_are_the_floor_and_a_long_package_raises_them(settings: Any) -> None:
    settings.CELERY_TASK_SOFT_TIME_LIMIT, settings.CELERY_TASK_TIME_LIMIT = 540, 600
    assert task_time_limits(60) == (540, 600)  # 3 x 60 + 60 s is below the floor
    # find-the-broken-pass allows 600 s per run: the reference's run, the submission's, a checks sandbox.
    assert task_time_limits(600) == (1860, 1920)
    assert task_time_limits(1800) == (5460, 5520)  # the largest wall clock a package may declare
    assert task_time_limits(1800)[1] < settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"]


@pytest.mark.django_db
def test_the_wall_clock_is_read_from_the_stored_challenge_toml_alone(settings: Any) -> None:
    settings.CHALLENGES_DIR = FIXTURES
    assert challenge_sync_from_dir(FIXTURES).ok
    version = Challenge.objects.get(slug="add-numbers").current_version
    assert version is not None
    # What enqueue reads: one key of the stored files, not the package.
    (toml_text,) = ChallengeVersion.objects.filter(pk=version.pk).values_list("files__challenge.toml__content", flat=True)
    assert version_wall_seconds(toml_text) == 60  # the fixture's [limits] wall_seconds


def test_an_unreadable_challenge_toml_leaves_the_settings_limits(settings: Any) -> None:
    settings.CELERY_TASK_SOFT_TIME_LIMIT, settings.CELERY_TASK_TIME_LIMIT = 540, 600
    assert version_wall_seconds("[limits\nwall_seconds = ") == 0.0
    assert version_wall_seconds(None) == 120  # no [limits] table: the grader's default wall clock
    assert task_time_limits(version_wall_seconds("[limits\n")) == (540, 600)
