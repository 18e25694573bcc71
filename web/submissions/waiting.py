"""What a candidate waits for: a challenge's typical grading time, and a queued submission's place in line.

Place in the flow: the challenge page shows the typical time beside Run and
Submit (``typical_grading``), and a queued submission's status JSON says how
many gradings are ahead of it (``queue_ahead``), so "Queued" is never a
silent wait. Both read the Submission table only, through indexed columns.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from django.conf import settings

from web.challenges.models import Challenge
from web.submissions.models import Kind, Status, Submission, Verdict

# The last this many finished gradings of a kind make the typical time: recent
# enough to follow a new version or a busier machine, many enough for a median.
RECENT_GRADINGS = 30
# Fewer than this and the page says nothing rather than guess from one run.
MIN_GRADINGS = 3
# Gradings whose time says nothing about the challenge's: they ran out of a limit or of the platform, or were cancelled.
UNTYPICAL = (Verdict.TIME_LIMIT, Verdict.INTERNAL_ERROR, Verdict.CANCELLED)


@dataclass(frozen=True)
class TypicalGrading:
    kind: str  # "run" or "submit"
    seconds: float  # median from queued to verdict
    count: int  # gradings the median is over

    @property
    def phrase(self) -> str:
        """How the page says it: "about 7 s", or "under a second" where a whole number of seconds would read "0 s"."""
        return "under a second" if self.seconds < 0.5 else f"about {int(self.seconds + 0.5)} s"


def typical_grading(challenge: Challenge) -> dict[str, TypicalGrading]:
    """{kind: median seconds from submission to verdict} over the challenge's recent gradings (kinds with enough only)."""
    rows = (
        Submission.objects.filter(challenge=challenge, status=Status.DONE, finished_at__isnull=False)
        # An endless loop waits out every probe's limit, and a platform fault its retries: neither is how long
        # grading takes (one endless loop moved the figure from about 1 s to about 21 s).
        .exclude(verdict__in=UNTYPICAL)
        .order_by("-created_at")
        .values_list("kind", "created_at", "finished_at")[: RECENT_GRADINGS * 4]  # one query for both kinds
    )
    waits: dict[str, list[float]] = {str(Kind.RUN): [], str(Kind.SUBMIT): []}
    for kind, created, finished in rows:
        if kind in waits and finished >= created and len(waits[kind]) < RECENT_GRADINGS:
            waits[kind].append((finished - created).total_seconds())
    return {kind: TypicalGrading(kind, statistics.median(w), len(w)) for kind, w in waits.items() if len(w) >= MIN_GRADINGS}


def queue_ahead(submission: Submission) -> int | None:
    """How many queued submissions on the same grading queue came before this one (None unless it is queued).

    Gradings already running are not counted: they hold a worker, not a
    place in line. A submission's queue is its runtime's (GRADING_QUEUES).
    """
    if submission.status != Status.QUEUED or submission.pk is None:
        return None
    queues: dict[str, str] = settings.GRADING_QUEUES
    mine = queues.get(submission.version.runtime)
    same_queue = [runtime for runtime, queue in queues.items() if queue == mine]
    ahead = Submission.objects.filter(status=Status.QUEUED, created_at__lt=submission.created_at)
    if mine is None:  # the default queue: every runtime not routed elsewhere
        ahead = ahead.exclude(version__runtime__in=list(queues))
    else:
        ahead = ahead.filter(version__runtime__in=same_queue)
    return int(ahead.count())
