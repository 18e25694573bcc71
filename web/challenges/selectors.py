"""Read-only catalogue queries used by the views and commands.

What a visitor may see is decided here once: published challenges that have
a version. Staff also see unpublished ones (to preview them).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Case, IntegerField, QuerySet, Value, When

from web.challenges.models import DIFFICULTY_RANK, Challenge, ChallengeVersion, Difficulty, Track


@dataclass(frozen=True)
class GivenModule:
    """A read-only module of a package (given/<name>.py), as the challenge page shows it."""

    path: str  # given/pipeline.py
    name: str  # pipeline: imported as given.pipeline
    source: str

    @property
    def import_name(self) -> str:
        return f"given.{self.name}"


@dataclass
class TrackGroup:
    track: str
    challenges: list[Challenge]
    info: Track | None = None


def _visible(user: AbstractBaseUser | AnonymousUser | None) -> QuerySet[Challenge]:
    qs = Challenge.objects.filter(current_version__isnull=False)
    if not (user is not None and getattr(user, "is_staff", False)):
        qs = qs.filter(published=True)
    return qs


def challenge_list(
    *,
    user: AbstractBaseUser | AnonymousUser | None = None,
    track: str | None = None,
    difficulty: str | None = None,
) -> QuerySet[Challenge]:
    qs = _visible(user)
    if track:
        qs = qs.filter(track=track)
    if difficulty:
        qs = qs.filter(difficulty=difficulty)
    rank = Case(
        *[When(difficulty=value, then=Value(r)) for value, r in DIFFICULTY_RANK.items()],
        default=Value(len(DIFFICULTY_RANK)),
        output_field=IntegerField(),
    )
    return qs.annotate(difficulty_rank=rank).order_by("track", "order", "difficulty_rank", "title")


def catalogue_groups(challenges: QuerySet[Challenge]) -> list[TrackGroup]:
    """Group an ordered challenge list by track, keeping the order."""
    groups: list[TrackGroup] = []
    tracks = track_titles()
    for challenge in challenges:
        if not groups or groups[-1].track != challenge.track:
            groups.append(TrackGroup(challenge.track, [], tracks.get(challenge.track)))
        groups[-1].challenges.append(challenge)
    return groups


def challenge_tracks(*, user: AbstractBaseUser | AnonymousUser | None = None) -> list[str]:
    return list(_visible(user).order_by("track").values_list("track", flat=True).distinct())


def difficulty_choices() -> list[tuple[str, str]]:
    return list(Difficulty.choices)


def challenge_get_visible(slug: str, *, user: AbstractBaseUser | AnonymousUser | None = None) -> Challenge | None:
    """A challenge the user may see, with its current version; that version's files load only if read (the API's public probes)."""
    return _visible(user).select_related("current_version").defer("current_version__files").filter(slug=slug).first()


def challenge_get(slug: str) -> Challenge | None:
    """Any challenge by slug, published or not (for commands)."""
    return Challenge.objects.select_related("current_version").filter(slug=slug).first()


def track_get(slug: str) -> Track | None:
    return Track.objects.filter(slug=slug).first()


def track_titles() -> dict[str, Track]:
    """{track slug: Track} for the catalogue's headings (tracks without a track.toml are absent)."""
    return {t.slug: t for t in Track.objects.all()}


def given_modules(version: ChallengeVersion) -> list[GivenModule]:
    """The version's given/*.py, by path: what the candidate reads and imports but does not edit."""
    return [GivenModule(path=path, name=PurePosixPath(path).stem, source=source) for path, source in sorted(version.given.items())]
