"""Catalogue rows and the immutable stored versions of each challenge package.

A Challenge is the stable identity (slug) the catalogue lists. Each distinct
package content becomes one ChallengeVersion, keyed by the package's content
hash and never changed afterwards: a submission points at the version it was
graded on, so editing a challenge cannot change an earlier result.

Two sources write these rows: ``services.challenge_sync_from_dir`` for the
packages in the repository's challenges/ folder, and web.authoring for
packages coaches write in the browser (``Challenge.source``). Neither
overwrites the other's challenges.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Difficulty(models.TextChoices):
    WARM_UP = "warm-up", "Warm-up"
    EASY = "easy", "Easy"
    MEDIUM = "medium", "Medium"
    HARD = "hard", "Hard"


#: Catalogue order within a track: easiest first.
DIFFICULTY_RANK: dict[str, int] = {value: rank for rank, value in enumerate(Difficulty.values)}


class Track(models.Model):
    """A track's page (challenges/<track>/track.toml): what it covers and in which order."""

    slug = models.SlugField(max_length=100, unique=True)
    title = models.CharField(max_length=200)
    summary = models.TextField(blank=True)
    description = models.TextField(blank=True, help_text="Markdown, sanitised when rendered.")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug


class Source(models.TextChoices):
    REPOSITORY = "repository", "Repository"
    BROWSER = "browser", "Browser"


class Challenge(models.Model):
    slug = models.SlugField(max_length=100, unique=True)
    track = models.CharField(max_length=100, db_index=True)
    title = models.CharField(max_length=200)
    difficulty = models.CharField(max_length=16, choices=Difficulty.choices)
    tags = models.JSONField(default=list, blank=True)
    summary = models.TextField(blank=True)
    current_version = models.ForeignKey(
        "ChallengeVersion",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        help_text="The version new submissions are graded on.",
    )
    published = models.BooleanField(default=True, help_text="Listed in the catalogue and open to submissions.")
    order = models.IntegerField(default=0, help_text="Position within its track; lower comes first.")
    source = models.CharField(
        max_length=16,
        choices=Source.choices,
        default=Source.REPOSITORY,
        help_text="Where the package lives: the challenges/ folder (sync) or the browser (authoring).",
    )
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="authored_challenges",
        help_text="The coach who created a browser-authored challenge.",
    )
    draft_version = models.ForeignKey(
        "ChallengeVersion",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        help_text="Browser-authored: the latest saved version (what the editor shows); published only when a coach says so.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["track", "order", "title"]

    def __str__(self) -> str:
        return self.slug


class ChallengeVersion(models.Model):
    """One package content, as loaded; never edited after creation."""

    challenge = models.ForeignKey(Challenge, on_delete=models.PROTECT, related_name="versions")
    version = models.CharField(max_length=64, help_text="SHA-256 of the package's files.")
    # {relative path: {"encoding": "utf-8" | "base64", "content": str}}: the whole
    # package, so that the grader can rebuild it without the challenges folder.
    files = models.JSONField()
    # {"given/<name>.py": source}: the read-only modules the challenge page
    # shows, kept apart so that pages can defer ``files`` (the whole package).
    given = models.JSONField(default=dict, blank=True)
    statement = models.TextField()
    starter_code = models.TextField()
    graded = models.CharField(
        max_length=64, blank=True, help_text="Hash of what grading reads (grader.package.graded_version); empty for versions stored before it."
    )
    hints = models.JSONField(default=list, help_text="[{id, tier, tags, text}] as in the package.")
    runtime = models.CharField(max_length=32)
    entry = models.CharField(max_length=100, default="solution.py", help_text="The file the candidate edits.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text="Who saved it in the browser (empty for a sync from the repository).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["challenge", "version"], name="challengeversion_unique_hash"),
        ]

    def __str__(self) -> str:
        return f"{self.challenge.slug}@{self.version[:12]}"

    @property
    def short_version(self) -> str:
        return self.version[:12]
