"""``manage.py health``: database, broker and every grading worker's sandbox readiness, as JSON.

Exit status 0 when all is healthy, 1 otherwise (for cron, compose and people).
``--no-workers`` skips asking the workers (a web-only check).
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from web.config.health import service_health


class Command(BaseCommand):
    help = "Check the database, the broker and the grading workers (sandbox backend, pool sizes); non-zero exit if unhealthy."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--no-workers", action="store_true", help="do not ask the Celery workers")
        parser.add_argument("--timeout", type=float, default=3.0, help="seconds to wait for each check (default 3)")

    def handle(self, *args: Any, **options: Any) -> None:
        report = service_health(workers=not options["no_workers"], timeout=options["timeout"])
        self.stdout.write(json.dumps(report, indent=2, default=str))
        if not report["ok"]:
            failed = [f"{name}: {check.get('error', 'failed')}" for name, check in report["checks"].items() if not check["ok"]]
            self.stderr.write("unhealthy: " + "; ".join(failed))
            raise SystemExit(1)
