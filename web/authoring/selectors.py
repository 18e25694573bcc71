"""Reads for the authoring pages: which challenges a coach sees and may open, their versions and validations.

Access is decided here once for lookups: a coach opens the browser-authored
challenges they wrote (staff: all of them); repository packages are listed
read-only and exported by any coach. A lookup the user may not make returns
None, and the view answers 404.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from web.authoring.models import ValidationRun
from web.authoring.services import can_edit
from web.challenges.models import Challenge, ChallengeVersion, Source


@dataclass
class ChallengeRow:
    challenge: Challenge
    latest: ChallengeVersion | None  # the draft (browser) or current (repository) version
    validation: ValidationRun | None  # the latest run of ``latest``
    editable: bool

    @property
    def state(self) -> str:
        if self.challenge.published and self.challenge.current_version_id is not None:
            return "published"
        return "draft"

    @property
    def unpublished_changes(self) -> bool:
        return self.latest is not None and self.challenge.current_version_id not in (None, self.latest.pk)


def latest_run(version: ChallengeVersion) -> ValidationRun | None:
    return ValidationRun.objects.filter(version=version).first()


def _latest_runs(version_ids: list[int]) -> dict[int, ValidationRun]:
    runs: dict[int, ValidationRun] = {}
    for run in ValidationRun.objects.filter(version_id__in=version_ids).order_by("-created_at", "-pk"):
        runs.setdefault(run.version_id, run)
    return runs


def _browser_challenges(user: AbstractBaseUser) -> QuerySet[Challenge]:
    qs = Challenge.objects.filter(source=Source.BROWSER)
    if not getattr(user, "is_staff", False):
        qs = qs.filter(author=user)
    return qs


def authoring_rows(user: AbstractBaseUser) -> tuple[list[ChallengeRow], list[ChallengeRow]]:
    """(the browser-authored challenges the user may edit, the repository packages), each with state."""
    # Without the versions' files: a list needs hashes and dates, not every package's content.
    browser = list(_browser_challenges(user).select_related("draft_version", "author").defer("draft_version__files").order_by("track", "slug"))
    repository = list(
        Challenge.objects.filter(source=Source.REPOSITORY).select_related("current_version").defer("current_version__files").order_by("track", "slug")
    )
    runs = _latest_runs([c.draft_version_id for c in browser if c.draft_version_id is not None])
    rows = [ChallengeRow(c, c.draft_version, runs.get(c.draft_version_id or 0), True) for c in browser]
    repo_rows = [ChallengeRow(c, c.current_version, None, False) for c in repository]
    return rows, repo_rows


def challenge_for_edit(user: AbstractBaseUser, slug: str) -> Challenge | None:
    # The current version shows as its short hash; the draft's files load when the edit form reads them.
    challenge = (
        Challenge.objects.select_related("draft_version", "current_version", "author")
        .defer("draft_version__files", "current_version__files")
        .filter(slug=slug)
        .first()
    )
    return challenge if challenge is not None and can_edit(user, challenge) else None


def challenge_for_export(user: AbstractBaseUser, slug: str) -> Challenge | None:
    challenge = Challenge.objects.filter(slug=slug).first()
    if challenge is None:
        return None
    if challenge.source == Source.REPOSITORY:
        # Its reference and hidden probes are the catalogue's answers: staff only.
        return challenge if getattr(user, "is_staff", False) else None
    return challenge if can_edit(user, challenge) else None


def version_get(challenge: Challenge, version: str) -> ChallengeVersion | None:
    return ChallengeVersion.objects.select_related("challenge").filter(challenge=challenge, version=version).first()


@dataclass
class VersionRow:
    version: ChallengeVersion
    validation: ValidationRun | None
    is_draft: bool
    is_current: bool


def version_rows(challenge: Challenge, limit: int = 20) -> list[VersionRow]:
    versions = list(challenge.versions.select_related("created_by").defer("files").order_by("-created_at", "-pk")[:limit])
    runs = _latest_runs([v.pk for v in versions])
    return [VersionRow(v, runs.get(v.pk), v.pk == challenge.draft_version_id, v.pk == challenge.current_version_id) for v in versions]


def validation_run_for(user: AbstractBaseUser, pk: int) -> ValidationRun | None:
    # The authoring page polls this while a validation runs: the package's files stay in the database.
    run = ValidationRun.objects.select_related("version__challenge").defer("version__files").filter(pk=pk).first()
    return run if run is not None and can_edit(user, run.version.challenge) else None


def track_slugs() -> list[str]:
    """Tracks in the catalogue, for the form's suggestions."""
    return list(Challenge.objects.order_by("track").values_list("track", flat=True).distinct())


def challenge_for_coverage(user: AbstractBaseUser, slug: str) -> Challenge | None:
    """A challenge whose coverage table the user may read: any repository package, or a browser one they may edit.

    The table names hidden probes and what each tests, never their inputs or
    expected values: coaches read it to review a package, as they read its
    statement.
    """
    challenge = Challenge.objects.select_related("draft_version", "current_version").filter(slug=slug).first()
    if challenge is None:
        return None
    if challenge.source == Source.REPOSITORY:
        return challenge
    return challenge if can_edit(user, challenge) else None


@dataclass
class CoverageProbe:
    name: str
    where: str  # "hidden", "public" or "unknown"
    category: str = ""
    weight: float = 0.0


@dataclass
class CoverageRow:
    id: str
    kind: str
    statement: str
    probes: list[CoverageProbe]


@dataclass
class CoverageView:
    version: ChallengeVersion
    rows: list[CoverageRow]
    problems: list[str]  # what check_challenges would fail the package for; empty when it holds
    error: str = ""  # the table cannot be read
    missing: bool = False  # the package holds no table


def coverage_view(version: ChallengeVersion) -> CoverageView:
    """The version's coverage table as rows to show, with the probes' categories and weights and every problem named."""
    from grader.coverage import coverage_problems, package_coverage
    from grader.errors import PackageError
    from web.challenges.services import challenge_package

    package = challenge_package(version)
    try:
        entries = package_coverage(package.files)
    except PackageError as exc:
        return CoverageView(version, [], [], error=str(exc))
    if entries is None:
        return CoverageView(version, [], [], missing=True)
    specs = {p.name: ("public", p) for p in package.public_probes} | {p.name: ("hidden", p) for p in package.hidden_probes}
    rows = []
    for entry in entries:
        probes = []
        for name in entry.probes:
            where, spec = specs.get(name, ("unknown", None))
            probes.append(CoverageProbe(name, where, spec.category if spec else "", spec.weight if spec else 0.0))
        rows.append(CoverageRow(entry.id, entry.kind, entry.statement, probes))
    return CoverageView(version, rows, coverage_problems(entries, package.statement, package.hidden_probes, package.public_probes))
