"""A scorecard backed by evidence: rubric rows that cite moments of the interview, and the scorecard as JSON.

The interviewer (the interview's coach, or staff) cites a moment
(web/interviews/moments.py: a run, a submit, a hint reveal, an autosave,
...) in one rubric row with ``citation_add``, optionally naming one probe
of a run or submit ("gradients: failed double_backward at 12:41") and a
short comment of their own; ``citation_remove`` takes it back. A key must
name a moment of this interview and a probe one of that submission's,
else the citation is refused with the reason. What the moment looked like
is copied into the Citation row, so the printed scorecard reads the same
later. Citing works during the interview and after it, like the rest of
the assessment.

``rubric_citations`` and ``citation_payload`` are how the live view, the
printed scorecard and the API (``scorecard_export``) show them: the text,
mm:ss on the interview's clock, and links to the submission's details page
and to the moment on the timeline (``#t=<seconds>``). On the scorecard,
``evidence_lines`` puts the citations of one probe on one line: "gradients:
failed double_backward at 12:41, fixed at 14:03".
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import F
from django.urls import reverse
from django.utils import timezone

from web.errors import NotFound
from web.interviews import moments, selectors
from web.interviews.models import Citation, Criterion, Interview
from web.interviews.services import InterviewError
from web.submissions.models import Kind

CITATION_COMMENT_MAX_CHARS = 300
CITATIONS_PER_ROW = 12


class CitationNotFound(InterviewError, NotFound):
    """The citation named is not one of this interview's."""


def _may_assess(interview: Interview, user: AbstractBaseUser) -> bool:
    return bool(interview.coach_id == user.pk or getattr(user, "is_staff", False))


def _criterion_label(criterion: str) -> str:
    return str(Criterion(criterion).label)


# --- Services ----------------------------------------------------------------------------------------


def citation_add(interview: Interview, user: AbstractBaseUser, *, criterion: str, key: str, probe: str = "", comment: str = "") -> Citation:
    """Cite the moment ``key`` (and, for a run or submit, one ``probe`` of it) in the rubric row ``criterion``."""
    if not _may_assess(interview, user):
        raise InterviewError("Only the interview's coach can cite evidence in its rubric.")
    if criterion not in Criterion.values:
        raise InterviewError(f"Unknown rubric criterion {criterion!r}; use one of {', '.join(Criterion.values)}.")
    if not isinstance(key, str) or not key.strip():
        raise InterviewError("Name the moment to cite by its key, e.g. submit:123.")
    if not isinstance(probe, str):
        raise InterviewError("Name the probe by its name (text), or leave it empty to cite the whole moment.")
    if not isinstance(comment, str):
        raise InterviewError("The comment must be text.")
    comment = comment.strip()
    if len(comment) > CITATION_COMMENT_MAX_CHARS:
        raise InterviewError(f"Comments on a citation are limited to {CITATION_COMMENT_MAX_CHARS} characters; this one has {len(comment)}.")
    try:
        moment = moments.moment_get(interview, key.strip())
    except moments.UnknownMoment as exc:
        raise InterviewError(str(exc)) from None

    probe = probe.strip()
    outcome = None
    if probe:
        if moment.submission_id is None or moment.kind not in ("run", "submit"):
            raise InterviewError(f"Only a run or a submit has probes; {moment.key} is a {moment.kind}. Cite it without a probe.")
        if not moment.graded:
            raise InterviewError(f"#{moment.submission_id} is not graded yet, so its probes are not known; cite it whole or wait.")
        outcome = moment.probe(probe)
        if outcome is None:
            names = ", ".join(p.name for p in moment.probes) or "none"
            raise InterviewError(f"#{moment.submission_id} has no probe {probe!r}; its probes: {names}.")

    already = f"{_criterion_label(criterion)} already cites this {'probe' if probe else 'moment'}."
    row = Citation.objects.filter(interview=interview, criterion=criterion)
    if row.filter(moment_key=moment.key, probe=probe).exists():
        raise InterviewError(already)
    if row.count() >= CITATIONS_PER_ROW:
        raise InterviewError(f"{_criterion_label(criterion)} has {CITATIONS_PER_ROW} citations already; remove one first.")
    try:
        with transaction.atomic():  # the unique constraint settles two tabs citing the same thing at once
            return Citation.objects.create(
                interview=interview, criterion=criterion, moment_key=moment.key, kind=moment.kind, moment_at=moment.at,
                label=moment.label[:300], challenge_title=moment.challenge[:200], submission_id=moment.submission_id,
                probe=probe, probe_category=outcome.category[:64] if outcome else "", probe_outcome=outcome.outcome if outcome else "",
                comment=comment,
            )  # fmt: skip
    except IntegrityError:
        raise InterviewError(already) from None


def citation_remove(interview: Interview, user: AbstractBaseUser, citation_id: int) -> None:
    """Take a citation back; one of another interview (or none) is a CitationNotFound."""
    if not _may_assess(interview, user):
        raise InterviewError("Only the interview's coach can change its rubric.")
    deleted, _ = Citation.objects.filter(interview=interview, pk=citation_id).delete()
    if not deleted:
        raise CitationNotFound("This interview has no such citation; it may have been removed already.")


# --- Reading them ------------------------------------------------------------------------------------


def submission_details_url(interview: Interview, submission_id: int) -> str:
    """The interviewer's page of one run or submit of this interview (web/interviews/runs.py)."""
    return reverse("interview-run-detail", args=[interview.pk, submission_id])


def timeline_url(interview: Interview, seconds: int) -> str:
    """The moment on the interview's timeline (the live view, which replays ended interviews too)."""
    return f"{reverse('interview-live', args=[interview.pk])}#t={seconds}"


def citation_text(interview: Interview, c: Citation) -> str:
    """One line: "gradients: failed double_backward at 12:41", or the moment's label "... at 05:12"."""
    at = moments.clock(moments.offset_seconds(interview, c.moment_at))
    if c.probe:
        head = f"{c.probe_category}: " if c.probe_category else ""
        return f"{head}{c.probe_outcome or 'cited'} {c.probe} at {at}"
    return f"{c.label} at {at}"


def _submission_label(c: Citation) -> str | None:
    """ "Submit #123": the link text to the submission a citation points at (a hint's is the one that unlocked it)."""
    if c.submission_id is None:
        return None
    kind = getattr(c, "submission_kind", None) or (c.kind if c.kind in Kind.values else None)
    return f"{Kind(kind).label} #{c.submission_id}" if kind else f"#{c.submission_id}"


def citation_payload(interview: Interview, c: Citation) -> dict[str, Any]:
    seconds = moments.offset_seconds(interview, c.moment_at)
    return {
        "id": c.pk,
        "criterion": c.criterion,
        "key": c.moment_key,
        "kind": c.kind,
        "at": c.moment_at.isoformat(),
        "offset_seconds": seconds,
        "clock": moments.clock(seconds),
        "label": c.label,
        "challenge": c.challenge_title,
        "submission_id": c.submission_id,
        "submission_label": _submission_label(c),
        "probe": {"name": c.probe, "category": c.probe_category, "outcome": c.probe_outcome} if c.probe else None,
        "text": citation_text(interview, c),
        "comment": c.comment,
        "links": {
            "submission": submission_details_url(interview, c.submission_id) if c.submission_id else None,
            "timeline": timeline_url(interview, seconds),
        },
    }


def rubric_citations(interview: Interview) -> dict[str, list[dict[str, Any]]]:
    """{criterion: its citations in the order they happened}, every criterion present."""
    rows: dict[str, list[dict[str, Any]]] = {value: [] for value in Criterion.values}
    rows_cited = Citation.objects.filter(interview=interview).annotate(submission_kind=F("submission__kind")).order_by("moment_at", "id")
    for c in rows_cited:
        rows[c.criterion].append(citation_payload(interview, c))
    return rows


def evidence_lines(citations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A row's citations (payloads, in time order) as lines to read on the scorecard.

    The citations of one probe (of one challenge) share a line, so a failure
    and its fix read together: "correctness: failed positives at 12:41,
    fixed at 14:03". Every other citation is a line of its own. Lines come
    in the order of their first moment; each part keeps its citation's
    links and comment, with ``phrase`` the words that link to its moment.
    """
    lines: list[dict[str, Any]] = []
    by_probe: dict[tuple[str, str], dict[str, Any]] = {}
    for c in citations:
        group = (c["challenge"], c["probe"]["name"]) if c["probe"] else None
        if group is not None and group in by_probe:
            by_probe[group]["parts"].append({**c, "phrase": f"{c['probe']['outcome']} at {c['clock']}"})
            continue
        line: dict[str, Any] = {"parts": [{**c, "phrase": c["text"]}]}
        if group is not None:
            by_probe[group] = line
        lines.append(line)
    for line in lines:
        line["text"] = ", ".join(part["phrase"] for part in line["parts"])
        line["keys"] = [part["key"] for part in line["parts"]]
    return lines


def _rubric_row(row: selectors.RubricRow, citations: list[dict[str, Any]]) -> dict[str, Any]:
    lines = [{"text": line["text"], "keys": line["keys"]} for line in evidence_lines(citations)]
    return {"criterion": row.criterion, "label": row.label, "score": row.score, "comment": row.comment, "citations": citations, "evidence": lines}


def scorecard_export(interview: Interview) -> dict[str, Any]:
    """The scorecard as JSON (the API's): recommendation, notes, per challenge the results, the rubric with citations."""
    card = selectors.interview_scorecard(interview)
    cited = rubric_citations(interview)

    def iso(value: Any) -> str | None:
        return value.isoformat() if value else None

    return {
        "id": interview.pk,
        "candidate": interview.candidate.get_username(),
        "interviewer": interview.coach.get_username(),
        "state": str(interview.state(timezone.now())),
        "duration_minutes": interview.duration_minutes,
        "started_at": iso(interview.started_at),
        "ended_at": iso(card.ended_at),
        "recommendation": interview.recommendation or None,
        "recommendation_label": interview.get_recommendation_display() if interview.recommendation else None,
        "notes": interview.notes,
        "challenges": [
            {"slug": s.challenge.slug, "title": s.challenge.title, "best_score": s.best, "runs": s.runs, "submits": s.submits, "hints": s.hints}
            for s in card.challenges
        ],
        "rubric": [_rubric_row(r, cited[r.criterion]) for r in card.rubric],
        "scorecard_url": reverse("interview-scorecard", args=[interview.pk]),
    }
