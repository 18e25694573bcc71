"""``manage.py grade SLUG FILE [--public] [--json | --as-candidate]``: grade a file as the web would.

Uses the challenge's current version from the database and the very
functions a web submission goes through (``code_clean`` then ``code_grade``),
so a result here is the result the site would store. Nothing is stored.
``--json`` prints that full result (what coaches see); ``--as-candidate``
prints the JSON the candidate's page would receive for it, built by the
page's own presenter from an unsaved submission (so its id and URLs are
null): what an author or reviewer reads to check that nothing leaks.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from grader.errors import GraderError
from sandbox.runner.codec import to_jsonable
from web.challenges.models import Challenge
from web.challenges.selectors import challenge_get
from web.submissions.errors import SubmissionRejected
from web.submissions.models import Kind, Status, Submission, Verdict
from web.submissions.presenters import submission_payload
from web.submissions.services.grading import code_grade
from web.submissions.services.intake import code_clean


class Command(BaseCommand):
    help = "Grade one solution file against a synced challenge, exactly as a web submission is graded."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("file", type=Path)
        parser.add_argument("--public", action="store_true", help="the public probes (Run) instead of hidden (Submit)")
        output = parser.add_mutually_exclusive_group()
        output.add_argument("--json", action="store_true", help="print GradeResult.to_dict() as one JSON object (the full result)")
        output.add_argument("--as-candidate", action="store_true", help="print the JSON the candidate's page would receive for this result")

    def handle(self, *args: Any, **options: Any) -> None:
        slug: str = options["slug"]
        path: Path = options["file"]
        challenge = challenge_get(slug)
        if challenge is None or challenge.current_version is None:
            raise CommandError(f"no challenge {slug!r}; did you run sync_challenges?")
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise CommandError(f"cannot read {path}: {exc.strerror or exc}") from None
        try:
            code = code_clean(raw)
            result = code_grade(challenge.current_version, code, public=options["public"])
        except SubmissionRejected as exc:
            raise CommandError(f"{path}: {exc}") from None
        except GraderError as exc:
            raise CommandError(f"grading failed ({type(exc).__name__}): {exc}") from None

        if options["as_candidate"]:
            self.stdout.write(json.dumps(_as_candidate(challenge, result, public=options["public"])))
            return
        if options["json"]:
            self.stdout.write(json.dumps(result))
            return
        self._print_summary(challenge.slug, result)

    def _print_summary(self, slug: str, result: dict[str, Any]) -> None:
        self.stdout.write(f"{slug} @ {str(result.get('version', ''))[:12]}: {result['verdict']}, score {result['score']:.1f}")
        for name, cat in (result.get("categories") or {}).items():
            self.stdout.write(f"  {name:14} {cat['score']:6.1f}  ({cat['passed']}/{cat['total']})")
        for probe in result.get("probes") or []:
            mark = "PASS" if probe["passed"] else "FAIL"
            line = f"  {mark} {probe['name']} [{probe['category']}]"
            if not probe["passed"]:
                line += f" {probe['status']}: {probe['message']}"
            self.stdout.write(line)
        if result.get("message"):
            self.stdout.write(result["message"])


def _as_candidate(challenge: Challenge, result: dict[str, Any], *, public: bool) -> dict[str, Any]:
    """The page's JSON for a submission that got ``result``: stored as the worker stores it, shown as the page shows it."""
    # As the worker stores a result (services/grading.py): strict JSON, a known verdict.
    stored = to_jsonable(result)
    verdict = str(stored.get("verdict", ""))
    submission = Submission(
        challenge=challenge,
        version=challenge.current_version,
        kind=Kind.RUN if public else Kind.SUBMIT,
        status=Status.DONE,
        verdict=verdict if verdict in Verdict.values else Verdict.INTERNAL_ERROR,
        score=float(stored.get("score") or 0.0),
        categories=stored.get("categories") or {},
        probes=stored.get("probes") or [],
        hints=list(stored.get("hints") or []),
        message=str(stored.get("message") or ""),
    )
    return submission_payload(submission, revealed_ids=set())
