"""Drafts kept by the server: the editor's code per user and challenge, saved as the candidate types.

Place in the flow: the challenge page autosaves to ``challenge-draft``
(web/submissions/views.py: ``challenge_draft``) a moment after each change
and opens with :func:`draft_for`, so a second device, a cleared browser or a
new version of the challenge never puts the starter in place of the code.
A draft belongs to the challenge, not a version: when a coach publishes a
new one, :func:`draft_for` says what changed since the draft was last edited
(the statement, the starter, or only what grades it).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser

from grader.grade import decode_submission
from web.challenges.models import Challenge, ChallengeVersion
from web.submissions.models import Draft

STATEMENT, STARTER, GRADING = "statement", "starter code", "tests or limits"


@dataclass(frozen=True)
class DraftView:
    code: str
    changed: tuple[str, ...]  # what changed in the challenge since the draft was last edited; () when nothing did


def draft_save(user: AbstractBaseUser, challenge: Challenge, code: str | bytes) -> Draft:
    """Keep ``code`` as the user's draft of ``challenge`` (empty is allowed: a cleared editor); InvalidSubmission when
    it is not UTF-8 or over the code limit, with the candidate's message."""
    text = decode_submission(code, allow_empty=True).decode("utf-8")
    return Draft.objects.update_or_create(user=user, challenge=challenge, defaults={"code": text, "version": challenge.current_version})[0]


def draft_for(user: AbstractBaseUser, challenge: Challenge) -> DraftView | None:
    """The user's draft of ``challenge`` and what changed since it was edited, or None (the page opens the starter)."""
    # The version's statement and starter only: never its files (megabytes for the heavy packages).
    found = Draft.objects.filter(user=user, challenge=challenge).select_related("version")
    draft = found.only("code", "version__id", "version__statement", "version__starter_code", "version__graded").first()
    if draft is None:
        return None
    return DraftView(draft.code, _changed(draft.version, challenge.current_version))


def _changed(then: ChallengeVersion | None, now: ChallengeVersion | None) -> tuple[str, ...]:
    if then is None or now is None or then.pk == now.pk:
        return ()
    parts = [(STATEMENT, then.statement, now.statement), (STARTER, then.starter_code, now.starter_code)]
    # What grades it, by hash; a version stored before the hash existed may have changed it (said, to be safe).
    parts.append((GRADING, then.graded or "unknown", now.graded or "unknown?"))
    return tuple(part for part, a, b in parts if a != b)
