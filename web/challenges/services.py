"""State changes of the catalogue: sync packages from disk, rebuild a stored package.

``challenge_sync_from_dir`` writes the repository's Challenge and
ChallengeVersion rows (``manage.py sync_challenges`` calls it; web.authoring
writes the browser-authored ones, which a sync never touches). It upserts
each package folder: a new content hash becomes a new ChallengeVersion and
the challenge's current version; a known hash changes nothing. Earlier
versions, and so every submission graded on them, are never touched.

``challenge_package`` is the way back: the grader's Package rebuilt from a
stored version, which is what a submission is graded against.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from django.db import transaction

from grader.errors import PackageError
from grader.package import Package
from grader.package_load import discover_packages, load_package_dir, package_from_files
from grader.tracks import discover_tracks, load_track
from web.challenges.models import Challenge, ChallengeVersion, Source, Track
from web.challenges.storage import files_decode, version_fields

logger = logging.getLogger(__name__)

SyncOutcome = Literal["created", "updated", "unchanged"]


@dataclass
class SyncError:
    path: Path
    message: str


@dataclass
class SyncReport:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    errors: list[SyncError] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors


def challenge_sync_from_dir(root: Path) -> SyncReport:
    """Upsert every package under ``root``; a malformed one is reported and skipped.

    Each package is its own transaction, so one bad folder does not hold back
    the others; the caller decides whether errors make the run fail.
    """
    report = SyncReport()
    seen: dict[str, Path] = {}
    for path in discover_packages(Path(root)):
        try:
            package = load_package_dir(path)
        except PackageError as exc:
            report.errors.append(SyncError(path, str(exc)))
            continue
        if package.slug in seen:
            # Slugs are the URL; two folders with one slug would overwrite
            # each other on every sync.
            report.errors.append(SyncError(path, f"challenge.toml: slug {package.slug!r} is already used by {seen[package.slug]}"))
            continue
        seen[package.slug] = path
        if Challenge.objects.filter(slug=package.slug, source=Source.BROWSER).exists():
            # A coach wrote this challenge in the browser: the folder must not
            # overwrite their versions or change what is published.
            report.errors.append(
                SyncError(path, f"challenge.toml: slug {package.slug!r} belongs to a challenge authored in the browser; rename the folder's slug")
            )
            continue
        outcome = challenge_upsert_package(package)
        getattr(report, outcome).append(package.slug)
    for folder in discover_tracks(Path(root)):
        try:
            track_upsert(folder)
        except PackageError as exc:
            report.errors.append(SyncError(folder, str(exc)))
    return report


# Challenges a track.toml does not list come after the listed ones.
UNLISTED_ORDER = 1000


@transaction.atomic
def track_upsert(folder: Path) -> Track:
    """Store a track's page and give its challenges their position in the track's order."""
    data = load_track(folder)
    track, _ = Track.objects.update_or_create(
        slug=data.slug, defaults={"title": data.title, "summary": data.summary, "description": data.description}
    )
    position = {slug: i + 1 for i, slug in enumerate(data.order)}
    for challenge in Challenge.objects.filter(track=data.slug):
        order = position.get(challenge.slug, UNLISTED_ORDER)
        if challenge.order != order:
            challenge.order = order
            challenge.save(update_fields=["order"])
    return track


@transaction.atomic
def challenge_upsert_package(package: Package) -> SyncOutcome:
    """Make the catalogue match one loaded package; return what changed."""
    metadata = {
        "track": package.track,
        "title": package.title,
        "difficulty": package.difficulty,
        "tags": list(package.tags),
        "summary": package.summary,
    }
    challenge, created = Challenge.objects.get_or_create(slug=package.slug, defaults=metadata)
    changed = [name for name, value in metadata.items() if getattr(challenge, name) != value]
    for name in changed:
        setattr(challenge, name, metadata[name])

    version, _ = ChallengeVersion.objects.get_or_create(
        challenge=challenge,
        version=package.version,
        defaults=version_fields(package),
    )
    if challenge.current_version_id != version.pk:
        # Also covers going back to an earlier, already stored version.
        challenge.current_version = version
        changed.append("current_version")

    if created:
        if changed:
            challenge.save(update_fields=[*changed, "updated_at"])
        return "created"
    if changed:
        challenge.save(update_fields=[*changed, "updated_at"])
        return "updated"
    return "unchanged"


def challenge_package(version: ChallengeVersion) -> Package:
    """The grader's Package for a stored version (validated again by the grader).

    A browser-authored challenge's custom checks run in a sandbox of their
    own (grader/sandboxed_checks.py); the repository's reviewed ones in the worker.
    """
    package = package_from_files(files_decode(version.files), checks_in_sandbox=version.challenge.source != Source.REPOSITORY)
    if package.version != version.version:
        # Same files, other hash: the grader's hashing changed or the row was
        # edited by hand. Grading still uses exactly the stored files.
        logger.warning("stored version %s of %s rebuilds with hash %s", version.version, version.challenge_id, package.version)
    return package
