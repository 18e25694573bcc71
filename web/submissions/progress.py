"""A candidate's progress and submission history: the one place that computes them.

Read by the progress page and the history (web.submissions.views), the
solved / attempted marks of the catalogue and track pages
(web.challenges.views) and the API (web.api): each asks here, so a state
means the same everywhere.

The rules:

- **solved**: at least one Submit of the challenge was graded ``accepted``;
- **attempted**: any Run or Submit, whatever its outcome, but no accepted Submit;
- **not started**: no submission at all.

Best score is the highest score of a graded Submit (a Run's score is on the
public probes and does not count). The last attempt is the newest Run or
Submit, graded or not. Every query is filtered by the user first: nothing
here ever returns another user's rows.

Mock interviews: a Run or Submit made in an interview is an ordinary
Submission of the candidate (web.interviews.models.InterviewSubmission only
links it to the interview), made by them on a published challenge with the
same grading and the same candidate view. So it counts as one of their
attempts here, and it is in their history, like on the challenge page's own
list of submissions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, Exists, Max, OuterRef, Q, QuerySet, Subquery

from web.challenges.models import Challenge
from web.challenges.selectors import catalogue_groups, challenge_list
from web.submissions.models import CHARGED, GiveUp, Kind, Status, Submission, Verdict

SOLVED = "solved"
ATTEMPTED = "attempted"
NOT_STARTED = "not_started"
STATE_LABELS = {SOLVED: "Solved", ATTEMPTED: "Attempted", NOT_STARTED: "Not started"}

_GRADED_SUBMIT = Q(kind=Kind.SUBMIT, status=Status.DONE, score__isnull=False)
# What "solved" means everywhere (marks, progress, the Learn page): a Submit graded Accepted.
ACCEPTED_SUBMIT = Q(kind=Kind.SUBMIT, status=Status.DONE, verdict=Verdict.ACCEPTED)


# ----------------------------------------------------------------- the marks


@dataclass(frozen=True)
class Mark:
    """What the catalogue and track pages show on a challenge's card."""

    state: str
    best_score: float | None = None
    gave_up: bool = False  # the user gave up on it (web/challenges/learn.py), before or after solving

    @property
    def label(self) -> str:
        return STATE_LABELS[self.state]


def _state(accepted: int, total: int) -> str:
    if accepted:
        return SOLVED
    return ATTEMPTED if total else NOT_STARTED


def challenge_marks(user: AbstractBaseUser | AnonymousUser, challenges: list[Challenge] | None = None) -> dict[int, Mark]:
    """{challenge id: Mark} for the challenges the user tried (absent: not started), in one query.

    ``challenges`` narrows it; None means every challenge. Anonymous visitors get no marks.
    """
    if not user.is_authenticated:
        return {}
    # From the challenges' side, so that a challenge given up before any submission has its mark in the same query.
    rows = Challenge.objects.all() if challenges is None else Challenge.objects.filter(pk__in=[c.pk for c in challenges])
    mine = Q(submissions__user=user)
    aggregated = (
        rows.order_by()
        .annotate(
            total=Count("submissions", filter=mine),
            accepted=Count("submissions", filter=mine & _prefixed(ACCEPTED_SUBMIT)),
            best=Max("submissions__score", filter=mine & _prefixed(_GRADED_SUBMIT)),
            gave_up=Exists(GiveUp.objects.filter(user=user, challenge=OuterRef("pk"))),
        )
        .filter(Q(total__gt=0) | Q(gave_up=True))
        .values("pk", "total", "accepted", "best", "gave_up")
    )
    return {
        row["pk"]: Mark(
            # Given up before any submission: tried, in a way.
            _state(row["accepted"], row["total"]) if row["total"] else ATTEMPTED,
            None if row["best"] is None else float(row["best"]),
            bool(row["gave_up"]),
        )
        for row in aggregated
    }


def _prefixed(condition: Q) -> Q:
    """A Q on Submission's fields, read from a Challenge query (``submissions__`` before each field)."""
    return Q(*[(f"submissions__{key}", value) for key, value in condition.children], _connector=condition.connector, _negated=condition.negated)


# ---------------------------------------------------------- the progress page


@dataclass(frozen=True)
class Attempt:
    """One submission as a progress row names it: enough to say when, what and how it went."""

    id: int
    kind: str
    status: str
    verdict: str
    score: float | None
    created_at: datetime

    @property
    def verdict_label(self) -> str:
        if self.status != Status.DONE:
            return "Grading…"
        return Verdict(self.verdict).label if self.verdict in Verdict.values else "-"

    @property
    def kind_label(self) -> str:
        return Kind(self.kind).label


@dataclass(frozen=True)
class ChallengeProgress:
    challenge: Challenge
    state: str
    best_score: float | None
    submits: int
    runs: int
    last: Attempt | None
    #: The best Submit's score per probe category: {name: {score, passed, total}}.
    categories: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def state_label(self) -> str:
        return STATE_LABELS[self.state]


@dataclass(frozen=True)
class TrackProgress:
    slug: str
    title: str
    challenges: list[ChallengeProgress]

    @property
    def total(self) -> int:
        return len(self.challenges)

    @property
    def solved(self) -> int:
        return sum(1 for c in self.challenges if c.state == SOLVED)

    @property
    def attempted(self) -> int:
        return sum(1 for c in self.challenges if c.state == ATTEMPTED)

    @property
    def percent_solved(self) -> int:
        return round(100 * self.solved / self.total) if self.total else 0


@dataclass(frozen=True)
class Progress:
    tracks: list[TrackProgress]

    @property
    def total(self) -> int:
        return sum(t.total for t in self.tracks)

    @property
    def solved(self) -> int:
        return sum(t.solved for t in self.tracks)

    @property
    def attempted(self) -> int:
        return sum(t.attempted for t in self.tracks)


def _attempt(row: dict[str, Any]) -> Attempt:
    return Attempt(
        id=row["id"], kind=row["kind"], status=row["status"], verdict=row["verdict"],
        score=row["score"], created_at=row["created_at"],
    )  # fmt: skip


def progress_for(user: AbstractBaseUser) -> Progress:
    """Every track the user can see and every challenge in it, with the user's state on each.

    Four queries whatever the number of challenges and submissions: the
    challenges, the track titles, one aggregate over the user's submissions
    (counts, best score, the ids of the newest and of the best one), and those rows.
    """
    challenges = list(challenge_list(user=user))
    best_submit = (
        Submission.objects.filter(_GRADED_SUBMIT, user=user, challenge_id=OuterRef("challenge_id"))
        .order_by("-score", "-created_at", "-id")
        .values("id")[:1]
    )
    aggregated = list(
        Submission.objects.filter(user=user, challenge__in=[c.pk for c in challenges])
        .order_by()
        .values("challenge_id")
        .annotate(
            total=Count("id"),
            # The platform's failures (internal_error) are attempts, but not the candidate's runs or submits.
            submits=Count("id", filter=Q(kind=Kind.SUBMIT) & CHARGED),
            runs=Count("id", filter=Q(kind=Kind.RUN) & CHARGED),
            accepted=Count("id", filter=ACCEPTED_SUBMIT),
            best=Max("score", filter=_GRADED_SUBMIT),
            last_id=Max("id"),
            best_id=Subquery(best_submit),
        )
    )
    wanted = {row["last_id"] for row in aggregated} | {row["best_id"] for row in aggregated if row["best_id"]}
    rows = {
        row["id"]: row
        for row in Submission.objects.filter(user=user, pk__in=wanted).values("id", "kind", "status", "verdict", "score", "created_at", "categories")
    }
    by_challenge = {row["challenge_id"]: row for row in aggregated}

    def one(challenge: Challenge) -> ChallengeProgress:
        agg = by_challenge.get(challenge.pk)
        if agg is None:
            return ChallengeProgress(challenge, NOT_STARTED, None, 0, 0, None)
        best_row = rows.get(agg["best_id"]) if agg["best_id"] else None
        return ChallengeProgress(
            challenge=challenge,
            state=_state(agg["accepted"], agg["total"]),
            best_score=None if agg["best"] is None else float(agg["best"]),
            submits=agg["submits"],
            runs=agg["runs"],
            last=_attempt(rows[agg["last_id"]]),
            categories=dict(best_row["categories"] or {}) if best_row else {},
        )

    tracks = [
        TrackProgress(group.track, group.info.title if group.info else group.track, [one(c) for c in group.challenges])
        for group in catalogue_groups(challenges)  # type: ignore[arg-type]  # any ordered iterable of challenges
    ]
    return Progress(tracks)


# --------------------------------------------------------- the score chart


def score_series(user: AbstractBaseUser) -> list[dict[str, Any]]:
    """The user's graded Submits, oldest first, one entry per challenge: what the chart of scores over attempts draws.

    [{slug, title, track, points: [{attempt, score, verdict, id, at}]}], challenges in the order first submitted.
    """
    series: dict[int, dict[str, Any]] = {}
    rows = (
        Submission.objects.filter(_GRADED_SUBMIT, user=user)
        .order_by("created_at", "id")
        .values("id", "challenge_id", "challenge__slug", "challenge__title", "challenge__track", "score", "verdict", "created_at")
    )
    for row in rows:
        entry = series.setdefault(
            row["challenge_id"],
            {"slug": row["challenge__slug"], "title": row["challenge__title"], "track": row["challenge__track"], "points": []},
        )
        entry["points"].append(
            {
                "attempt": len(entry["points"]) + 1,
                "score": float(row["score"]),
                "verdict": row["verdict"],
                "id": row["id"],
                "at": row["created_at"].isoformat(),
            }
        )
    return list(series.values())


# ------------------------------------------------------------- the history


@dataclass(frozen=True)
class HistoryFilters:
    """The history's filters, each None when not set (GET parameters of the page, query parameters of the API)."""

    challenge: str | None = None  # slug
    track: str | None = None
    kind: str | None = None  # run | submit
    verdict: str | None = None

    @property
    def active(self) -> bool:
        return any((self.challenge, self.track, self.kind, self.verdict))


class FilterError(ValueError):
    """A filter value that names no kind or verdict (the API answers 400; the page ignores it)."""


def history_filters(params: Any, *, strict: bool = False) -> HistoryFilters:
    """Read the filters from a QueryDict (or any mapping). Unknown kinds and verdicts are dropped, or refused when ``strict``."""

    def value(name: str, allowed: list[str] | None = None) -> str | None:
        raw = (params.get(name) or "").strip()
        if not raw:
            return None
        if allowed is not None and raw not in allowed:
            if strict:
                raise FilterError(f"{name} must be one of: {', '.join(allowed)}.")
            return None
        return raw

    return HistoryFilters(
        challenge=value("challenge"), track=value("track"), kind=value("kind", list(Kind.values)), verdict=value("verdict", list(Verdict.values))
    )


def submission_history_all(user: AbstractBaseUser, filters: HistoryFilters = HistoryFilters()) -> QuerySet[Submission]:
    """The user's submissions, newest first, filtered: rows for a list (no code, no result), with their challenge."""
    qs = Submission.objects.filter(user=user).select_related("challenge").only(
        "id", "kind", "status", "verdict", "score", "created_at", "finished_at", "user_id",
        "challenge__id", "challenge__slug", "challenge__title", "challenge__track",
    )  # fmt: skip
    if filters.challenge:
        qs = qs.filter(challenge__slug=filters.challenge)
    if filters.track:
        qs = qs.filter(challenge__track=filters.track)
    if filters.kind:
        qs = qs.filter(kind=filters.kind)
    if filters.verdict:
        qs = qs.filter(status=Status.DONE, verdict=filters.verdict)
    return qs.order_by("-created_at", "-id")


def history_choices(user: AbstractBaseUser) -> dict[str, list[tuple[str, str]]]:
    """The filter menus: the challenges and tracks the user submitted to, every kind and verdict. One query."""
    seen = list(Submission.objects.filter(user=user).order_by().values_list("challenge__slug", "challenge__title", "challenge__track").distinct())
    return {
        "challenges": sorted({(slug, title) for slug, title, _ in seen}, key=lambda c: c[1].lower()),
        "tracks": [(t, t) for t in sorted({track for _, _, track in seen})],
        "kinds": list(Kind.choices),
        "verdicts": list(Verdict.choices),
    }
