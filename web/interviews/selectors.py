"""Read-only interview queries: who may see which interview, and the data of the live view and the scorecard.

Access is decided here once. A coach's pages get an interview only if the
caller is its coach (or staff); the candidate's page only through the
private token *and* as the invited candidate, so the token is not a bearer
credential and anyone else gets the same miss as for a token that does not
exist. The live view's and the scorecard's data are built from the
interview's own rows: its snapshots, the submissions linked to it, and the
hints those submissions unlocked and the candidate revealed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, Max, Min, QuerySet
from django.urls import reverse
from django.utils import timezone

from web.challenges.models import Challenge
from web.challenges.rendering import markdown_to_html
from web.interviews.models import Criterion, Interview, InterviewChallenge, KeyEvent, RubricScore, Snapshot, State
from web.interviews.session_settings import feedback_text, policy_text, score_line
from web.submissions.models import HintReveal, Kind, Status, Submission, Verdict

User = AbstractBaseUser | AnonymousUser


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def interview_get_for_coach(interview_id: int, user: User) -> Interview | None:
    """The interview if the user runs it (its coach, or staff); else None, whatever the reason."""
    if not user.is_authenticated:
        return None
    rows = Interview.objects.select_related("coach", "candidate").filter(pk=interview_id)
    if not getattr(user, "is_staff", False):
        rows = rows.filter(coach=user)
    return rows.first()


def interview_get_for_candidate(token: str, user: User) -> Interview | None:
    """The interview behind a private link, for its invited candidate only."""
    if not user.is_authenticated or not token:
        return None
    return Interview.objects.select_related("coach", "candidate").filter(token=token, candidate=user).first()


def interviews_for_coach(user: AbstractBaseUser) -> QuerySet[Interview]:
    # Explicit order: Meta.ordering does not apply to an aggregating query.
    return Interview.objects.filter(coach=user).select_related("candidate").annotate(challenge_count=Count("items")).order_by("-created_at", "-id")


def interviews_for_candidate(user: AbstractBaseUser) -> list[Interview]:
    """The candidate's interviews that have not ended (scheduled or live), soonest made first."""
    now = timezone.now()
    rows = Interview.objects.filter(candidate=user).select_related("coach").order_by("created_at")
    return [i for i in rows if i.state(now) != State.ENDED]


def interview_challenges(interview: Interview) -> list[Challenge]:
    # The live view polls this every 2 s: the packages' files stay in the database.
    items = (
        InterviewChallenge.objects.filter(interview=interview)
        .select_related("challenge", "challenge__current_version")
        .defer("challenge__current_version__files")
    )
    return [item.challenge for item in items.order_by("position")]


def interview_submissions(interview: Interview) -> QuerySet[Submission]:
    return (
        Submission.objects.filter(interview_link__interview=interview)
        .select_related("challenge")
        .defer("probes", "categories", "timings")
        .order_by("created_at", "id")
    )


def interview_submission_for_candidate(interview: Interview, submission_id: int) -> Submission | None:
    """One of the interview's submissions, by its candidate (the caller checked the token and the user)."""
    return (
        Submission.objects.filter(pk=submission_id, interview_link__interview=interview, user_id=interview.candidate_id)
        .select_related("challenge", "version")
        .defer("code", "version__files")
        .first()
    )


def interview_hint_reveals(interview: Interview) -> QuerySet[HintReveal]:
    """Hints the candidate asked for through this interview's submissions (none is shown unasked).

    A hint revealed after the end does not count: the reveal endpoint is the
    challenge page's and stays open, but the interview was over.
    """
    rows = HintReveal.objects.filter(submission__interview_link__interview=interview)
    end = interview.ends_at()
    if end is not None:
        rows = rows.filter(revealed_at__lte=end)
    return rows.select_related("challenge", "submission").order_by("revealed_at", "id")


def latest_snapshot(interview: Interview, challenge_id: int) -> Snapshot | None:
    return Snapshot.objects.filter(interview=interview, challenge_id=challenge_id).order_by("-created_at", "-id").first()


def latest_snapshots(interview: Interview) -> dict[int, Snapshot]:
    """{challenge id: the latest autosave}.

    One indexed row per challenge (at most MAX_CHALLENGES): the live view
    asks every 2 s, and reading every snapshot of a long interview to keep
    the last would move hundreds of code copies each time.
    """
    ids = InterviewChallenge.objects.filter(interview=interview).values_list("challenge_id", flat=True)
    return {cid: snap for cid in ids if (snap := latest_snapshot(interview, cid)) is not None}


def snapshot_timeline(interview: Interview, challenge: Challenge, *, after_id: int = 0) -> list[dict[str, Any]]:
    """The autosaves of one challenge's code, oldest first: what the scrubber replays.

    ``after_id`` returns only the newer ones, so the live view fetches each
    snapshot once instead of the whole history every few seconds.
    """
    rows = Snapshot.objects.filter(interview=interview, challenge=challenge, pk__gt=after_id).order_by("created_at", "id")
    return [{"id": s.pk, "at": _iso(s.created_at), "code": s.code} for s in rows]


#: Keystroke events one code-timeline answer carries at most; the replay asks again for the rest.
KEY_EVENTS_PER_ANSWER = 5000


def key_timeline(interview: Interview, challenge: Challenge, *, after_id: int = 0) -> tuple[list[dict[str, Any]], bool]:
    """The candidate's applied edits and resets of one challenge after ``after_id``, oldest first, and whether more
    follow: ``{id, at, kind, ops}`` for an edit, ``{id, at, kind, text}`` for a reset (web/interviews/keys.py)."""
    rows = list(
        KeyEvent.objects.filter(interview=interview, challenge=challenge, pk__gt=after_id).order_by("id")[: KEY_EVENTS_PER_ANSWER + 1]
    )
    events = [
        {"id": e.pk, "at": _iso(e.created_at), "kind": e.kind, **({"text": e.text} if e.kind == KeyEvent.Kind.RESET else {"ops": e.ops})}
        for e in rows[:KEY_EVENTS_PER_ANSWER]
    ]
    return events, len(rows) > KEY_EVENTS_PER_ANSWER


def _hint_text(reveal: HintReveal) -> str:
    hints = reveal.submission.hints if reveal.submission is not None else []
    return next((str(h.get("text", "")) for h in hints or [] if str(h.get("id")) == reveal.hint_id), "")


def _submission_row(s: Submission) -> dict[str, Any]:
    # What the interviewer needs to follow along; no probe details, so no hidden data.
    lines = (s.live or {}).get("probes") or [] if s.status == Status.RUNNING else []
    return {
        "id": s.pk, "kind": s.kind, "status": s.status, "done": s.status == Status.DONE,
        "verdict": s.verdict or None, "verdict_label": s.get_verdict_display() if s.verdict else None,
        "score": s.score, "created_at": _iso(s.created_at), "finished_at": _iso(s.finished_at),
        # While it runs, how far it is (services/live.py): probes finished, passed, of how many.
        "progress": {
            "finished": len(lines), "total": (s.live or {}).get("total"),
            "passed": sum(1 for line in lines if line.get("outcome") == "passed"),
        } if lines else None,
    }  # fmt: skip


def _hint_row(h: HintReveal) -> dict[str, Any]:
    text = _hint_text(h)
    # "html": the text rendered from Markdown and sanitised (the live view shows it as the candidate saw it).
    return {"hint_id": h.hint_id, "tier": h.tier, "text": text, "html": str(markdown_to_html(text)),
            "revealed_at": _iso(h.revealed_at), "submission": h.submission_id}  # fmt: skip


def interview_live_state(interview: Interview) -> dict[str, Any]:
    """The live view's poll answer: the clock, and per challenge its latest code, runs, submits and hints."""
    now = timezone.now()
    challenges = interview_challenges(interview)
    latest = latest_snapshots(interview)
    counts = dict(Snapshot.objects.filter(interview=interview).values("challenge_id").annotate(n=Count("id")).values_list("challenge_id", "n"))
    submissions = list(interview_submissions(interview))
    hints = list(interview_hint_reveals(interview))
    rows = []
    for position, c in enumerate(challenges, start=1):
        snap = latest.get(c.pk)
        line = score_line(
            _best_submit([s for s in submissions if s.challenge_id == c.pk]),
            sum(1 for h in hints if h.challenge_id == c.pk), interview.hint_policy, interview.hint_penalty,
        )  # fmt: skip
        rows.append({
            # The score that counts after the hint penalty, and how it was reached ("100 - 10 for 1 hint = 90").
            "score_line": line.text, "counted_score": line.score,
            "slug": c.slug, "title": c.title, "position": position,
            "latest_code": snap.code if snap else None, "latest_at": _iso(snap.created_at) if snap else None,
            "snapshot_count": counts.get(c.pk, 0),
            "timeline_url": reverse("interview-timeline", args=[interview.pk, c.slug]),
            "submissions": [
                {**_submission_row(s), "url": reverse("interview-run-detail", args=[interview.pk, s.pk])}
                for s in submissions if s.challenge_id == c.pk
            ],
            "hints": [_hint_row(h) for h in hints if h.challenge_id == c.pk],
        })  # fmt: skip
    return {
        "id": interview.pk,
        "state": interview.state(now),
        "remaining_seconds": interview.remaining_seconds(now),
        "started_at": _iso(interview.started_at),
        "ends_at": _iso(interview.ends_at()),
        "settings": session_settings_summary(interview),
        "challenges": rows,
    }


def _best_submit(submissions: list[Submission]) -> float | None:
    scores = [s.score for s in submissions if s.kind == Kind.SUBMIT and s.status == Status.DONE and s.score is not None]
    return max(scores) if scores else None


def session_settings_summary(interview: Interview) -> dict[str, Any]:
    """The session's settings as the live view and the scorecard show them."""
    return {
        "hint_policy": interview.hint_policy, "hint_policy_label": interview.get_hint_policy_display(),
        "hint_penalty": interview.hint_penalty, "hints_text": policy_text(interview),
        "hidden_feedback": interview.hidden_feedback, "hidden_feedback_label": interview.get_hidden_feedback_display(),
        "feedback_text": feedback_text(interview),
    }  # fmt: skip


def interview_candidate_state(interview: Interview) -> dict[str, Any]:
    """What the candidate's page polls: the clock only (the server's, not the browser's)."""
    now = timezone.now()
    state = interview.state(now)
    message = ""
    if state == State.ENDED:
        message = "The interviewer ended the interview." if interview.ended_by_coach else "Time is up."
    return {"state": state, "remaining_seconds": interview.remaining_seconds(now), "message": message}


# --- The scorecard ------------------------------------------------------------------------


@dataclass
class ChallengeSummary:
    challenge: Challenge
    best: float | None
    runs: int
    submits: int
    hints: int
    snapshots: int
    first_edit: datetime | None
    last_edit: datetime | None
    final_code: str | None
    score_line: str = ""  # the best score after the hint penalty, with its arithmetic


@dataclass
class Event:
    at: datetime
    kind: str  # started, ended, snapshots, run, submit, hint
    challenge: str
    text: str
    score: float | None = None
    key: str = ""  # the timeline's stable key (web/interviews/timeline.py), "submit:12"
    clock: str = ""  # mm:ss since the clock started
    url: str | None = None  # a run's or submit's page for the interviewer


@dataclass
class RubricRow:
    criterion: str
    label: str
    score: int | None
    comment: str


@dataclass
class Scorecard:
    interview: Interview
    challenges: list[ChallengeSummary]
    events: list[Event]
    rubric: list[RubricRow]
    hints: list[dict[str, Any]] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    ended_at: datetime | None = None


def interview_scorecard(interview: Interview) -> Scorecard:
    challenges = interview_challenges(interview)
    submissions = list(interview_submissions(interview))
    reveals = list(interview_hint_reveals(interview))
    snap_stats = {
        row["challenge_id"]: row
        for row in Snapshot.objects.filter(interview=interview)
        .values("challenge_id")
        .annotate(n=Count("id"), first=Min("created_at"), last=Max("created_at"))
    }
    latest = latest_snapshots(interview)
    summaries = []
    events: list[Event] = []
    for c in challenges:
        mine = [s for s in submissions if s.challenge_id == c.pk]
        best = _best_submit(mine)
        stats = snap_stats.get(c.pk, {})
        n_hints = sum(1 for h in reveals if h.challenge_id == c.pk)
        summaries.append(ChallengeSummary(
            challenge=c, best=best,
            # The platform's failures (internal_error) are not the candidate's tries.
            runs=sum(1 for s in mine if s.kind == Kind.RUN and s.verdict != Verdict.INTERNAL_ERROR),
            submits=sum(1 for s in mine if s.kind == Kind.SUBMIT and s.verdict != Verdict.INTERNAL_ERROR),
            hints=sum(1 for h in reveals if h.challenge_id == c.pk), snapshots=int(stats.get("n", 0)),
            first_edit=stats.get("first"), last_edit=stats.get("last"),
            final_code=latest[c.pk].code if c.pk in latest else None,
            score_line=score_line(best, n_hints, interview.hint_policy, interview.hint_penalty).text,
        ))  # fmt: skip
        if stats:
            # Autosaves are summarised, one line per challenge: every 3 s would drown the rest.
            lines = len((latest[c.pk].code or "").splitlines()) if c.pk in latest else 0
            events.append(
                Event(stats["first"], "snapshots", c.title, f"{stats['n']} autosaves until {stats['last']:%H:%M:%S}; {lines} lines at the end")
            )
    for s in submissions:
        result = (
            f"{s.get_verdict_display()}, score {s.score:.1f}"
            if s.status == Status.DONE and s.score is not None
            else (s.get_verdict_display() if s.verdict else s.get_status_display())
        )
        events.append(Event(s.created_at, s.kind, s.challenge.title, f"{s.get_kind_display()} #{s.pk}: {result}", s.score,
                            key=f"{s.kind}:{s.pk}", url=reverse("interview-run-detail", args=[interview.pk, s.pk])))  # fmt: skip
    hint_rows = []
    for h in reveals:
        text = _hint_text(h)
        hint_rows.append({"challenge": h.challenge.title, "tier": h.tier, "hint_id": h.hint_id, "text": text,
                          "html": markdown_to_html(text), "at": h.revealed_at})  # fmt: skip
        events.append(Event(h.revealed_at, "hint", h.challenge.title, f"Hint {h.hint_id} (tier {h.tier}) shown", key=f"hint:{h.pk}"))
    if interview.started_at:
        events.append(
            Event(interview.started_at, "started", "", "The candidate opened the interview; the clock started", key=f"start:{interview.pk}")
        )
    end = interview.ends_at()
    ended_at = end if end is not None and interview.state(timezone.now()) == State.ENDED else None
    if ended_at is not None:
        events.append(
            Event(
                ended_at,
                "ended",
                "",
                "Ended by the interviewer" if interview.ended_at and interview.ended_at == end else "Time ran out",
                key=f"end:{interview.pk}",
            )
        )
    # The candidate leaving and coming back, and the interviewer's notes at a moment: the timeline's
    # (imported here because web/interviews/timeline.py reads through this module).
    from web.interviews.timeline import clock, interview_timeline, offset_since_start

    for moment in interview_timeline(interview, snapshots=False):
        if moment["kind"] in ("focus", "note"):
            events.append(Event(datetime.fromisoformat(moment["at"]), moment["kind"], "", moment["label"], key=moment["key"]))
    order = {"started": 0, "snapshots": 1, "run": 2, "submit": 2, "hint": 3, "focus": 4, "note": 5, "ended": 6}
    events.sort(key=lambda e: (e.at, order.get(e.kind, 9)))
    for e in events:
        e.clock = clock(offset_since_start(interview, e.at))
    scores = {r.criterion: r for r in RubricScore.objects.filter(interview=interview)}
    rubric = [
        RubricRow(value, str(label), scores[value].score if value in scores else None, scores[value].comment if value in scores else "")
        for value, label in Criterion.choices
    ]
    return Scorecard(
        interview=interview, challenges=summaries, events=events, rubric=rubric, hints=hint_rows, ended_at=ended_at,
        settings=session_settings_summary(interview),
    )  # fmt: skip


def interview_rubric(interview: Interview) -> dict[str, dict[str, Any]]:
    return {r.criterion: {"score": r.score, "comment": r.comment} for r in RubricScore.objects.filter(interview=interview)}
