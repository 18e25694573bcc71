"""What the API shows of a challenge (its public parts only), and of the caller's progress and history.

A challenge's answer holds its catalogue fields, statement (Markdown and
sanitised HTML), starter code, the public probes' names, categories and
descriptions (read statically from probes/public.py, never run), and the
hints this user was already shown. Never the reference, the hidden probes,
checks, expected observations or hints not yet shown.
"""

from __future__ import annotations

import logging
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.urls import reverse

from grader.errors import PackageError
from web.challenges.models import Challenge
from web.challenges.rendering import markdown_to_html
from web.challenges.selectors import given_modules
from web.challenges.services import challenge_package
from web.submissions.models import HintReveal, Status, Submission
from web.submissions.progress import Attempt, Progress

logger = logging.getLogger(__name__)


def challenge_summary(challenge: Challenge) -> dict[str, Any]:
    version = challenge.current_version
    return {
        "slug": challenge.slug,
        "title": challenge.title,
        "track": challenge.track,
        "difficulty": challenge.difficulty,
        "tags": list(challenge.tags or []),
        "summary": challenge.summary,
        "runtime": version.runtime if version else "",
        "url": reverse("api-challenge", args=[challenge.slug]),
    }


def _public_probes(challenge: Challenge) -> list[dict[str, Any]]:
    assert challenge.current_version is not None
    try:
        specs = challenge_package(challenge.current_version).probes(public=True)
    except PackageError:
        logger.exception("stored version of %s does not load; listing no probes", challenge.slug)
        return []
    return [{"name": s.name, "category": s.category, "weight": s.weight, "description": s.description} for s in specs]


def _shown_hints(challenge: Challenge, user: AbstractBaseUser | AnonymousUser) -> list[dict[str, Any]]:
    """Hints the user asked to see (every tier on request), with their texts."""
    if not user.is_authenticated:
        return []
    assert challenge.current_version is not None
    reveals = HintReveal.objects.filter(user=user, challenge=challenge).select_related("submission")
    current = {str(h.get("id")): h for h in challenge.current_version.hints or []}
    shown = []
    for reveal in reveals:
        # The text as the unlocking submission's version had it; else the current package's.
        from_submission = {str(h.get("id")): h for h in (reveal.submission.hints if reveal.submission else [])}
        hint = from_submission.get(reveal.hint_id) or current.get(reveal.hint_id)
        if hint is None:
            continue
        text = str(hint.get("text", ""))
        shown.append(
            {"id": reveal.hint_id, "tier": reveal.tier, "tags": list(hint.get("tags") or []), "text": text, "html": str(markdown_to_html(text))}
        )
    return shown


def challenge_detail(challenge: Challenge, user: AbstractBaseUser | AnonymousUser) -> dict[str, Any]:
    version = challenge.current_version
    assert version is not None
    return {
        **challenge_summary(challenge),
        "version": version.version,
        "statement": version.statement,
        "statement_html": str(markdown_to_html(version.statement)),
        "entry": version.entry,
        "starter_code": version.starter_code,
        "given": [{"path": m.path, "import_name": m.import_name, "source": m.source} for m in given_modules(version)],
        "public_probes": _public_probes(challenge),
        "hints": _shown_hints(challenge, user),
        "submit_url": reverse("api-submit", args=[challenge.slug]),
    }


# ------------------------------------------------------------ progress and history


def _attempt(attempt: Attempt | None) -> dict[str, Any] | None:
    if attempt is None:
        return None
    return {
        "id": attempt.id,
        "kind": attempt.kind,
        "status": attempt.status,
        "verdict": attempt.verdict or None,
        "verdict_label": attempt.verdict_label if attempt.status == Status.DONE else None,
        "created_at": attempt.created_at.isoformat(),
        "url": reverse("api-submission", args=[attempt.id]),
    }


def progress_payload(progress: Progress, series: list[dict[str, Any]]) -> dict[str, Any]:
    """The progress page as data (web.submissions.progress computes it; this only shapes it)."""
    return {
        "solved": progress.solved,
        "attempted": progress.attempted,
        "total": progress.total,
        "tracks": [
            {
                "slug": track.slug,
                "title": track.title,
                "solved": track.solved,
                "attempted": track.attempted,
                "total": track.total,
                "challenges": [
                    {
                        "slug": row.challenge.slug,
                        "title": row.challenge.title,
                        "difficulty": row.challenge.difficulty,
                        "state": row.state,
                        "best_score": row.best_score,
                        "submits": row.submits,
                        "runs": row.runs,
                        "categories": row.categories,
                        "last_attempt": _attempt(row.last),
                    }
                    for row in track.challenges
                ],
            }
            for track in progress.tracks
        ],
        "scores": [{**s, "points": [{**p, "url": reverse("api-submission", args=[p["id"]])} for p in s["points"]]} for s in series],
    }


def history_row(submission: Submission) -> dict[str, Any]:
    """One row of the history: what and when, how it went; the result itself is at ``url``."""
    done = submission.status == Status.DONE
    return {
        "id": submission.pk,
        "challenge": submission.challenge.slug,
        "title": submission.challenge.title,
        "track": submission.challenge.track,
        "kind": submission.kind,
        "status": submission.status,
        "verdict": (submission.verdict or None) if done else None,
        "verdict_label": submission.get_verdict_display() if done and submission.verdict else None,
        "score": submission.score if done else None,
        "created_at": submission.created_at.isoformat(),
        "finished_at": submission.finished_at.isoformat() if submission.finished_at else None,
        "url": reverse("api-submission", args=[submission.pk]),
    }
