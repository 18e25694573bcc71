"""The JSON a candidate's page gets for a submission: what they may see, nothing more.

The stored result is the grader's full output (coaches and staff read it
whole). What its candidate sees of it is decided by the grader's feedback
policy, ``grader.feedback.candidate_view``, and by nothing here: for Run every
probe's message, observation, expected value and printed output; for Submit
a message composed from templates, with nothing the candidate's code printed,
raised or returned, and no expected value (DESIGN.md, trust boundary point 5).
Hint texts are included only for hints the candidate revealed (none is shown unasked),
rendered from Markdown and sanitised. Everything else is plain data that the
page inserts as text, never as HTML.

A mock interview's coach may let its candidate see hidden probes in full
(``hidden_probes="full"``): then a Submit's probes pass through the policy as
a Run's do, with observations, expected values and output, which is what the
interviewer sees. The default, and every page outside such an interview, is
``"summary"``: the policy's hidden view.

The payload names the URLs to poll, reveal a hint and regrade: the page's own
JSON endpoints by default, the API's (web.api) with ``API_ROUTES``, so a
token caller is never sent to an endpoint that needs a session cookie.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from django.urls import reverse

from grader.diagnose import DIAGNOSIS_KIND
from grader.feedback import candidate_progress, candidate_view, syntax_error_line
from web.challenges.rendering import markdown_to_html
from web.submissions.hints import hint_can_reveal, hint_is_shown, offered_hint
from web.submissions.models import Kind, Status, Submission, Verdict
from web.submissions.waiting import queue_ahead


@dataclass(frozen=True)
class SubmissionRoutes:
    """URL names for one submission's follow-up actions (each takes the submission's pk)."""

    status: str
    hint_reveal: str  # also takes the hint id
    regrade: str
    cancel: str
    args: tuple[str, ...] = ()  # URL arguments before the submission's pk (a mock interview's token)


PAGE_ROUTES = SubmissionRoutes(
    status="submission-status", hint_reveal="submission-hint-reveal", regrade="submission-regrade", cancel="submission-cancel"
)
API_ROUTES = SubmissionRoutes(status="api-submission", hint_reveal="api-hint-reveal", regrade="api-regrade", cancel="api-cancel")


def _iso(value: Any) -> str | None:
    return value.isoformat() if value else None


def hints_payload(submission: Submission, revealed_ids: set[str], routes: SubmissionRoutes = PAGE_ROUTES) -> list[dict[str, Any]]:
    """Every hint the submission unlocked, in the grader's order (tier, then the probe to fix first); texts only of revealed ones.

    ``offered`` marks the one a "show a hint" button reveals next.
    """
    unlocked = list(submission.hints or [])
    # The diagnosis (grader/diagnose.py) has a button of its own: "show a hint" offers only the ladder's hints.
    offered = offered_hint([h for h in unlocked if h.get("kind") != DIAGNOSIS_KIND], revealed_ids)
    payload = []
    for hint in unlocked:
        shown = hint_is_shown(hint, revealed_ids)
        payload.append(
            {
                "id": str(hint["id"]),
                # "diagnosis": the known mistake the failures look like, in its author's words; else "hint".
                "kind": DIAGNOSIS_KIND if hint.get("kind") == DIAGNOSIS_KIND else "hint",
                # A diagnosis names a known mistake, or (no mistake near) the parts of the statement whose probes fail.
                "basis": ("statement" if hint.get("rules") else "mistake") if hint.get("kind") == DIAGNOSIS_KIND else None,
                "tier": int(hint["tier"]),
                "tags": list(hint.get("tags") or []),
                # The failing probes it is about, the one to fix first first (empty for results stored before).
                "probes": [str(name) for name in hint.get("probes") or []],
                "shown": shown,
                "html": str(markdown_to_html(str(hint.get("text", "")))) if shown else None,
                "can_reveal": hint_can_reveal(hint, unlocked, revealed_ids),
                "offered": hint is offered,
                "reveal_url": _url(routes, routes.hint_reveal, submission, str(hint["id"])),
            }
        )
    return payload


def _url(routes: SubmissionRoutes, route: str, submission: Submission, *args: str) -> str | None:
    """The route for this submission; None for one never saved (``manage.py grade --as-candidate``)."""
    return None if submission.pk is None else reverse(route, args=[*routes.args, submission.pk, *args])


#: How much of a hidden probe the candidate sees: the feedback policy's summary, or everything (a mock interview's setting).
HiddenProbes = Literal["summary", "full"]


def submission_payload(
    submission: Submission, revealed_ids: set[str], routes: SubmissionRoutes = PAGE_ROUTES, *, hidden_probes: HiddenProbes = "summary"
) -> dict[str, Any]:
    if hidden_probes not in ("summary", "full"):
        raise ValueError(f"hidden_probes is 'summary' or 'full', not {hidden_probes!r}")
    # "full" shows a Submit's probes as a Run's: everything the stored result holds for each probe.
    public = submission.kind == Kind.RUN or hidden_probes == "full"
    done = submission.is_done
    # The one policy decides what of the stored result its candidate sees.
    stored = {
        "verdict": submission.verdict or None,
        "score": submission.score,
        "categories": submission.categories if done else {},
        "probes": submission.probes if done else [],
        "message": submission.message,
        "public": public,
    }
    view = candidate_view(stored)
    return {
        "id": submission.pk,
        "kind": submission.kind,
        "status": submission.status,
        "done": done,
        "verdict": view["verdict"],
        "verdict_label": submission.get_verdict_display() if submission.verdict else None,
        "score": view["score"],
        "categories": view["categories"],
        "probes": view["probes"],
        # "full": every probe carries its observation, expected value and output (a Run, or a session that shows hidden probes in full).
        "probe_details": "full" if public else "summary",
        "hints": hints_payload(submission, revealed_ids, routes) if done else [],
        "message": view["message"],
        # Code that did not compile: the line its error names, marked in the editor (None otherwise).
        "error_line": syntax_error_line(view["message"]) if view["verdict"] == Verdict.SYNTAX_ERROR else None,
        # While it runs: the probes finished so far, as the policy lets the candidate see them (None otherwise).
        "live": candidate_progress(submission.live, public=public) if submission.status == Status.RUNNING else None,
        # While queued: how many gradings on its queue are ahead of it (None otherwise).
        "queue_ahead": queue_ahead(submission) if submission.status == Status.QUEUED else None,
        "version": submission.version.short_version,
        "created_at": _iso(submission.created_at),
        "started_at": _iso(submission.started_at),
        "finished_at": _iso(submission.finished_at),
        "url": _url(routes, routes.status, submission),
        # The platform failed to grade it: the candidate may have it graded again.
        "regrade_url": _url(routes, routes.regrade, submission) if done and submission.verdict == Verdict.INTERNAL_ERROR else None,
        # While it is queued or running: the candidate may stop it (services/cancel.py); once asked, "cancelling".
        "cancel_url": _url(routes, routes.cancel, submission) if not done and not submission.cancel_requested else None,
        "cancelling": not done and submission.cancel_requested,
    }
