"""``manage.py regrade_submissions``: grade finished submissions again (a platform incident, a fixed package).

Choose them by id, by the challenge version they were graded on, or by
creation time; criteria combine. ``--current-version`` grades them on their
challenge's current version instead of the one they had. ``--dry-run`` lists
what would be regraded.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from web.challenges.models import ChallengeVersion
from web.submissions.services.regrade import submissions_for_regrade, submissions_regrade


def _since(text: str) -> datetime:
    value = parse_datetime(text)
    if value is None:
        try:
            value = datetime.fromisoformat(text)
        except ValueError:
            raise CommandError(f"--since {text!r} is not a date or time; use e.g. 2024-05-01 or 2024-05-01T13:00") from None
    return value if timezone.is_aware(value) else timezone.make_aware(value)


def _version(text: str) -> ChallengeVersion:
    slug, sep, prefix = text.partition("@")
    if not sep or not slug or len(prefix) < 6:
        raise CommandError(f"--challenge-version {text!r}: use SLUG@VERSION with at least 6 characters of the version hash")
    matches = list(ChallengeVersion.objects.filter(challenge__slug=slug, version__startswith=prefix)[:2])
    if not matches:
        raise CommandError(f"--challenge-version {text!r}: no version of {slug!r} starts with {prefix!r}")
    if len(matches) > 1:
        raise CommandError(f"--challenge-version {text!r}: more than one version of {slug!r} starts with {prefix!r}; give more characters")
    return matches[0]


class Command(BaseCommand):
    help = "Regrade finished submissions by id, by challenge version (--challenge-version SLUG@HASH), or created since a time."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("ids", nargs="*", type=int, help="submission ids")
        parser.add_argument("--challenge-version", dest="challenge_version", help="SLUG@VERSION_HASH_PREFIX: submissions graded on that version")
        parser.add_argument("--since", help="submissions created at or after this time (ISO 8601; server time zone if none)")
        parser.add_argument("--current-version", action="store_true", help="grade on the challenge's current version")
        parser.add_argument("--dry-run", action="store_true", help="list, do not regrade")

    def handle(self, *args: Any, **options: Any) -> None:
        ids = options["ids"] or None
        version = _version(options["challenge_version"]) if options["challenge_version"] else None
        since = _since(options["since"]) if options["since"] else None
        if ids is None and version is None and since is None:
            raise CommandError("name what to regrade: submission ids, --challenge-version SLUG@HASH or --since TIME")
        rows = submissions_for_regrade(ids=ids, version=version, since=since)
        if options["dry_run"]:
            found = list(rows.values_list("pk", flat=True))
            self.stdout.write(f"would regrade {len(found)} submission(s){': ' + ', '.join(map(str, found)) if found else ''}")
            return
        regraded = submissions_regrade(rows, on_current_version=options["current_version"])
        self.stdout.write(f"regrading {len(regraded)} submission(s){': ' + ', '.join(map(str, regraded)) if regraded else ''}")
