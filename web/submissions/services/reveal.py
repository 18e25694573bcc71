"""Reveal a hint a submission unlocked, one tier at a time, and record every reveal.

The grader unlocks hints (every hint tagged like a failed probe); the ladder
(web/submissions/hints.py) decides which may be shown now. Every hint is
revealed on the candidate's request through ``hint_reveal``, and each reveal
is recorded: mock interviews report them, and a revealed hint stays shown on
every later result of the challenge.

Other apps may refuse a reveal without this module knowing them: a *reveal
guard* registered with ``reveal_guard_register`` is asked before every reveal
and answers a refusal message or None. The mock interviews register one in
their AppConfig.ready() (hints switched off for a session), so the
submissions app never imports interview models.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils import timezone

from web.submissions.errors import HintsSwitchedOff, HintUnavailable
from web.submissions.hints import hint_can_reveal, hint_is_shown
from web.submissions.models import HintReveal, Status, Submission

#: (user, submission) -> a refusal message for the candidate, or None to allow the reveal.
RevealGuard = Callable[[AbstractBaseUser, Submission], "str | None"]
_reveal_guards: list[RevealGuard] = []


def reveal_guard_register(guard: RevealGuard) -> None:
    """Ask ``guard`` before every reveal (registering the same function twice keeps one)."""
    if guard not in _reveal_guards:
        _reveal_guards.append(guard)


def reveal_refusal(user: AbstractBaseUser, submission: Submission) -> str | None:
    """The first registered guard's refusal of a reveal on this submission, or None."""
    for guard in _reveal_guards:
        message = guard(user, submission)
        if message:
            return message
    return None


@dataclass(frozen=True)
class RevealedHint:
    id: str
    tier: int
    tags: list[str]
    text: str


def record_reveal(user_id: int, challenge_id: int, submission_id: int, hint: dict[str, Any], now: Any) -> None:
    """Record that the user saw this hint (once per user and challenge; a repeat changes nothing)."""
    # A savepoint, so that a concurrent duplicate only loses its own insert.
    try:
        with transaction.atomic():
            HintReveal.objects.get_or_create(
                user_id=user_id,
                challenge_id=challenge_id,
                hint_id=str(hint["id"]),
                defaults={"tier": int(hint["tier"]), "submission_id": submission_id, "revealed_at": now},
            )
    except IntegrityError:
        pass


def hint_reveal(user: AbstractBaseUser, submission: Submission, hint_id: str) -> RevealedHint:
    """Show one hint that this submission unlocked, if its ladder allows; record it."""
    if submission.user_id != user.pk:
        raise HintUnavailable("This is not your submission.")
    refusal = reveal_refusal(user, submission)
    if refusal:
        raise HintsSwitchedOff(refusal)
    if submission.status != Status.DONE:
        raise HintUnavailable("Hints are available once grading has finished.")
    unlocked = list(submission.hints or [])
    hint = next((h for h in unlocked if str(h.get("id")) == hint_id), None)
    if hint is None:
        raise HintUnavailable("This submission did not unlock that hint.")

    revealed = set(HintReveal.objects.filter(user=user, challenge_id=submission.challenge_id).values_list("hint_id", flat=True))
    if not hint_is_shown(hint, revealed) and not hint_can_reveal(hint, unlocked, revealed):
        raise HintUnavailable(f"Reveal a tier-{int(hint['tier']) - 1} hint on this topic first.")
    record_reveal(user.pk, submission.challenge_id, submission.pk, hint, timezone.now())
    return RevealedHint(id=str(hint["id"]), tier=int(hint["tier"]), tags=list(hint.get("tags") or []), text=str(hint.get("text", "")))
