"""``manage.py requeue_stale_submissions``: re-queue grading that was lost (run it from cron)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from web.submissions.services.sweeper import submission_requeue_stale


class Command(BaseCommand):
    help = "Queue grading again for submissions queued or running longer than GRADING_STALE_SECONDS."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--older-than", type=float, default=None, help="seconds (default GRADING_STALE_SECONDS)")

    def handle(self, *args: Any, **options: Any) -> None:
        ids = submission_requeue_stale(older_than_seconds=options["older_than"])
        self.stdout.write(f"re-queued {len(ids)} submission(s){': ' + ', '.join(map(str, ids)) if ids else ''}")
