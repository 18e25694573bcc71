"""Web security across every URL: ownership, CSRF, sanitised output, password rules.

The URL table below must name every URL pattern outside the admin (the first
test fails when a view is added without an entry): each entry says how to
build the URL for objects the caller owns and for objects they do not, and
what an anonymous visitor gets. The other tests walk the table, so a new view
is checked for ownership and CSRF as soon as it is listed.

Production settings, which refuse an unsafe configuration at start-up, are in
test_settings_production.py; login throttling in test_login_throttle.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.contrib.contenttypes.models import ContentType
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from web.challenges.models import Challenge
from web.challenges.services import challenge_sync_from_dir
from web.submissions.models import HintReveal, Status, Submission, Verdict

# Strings that must never reach a candidate who does not own them (or anyone at all).
REFERENCE_SECRET = "REFERENCE-SECRET-7f3a"
HIDDEN_PROBE_SECRET = "HIDDEN-PROBE-SECRET-91c2"
EXPECTED_SECRET = "EXPECTED-SECRET-5d0e"
HIDDEN_STDOUT_SECRET = "HIDDEN-STDOUT-SECRET-2b77"
ALICE_CODE_SECRET = "ALICE-CODE-SECRET-c4d1"
ALICE_RUN_SECRET = "ALICE-RUN-OUTPUT-SECRET-0aa9"
UNPUBLISHED_SECRET = "UNPUBLISHED-STATEMENT-SECRET-e81f"
ALWAYS_SECRET = (REFERENCE_SECRET, HIDDEN_PROBE_SECRET, EXPECTED_SECRET, HIDDEN_STDOUT_SECRET, UNPUBLISHED_SECRET)

# What an attacker would put in a statement, a hint, a probe message or printed output.
XSS = [
    "<script>window.__xss = 1</script>",
    '<img src="x" onerror="window.__xss = 2">',
    '<svg onload="window.__xss = 3"></svg>',
    '<a href="javascript:window.__xss = 4">click</a>',
    '<iframe src="https://evil.example/"></iframe>',
    '<p style="background:url(javascript:alert(5))" onclick="alert(6)">styled</p>',
]
XSS_TEXT = "\n\n".join(XSS)
# Markers of live markup in an HTML page: none may survive sanitising or escaping.
LIVE_MARKUP = re.compile(r"<script>window|<img[^>]*onerror|<svg|javascript:|<iframe|onclick=|onload=", re.IGNORECASE)


# --- Fixtures: a hostile package, an unpublished one, and Alice's submissions -------------------


@pytest.fixture
def hostile_challenge(db: Any, package_root: Path, settings: Any) -> Challenge:
    """add-two with secrets in its reference and hidden probes, XSS in its statement and track page;
    and an unpublished copy (secret-two) that no candidate may reach."""
    pkg = package_root / "basics" / "add-two"
    (pkg / "reference" / "solution.py").write_text(f"# {REFERENCE_SECRET}\ndef add(a, b):\n    return a + b\n")
    hidden = pkg / "probes" / "hidden.py"
    hidden.write_text(hidden.read_text() + f"\n# {HIDDEN_PROBE_SECRET}\n")
    (pkg / "statement.md").write_text("# Add two\n\n" + XSS_TEXT + "\n\n```python\nadd(1, 2)\n```\n")
    secret = package_root / "basics" / "secret-two"
    secret.mkdir()
    for item in pkg.iterdir():
        target = secret / item.name
        if item.is_dir():
            target.mkdir()
            for f in item.iterdir():
                (target / f.name).write_bytes(f.read_bytes())
        else:
            target.write_bytes(item.read_bytes())
    (secret / "challenge.toml").write_text((pkg / "challenge.toml").read_text().replace('slug = "add-two"', 'slug = "secret-two"'))
    (secret / "statement.md").write_text(f"# Secret\n\n{UNPUBLISHED_SECRET}\n")
    (package_root / "basics" / "track.toml").write_text(
        f'title = "Basics <script>window.__xss = 7</script>"\nsummary = "s"\ndescription = """\n{XSS_TEXT}\n"""\norder = ["add-two"]\n'
    )
    settings.CHALLENGES_DIR = package_root
    report = challenge_sync_from_dir(package_root)
    assert report.ok, report.errors
    Challenge.objects.filter(slug="secret-two").update(published=False)
    return Challenge.objects.select_related("current_version").get(slug="add-two")


def _probe(name: str, *, public: bool) -> dict[str, Any]:
    return {
        "name": name, "category": "correctness", "weight": 1.0, "passed": False, "status": "wrong_answer",
        "message": f"expected 3, got {XSS[0]} {XSS[1]}", "description": f"Adds {XSS[2]}", "duration_ms": 3,
        "stdout": (ALICE_RUN_SECRET if public else HIDDEN_STDOUT_SECRET) + XSS_TEXT,
        "observation": ALICE_RUN_SECRET if public else EXPECTED_SECRET, "expected": ALICE_RUN_SECRET if public else EXPECTED_SECRET,
        "details": {"worst_index": EXPECTED_SECRET},
    }  # fmt: skip


HOSTILE_HINTS = [
    {"id": "nudge", "tier": 1, "tags": ["sum"], "text": "Look **here** " + XSS_TEXT},
    {"id": "concept", "tier": 2, "tags": ["sum"], "text": "Concept " + XSS_TEXT},
]


@dataclass
class World:
    alice: User
    mallory: User
    staff: User
    challenge: Challenge
    secret: Challenge
    alice_ids: list[int]  # every submission of Alice's: run, submit, queued, running, failed
    mallory_id: int
    missing_id: int
    extra: dict[str, Any] = field(default_factory=dict)


@pytest.fixture
def world(hostile_challenge: Challenge, user: User, other_user: User) -> World:
    staff = User.objects.create_user("coach", password="pw-coach-123", is_staff=True)
    version = hostile_challenge.current_version
    code = f"# {ALICE_CODE_SECRET}\ndef add(a, b):\n    return 0\n"

    def make(owner: User, kind: str, status: str = Status.DONE, verdict: str = Verdict.WRONG_ANSWER, **extra: Any) -> int:
        public = kind == "run"
        done = status == Status.DONE
        # Only Alice's code holds her secret: Mallory's own submission page shows Mallory her code.
        mine = code if owner == user else "def add(a, b):\n    return 1\n"
        return Submission.objects.create(
            user=owner, challenge=hostile_challenge, version=version, kind=kind, code=mine, status=status,
            verdict=verdict if done else "", score=0.0 if done else None,
            categories={"correctness": {"score": 0.0, "passed": 0, "total": 1}} if done else {},
            probes=[_probe("positives", public=public)] if done else [], hints=HOSTILE_HINTS if done else [],
            message=f"0 of 1 probes passed {XSS[0]}", **extra,
        ).pk  # fmt: skip

    alice_ids = [
        make(user, "run"),
        make(user, "submit"),
        make(user, "submit", status=Status.QUEUED),
        make(user, "run", status=Status.RUNNING),
        make(user, "submit", verdict=Verdict.INTERNAL_ERROR),
    ]
    HintReveal.objects.create(user=user, challenge=hostile_challenge, submission_id=alice_ids[1], hint_id="nudge", tier=1,
                              revealed_at=Submission.objects.get(pk=alice_ids[1]).created_at)  # fmt: skip
    mallory_id = make(other_user, "submit")
    extra = _interviews(staff, user, other_user, hostile_challenge)
    _link_interview_submissions(extra, alice_ids, mallory_id)
    return World(
        alice=user, mallory=other_user, staff=staff, challenge=hostile_challenge,
        secret=Challenge.objects.get(slug="secret-two"), alice_ids=alice_ids, mallory_id=mallory_id,
        missing_id=max([*alice_ids, mallory_id]) + 1000, extra=extra,
    )  # fmt: skip


def _interviews(coach: User, alice: User, mallory: User, challenge: Challenge) -> dict[str, Any]:
    """Two live mock interviews run by the staff coach: Alice's (her autosave holds her code's secret) and Mallory's."""
    from web.interviews.models import Snapshot
    from web.interviews.services import interview_create, interview_open

    made = {}
    for key, candidate in (("interview_alice", alice), ("interview_mallory", mallory)):
        interview = interview_create(coach, candidate_username=candidate.username, challenges=[challenge], duration_minutes=30)
        made[key] = interview_open(interview, candidate)
    Snapshot.objects.create(interview=made["interview_alice"], challenge=challenge, code=f"# {ALICE_CODE_SECRET}\n",
                            created_at=made["interview_alice"].started_at)  # fmt: skip
    return made


def _link_interview_submissions(made: dict[str, Any], alice_ids: list[int], mallory_id: int) -> None:
    """Mallory's submit was made in her interview, Alice's first two in hers; and the staff coach keeps a template."""
    from web.interviews.models import InterviewSubmission, InterviewTemplate

    InterviewSubmission.objects.create(interview=made["interview_mallory"], submission_id=mallory_id)
    for pk in alice_ids[:2]:
        InterviewSubmission.objects.create(interview=made["interview_alice"], submission_id=pk)
    made["template"] = InterviewTemplate.objects.create(coach=made["interview_alice"].coach, name="Bank")


# --- The URL table ---------------------------------------------------------------------------------


Kwargs = dict[str, Any]


@dataclass(frozen=True)
class Route:
    methods: tuple[str, ...]  # the methods the view answers
    # kwargs for URLs the caller (Mallory, a candidate) may use
    own: Callable[[World], list[Kwargs]] = lambda w: [{}]
    # kwargs for objects Mallory does not own or may not see: each must be a 404 (or 403)
    foreign: Callable[[World], list[Kwargs]] = lambda w: []
    anonymous: tuple[int, ...] = (200,)  # statuses an anonymous GET (or POST for POST-only views) may get
    staff_only: bool = False
    # One interview's coach page: a candidate gets 404 on it like any other coach's (staff_only's 403 is for coach-wide pages).
    interviewer_page: bool = False
    # Secrets the interview's coach may see here: the interviewer's run page shows a hidden probe's message whole.
    coach_sees: tuple[str, ...] = ()


def _alice_and_missing(w: World) -> list[Kwargs]:
    return [{"pk": pk} for pk in [*w.alice_ids, w.missing_id]]


def _interview_own(w: World) -> list[Kwargs]:
    """The interview the coach (staff) runs with Mallory as the candidate."""
    return [{"interview_id": w.extra["interview_mallory"].pk}]


def _interview_foreign(w: World) -> list[Kwargs]:
    return [{"interview_id": w.extra["interview_alice"].pk}, {"interview_id": w.extra["interview_mallory"].pk},
            {"interview_id": w.missing_id}]  # fmt: skip


def _token_own(w: World) -> list[Kwargs]:
    return [{"token": w.extra["interview_mallory"].token}]


def _token_foreign(w: World) -> list[Kwargs]:
    return [{"token": w.extra["interview_alice"].token}, {"token": "no-such-token"}]


def _token_submission_own(w: World) -> list[Kwargs]:
    return [{"token": w.extra["interview_mallory"].token, "pk": w.mallory_id}]


def _token_submission_foreign(w: World) -> list[Kwargs]:
    """Alice's interview submissions under her link and under Mallory's, and a missing one."""
    alice, mallory = w.extra["interview_alice"].token, w.extra["interview_mallory"].token
    return [{"token": token, "pk": pk} for token in (alice, mallory) for pk in [*w.alice_ids, w.missing_id]]


def _template_own(w: World) -> list[Kwargs]:
    return [{"template_id": w.extra["template"].pk}]


def _template_foreign(w: World) -> list[Kwargs]:
    return [{"template_id": w.extra["template"].pk}, {"template_id": w.missing_id}]


def _token_slug_own(w: World) -> list[Kwargs]:
    return [{**kw, "slug": "add-two"} for kw in _token_own(w)]


def _token_slug_foreign(w: World) -> list[Kwargs]:
    return [{**kw, "slug": "add-two"} for kw in _token_foreign(w)] + [{**kw, "slug": "secret-two"} for kw in _token_own(w)]


ROUTES: dict[str, Route] = {
    "catalogue": Route(("GET",)),
    "track-detail": Route(("GET",), own=lambda w: [{"slug": "basics"}], foreign=lambda w: [{"slug": "no-such-track"}]),
    "challenge-detail": Route(("GET",), own=lambda w: [{"slug": "add-two"}], foreign=lambda w: [{"slug": "secret-two"}, {"slug": "no-such"}]),
    "challenge-run": Route(
        ("POST",), own=lambda w: [{"slug": "add-two"}], foreign=lambda w: [{"slug": "secret-two"}, {"slug": "no-such"}], anonymous=(401,)
    ),
    "challenge-submit": Route(
        ("POST",), own=lambda w: [{"slug": "add-two"}], foreign=lambda w: [{"slug": "secret-two"}, {"slug": "no-such"}], anonymous=(401,)
    ),
    # The Learn page is 403 to Mallory until she solves or gives up; giving up records only her own row.
    "challenge-learn": Route(("GET",), own=lambda w: [], foreign=lambda w: [{"slug": "secret-two"}, {"slug": "no-such"}], anonymous=(302,)),
    "challenge-give-up": Route(
        ("POST",), own=lambda w: [{"slug": "add-two"}], foreign=lambda w: [{"slug": "secret-two"}, {"slug": "no-such"}], anonymous=(302,)
    ),
    # Autosave: only Mallory's own draft row, on challenges she may see.
    "challenge-draft": Route(
        ("POST",), own=lambda w: [{"slug": "add-two"}], foreign=lambda w: [{"slug": "secret-two"}, {"slug": "no-such"}], anonymous=(401,)
    ),
    "submission-status": Route(("GET",), own=lambda w: [{"pk": w.mallory_id}], foreign=_alice_and_missing, anonymous=(401,)),
    "submission-hint-reveal": Route(
        ("POST",),
        own=lambda w: [{"pk": w.mallory_id, "hint_id": "nudge"}],
        foreign=lambda w: [{**kw, "hint_id": hint} for kw in _alice_and_missing(w) for hint in ("nudge", "concept")],
        anonymous=(401,),
    ),
    "submission-regrade": Route(("POST",), own=lambda w: [{"pk": w.mallory_id}], foreign=_alice_and_missing, anonymous=(401,)),
    "submission-cancel": Route(("POST",), own=lambda w: [{"pk": w.mallory_id}], foreign=_alice_and_missing, anonymous=(401,)),
    # The candidate's own pages: no object in the URL but the submission's, and only their own rows inside.
    "progress": Route(("GET",), anonymous=(302,)),
    "submission-list": Route(("GET",), anonymous=(302,)),
    "submission-detail": Route(("GET",), own=lambda w: [{"pk": w.mallory_id}], foreign=_alice_and_missing, anonymous=(302,)),
    "healthz": Route(("GET",), anonymous=(200, 503)),
    "coach-grading": Route(("GET",), anonymous=(302,), staff_only=True),
    "coach-regrade": Route(("GET", "POST"), anonymous=(302,), staff_only=True),
    "login": Route(("GET", "POST")),
    "logout": Route(("POST",), anonymous=(302,)),
    "signup": Route(("GET", "POST")),
    # Password reset: public pages; a link's token is checked by Django (a wrong one renders "no longer works").
    "password_reset": Route(("GET", "POST")),
    "password_reset_done": Route(("GET",)),
    "password_reset_confirm": Route(("GET", "POST"), own=lambda w: [{"uidb64": "MQ", "token": "no-such-token"}]),
    "password_reset_complete": Route(("GET",)),
    "api-challenges": Route(("GET",)),
    "api-challenge": Route(("GET",), own=lambda w: [{"slug": "add-two"}], foreign=lambda w: [{"slug": "secret-two"}, {"slug": "no-such"}]),
    "api-submit": Route(
        ("POST",), own=lambda w: [{"slug": "add-two"}], foreign=lambda w: [{"slug": "secret-two"}, {"slug": "no-such"}], anonymous=(401,)
    ),
    "api-progress": Route(("GET",), anonymous=(401,)),
    "api-submissions": Route(("GET",), anonymous=(401,)),
    "api-submission": Route(("GET",), own=lambda w: [{"pk": w.mallory_id}], foreign=_alice_and_missing, anonymous=(401,)),
    "api-hint-reveal": Route(
        ("POST",),
        own=lambda w: [{"pk": w.mallory_id, "hint_id": "nudge"}],
        foreign=lambda w: [{**kw, "hint_id": hint} for kw in _alice_and_missing(w) for hint in ("nudge", "concept")],
        anonymous=(401,),
    ),
    "api-regrade": Route(("POST",), own=lambda w: [{"pk": w.mallory_id}], foreign=_alice_and_missing, anonymous=(401,)),
    "api-cancel": Route(("POST",), own=lambda w: [{"pk": w.mallory_id}], foreign=_alice_and_missing, anonymous=(401,)),
    # A mock interview's scorecard: its coach (or staff) only; Mallory, its candidate, gets 404 like anyone.
    "api-interview-scorecard": Route(("GET",), own=_interview_own, foreign=_interview_foreign, anonymous=(401,)),
    "api-schema": Route(("GET",)),
    "api-docs": Route(("GET",)),
    "api-token": Route(("GET", "POST"), anonymous=(302,)),
    # --- authoring (web.authoring, /author/) ---
    # Coach-only: candidates get 403 on every one, whatever the object. The world holds only repository
    # packages, which no coach may edit (404 for the staff walk); browser-authored challenges and their
    # owners are covered in test_authoring_views.py.
    "author-home": Route(("GET",), anonymous=(302,), staff_only=True),
    "author-create": Route(("GET", "POST"), anonymous=(302,), staff_only=True),
    "author-import": Route(("GET", "POST"), anonymous=(302,), staff_only=True),
    "author-preview": Route(("POST",), anonymous=(302,), staff_only=True),
    "author-validation": Route(
        ("GET",), own=lambda w: [{"pk": w.missing_id}], foreign=lambda w: [{"pk": w.missing_id}], anonymous=(302,), staff_only=True
    ),
    "author-edit": Route(
        ("GET", "POST"),
        own=lambda w: [{"slug": "add-two"}],
        foreign=lambda w: [{"slug": "add-two"}, {"slug": "secret-two"}],
        anonymous=(302,),
        staff_only=True,
    ),
    # Coaches read any repository package's coverage table (hidden probe names and purposes, never inputs).
    "author-coverage": Route(
        ("GET",), own=lambda w: [{"slug": "add-two"}], foreign=lambda w: [{"slug": "no-such"}], anonymous=(302,), staff_only=True
    ),
    "author-unpublish": Route(
        ("POST",), own=lambda w: [{"slug": "add-two"}], foreign=lambda w: [{"slug": "add-two"}], anonymous=(302,), staff_only=True
    ),
    "author-export": Route(
        ("GET",),
        own=lambda w: [{"slug": "no-such", "version": "0" * 64}],
        foreign=lambda w: [{"slug": c.slug, "version": c.current_version.version} for c in (w.challenge, w.secret) if c.current_version],
        anonymous=(302,),
        staff_only=True,
    ),
    "author-validate": Route(
        ("POST",),
        own=lambda w: [{"slug": "add-two", "version": w.challenge.current_version.version}],
        foreign=lambda w: [{"slug": "add-two", "version": w.challenge.current_version.version}],
        anonymous=(302,),
        staff_only=True,
    ),
    "author-publish": Route(
        ("POST",),
        own=lambda w: [{"slug": "add-two", "version": w.challenge.current_version.version}],
        foreign=lambda w: [{"slug": "secret-two", "version": w.secret.current_version.version}],
        anonymous=(302,),
        staff_only=True,
    ),
    # --- mock interviews (web.interviews, /interviews/) ---
    # Coach pages by id: Mallory is a candidate, so every one is 404 for her (interviewer_page: not even
    # whether the interview exists), the coach-wide ones 403 (staff_only), and the
    # interview she takes is as foreign to her coach pages as anyone's. Candidate pages by token:
    # her own link works, Alice's link (a valid token!) is a 404 for her.
    "interview-list": Route(("GET",), anonymous=(302,), staff_only=True),
    "interview-create": Route(("GET", "POST"), anonymous=(302,), staff_only=True),
    "interview-mine": Route(("GET",), anonymous=(302,)),
    "interview-live": Route(("GET",), own=_interview_own, foreign=_interview_foreign, anonymous=(302,), staff_only=True, interviewer_page=True),
    "interview-live-state": Route(("GET",), own=_interview_own, foreign=_interview_foreign, anonymous=(401,), staff_only=True, interviewer_page=True),
    "interview-timeline": Route(
        ("GET",),
        own=lambda w: [{**kw, "slug": "add-two"} for kw in _interview_own(w)],
        foreign=lambda w: [{**kw, "slug": "add-two"} for kw in _interview_foreign(w)],
        anonymous=(401,),
        staff_only=True,
        interviewer_page=True,
    ),
    "interview-assess": Route(("POST",), own=_interview_own, foreign=_interview_foreign, anonymous=(401,), staff_only=True, interviewer_page=True),
    "interview-moments": Route(("GET",), own=_interview_own, foreign=_interview_foreign, anonymous=(401,), staff_only=True, interviewer_page=True),
    "interview-cite": Route(("POST",), own=_interview_own, foreign=_interview_foreign, anonymous=(401,), staff_only=True, interviewer_page=True),
    "interview-uncite": Route(("POST",), own=_interview_own, foreign=_interview_foreign, anonymous=(401,), staff_only=True, interviewer_page=True),
    "interview-end": Route(("POST",), own=_interview_own, foreign=_interview_foreign, anonymous=(302,), staff_only=True, interviewer_page=True),
    "interview-scorecard": Route(("GET",), own=_interview_own, foreign=_interview_foreign, anonymous=(302,), staff_only=True, interviewer_page=True),
    # The interviewer's run pages, replay and notes at a moment: 404 (not 403) for every candidate and other coach.
    # The staff coach's own run is Mallory's submission, linked to the interview: the coach's sweep sees its
    # hidden probe's message and printed output whole (as a coach may), never the reference or a probe's source.
    "interview-run-detail": Route(
        ("GET",),
        own=lambda w: [{**kw, "pk": w.mallory_id} for kw in _interview_own(w)],
        foreign=lambda w: [{**kw, "pk": pk} for kw in _interview_foreign(w) for pk in [*w.alice_ids, w.mallory_id]],
        anonymous=(302,),
        coach_sees=(EXPECTED_SECRET, HIDDEN_STDOUT_SECRET),
    ),
    "interview-run-status": Route(
        ("GET",),
        own=lambda w: [{**kw, "pk": w.mallory_id} for kw in _interview_own(w)],
        foreign=lambda w: [{**kw, "pk": pk} for kw in _interview_foreign(w) for pk in [*w.alice_ids, w.mallory_id]],
        anonymous=(401,),
        coach_sees=(EXPECTED_SECRET, HIDDEN_STDOUT_SECRET),
    ),
    "interview-replay": Route(("GET",), own=_interview_own, foreign=_interview_foreign, anonymous=(401,)),
    "interview-note-add": Route(("POST",), own=_interview_own, foreign=_interview_foreign, anonymous=(401,)),
    "interview-focus": Route(("POST",), own=_token_own, foreign=_token_foreign, anonymous=(401,)),
    "interview-candidate": Route(("GET",), own=_token_own, foreign=_token_foreign, anonymous=(302,)),
    "interview-candidate-state": Route(("GET",), own=_token_own, foreign=_token_foreign, anonymous=(401,)),
    "interview-autosave": Route(("POST",), own=_token_slug_own, foreign=_token_slug_foreign, anonymous=(401,)),
    "interview-run": Route(("POST",), own=_token_slug_own, foreign=_token_slug_foreign, anonymous=(401,)),
    "interview-submit": Route(("POST",), own=_token_slug_own, foreign=_token_slug_foreign, anonymous=(401,)),
    # The candidate's results under the private link (the session's settings apply): only their own, in that interview.
    "interview-submission-status": Route(("GET",), own=_token_submission_own, foreign=_token_submission_foreign, anonymous=(401,)),
    "interview-hint-reveal": Route(
        ("POST",),
        own=lambda w: [{**kw, "hint_id": "nudge"} for kw in _token_submission_own(w)],
        foreign=lambda w: [{**kw, "hint_id": "nudge"} for kw in _token_submission_foreign(w)],
        anonymous=(401,),
    ),
    "interview-submission-regrade": Route(("POST",), own=_token_submission_own, foreign=_token_submission_foreign, anonymous=(401,)),
    "interview-submission-cancel": Route(("POST",), own=_token_submission_own, foreign=_token_submission_foreign, anonymous=(401,)),
    # The question bank: coach pages; a template is its own coach's only (another coach's is a 404: test_interviews_bank.py).
    "interview-templates": Route(("GET",), anonymous=(302,), staff_only=True),
    "interview-template-create": Route(("GET", "POST"), anonymous=(302,), staff_only=True),
    "interview-template-edit": Route(("GET", "POST"), own=_template_own, foreign=_template_foreign, anonymous=(302,), staff_only=True),
    "interview-template-delete": Route(("POST",), own=_template_own, foreign=_template_foreign, anonymous=(302,), staff_only=True),
    "interview-statistics": Route(("GET",), anonymous=(302,), staff_only=True),
}


def _walk(patterns: list[Any], namespace: tuple[str, ...] = ()) -> Iterator[tuple[str, URLPattern]]:
    for p in patterns:
        if isinstance(p, URLResolver):
            yield from _walk(p.url_patterns, namespace + ((p.namespace,) if p.namespace else ()))
        elif isinstance(p, URLPattern):
            yield ":".join((*namespace, p.name or f"<unnamed {p.pattern}>")), p


def all_patterns() -> list[tuple[str, URLPattern]]:
    return list(_walk(get_resolver().url_patterns))


def site_patterns() -> list[str]:
    return [name for name, _ in all_patterns() if not name.startswith("admin:")]


def call(client: Client, method: str, url: str, **extra: Any) -> Any:
    if method == "POST":
        return client.post(url, data="def add(a, b):\n    return a + b\n", content_type="text/plain", **extra)
    return client.get(url, **extra)


def body(response: Any) -> str:
    return b"".join(response.streaming_content).decode() if response.streaming else response.content.decode()


def test_every_url_pattern_is_in_the_security_table() -> None:
    names = site_patterns()
    assert len(names) == len(set(names)), "every pattern needs its own name"
    missing = set(names) - set(ROUTES)
    assert not missing, f"add these views to ROUTES in {__file__} (ownership, CSRF and output checks): {sorted(missing)}"
    assert not set(ROUTES) - set(names), "ROUTES lists views that no longer exist"


def _drf_checks_csrf_itself(pattern: URLPattern) -> bool:
    """DRF marks its views csrf_exempt and checks CSRF in SessionAuthentication instead (token
    callers send no cookie to forge); the POST-without-token test below proves it for each."""
    from rest_framework.authentication import SessionAuthentication
    from rest_framework.views import APIView

    cls = getattr(pattern.callback, "cls", None)
    if not (isinstance(cls, type) and issubclass(cls, APIView)):
        return False
    classes = cls.authentication_classes
    return any(issubclass(c, SessionAuthentication) for c in classes) and all(
        issubclass(c, SessionAuthentication) or "Token" in c.__name__ for c in classes
    )


def test_no_view_is_exempt_from_csrf() -> None:
    exempt = [name for name, p in all_patterns() if getattr(p.callback, "csrf_exempt", False) and not _drf_checks_csrf_itself(p)]
    assert exempt == []
    assert any(_drf_checks_csrf_itself(p) for _, p in all_patterns())


# --- Ownership: every object id a candidate does not own -------------------------------------------


@pytest.mark.parametrize("name", sorted(ROUTES))
def test_a_candidate_gets_nothing_of_what_they_do_not_own(name: str, world: World, client: Client) -> None:
    route = ROUTES[name]
    client.force_login(world.mallory)
    before = (list(HintReveal.objects.order_by("pk").values_list("pk", "user_id", "hint_id")), Submission.objects.count())
    tried = 0
    for kwargs in route.foreign(world):
        url = reverse(name, kwargs=kwargs)
        for method in route.methods:
            response = call(client, method, url)
            tried += 1
            assert response.status_code in (403, 404), f"{method} {url}: {response.status_code}"
            text = body(response)
            for secret in (*ALWAYS_SECRET, ALICE_CODE_SECRET, ALICE_RUN_SECRET):
                assert secret not in text, f"{method} {url} shows {secret}"
    if route.staff_only:
        for kwargs in route.own(world):
            status = call(client, route.methods[0], reverse(name, kwargs=kwargs)).status_code
            assert status == (404 if route.interviewer_page else 403), f"{name}: {status}"
            tried += 1
    after = (list(HintReveal.objects.order_by("pk").values_list("pk", "user_id", "hint_id")), Submission.objects.count())
    assert after == before, "a refused request changed something"
    has_objects = route.foreign(world) or route.staff_only
    assert tried > 0 or not has_objects


@pytest.mark.parametrize("name", sorted(ROUTES))
def test_anonymous_visitors_get_only_what_is_public(name: str, world: World, client: Client) -> None:
    route = ROUTES[name]
    for kwargs in route.own(world):
        response = call(client, route.methods[0], reverse(name, kwargs=kwargs))
        assert response.status_code in route.anonymous, f"{route.methods[0]} {name}: {response.status_code}"
        if response.status_code == 302:
            assert response["Location"].startswith((reverse("login"), reverse("catalogue")))


def test_the_foreign_table_covers_every_submission_of_someone_else(world: World) -> None:
    """'Every object id': the ids tried for Mallory are all of Alice's, plus one that does not exist."""
    tried = {kw["pk"] for kw in ROUTES["submission-status"].foreign(world)}
    others = set(Submission.objects.exclude(user=world.mallory).values_list("pk", flat=True))
    assert others | {world.missing_id} == tried


@pytest.mark.parametrize("who", ["anonymous", "mallory", "alice", "coach"])
def test_no_page_or_answer_shows_a_reference_hidden_probe_or_expected_value(who: str, world: World, client: Client) -> None:
    """Every view, called the way its owner would, as each kind of user: secrets never appear.

    Alice sees her own code's results, but never the hidden probes' expected
    values, printed output or sources, nor the reference; nobody but Alice sees her run output.
    """
    user = {"anonymous": None, "mallory": world.mallory, "alice": world.alice, "coach": world.staff}[who]
    if user is not None:
        client.force_login(user)
    seen = 0
    for name, route in ROUTES.items():
        if name in ("logout",):
            continue
        kwargs_list = route.own(world)
        if who == "alice":
            kwargs_list = [{**kw, "pk": pk} if "pk" in kw else kw for kw in kwargs_list for pk in world.alice_ids]
        for kwargs in kwargs_list:
            url = reverse(name, kwargs=kwargs)
            for method in route.methods:
                text = body(call(client, method, url))
                seen += 1
                forbidden = ALWAYS_SECRET + (() if who == "alice" else (ALICE_RUN_SECRET, ALICE_CODE_SECRET))
                allowed = route.coach_sees if who == "coach" else ()
                for secret in (s for s in forbidden if s not in allowed):
                    assert secret not in text, f"{who}: {method} {url} shows {secret}"
    assert seen >= len(ROUTES) - 1


def test_alice_sees_her_own_run_output_so_the_sweep_above_can_fail(world: World, client: Client) -> None:
    client.force_login(world.alice)
    data = client.get(reverse("submission-status", args=[world.alice_ids[0]])).json()
    assert data["probes"][0]["stdout"].startswith(ALICE_RUN_SECRET)
    submit = client.get(reverse("submission-status", args=[world.alice_ids[1]])).json()
    assert set(submit["probes"][0]) == {"name", "category", "weight", "passed", "status", "message", "description", "duration_ms"}


def test_admin_is_closed_to_candidates(world: World, client: Client) -> None:
    """Every admin URL, filled with Alice's ids, sends a (non-staff) candidate to the admin login."""
    client.force_login(world.mallory)
    ct = ContentType.objects.get_for_model(Submission)
    fill = {
        "<path:object_id>": str(world.alice_ids[0]), "<id>": str(world.alice.pk), "<path:content_type_id>": str(ct.pk),
        "(?P<url>.*)$": "nothing/",
    }  # fmt: skip
    checked = 0
    for name, pattern in all_patterns():
        if not name.startswith("admin:") or name in ("admin:login", "admin:logout"):
            continue
        # The app index lists every app with a registered model: whichever they are, use one.
        route = re.sub(r"\^\(\?P<app_label>[a-z_|]+\)/\$", "submissions/", "admin/" + str(pattern.pattern))
        for placeholder, value in fill.items():
            route = route.replace(placeholder, value)
        assert "<" not in route and "(" not in route, f"no value for the admin URL {route}: extend `fill`"
        response = client.get("/" + route)
        assert response.status_code == 302 and response["Location"].startswith("/admin/login/"), f"/{route}: {response.status_code}"
        assert ALICE_CODE_SECRET not in body(response)
        checked += 1
    assert checked > 20


# --- CSRF --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(ROUTES))
def test_every_post_without_a_csrf_token_is_refused(name: str, world: World) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(world.staff if ROUTES[name].staff_only else world.mallory)
    for kwargs in ROUTES[name].own(world):
        url = reverse(name, kwargs=kwargs)
        before = Submission.objects.count(), HintReveal.objects.count()
        response = client.post(url, {"username": "mallory", "password": "pw-mallory-123", "code": "x = 1\n"})
        assert response.status_code == 403, f"POST {url} without a token: {response.status_code}"
        assert "CSRF" in body(response) or response.status_code == 403
        assert (Submission.objects.count(), HintReveal.objects.count()) == before


def test_admin_login_and_actions_require_a_csrf_token(world: World) -> None:
    client = Client(enforce_csrf_checks=True)
    assert client.post("/admin/login/", {"username": "coach", "password": "pw-coach-123"}).status_code == 403
    client.force_login(world.staff)
    url = reverse("admin:submissions_submission_delete", args=[world.alice_ids[0]])
    assert client.post(url, {"post": "yes"}).status_code == 403
    assert Submission.objects.filter(pk=world.alice_ids[0]).exists()


def test_with_the_token_the_same_posts_go_through(world: World) -> None:
    """The positive control: the refusals above are CSRF's, not some other check's."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(world.mallory)
    page = client.get(reverse("challenge-detail", args=["add-two"]))
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', body(page))
    assert token is not None
    response = client.post(reverse("submission-hint-reveal", args=[world.mallory_id, "nudge"]), HTTP_X_CSRFTOKEN=token.group(1))
    assert response.status_code == 200


@pytest.mark.parametrize("who", ["anonymous", "mallory", "coach"])
def test_every_html_form_that_posts_carries_a_csrf_token(who: str, world: World, client: Client) -> None:
    if who != "anonymous":
        client.force_login(world.mallory if who == "mallory" else world.staff)
    forms = 0
    for name, route in ROUTES.items():
        if "GET" not in route.methods or (route.staff_only and who != "coach"):
            continue
        for kwargs in route.own(world):
            response = client.get(reverse(name, kwargs=kwargs))
            if response.status_code != 200 or "html" not in response["Content-Type"]:
                continue
            for form in re.findall(r"<form\b[^>]*>.*?</form>", body(response), flags=re.S | re.I):
                if re.search(r'method="post"', form, re.I):
                    forms += 1
                    assert "csrfmiddlewaretoken" in form, f"{name}: a POST form without a CSRF token: {form[:200]}"
    assert forms >= 1


# --- Output: nothing a package, a probe or candidate code produces runs as a script --------------------


def assert_inert(html: str, where: str) -> None:
    found = LIVE_MARKUP.findall(html)
    assert not found, f"{where}: live markup {found}"


def _site_scripts_removed(html: str) -> str:
    """The page without the site's own <script src=...> tags and json_script blocks (JSON, not HTML)."""
    html = re.sub(r'<script src="/static/[^"]+"></script>', "", html)
    return re.sub(r'<script id="[a-z-]+" type="application/json">.*?</script>', "", html, flags=re.S)


def test_statement_title_and_track_page_are_sanitised(world: World, client: Client) -> None:
    client.force_login(world.alice)
    detail = body(client.get(reverse("challenge-detail", args=["add-two"])))
    statement = detail[detail.index('id="statement"') : detail.index("</article>")]
    assert_inert(statement, "statement")
    assert "add(1, 2)" in statement  # Markdown still renders
    assert_inert(_site_scripts_removed(detail), "challenge page")
    for name, kwargs in (("track-detail", {"slug": "basics"}), ("catalogue", {})):
        assert_inert(_site_scripts_removed(body(client.get(reverse(name, kwargs=kwargs)))), name)


def test_the_page_config_json_cannot_close_its_script_tag(world: World, client: Client) -> None:
    """Starter code and page config go to the page as JSON in <script type=application/json>; a
    '</script>' inside must be escaped, or the rest would be parsed as HTML."""
    world.challenge.current_version.starter_code = "x = '</script><script>window.__xss = 8</script>'\n"
    world.challenge.current_version.save(update_fields=["starter_code"])
    html = body(client.get(reverse("challenge-detail", args=["add-two"])))
    assert "<script>window.__xss = 8" not in html
    assert "\\u003C/script\\u003E" in html


def test_reflected_parameters_are_escaped(world: World, client: Client) -> None:
    payload = '"><script>window.__xss = 9</script>'
    pages = [
        client.get(reverse("catalogue"), {"track": payload, "difficulty": payload}),
        client.get(reverse("login"), {"next": payload}),
        client.get(reverse("signup"), {"next": payload}),
        client.post(reverse("login"), {"username": payload, "password": "nope", "next": payload}),
        client.post(reverse("signup"), {"username": payload, "password1": "a", "password2": "b", "next": payload}),
    ]
    for response in pages:
        assert "<script>window.__xss = 9" not in body(response), response.request["PATH_INFO"]


def test_results_hints_and_messages_are_data_and_hints_are_sanitised(world: World, client: Client) -> None:
    """Probe messages, descriptions, printed output and the result message are JSON strings that
    the page inserts as text (challenge.js); JSON is served as JSON, never sniffed as HTML.
    Hint texts are the one HTML field: rendered from Markdown and sanitised."""
    client.force_login(world.alice)
    for pk in world.alice_ids:
        response = client.get(reverse("submission-status", args=[pk]))
        assert response["Content-Type"] == "application/json"
        assert response["X-Content-Type-Options"] == "nosniff"
        data = response.json()
        for hint in data["hints"]:
            if hint["html"] is not None:
                assert_inert(hint["html"], f"hint {hint['id']}")
                assert "<strong>here</strong>" in hint["html"] or hint["id"] != "nudge"
    shown = client.get(reverse("submission-status", args=[world.alice_ids[0]])).json()
    assert XSS[0] in shown["probes"][0]["message"]  # kept verbatim as data: the page shows it as text


def test_error_answers_are_json_or_escaped_html(world: World, client: Client) -> None:
    client.force_login(world.alice)
    refused = client.post(reverse("challenge-run", args=["add-two"]), data='{"code": 5}', content_type="application/json")
    assert refused.status_code == 400 and refused["Content-Type"] == "application/json"
    not_found = client.get("/challenges/%3Cscript%3Ewindow.__xss=1%3C%2Fscript%3E/")
    assert not_found.status_code == 404 and "<script>window" not in body(not_found)


def test_the_coach_page_escapes_failure_messages(world: World, client: Client) -> None:
    client.force_login(world.staff)
    Submission.objects.filter(pk=world.alice_ids[4]).update(finished_at=Submission.objects.get(pk=world.alice_ids[4]).created_at)
    html = body(client.get(reverse("coach-grading")))
    assert f'data-submission="{world.alice_ids[4]}"' in html
    assert_inert(_site_scripts_removed(html), "coach page")
    assert ALICE_CODE_SECRET not in html


def test_pages_send_csp_and_no_sniff(world: World, client: Client) -> None:
    for name in ("catalogue", "login", "signup"):
        response = client.get(reverse(name))
        assert "script-src 'self'" in response["Content-Security-Policy"]
        assert "'unsafe-inline'" not in response["Content-Security-Policy"].split("script-src", 1)[1].split(";")[0]
        assert response["X-Content-Type-Options"] == "nosniff" and response["X-Frame-Options"] == "DENY"


# --- Passwords --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("password", "message"),
    [
        ("short1!", "too short"),
        ("password123", "too common"),
        ("83749201746", "entirely numeric"),
        ("newcandidate1", "too similar to the username"),
    ],
)
def test_signup_applies_djangos_password_validators(password: str, message: str, client: Client, db: None) -> None:
    response = client.post(reverse("signup"), {"username": "newcandidate", "password1": password, "password2": password})
    assert response.status_code == 200
    assert message in body(response)
    assert not User.objects.filter(username="newcandidate").exists()


def test_a_strong_password_is_accepted(client: Client, db: None) -> None:
    fields = {"username": "newcandidate", "email": "new@example.com", "password1": "cobalt-Vessel-4417", "password2": "cobalt-Vessel-4417"}
    response = client.post(reverse("signup"), fields)
    assert response.status_code == 302 and User.objects.filter(username="newcandidate").exists()


def test_the_interviewers_run_pages_replay_and_scorecard_keep_hostile_text_inert(world: World, client: Client) -> None:
    """Alice's hostile Run and Submit, linked to her interview, as its (staff) coach sees them: probe messages,
    printed output and hint texts full of markup, a note at a moment too. The pages carry them as JSON or
    escaped text, hint texts sanitised; Alice herself gets 404 on every one of them."""
    from django.utils.html import escape

    from web.interviews.models import InterviewSubmission
    from web.interviews.replay import timeline_note_add

    interview = world.extra["interview_alice"]
    for pk in world.alice_ids[:2]:
        InterviewSubmission.objects.get_or_create(interview=interview, submission_id=pk)
    HintReveal.objects.filter(submission_id=world.alice_ids[1]).update(revealed_at=interview.started_at)
    timeline_note_add(interview, world.staff, "note " + XSS_TEXT)
    client.force_login(world.staff)
    for pk in world.alice_ids[:2]:
        page = body(client.get(reverse("interview-run-detail", args=[interview.pk, pk])))
        assert 'id="run-payload"' in page
        assert_inert(_site_scripts_removed(page), f"run page {pk}")
        data = client.get(reverse("interview-run-status", args=[interview.pk, pk])).json()
        assert data["full"] is True and XSS[0] in data["probes"][0]["message"]  # data, shown as text
        for hint in data["unlocked_hints"]:
            assert_inert(hint["html"], f"hint {hint['id']}")
        assert "<strong>here</strong>" in data["unlocked_hints"][0]["html"]
    for name in ("interview-scorecard", "interview-live"):
        page = _site_scripts_removed(body(client.get(reverse(name, args=[interview.pk]))))
        # The note is text: escaped, it still spells "onload=" and "javascript:", harmlessly; the rest must be inert.
        escaped = escape("note " + XSS_TEXT)
        assert name != "interview-scorecard" or escaped in page
        assert_inert(page.replace(escaped, ""), name)
    replay = client.get(reverse("interview-replay", args=[interview.pk]))
    assert replay["Content-Type"] == "application/json" and any(XSS[0] in e["label"] for e in replay.json()["events"])
    for hint in client.get(reverse("interview-live-state", args=[interview.pk])).json()["challenges"][0]["hints"]:
        assert_inert(hint["html"], "live view hint")
    client.force_login(world.alice)
    for pk in world.alice_ids[:2]:
        for name in ("interview-run-detail", "interview-run-status"):
            assert client.get(reverse(name, args=[interview.pk, pk])).status_code == 404
