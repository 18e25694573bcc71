"""Per-challenge figures for coaches choosing questions: typical solve time, and how past interviews went.

Read-only, over every coach's past data, as aggregates only (no candidate,
interview or code is named), so any coach may read them: the picker on the
create and template forms, and the statistics page.

- Typical solve time: the median time to the first accepted Submit. In an
  interview it runs from the interview's start (the clock the candidate
  had); in practice from the candidate's first submission of the challenge
  (the first sign that they were working on it). A practice solve whose
  first submission was already the accepted one says nothing of how long it
  took and is left out. Fewer than ``MIN_SOLVES`` solves are too few for a
  median to mean much: the figure then falls back on ``FALLBACK_MINUTES``
  for the challenge's difficulty, and says so.
- Interview statistics, over interviews that have ended: sessions (how many
  interviews included the challenge), solve rate (the share with an accepted
  Submit), the median time from the interview's start to that Submit, and
  the hidden probes that failed most often in their Submits (by name, from
  Submission.probes as stored).
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Min, Q
from django.utils import timezone

from web.challenges.models import Challenge, Difficulty
from web.challenges.selectors import challenge_list
from web.interviews.models import Interview, InterviewChallenge
from web.submissions.models import Kind, Submission, Verdict

#: Fewer solves than this and the median is not shown as the typical time.
MIN_SOLVES = 5

#: Minutes to expect when there is too little data, by difficulty. From the
#: packages' scope, not measured: a warm-up is a one-function fix read off the
#: statement; easy is one short function with a rule or two; medium is an
#: implementation with gradients or numerics to get right (most of the
#: framework-internals track); hard is a pass, an engine or a bisection with
#: several interacting rules. Sized the way coaches plan slots: an hour holds
#: one hard challenge, or two mediums, or a medium and a couple of easy ones.
FALLBACK_MINUTES: dict[str, int] = {
    Difficulty.WARM_UP: 8,
    Difficulty.EASY: 15,
    Difficulty.MEDIUM: 30,
    Difficulty.HARD: 50,
}
FALLBACK_DEFAULT_MINUTES = 30

#: Failed probes listed per challenge on the statistics page.
TOP_FAILED = 3


@dataclass(frozen=True)
class SolveTime:
    minutes: int  # what to plan for: the median, or the difficulty's figure
    measured: bool  # True: the median of ``solves`` solves
    solves: int
    text: str


@dataclass
class ChallengeStats:
    challenge: Challenge
    typical: SolveTime
    sessions: int = 0  # ended interviews that included it
    solved: int = 0  # of those, with an accepted Submit
    median_minutes: float | None = None  # interview start to the first accepted Submit, over the solved sessions
    failed_probes: list[tuple[str, int]] = field(default_factory=list)  # (probe name, failed Submits), most first

    @property
    def solve_rate(self) -> float | None:
        return self.solved / self.sessions if self.sessions else None

    @property
    def solve_rate_text(self) -> str:
        rate = self.solve_rate
        return "no sessions yet" if rate is None else f"{rate:.0%} of {self.sessions} session{'s' if self.sessions != 1 else ''}"


def _minutes(start: datetime, end: datetime) -> float:
    return max(0.0, (end - start).total_seconds() / 60)


def _interview_solves(challenge_ids: Iterable[int] | None = None) -> dict[tuple[int, int], float]:
    """{(interview id, challenge id): minutes from the interview's start to its first accepted Submit}."""
    rows = Submission.objects.filter(interview_link__isnull=False, kind=Kind.SUBMIT, verdict=Verdict.ACCEPTED)
    if challenge_ids is not None:
        rows = rows.filter(challenge_id__in=list(challenge_ids))
    solves = {}
    grouped = rows.values("interview_link__interview_id", "interview_link__interview__started_at", "challenge_id").annotate(first=Min("created_at"))
    for row in grouped:
        started = row["interview_link__interview__started_at"]
        if started is not None:
            solves[(row["interview_link__interview_id"], row["challenge_id"])] = _minutes(started, row["first"])
    return solves


def _practice_solves(challenge_ids: Iterable[int] | None = None) -> dict[int, list[float]]:
    """{challenge id: [minutes from a candidate's first practice submission to their first accepted Submit]}."""
    rows = Submission.objects.filter(interview_link__isnull=True)
    if challenge_ids is not None:
        rows = rows.filter(challenge_id__in=list(challenge_ids))
    accepted = Q(kind=Kind.SUBMIT, verdict=Verdict.ACCEPTED)
    grouped = rows.values("user_id", "challenge_id").annotate(first=Min("created_at"), first_ok=Min("created_at", filter=accepted))
    out: dict[int, list[float]] = defaultdict(list)
    for row in grouped:
        if row["first_ok"] is not None and row["first_ok"] > row["first"]:
            out[row["challenge_id"]].append(_minutes(row["first"], row["first_ok"]))
    return out


def _typical(challenge: Challenge, samples: list[float]) -> SolveTime:
    if len(samples) >= MIN_SOLVES:
        median = statistics.median(samples)
        minutes = max(1, round(median))
        return SolveTime(minutes, True, len(samples), f"typically {minutes} min (median of {len(samples)} solves)")
    fallback = FALLBACK_MINUTES.get(challenge.difficulty, FALLBACK_DEFAULT_MINUTES)
    few = "no solves yet" if not samples else f"only {len(samples)} solve{'s' if len(samples) != 1 else ''}"
    label = challenge.get_difficulty_display().lower()
    return SolveTime(fallback, False, len(samples), f"about {fallback} min ({few}; the usual figure for {label})")


def _ended(interview: Interview, now: datetime) -> bool:
    end = interview.ends_at()
    return end is not None and end <= now if interview.started_at else False


def challenge_stats(challenges: Iterable[Challenge] | None = None) -> list[ChallengeStats]:
    """Statistics per challenge (every published one by default), in catalogue order."""
    chosen = list(challenges if challenges is not None else challenge_list(user=None))
    ids = [c.pk for c in chosen]
    interview_solves = _interview_solves(ids)
    practice = _practice_solves(ids)
    samples: dict[int, list[float]] = defaultdict(list)
    for (_, cid), minutes in interview_solves.items():
        samples[cid].append(minutes)
    for cid, minutes_list in practice.items():
        samples[cid].extend(minutes_list)
    result = {c.pk: ChallengeStats(c, _typical(c, samples[c.pk])) for c in chosen}

    now = timezone.now()
    items = InterviewChallenge.objects.filter(challenge_id__in=ids, interview__started_at__isnull=False).select_related("interview")
    ended_ids: set[int] = set()
    solved_minutes: dict[int, list[float]] = defaultdict(list)
    for item in items:
        if not _ended(item.interview, now):
            continue
        ended_ids.add(item.interview_id)
        stats = result[item.challenge_id]
        stats.sessions += 1
        minutes = interview_solves.get((item.interview_id, item.challenge_id))
        if minutes is not None:
            stats.solved += 1
            solved_minutes[item.challenge_id].append(minutes)
    for cid, values in solved_minutes.items():
        result[cid].median_minutes = round(statistics.median(values), 1)

    failed: dict[int, Counter[str]] = defaultdict(Counter)
    submits = Submission.objects.filter(
        interview_link__interview_id__in=ended_ids, kind=Kind.SUBMIT, challenge_id__in=ids, verdict__gt=""
    ).values_list("challenge_id", "probes")
    for cid, probes in submits:
        for probe in probes or []:
            if isinstance(probe, dict) and probe.get("passed") is False and probe.get("name"):
                failed[cid][str(probe["name"])] += 1
    for cid, counter in failed.items():
        result[cid].failed_probes = counter.most_common(TOP_FAILED)
    return [result[c.pk] for c in chosen]
