"""Syncing packages into the catalogue and rebuilding them: web/challenges/services.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from web.challenges.models import Challenge, ChallengeVersion
from web.challenges.services import challenge_package, challenge_sync_from_dir
from web.challenges.storage import files_decode, files_encode


def test_sync_creates_challenge_and_version(db: None, package_root: Path) -> None:
    report = challenge_sync_from_dir(package_root)

    assert report.created == ["add-two"] and report.ok
    challenge = Challenge.objects.get(slug="add-two")
    assert (challenge.track, challenge.difficulty, challenge.tags) == ("basics", "easy", ["arithmetic"])
    assert challenge.published
    version = challenge.current_version
    assert version is not None and len(version.version) == 64
    assert version.starter_code == "def add(a, b):\n    return 0\n"
    assert [h["id"] for h in version.hints] == ["nudge", "concept", "near", "negatives"]
    assert version.runtime == "python" and version.entry == "solution.py"


def test_sync_twice_is_unchanged(db: None, package_root: Path) -> None:
    challenge_sync_from_dir(package_root)
    report = challenge_sync_from_dir(package_root)

    assert report.unchanged == ["add-two"] and not report.created and not report.updated
    assert ChallengeVersion.objects.count() == 1


def test_changed_package_gets_a_new_version_and_keeps_the_old(db: None, package_root: Path) -> None:
    challenge_sync_from_dir(package_root)
    first = Challenge.objects.get().current_version
    assert first is not None
    statement = package_root / "basics" / "add-two" / "statement.md"
    statement.write_text(statement.read_text() + "\nOne more line.\n")

    report = challenge_sync_from_dir(package_root)

    assert report.updated == ["add-two"]
    challenge = Challenge.objects.get()
    assert challenge.current_version_id != first.pk
    first.refresh_from_db()
    assert "One more line." not in first.statement  # earlier version untouched
    assert ChallengeVersion.objects.count() == 2


def test_going_back_to_known_content_reuses_its_version(db: None, package_root: Path) -> None:
    statement = package_root / "basics" / "add-two" / "statement.md"
    original = statement.read_text()
    challenge_sync_from_dir(package_root)
    first_id = Challenge.objects.get().current_version_id
    statement.write_text(original + "\nchanged\n")
    challenge_sync_from_dir(package_root)
    statement.write_text(original)

    report = challenge_sync_from_dir(package_root)

    assert report.updated == ["add-two"]
    assert Challenge.objects.get().current_version_id == first_id
    assert ChallengeVersion.objects.count() == 2


def test_malformed_package_is_reported_with_file_and_field(db: None, package_root: Path) -> None:
    toml = package_root / "basics" / "add-two" / "challenge.toml"
    toml.write_text(toml.read_text().replace('difficulty = "easy"', 'difficulty = "impossible"'))

    report = challenge_sync_from_dir(package_root)

    assert not report.ok and not Challenge.objects.exists()
    (error,) = report.errors
    assert "challenge.toml" in error.message and "difficulty" in error.message


def test_admin_unpublish_survives_a_sync(db: None, package_root: Path) -> None:
    challenge_sync_from_dir(package_root)
    Challenge.objects.update(published=False)
    challenge_sync_from_dir(package_root)
    assert not Challenge.objects.get().published


def test_challenge_package_rebuilds_the_stored_package(db: None, package_root: Path) -> None:
    challenge_sync_from_dir(package_root)
    version = Challenge.objects.get().current_version
    assert version is not None

    package = challenge_package(version)

    assert package.version == version.version
    assert package.slug == "add-two"
    assert package.files["reference/solution.py"] == b"def add(a, b):\n    return a + b\n"


@pytest.mark.parametrize(
    ("data", "encoding"),
    [(b"text\n", "utf-8"), ("ünïcode".encode(), "utf-8"), (b"\x93NUMPY\x00\xff binary", "base64")],
)
def test_files_round_trip_exactly(data: bytes, encoding: str) -> None:
    stored = files_encode({"a/b.bin": data})
    assert stored["a/b.bin"]["encoding"] == encoding
    assert files_decode(stored) == {"a/b.bin": data}
