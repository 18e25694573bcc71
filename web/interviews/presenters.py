"""What the candidate's interview page is built from: per challenge its statement, code and URLs.

Kept out of the view so that the view stays thin and so that one place
decides what reaches the candidate's page: statements (sanitised), the
packages' read-only given modules, the latest autosave or the starter code, the URLs of their own submissions and
the clock. Nothing of the interviewer's (notes, rubric, recommendation) is
read here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.urls import reverse
from django.utils.safestring import SafeString

from web.challenges.models import Challenge, ChallengeVersion
from web.challenges.rendering import markdown_to_html
from web.challenges.selectors import GivenModule, given_modules
from web.interviews import selectors
from web.interviews.keys import candidate_socket_path
from web.interviews.models import Interview
from web.interviews.services import ChallengePlan
from web.interviews.session_settings import feedback_text, interview_status_url, policy_text
from web.interviews.stats import ChallengeStats
from web.submissions.services.intake import MAX_CODE_BYTES


@dataclass(frozen=True)
class CandidateItem:
    challenge: Challenge
    version: ChallengeVersion
    statement_html: SafeString
    code: str  # the latest autosave, else the starter
    given: tuple[GivenModule, ...] = ()  # the package's read-only given/*.py


def candidate_page(interview: Interview) -> tuple[list[CandidateItem], dict[str, Any]]:
    """The page's challenges and its JSON config (json_script) for interview-candidate.js."""
    token = interview.token
    challenges = selectors.interview_challenges(interview)
    latest = selectors.latest_snapshots(interview)
    history: dict[int, list[dict[str, Any]]] = {c.pk: [] for c in challenges}
    for s in selectors.interview_submissions(interview):
        # Polled under the private link, so the interview's settings apply to what the page shows.
        history[s.challenge_id].append({"id": s.pk, "url": interview_status_url(interview, s.pk)})
    items = []
    for c in challenges:
        version = c.current_version
        assert version is not None  # interview_create admits only challenges with a version
        code = latest[c.pk].code if c.pk in latest else version.starter_code
        items.append(CandidateItem(c, version, markdown_to_html(version.statement), code, tuple(given_modules(version))))
    config = {
        "stateUrl": reverse("interview-candidate-state", args=[token]),
        "focusUrl": reverse("interview-focus", args=[token]),  # interview-focus.js: the page left and back
        "keysSocket": candidate_socket_path(token),
        "maxCodeBytes": MAX_CODE_BYTES,
        "hintPolicy": interview.hint_policy,
        "hintPolicyText": policy_text(interview),
        "feedbackText": feedback_text(interview),
        "challenges": [
            {
                "slug": it.challenge.slug,
                "code": it.code,
                "runUrl": reverse("interview-run", args=[token, it.challenge.slug]),
                "submitUrl": reverse("interview-submit", args=[token, it.challenge.slug]),
                "autosaveUrl": reverse("interview-autosave", args=[token, it.challenge.slug]),
                "history": history[it.challenge.pk],
            }
            for it in items
        ],
        **selectors.interview_candidate_state(interview),
    }
    return items, config


# --- The coach's challenge picker --------------------------------------------------------------


@dataclass(frozen=True)
class PickerRow:
    stats: ChallengeStats
    checked: bool
    position: int | None
    minutes: int | None

    @property
    def challenge(self) -> Challenge:
        return self.stats.challenge


def picker_rows(stats: list[ChallengeStats], *, data: Any = None, plans: list[ChallengePlan] | None = None) -> list[PickerRow]:
    """One row per published challenge, as the form was sent (``data``) or prefilled (``plans``).

    The chosen ones come first, in their order, so that without JavaScript
    the coach sees the plan at the top; the rest follow in catalogue order.
    """
    chosen: dict[str, tuple[int | None, int | None]] = {}
    if data is not None:
        for slug in data.getlist("challenges"):
            chosen[slug] = (_int(data.get(f"position-{slug}")), _int(data.get(f"minutes-{slug}")))
    elif plans:
        chosen = {p.challenge.slug: (i, p.minutes) for i, p in enumerate(plans, start=1)}
    rows = []
    for s in stats:
        position, minutes = chosen.get(s.challenge.slug, (None, None))
        rows.append(PickerRow(s, s.challenge.slug in chosen, position, minutes))
    last = len(rows) + 1
    return sorted(rows, key=lambda r: (not r.checked, r.position if r.position is not None else last))


def _int(value: Any) -> int | None:
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return None
