"""Track pages: a track's description and its challenges in the order its track.toml gives."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from grader.errors import PackageError
from grader.tracks import load_track
from web.challenges.models import Challenge, Track
from web.challenges.services import challenge_sync_from_dir
from web.submissions.models import Submission

TRACK_TOML = '''
title = "The basics"
summary = "Adding numbers, then adding them again."
description = """Start here. <script>alert(1)</script>"""
order = [{order}]
'''


@pytest.fixture
def two_challenge_root(package_root: Path) -> Path:
    """The fixture track with a second challenge, ``add-two-again``."""
    clone = package_root / "basics" / "add-two-again"
    shutil.copytree(package_root / "basics" / "add-two", clone)
    toml = clone / "challenge.toml"
    toml.write_text(toml.read_text().replace('slug = "add-two"', 'slug = "add-two-again"').replace("Add two integers", "Add two again"))
    return package_root


def write_track(root: Path, order: list[str]) -> None:
    (root / "basics" / "track.toml").write_text(TRACK_TOML.format(order=", ".join(f'"{s}"' for s in order)))


def test_the_track_order_decides_the_page_order(db: Any, client: Client, two_challenge_root: Path) -> None:
    write_track(two_challenge_root, ["add-two-again", "add-two"])
    assert challenge_sync_from_dir(two_challenge_root).ok
    html = client.get(reverse("track-detail", args=["basics"])).content.decode()
    assert html.index('data-slug="add-two-again"') < html.index('data-slug="add-two"')
    assert "The basics" in html and "Adding numbers, then adding them again." in html

    write_track(two_challenge_root, ["add-two", "add-two-again"])
    assert challenge_sync_from_dir(two_challenge_root).ok
    html = client.get(reverse("track-detail", args=["basics"])).content.decode()
    assert html.index('data-slug="add-two"') < html.index('data-slug="add-two-again"')
    assert list(Challenge.objects.filter(track="basics").order_by("order").values_list("slug", flat=True)) == ["add-two", "add-two-again"]


def test_the_description_is_sanitised(db: Any, client: Client, two_challenge_root: Path) -> None:
    write_track(two_challenge_root, ["add-two", "add-two-again"])
    assert challenge_sync_from_dir(two_challenge_root).ok
    html = client.get(reverse("track-detail", args=["basics"])).content.decode()
    assert "Start here." in html
    assert "<script>alert(1)</script>" not in html


def test_the_catalogue_heading_links_to_the_track_page(db: Any, client: Client, two_challenge_root: Path) -> None:
    write_track(two_challenge_root, ["add-two", "add-two-again"])
    assert challenge_sync_from_dir(two_challenge_root).ok
    html = client.get(reverse("catalogue")).content.decode()
    assert reverse("track-detail", args=["basics"]) in html and "The basics" in html


def test_a_track_page_shows_the_candidates_best_submitted_score(db: Any, client: Client, two_challenge_root: Path) -> None:
    write_track(two_challenge_root, ["add-two", "add-two-again"])
    assert challenge_sync_from_dir(two_challenge_root).ok
    user = User.objects.create_user("ada", password="pw-ada-12345")
    challenge = Challenge.objects.get(slug="add-two")
    for score, kind in ((40.0, "submit"), (75.5, "submit"), (100.0, "run")):
        Submission.objects.create(user=user, challenge=challenge, version=challenge.current_version, kind=kind, code="x", status="done", score=score)
    client.force_login(user)
    html = client.get(reverse("track-detail", args=["basics"])).content.decode()
    assert "best 75.5%" in html  # a Run's 100 is practice, not a score


def test_an_unknown_track_is_404(db: Any, client: Client) -> None:
    assert client.get(reverse("track-detail", args=["no-such-track"])).status_code == 404


def test_a_bad_track_toml_is_reported_by_sync_naming_the_file(db: Any, two_challenge_root: Path) -> None:
    (two_challenge_root / "basics" / "track.toml").write_text('title = "x"\nsummary = "y"\ndescription = "z"\norder = ["a", "a"]\n')
    report = challenge_sync_from_dir(two_challenge_root)
    assert not report.ok
    assert "track.toml" in report.errors[0].message and "order" in report.errors[0].message
    assert not Track.objects.exists()


def test_load_track_requires_its_fields(tmp_path: Path) -> None:
    (tmp_path / "track.toml").write_text('title = "x"\norder = []\n')
    with pytest.raises(PackageError, match="field 'summary'"):
        load_track(tmp_path)
