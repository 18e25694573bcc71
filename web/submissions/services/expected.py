"""Expected observations ready before the first candidate: prepared by a worker when a version is synced or published.

Place in the flow: grading a submission needs the reference's observation of
every probe (grader/grade.py: ``expected_observations``), kept per package
version and runtime in the worker's cache (grader/expected.py). Without
preparation the first submission of a new version runs the reference first,
and its candidate waits for both runs. So ``sync_challenges`` (every deploy)
and Publish (authoring) send one ``submissions.prepare_expected`` task per
version (:func:`expected_prepare_enqueue`), and a worker runs the reference
in its sandbox, on the version's runtime queue, before anyone submits.

The tasks go out at Celery's lowest priority (:data:`PREPARE_PRIORITY`): on
Redis a worker takes every waiting grading before a preparation, so a deploy
that prepares the whole catalogue never queues a candidate behind it (a
preparation already running finishes first: at most one reference run of
wait per worker slot). A version whose observations are cached already costs
one file read. The cache is per worker host: with several hosts, each
fills on first use any version it has not prepared.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from django.conf import settings
from kombu.exceptions import OperationalError as BrokerError

from grader.errors import PackageError
from grader.grade import expected_observations
from web.challenges.models import Challenge, ChallengeVersion
from web.challenges.services import challenge_package
from web.submissions.services.dispatch import grading_queue, task_time_limits, version_wall_seconds

logger = logging.getLogger(__name__)

# Redis (kombu) serves priority 0 first and 9 last; gradings carry the default, 0.
PREPARE_PRIORITY = 9


@dataclass(frozen=True)
class Prepared:
    state: Literal["prepared", "cached", "missing", "broken"]
    seconds: float = 0.0
    message: str = ""


def expected_prepare(version_id: int) -> Prepared:
    """Compute and cache a version's expected observations (public and hidden probes) unless they are cached.

    A reference that fails its own probes is the package's fault, not the
    platform's: logged and reported as "broken" (its submissions will say
    why). PlatformError (a sandbox failed, the reference ran out of time on
    a loaded machine) propagates, so the task retries.
    """
    version = ChallengeVersion.objects.select_related("challenge").filter(pk=version_id).first()
    if version is None:
        return Prepared("missing")
    package = challenge_package(version)
    started = time.monotonic()
    try:
        # expected_observations serves a complete cached entry without running anything.
        cached = [expected_observations(package, public)[1] for public in (True, False)]
    except PackageError as exc:
        logger.error(
            "the reference fails its own probes",
            extra={"event": "expected.broken", "challenge": version.challenge.slug, "version": version.version, "error": str(exc)},
        )
        return Prepared("broken", message=str(exc))
    if all(cached):
        return Prepared("cached")
    seconds = time.monotonic() - started
    logger.info(
        "expected observations prepared",
        extra={"event": "expected.prepared", "challenge": version.challenge.slug, "version": version.version, "seconds": round(seconds, 2)},
    )
    return Prepared("prepared", seconds)


def expected_prepare_enqueue(version_ids: Iterable[int]) -> int:
    """Send one preparation per version, at the lowest priority, on its runtime's queue; how many the broker took."""
    if not settings.EXPECTED_PREPARE:
        return 0
    from web.submissions.tasks import prepare_expected  # the tasks import the services

    # Only the runtime and challenge.toml's text: never the whole packages (megabytes each) at every sync.
    rows = ChallengeVersion.objects.filter(pk__in=list(version_ids)).order_by("pk").values_list("pk", "runtime", "files__challenge.toml__content")
    sent = 0
    for pk, runtime, toml_text in rows:
        # The reference runs twice (public and hidden probes), each up to the package's wall clock.
        soft, hard = task_time_limits(version_wall_seconds(toml_text), runs=2)
        try:
            prepare_expected.apply_async((pk,), queue=grading_queue(runtime), priority=PREPARE_PRIORITY, soft_time_limit=soft, time_limit=hard)
        except BrokerError as exc:
            # Not lost: the first submission of the version computes them, as before.
            logger.warning("could not queue a preparation", extra={"event": "expected.queue_failed", "version": pk, "error": str(exc)})
            continue
        sent += 1
    return sent


def expected_prepare_catalogue() -> int:
    """Prepare every published challenge's current version (after a sync: a deploy may also have changed the runtime)."""
    current = Challenge.objects.filter(published=True, current_version__isnull=False).values_list("current_version_id", flat=True)
    return expected_prepare_enqueue(current)
