"""State changes of authoring: create, save and import packages, validate and publish them.

Views call these functions; each checks who may do it, owns its transaction
and raises AuthoringError with a message for the coach when it refuses.

Versions: every save or import whose files differ from every stored version
of the challenge becomes a new ChallengeVersion (keyed by the grader's
content hash, like the repository's packages) and the challenge's draft;
saving identical content creates nothing. What candidates get is
``Challenge.current_version``, which only ``challenge_publish`` changes, and
only to a version whose latest validation passed. Submissions keep pointing
at the version they were graded on.

Validation: ``validation_request`` saves a queued ValidationRun and, after
commit, sends the Celery task (web.authoring.tasks) to the runtime's grading
queue; the task calls ``validation_execute``, which runs
grader.validate.validate_package (what ``manage.py check_challenges`` runs)
on the version's files in a temporary folder with the configured sandbox,
and also fails a package that still holds the new-challenge template's
statement, reference or probes (the template itself is a valid package).

Trust: a browser-authored package is code from a less trusted author than
the repository's reviewed packages. Its reference and probes run in the
sandbox like every package's; its probes/checks.py, which the worker runs
for repository packages, runs in a sandbox of its own
(``Package.checks_in_sandbox``, grader/sandboxed_checks.py), both when it is
validated here and when a submission is graded (web.challenges.services.challenge_package).
"""

from __future__ import annotations

import logging
import tempfile
from dataclasses import dataclass
from datetime import timedelta
from functools import partial
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils import timezone

from grader.errors import GraderError
from grader.package import Package
from grader.package_load import discover_packages, package_from_files
from grader.validate import validate_package, validation_runs
from web.accounts.roles import is_coach
from web.authoring.draft import Draft, draft_to_files, skeleton_leftovers
from web.authoring.models import RunStatus, ValidationRun
from web.authoring.zipfiles import ZipRefused, read_package_zip
from web.challenges.models import Challenge, ChallengeVersion, Source
from web.challenges.services import challenge_package
from web.challenges.storage import files_decode, version_fields
from web.errors import Refused
from web.submissions.heartbeat import heartbeat
from web.submissions.services.dispatch import grading_queue, task_time_limits
from web.submissions.services.expected import expected_prepare_enqueue

logger = logging.getLogger(__name__)


class AuthoringError(Refused):
    """The request is refused; the message is for the coach."""


@dataclass(frozen=True)
class SaveOutcome:
    challenge: Challenge
    version: ChallengeVersion
    created: bool  # a new ChallengeVersion row (False: the content was already stored)


# --- Who may do what -------------------------------------------------------------------


def can_edit(user: AbstractBaseUser, challenge: Challenge) -> bool:
    """Browser-authored challenges: their author, or staff. Repository packages are read-only here."""
    if challenge.source != Source.BROWSER or not is_coach(user):
        return False
    return bool(getattr(user, "is_staff", False)) or challenge.author_id == user.pk


def _require_edit(user: AbstractBaseUser, challenge: Challenge) -> None:
    if challenge.source != Source.BROWSER:
        raise AuthoringError(f"'{challenge.slug}' is a repository package (challenges/): change it there, not in the browser.")
    if not can_edit(user, challenge):
        raise AuthoringError(f"Only the coach who wrote '{challenge.slug}' (or staff) may change it.")


# --- Packages and versions --------------------------------------------------------------


def _load(files: dict[str, bytes]) -> Package:
    try:
        return package_from_files(files, origin="package")
    except GraderError as exc:
        raise AuthoringError(str(exc)) from None


def _repository_folder_with(slug: str) -> Path | None:
    """A package folder in the repository with this slug (synced or not yet)."""
    return next((path for path in discover_packages(Path(settings.CHALLENGES_DIR)) if path.name == slug), None)


# Paths under /author/ that a slug would shadow.
RESERVED_SLUGS = {"new", "import", "preview", "validations"}


def _require_free_slug(slug: str) -> None:
    if slug in RESERVED_SLUGS:
        raise AuthoringError(f"The slug '{slug}' is reserved by the authoring pages; choose another slug.")
    existing = Challenge.objects.filter(slug=slug).first()
    if existing is not None and existing.source == Source.REPOSITORY:
        raise AuthoringError(f"The slug '{slug}' belongs to a repository package; choose another slug.")
    if existing is not None:
        raise AuthoringError(f"The slug '{slug}' is already used by another challenge; choose another slug.")
    folder = _repository_folder_with(slug)
    if folder is not None:
        raise AuthoringError(f"The slug '{slug}' belongs to the repository package {folder.parent.name}/{slug}; choose another slug.")


def _metadata(package: Package) -> dict[str, object]:
    return {
        "track": package.track,
        "title": package.title,
        "difficulty": package.difficulty,
        "tags": list(package.tags),
        "summary": package.summary,
    }


def _store(challenge: Challenge, package: Package, user: AbstractBaseUser) -> tuple[ChallengeVersion, bool]:
    version, created = ChallengeVersion.objects.get_or_create(
        challenge=challenge,
        version=package.version,
        defaults={**version_fields(package), "created_by": user},
    )
    return version, created


def _create(user: AbstractBaseUser, package: Package) -> SaveOutcome:
    if not is_coach(user):
        raise AuthoringError("Only coaches author challenges.")
    _require_free_slug(package.slug)
    try:
        with transaction.atomic():
            challenge = Challenge.objects.create(
                slug=package.slug,
                source=Source.BROWSER,
                author=user,
                published=False,
                **_metadata(package),  # type: ignore[arg-type]
            )
            version, _ = _store(challenge, package, user)
            challenge.draft_version = version
            challenge.save(update_fields=["draft_version", "updated_at"])
    except IntegrityError:
        # Someone took the slug between the check above and the insert.
        raise AuthoringError(f"The slug '{package.slug}' is already used by another challenge; choose another slug.") from None
    logger.info("challenge authored", extra={"event": "authoring.created", "challenge": challenge.slug, "user_id": user.pk})
    return SaveOutcome(challenge, version, created=True)


def _save(user: AbstractBaseUser, challenge: Challenge, package: Package) -> SaveOutcome:
    if package.slug != challenge.slug:
        raise AuthoringError(f"challenge.toml: slug '{package.slug}' differs from the challenge's slug '{challenge.slug}'; a slug cannot change.")
    with transaction.atomic():
        locked = Challenge.objects.select_for_update().get(pk=challenge.pk)
        version, created = _store(locked, package, user)
        if locked.draft_version_id == version.pk:
            return SaveOutcome(locked, version, created=False)
        locked.draft_version = version
        fields = ["draft_version"]
        if locked.current_version_id is None:
            # Never published: the row's metadata follows the draft. Once
            # published it shows the published version's (publish sets it).
            for name, value in _metadata(package).items():
                setattr(locked, name, value)
            fields += list(_metadata(package))
        locked.save(update_fields=[*fields, "updated_at"])
    if created:
        logger.info("version saved", extra={"event": "authoring.saved", "challenge": locked.slug, "version": version.version})
    return SaveOutcome(locked, version, created=created)


def challenge_create(*, user: AbstractBaseUser, draft: Draft) -> SaveOutcome:
    """A new browser-authored challenge (unpublished) with its first version."""
    return _create(user, _load(draft_to_files(draft)))


def challenge_save(*, user: AbstractBaseUser, challenge: Challenge, draft: Draft) -> SaveOutcome:
    """Save the form over the challenge's draft; a new version only if the files differ."""
    _require_edit(user, challenge)
    base = files_decode(challenge.draft_version.files) if challenge.draft_version else {}
    return _save(user, challenge, _load(draft_to_files(draft, base)))


def package_import(*, user: AbstractBaseUser, data: bytes) -> SaveOutcome:
    """A zipped package: a new challenge, or a new version of one of the coach's own."""
    try:
        files = read_package_zip(data)
    except ZipRefused as exc:
        raise AuthoringError(str(exc)) from None
    package = _load(files)
    existing = Challenge.objects.filter(slug=package.slug).first()
    if existing is None:
        return _create(user, package)
    if existing.source != Source.BROWSER:
        raise AuthoringError(f"The slug '{package.slug}' belongs to a repository package; change the slug in challenge.toml.")
    if not can_edit(user, existing):
        raise AuthoringError(f"The slug '{package.slug}' is used by another coach's challenge; change the slug in challenge.toml.")
    return _save(user, existing, package)


# --- Validation ---------------------------------------------------------------------------


def _enqueue_validation(run_id: int, version: ChallengeVersion) -> None:
    from web.authoring.tasks import validate_version  # tasks import this module

    # Time limits for every run the validation may make (grader.validate.validation_runs).
    try:
        package = challenge_package(version)
        soft, hard = task_time_limits(package.limits.wall_seconds, validation_runs(package))
    except GraderError:
        soft, hard = task_time_limits(0.0, 0)  # the settings' floor; the validation itself says what is wrong
    validate_version.apply_async((run_id,), queue=grading_queue(version.runtime), soft_time_limit=soft, time_limit=hard)


def validation_request(*, user: AbstractBaseUser, version: ChallengeVersion) -> ValidationRun:
    """Queue a validation of ``version``; a run already waiting or running for it is returned instead."""
    _require_edit(user, version.challenge)
    pending = ValidationRun.objects.filter(version=version, status__in=(RunStatus.QUEUED, RunStatus.RUNNING)).first()
    if pending is not None and not _expire_if_stale(pending):
        return pending
    with transaction.atomic():
        run = ValidationRun.objects.create(version=version, requested_by=user)
        # After commit: the worker must find the row when the task arrives.
        transaction.on_commit(partial(_enqueue_validation, run.pk, version))
    return run


def validation_execute(run_id: int) -> ValidationRun | None:
    """Claim a queued run, validate its version and store the report; None if it was not ours to run."""
    now = timezone.now()
    claimed = ValidationRun.objects.filter(pk=run_id, status=RunStatus.QUEUED).update(status=RunStatus.RUNNING, started_at=now, heartbeat_at=now)
    if not claimed:
        return None  # a second delivery, or already expired: nothing to do
    run = ValidationRun.objects.select_related("version__challenge", "requested_by").get(pk=run_id)

    def stamp() -> int:
        return ValidationRun.objects.filter(pk=run_id, status=RunStatus.RUNNING).update(heartbeat_at=timezone.now())

    try:
        files = files_decode(run.version.files)
        package = package_from_files(files)
        with tempfile.TemporaryDirectory(prefix="author-validate-") as tmp, heartbeat(stamp, settings.GRADING_HEARTBEAT_SECONDS):
            folder = _materialise(Path(tmp), package)
            # As it will be graded: its custom checks, if any, in a sandbox of their own.
            report = validate_package(folder, checks_in_sandbox=True)
    except AuthoringError as exc:
        return _finish_failed(run_id, str(exc))
    except Exception as exc:  # any crash must end the run, with its reason
        logger.exception("validation crashed", extra={"event": "authoring.validation_crashed", "run": run_id})
        return _finish_failed(run_id, f"The validation crashed: {type(exc).__name__}: {exc}")
    leftovers = skeleton_leftovers(files)
    ValidationRun.objects.filter(pk=run_id, status=RunStatus.RUNNING).update(
        status=RunStatus.DONE, ok=report.ok and not leftovers, lines=leftovers + report.lines, finished_at=timezone.now()
    )
    return ValidationRun.objects.get(pk=run_id)


def _materialise(root: Path, package: Package) -> Path:
    """Write the files as <root>/<track>/<slug>/, the layout validate_package loads."""
    folder = root / package.track / package.slug
    for rel, data in package.files.items():
        target = (folder / rel).resolve()
        if not target.is_relative_to(folder.resolve()):
            raise AuthoringError(f"file path '{rel}' points outside the package")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return folder


def _finish_failed(run_id: int, message: str) -> ValidationRun:
    ValidationRun.objects.filter(pk=run_id, status__in=(RunStatus.QUEUED, RunStatus.RUNNING)).update(
        status=RunStatus.FAILED, ok=False, message=message, finished_at=timezone.now()
    )
    return ValidationRun.objects.get(pk=run_id)


def validation_fail(run_id: int, message: str) -> ValidationRun:
    """End an unfinished run as failed (the task's failure handler calls this)."""
    return _finish_failed(run_id, message)


def _expire_if_stale(run: ValidationRun) -> bool:
    """End a run nobody can still be working on as failed; whether it did."""
    if run.finished:
        return False
    if run.status == RunStatus.RUNNING:
        # Its worker stamps it while it validates (heartbeat.py): silence means the worker died.
        since = run.heartbeat_at or run.started_at or run.created_at
        limit = settings.GRADING_STALE_SECONDS
        why = f"its worker stopped answering {limit} s ago: it may have died"
    else:
        # Past the task's hard time limit a queued run's message is surely lost.
        since = run.created_at
        limit = settings.CELERY_TASK_TIME_LIMIT + 60
        why = f"it waited in the queue for {limit} s"
    if timezone.now() - since < timedelta(seconds=limit):
        return False
    _finish_failed(run.pk, f"The validation stopped without a report ({why}); validate again.")
    return True


def validation_run_status(run: ValidationRun) -> ValidationRun:
    """The run as the page should show it: a run nobody can still be working on ends failed."""
    if _expire_if_stale(run):
        run.refresh_from_db()
    return run


# --- Publishing ---------------------------------------------------------------------------------


def challenge_publish(*, user: AbstractBaseUser, challenge: Challenge, version: ChallengeVersion) -> Challenge:
    """Make ``version`` what candidates get; it must be this challenge's and its latest validation must have passed."""
    _require_edit(user, challenge)
    if version.challenge_id != challenge.pk:
        raise AuthoringError("That version belongs to another challenge.")
    files = files_decode(version.files)
    latest = ValidationRun.objects.filter(version=version).exclude(status__in=(RunStatus.QUEUED, RunStatus.RUNNING)).first()
    if latest is None:
        raise AuthoringError(f"Version {version.short_version} has not been validated; press Validate and publish once it passes.")
    if not latest.passed:
        raise AuthoringError(f"The latest validation of version {version.short_version} did not pass; fix the package and validate again.")
    package = _load(files)
    with transaction.atomic():
        locked = Challenge.objects.select_for_update().get(pk=challenge.pk)
        locked.current_version = version
        locked.published = True
        for name, value in _metadata(package).items():
            setattr(locked, name, value)
        locked.save(update_fields=["current_version", "published", *_metadata(package), "updated_at"])
    logger.info("challenge published", extra={"event": "authoring.published", "challenge": challenge.slug, "version": version.version})
    # Its validation ran the reference on one worker; every other worker host needs it too, before the first candidate.
    transaction.on_commit(lambda: expected_prepare_enqueue([version.pk]))
    return locked


def challenge_unpublish(*, user: AbstractBaseUser, challenge: Challenge) -> Challenge:
    """Take the challenge out of the catalogue; its versions and submissions stay."""
    _require_edit(user, challenge)
    Challenge.objects.filter(pk=challenge.pk).update(published=False, updated_at=timezone.now())
    challenge.refresh_from_db()
    return challenge
