"""A Run or Submit of an interview as its interviewer sees it: the whole stored result, live while it is graded.

The candidate's pages get a result through the feedback policy
(``grader.feedback.candidate_view``, in web/submissions/presenters.py); the
interviewer is on the other side of that boundary ("coaches and
interviewers see all", DESIGN.md): every probe's message as the check wrote
it, observations and expected values of public probes with their
structured diff, printed output, the check's details, the full error
report, and every hint the submission unlocked with its text, marked with
whether and when the candidate revealed it. Nothing here is ever sent to a
candidate: the only caller is the coach's run page and its JSON
(web/interviews/views.py), behind ``selectors.interview_get_for_coach``, and
the submission must be one of that interview's.
"""

from __future__ import annotations

from typing import Any

from django.urls import reverse

from grader.diagnose import DIAGNOSIS_KIND
from grader.feedback import candidate_progress
from web.challenges.rendering import markdown_to_html
from web.interviews import selectors
from web.interviews.models import Interview
from web.interviews.timeline import clock, offset_since_start
from web.submissions.models import Kind, Status, Submission


def interview_submission_get(interview: Interview, submission_id: int) -> Submission | None:
    """The submission if it was made through this interview; None otherwise (another's, or none)."""
    return (
        Submission.objects.select_related("challenge", "version")
        .defer("version__files")
        .filter(pk=submission_id, interview_link__interview=interview)
        .first()
    )


def _probe(stored: dict[str, Any]) -> dict[str, Any]:
    # Everything stored, except empty value fields: a hidden probe keeps no observation, and the
    # panel would draw "null" beside "null".
    return {k: v for k, v in stored.items() if not (k in ("observation", "expected", "diff", "error_report") and v is None)}


def _hints(interview: Interview, submission: Submission) -> list[dict[str, Any]]:
    reveals = {h.hint_id: h for h in selectors.interview_hint_reveals(interview) if h.challenge_id == submission.challenge_id}
    rows = []
    for hint in submission.hints or []:
        reveal = reveals.get(str(hint.get("id")))
        at = offset_since_start(interview, reveal.revealed_at) if reveal else None
        rows.append({
            "id": str(hint.get("id")), "tier": int(hint.get("tier") or 0),
            "probes": [str(n) for n in hint.get("probes") or []],
            "html": str(markdown_to_html(str(hint.get("text", "")))),
            "revealed": reveal is not None, "revealed_at": reveal.revealed_at.isoformat() if reveal else None,
            "revealed_clock": clock(at) if reveal else None, "key": f"hint:{reveal.pk}" if reveal else None,
            # A diagnosis (grader/diagnose.py): the interviewer sees which shipped wrong solution it matched, and how closely.
            "kind": DIAGNOSIS_KIND if hint.get("kind") == DIAGNOSIS_KIND else "hint",
            "solution": str(hint.get("solution") or "") if hint.get("kind") == DIAGNOSIS_KIND else None,
            "similarity": hint.get("similarity") if hint.get("kind") == DIAGNOSIS_KIND else None,
            "rules": [str(r) for r in hint.get("rules") or []] if hint.get("kind") == DIAGNOSIS_KIND else None,
        })  # fmt: skip
    return rows


def coach_submission_payload(interview: Interview, submission: Submission) -> dict[str, Any]:
    """The result panel's payload (the shape of ``submission_payload``) with the whole result, ``full: true``.

    ``hints`` is empty for the panel (its buttons are the candidate's); the
    interviewer's list is ``unlocked_hints``.
    """
    done = submission.status == Status.DONE
    running = submission.status == Status.RUNNING
    offset = offset_since_start(interview, submission.created_at)
    return {
        "id": submission.pk,
        "kind": submission.kind,
        "status": submission.status,
        "done": done,
        "full": True,
        "verdict": submission.verdict or None,
        "verdict_label": submission.get_verdict_display() if submission.verdict else None,
        "score": submission.score,
        "categories": submission.categories if done else {},
        "probes": [_probe(p) for p in submission.probes or []] if done else [],
        "message": submission.message,
        "hints": [],
        "unlocked_hints": _hints(interview, submission) if done else [],
        # While it runs: every finished probe's line with the runner's status (the interviewer may see it all).
        "live": candidate_progress(submission.live, public=True) if running else None,
        "timings": submission.timings if done else {},
        "version": submission.version.short_version,
        "challenge": {"slug": submission.challenge.slug, "title": submission.challenge.title},
        "public": submission.kind == Kind.RUN,
        "key": f"{submission.kind}:{submission.pk}",
        "clock": clock(offset),
        "created_at": submission.created_at.isoformat(),
        "started_at": submission.started_at.isoformat() if submission.started_at else None,
        "finished_at": submission.finished_at.isoformat() if submission.finished_at else None,
        "url": reverse("interview-run-status", args=[interview.pk, submission.pk]),
        "regrade_url": None,
    }
