"""The citable moments of an interview: what a rubric row may point at as evidence.

A moment is one thing that happened, named by a stable key ``"<kind>:<id>"``
(``submit:123``, ``hint:45``...): the moments and keys of
web/interviews/events.py, the same the replay's timeline plays.
``interview_moments`` lists them newest first (what the "cite a moment"
picker shows) and ``moment_get`` finds one by its key (how a citation is
validated: a key that is not this interview's is refused).

Moments are for the interviewer only: run and submit moments carry every
probe's name, category and outcome (coaches see all; the candidate never
reads this module).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from web.interviews.events import Moment, interview_events, moment_kinds, moment_source
from web.interviews.models import Interview
from web.interviews.timeline import clock, offset_since_start


class UnknownMoment(LookupError):
    """The key names no moment of this interview (malformed, unknown kind, or another interview's)."""


def interview_moments(interview: Interview, kinds: Iterable[str] | None = None) -> list[Moment]:
    """Every citable moment of the interview (or of the kinds given), newest first."""
    found = interview_events(interview, kinds)
    found.sort(key=lambda m: (m.at, m.key), reverse=True)
    return found


def moment_get(interview: Interview, key: str) -> Moment:
    """The moment named by ``key`` in this interview; UnknownMoment with the reason otherwise."""
    kind, _, ident = str(key).partition(":")
    if not ident.isdigit() or not kind:
        raise UnknownMoment(f"{key!r} is not a moment key; keys look like submit:123 or hint:45.")
    source = moment_source(kind)
    if source is None:
        raise UnknownMoment(f"Moments of kind {kind!r} cannot be cited; use one of {', '.join(moment_kinds())}.")
    canonical = f"{kind}:{int(ident)}"
    found = next((m for m in source(interview) if m.key == canonical), None)
    if found is None:
        raise UnknownMoment(f"There is no {kind} {int(ident)} in this interview.")
    return found


# --- Time on the interview's clock: the timeline's (one clock for the replay and the citations) ---------------


def offset_seconds(interview: Interview, at: datetime) -> int:
    """Whole seconds from the interview's start to ``at`` (0 before the start or without one)."""
    return int(offset_since_start(interview, at) or 0)


def moment_payload(interview: Interview, m: Moment) -> dict[str, Any]:
    """A moment as JSON for the picker: ISO time, and mm:ss on the interview's clock."""
    seconds = offset_seconds(interview, m.at)
    return {
        "key": m.key, "kind": m.kind, "at": m.at.isoformat(), "offset_seconds": seconds, "clock": clock(seconds),
        "label": m.label, "challenge": m.challenge, "submission_id": m.submission_id, "verdict": m.verdict,
        "score": m.score, "graded": m.graded,
        "probes": [{"name": p.name, "category": p.category, "passed": p.passed, "outcome": p.outcome} for p in m.probes],
    }  # fmt: skip
