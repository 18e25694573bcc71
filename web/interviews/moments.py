"""The citable moments of an interview: what a rubric row may point at as evidence.

A moment is one thing that happened, named by a stable key ``"<kind>:<id>"``
that stays the same for the life of the interview: ``run:122`` and
``submit:123`` (a Submission's id, with its probes' outcomes once graded),
``hint:45`` (a HintReveal's id), ``snapshot:88`` (an autosave's id),
``focus:7`` (the candidate's page left or came back, web/interviews/replay.py)
and ``note:9`` (the interviewer's note at a moment): the same keys as the
replay's timeline (web/interviews/timeline.py). Each
kind comes from one *source*, a function that lists the interview's
moments of that kind; ``interview_moments`` merges them (newest first, what
the "cite a moment" picker shows) and ``moment_get`` finds one by its key
(how a citation is validated: a key that is not this interview's is
refused). More kinds plug in with ``register_moment_source`` and nothing
else changes.

Moments are for the interviewer only: run and submit moments carry every
probe's name, category and outcome (coaches see all; the candidate never
reads this module).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models.functions import Length

from web.interviews import selectors
from web.interviews.models import FocusEvent, FocusState, Interview, Snapshot, TimelineNote
from web.submissions.models import Kind, Status, Submission


@dataclass(frozen=True)
class ProbeOutcome:
    name: str
    category: str
    passed: bool
    fixed: bool = False  # passed here, failed in an earlier run or submit of the same challenge

    @property
    def outcome(self) -> str:
        return "fixed" if self.fixed else ("passed" if self.passed else "failed")


@dataclass(frozen=True)
class Moment:
    key: str  # "<kind>:<id>", stable
    kind: str
    at: datetime
    label: str  # one line, for the picker and the scorecard
    challenge: str = ""  # the challenge's title, when the moment belongs to one
    submission_id: int | None = None
    verdict: str | None = None
    score: float | None = None
    graded: bool = False  # a run or submit whose probes are known
    probes: tuple[ProbeOutcome, ...] = field(default_factory=tuple)  # failed first

    def probe(self, name: str) -> ProbeOutcome | None:
        return next((p for p in self.probes if p.name == name), None)


MomentSource = Callable[[Interview], Iterable[Moment]]
_SOURCES: dict[str, MomentSource] = {}


def register_moment_source(kinds: Iterable[str], source: MomentSource) -> None:
    """Make the moments of these kinds citable: ``source(interview)`` lists them, each keyed "<kind>:<id>".

    One source may list several kinds (runs and submits come from one query).
    """
    for kind in kinds:
        _SOURCES[kind] = source


def moment_kinds() -> list[str]:
    return list(_SOURCES)


class UnknownMoment(LookupError):
    """The key names no moment of this interview (malformed, unknown kind, or another interview's)."""


def interview_moments(interview: Interview, kinds: Iterable[str] | None = None) -> list[Moment]:
    """Every citable moment of the interview (or of the kinds given), newest first."""
    wanted = set(_SOURCES) if kinds is None else set(kinds) & set(_SOURCES)
    sources = list({id(_SOURCES[k]): _SOURCES[k] for k in wanted}.values())  # each source once
    found = [m for source in sources for m in source(interview) if m.kind in wanted]
    found.sort(key=lambda m: (m.at, m.key), reverse=True)
    return found


def moment_get(interview: Interview, key: str) -> Moment:
    """The moment named by ``key`` in this interview; UnknownMoment with the reason otherwise."""
    kind, _, ident = str(key).partition(":")
    if not ident.isdigit() or not kind:
        raise UnknownMoment(f"{key!r} is not a moment key; keys look like submit:123 or hint:45.")
    if kind not in _SOURCES:
        raise UnknownMoment(f"Moments of kind {kind!r} cannot be cited; use one of {', '.join(_SOURCES)}.")
    canonical = f"{kind}:{int(ident)}"
    found = next((m for m in _SOURCES[kind](interview) if m.key == canonical), None)
    if found is None:
        raise UnknownMoment(f"There is no {kind} {int(ident)} in this interview.")
    return found


# --- Time on the interview's clock ---------------------------------------------------------------


def offset_seconds(interview: Interview, at: datetime) -> int:
    """Whole seconds from the interview's start to ``at`` (0 before the start)."""
    if interview.started_at is None:
        return 0
    return max(0, int((at - interview.started_at).total_seconds()))


def clock(seconds: int) -> str:
    """mm:ss since the start (minutes past 59 keep counting: 72:05)."""
    return f"{seconds // 60:02d}:{seconds % 60:02d}"


def moment_payload(interview: Interview, m: Moment) -> dict[str, Any]:
    """A moment as JSON for the picker: ISO time, and mm:ss on the interview's clock."""
    seconds = offset_seconds(interview, m.at)
    return {
        "key": m.key, "kind": m.kind, "at": m.at.isoformat(), "offset_seconds": seconds, "clock": clock(seconds),
        "label": m.label, "challenge": m.challenge, "submission_id": m.submission_id, "verdict": m.verdict,
        "score": m.score, "graded": m.graded,
        "probes": [{"name": p.name, "category": p.category, "passed": p.passed, "outcome": p.outcome} for p in m.probes],
    }  # fmt: skip


# --- The sources -----------------------------------------------------------------------------------


def _probe_outcomes(s: Submission, failed_before: set[str]) -> tuple[ProbeOutcome, ...]:
    rows = []
    for line in s.probes or []:
        if not isinstance(line, dict) or not line.get("name"):
            continue
        name = str(line["name"])
        passed = line.get("passed") is True
        rows.append(ProbeOutcome(name, str(line.get("category") or ""), passed, fixed=passed and name in failed_before))
    # Failed first: they are what an interviewer cites most; the grader's order within each group.
    return tuple(sorted(rows, key=lambda p: p.passed))


def _result_text(s: Submission) -> str:
    if s.status == Status.DONE and s.score is not None:
        return f"{s.get_verdict_display()}, score {s.score:.1f}"
    return s.get_verdict_display() if s.verdict else s.get_status_display()


def _submission_moments(interview: Interview) -> list[Moment]:
    rows = (
        Submission.objects.filter(interview_link__interview=interview)
        .select_related("challenge")
        .only("id", "kind", "status", "verdict", "score", "probes", "created_at", "challenge__title")
        .order_by("created_at", "id")
    )
    moments = []
    failed: dict[int, set[str]] = {}  # challenge id -> probes failed so far
    for s in rows:
        seen = failed.setdefault(s.challenge_id, set())
        graded = s.status == Status.DONE
        probes = _probe_outcomes(s, seen) if graded else ()
        seen.update(p.name for p in probes if not p.passed)
        label = f"{s.get_kind_display()} #{s.pk}: {_result_text(s)}"
        moments.append(Moment(key=f"{s.kind}:{s.pk}", kind=s.kind, at=s.created_at, label=label, challenge=s.challenge.title,
                              submission_id=s.pk, verdict=s.verdict or None, score=s.score, graded=graded, probes=probes))  # fmt: skip
    return moments


_HEAVY = ("code", "probes", "hints", "categories", "timings", "live", "message")


def _hint_moments(interview: Interview) -> list[Moment]:
    moments = []
    # The selector's rule for which reveals count (none after the end); the submissions' heavy columns stay behind.
    reveals = selectors.interview_hint_reveals(interview).defer(*(f"submission__{f}" for f in _HEAVY))
    for h in reveals:
        label = f"Hint {h.hint_id} (tier {h.tier}) revealed"
        if h.submission_id:
            label += f" after #{h.submission_id}"
        moments.append(Moment(key=f"hint:{h.pk}", kind="hint", at=h.revealed_at, label=label, challenge=h.challenge.title,
                              submission_id=h.submission_id))  # fmt: skip
    return moments


def _snapshot_moments(interview: Interview) -> list[Moment]:
    # Autosaves come every few seconds: their code stays in the database, only its size is read.
    rows = (
        Snapshot.objects.filter(interview=interview)
        .select_related("challenge")
        .only("id", "created_at", "challenge__title")
        .annotate(size=Length("code"))
        .order_by("created_at", "id")
    )
    return [
        Moment(key=f"snapshot:{s.pk}", kind="snapshot", at=s.created_at, label=f"Code autosaved ({s.size} characters)", challenge=s.challenge.title)
        for s in rows
    ]


def _focus_moments(interview: Interview) -> list[Moment]:
    rows = FocusEvent.objects.filter(interview=interview).order_by("created_at", "id")
    moments = []
    for f in rows:
        went = "Left" if f.state == FocusState.LOST else "Came back to"
        moments.append(Moment(key=f"focus:{f.pk}", kind="focus", at=f.created_at, label=f"{went} the interview page ({f.get_reason_display()})"))
    return moments


def _note_moments(interview: Interview) -> list[Moment]:
    rows = TimelineNote.objects.filter(interview=interview).order_by("created_at", "id")
    return [Moment(key=f"note:{n.pk}", kind="note", at=n.created_at, label=f"Note: {n.text[:120]}") for n in rows]


register_moment_source([Kind.RUN.value, Kind.SUBMIT.value], _submission_moments)
register_moment_source(["focus"], _focus_moments)
register_moment_source(["note"], _note_moments)
register_moment_source(["hint"], _hint_moments)
register_moment_source(["snapshot"], _snapshot_moments)
