"""What happened in one interview, as one list of moments: the model behind the replay's timeline and the citations.

Place in the flow: ``web/interviews/timeline.py`` plays these moments (with
the interview's start and end around them) and ``web/interviews/moments.py``
lets a rubric row cite one by its key. Both used to read the same five
tables their own way, with their own labels; now each kind of moment comes
from one *source* here, a function that lists the interview's moments of
that kind, and both read it.

A moment is named by a stable key ``"<kind>:<id>"``, the id being the row's
primary key in its own table: ``run:122`` and ``submit:123`` (a Submission,
with its probes' outcomes once graded), ``hint:45`` (a HintReveal),
``snapshot:88`` (an autosave), ``focus:7`` (the candidate's page left or
came back, web/interviews/replay.py) and ``note:9`` (the interviewer's note
at a moment). A key names the same moment for as long as the row exists, so
a citation can store it. More kinds plug in with ``register_moment_source``.

Read-only and as trusted as its caller: the views hand it only an interview
that ``selectors.interview_get_for_coach`` returned. Moments are for the
interviewer: run and submit moments carry every probe's name, category and
outcome (coaches see all; the candidate never reads this module). Code is
never part of a moment (an autosave's size is).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models.functions import Length
from django.urls import reverse

from web.interviews import selectors
from web.interviews.models import FocusEvent, FocusState, Interview, Snapshot, TimelineNote
from web.submissions.models import Kind, Status, Submission

#: Kinds, in the order the timeline lists moments that share a timestamp ("start" and "end" are the timeline's own).
KINDS = ("start", "snapshot", "run", "submit", "hint", "focus", "note", "end")
_RANK = {kind: i for i, kind in enumerate(KINDS)}
_TIER = {1: "nudge", 2: "concept", 3: "near-solution"}


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
    label: str  # one line of plain text, for the replay, the picker and the scorecard
    challenge: str = ""  # the challenge's title, when the moment belongs to one
    challenge_slug: str = ""
    submission_id: int | None = None
    status: str | None = None  # a run's or submit's
    verdict: str | None = None
    verdict_label: str | None = None
    score: float | None = None
    graded: bool = False  # a run or submit whose probes are known
    probes: tuple[ProbeOutcome, ...] = field(default_factory=tuple)  # failed first
    url: str | None = None  # the coach's page of a run or submit
    # Per kind: hints add hint_id and tier; focus adds state ("lost" or "regained") and reason ("tab" or "window");
    # notes add author.
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def row_id(self) -> int:
        return int(self.key.partition(":")[2])

    def probe(self, name: str) -> ProbeOutcome | None:
        return next((p for p in self.probes if p.name == name), None)


MomentSource = Callable[[Interview], Iterable[Moment]]
_SOURCES: dict[str, MomentSource] = {}


def register_moment_source(kinds: Iterable[str], source: MomentSource) -> None:
    """Make the moments of these kinds known: ``source(interview)`` lists them, each keyed "<kind>:<id>".

    One source may list several kinds (runs and submits come from one query).
    """
    for kind in kinds:
        _SOURCES[kind] = source


def moment_kinds() -> list[str]:
    return list(_SOURCES)


def moment_source(kind: str) -> MomentSource | None:
    return _SOURCES.get(kind)


def interview_events(interview: Interview, kinds: Iterable[str] | None = None) -> list[Moment]:
    """The interview's moments of every known kind (or of the kinds given), oldest first; moments that share a
    timestamp in :data:`KINDS` order, then by id."""
    wanted = set(_SOURCES) if kinds is None else set(kinds) & set(_SOURCES)
    sources = list({id(_SOURCES[k]): _SOURCES[k] for k in wanted}.values())  # each source once
    found = [m for source in sources for m in source(interview) if m.kind in wanted]
    found.sort(key=lambda m: (m.at, _RANK.get(m.kind, len(KINDS)), m.row_id))
    return found


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
    return s.get_verdict_display() if s.status == Status.DONE and s.verdict else s.get_status_display()


def _submission_moments(interview: Interview) -> list[Moment]:
    rows = (
        Submission.objects.filter(interview_link__interview=interview)
        .select_related("challenge")
        .only("id", "kind", "status", "verdict", "score", "probes", "created_at", "challenge__slug", "challenge__title")
        .order_by("created_at", "id")
    )
    moments = []
    failed: dict[int, set[str]] = {}  # challenge id -> probes failed so far
    for s in rows:
        seen = failed.setdefault(s.challenge_id, set())
        graded = s.status == Status.DONE
        probes = _probe_outcomes(s, seen) if graded else ()
        seen.update(p.name for p in probes if not p.passed)
        moments.append(Moment(
            key=f"{s.kind}:{s.pk}", kind=s.kind, at=s.created_at, label=f"{s.get_kind_display()} #{s.pk}: {_result_text(s)}",
            challenge=s.challenge.title, challenge_slug=s.challenge.slug, submission_id=s.pk, status=s.status,
            verdict=(s.verdict or None) if graded else None, verdict_label=s.get_verdict_display() if graded and s.verdict else None,
            score=s.score if graded else None, graded=graded, probes=probes,
            url=reverse("interview-run-detail", args=[interview.pk, s.pk]),
        ))  # fmt: skip
    return moments


_HEAVY = ("code", "probes", "hints", "categories", "timings", "live", "message")


def _hint_moments(interview: Interview) -> list[Moment]:
    moments = []
    # The selector's rule for which reveals count (none after the end); the submissions' heavy columns stay behind.
    reveals = selectors.interview_hint_reveals(interview).defer(*(f"submission__{f}" for f in _HEAVY))
    for h in reveals:
        tier = f"tier {h.tier}, {_TIER[h.tier]}" if h.tier in _TIER else f"tier {h.tier}"
        label = f"Hint {h.hint_id} revealed ({tier})" + (f" after #{h.submission_id}" if h.submission_id else "")
        moments.append(Moment(
            key=f"hint:{h.pk}", kind="hint", at=h.revealed_at, label=label, challenge=h.challenge.title,
            challenge_slug=h.challenge.slug, submission_id=h.submission_id, extra={"hint_id": h.hint_id, "tier": h.tier},
        ))  # fmt: skip
    return moments


def _snapshot_moments(interview: Interview) -> list[Moment]:
    # Autosaves come every few seconds: their code stays in the database, only its size is read.
    rows = (
        Snapshot.objects.filter(interview=interview)
        .select_related("challenge")
        .only("id", "created_at", "challenge__slug", "challenge__title")
        .annotate(size=Length("code"))
        .order_by("created_at", "id")
    )
    return [
        Moment(
            key=f"snapshot:{s.pk}", kind="snapshot", at=s.created_at, label=f"Code autosaved ({s.size} characters)",
            challenge=s.challenge.title, challenge_slug=s.challenge.slug,
        )
        for s in rows
    ]


def _focus_label(f: FocusEvent) -> str:
    if f.state == FocusState.LOST:
        return "Left the interview: tab hidden" if f.reason == "tab" else "Left the interview: window lost focus"
    return "Back on the interview: tab shown" if f.reason == "tab" else "Back on the interview: window focused"


def _focus_moments(interview: Interview) -> list[Moment]:
    rows = FocusEvent.objects.filter(interview=interview).order_by("created_at", "id")
    return [
        Moment(key=f"focus:{f.pk}", kind="focus", at=f.created_at, label=_focus_label(f), extra={"state": f.state, "reason": f.reason})
        for f in rows
    ]


def _note_moments(interview: Interview) -> list[Moment]:
    rows = TimelineNote.objects.filter(interview=interview).select_related("author").order_by("created_at", "id")
    return [
        Moment(key=f"note:{n.pk}", kind="note", at=n.created_at, label=f"Note: {n.text}", extra={"author": n.author.get_username()})
        for n in rows
    ]


register_moment_source([Kind.RUN.value, Kind.SUBMIT.value], _submission_moments)
register_moment_source(["snapshot"], _snapshot_moments)
register_moment_source(["hint"], _hint_moments)
register_moment_source(["focus"], _focus_moments)
register_moment_source(["note"], _note_moments)
