"""``manage.py sync_challenges [--dir DIR]``: load every package folder into the catalogue.

Prints what was created, updated and unchanged, and every malformed package
with the file and field at fault; exits non-zero if any package is malformed
(the good ones are still synced). Then asks the workers to prepare every
published version's expected observations (low priority; cached ones cost a
file read), so no candidate waits for a reference (``--no-prepare``: don't).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from web.challenges.services import challenge_sync_from_dir
from web.submissions.services.expected import expected_prepare_catalogue


class Command(BaseCommand):
    help = "Sync challenge packages from CHALLENGES_DIR into the database (new content = new version)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dir", type=Path, default=None, help="folder of <track>/<slug> packages")
        parser.add_argument(
            "--no-prepare", action="store_true", help="do not ask the workers to run each published version's reference ahead of candidates"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        root: Path = options["dir"] or Path(settings.CHALLENGES_DIR)
        if not root.is_dir():
            raise CommandError(f"challenges folder {root} does not exist")
        report = challenge_sync_from_dir(root)
        for label, slugs in (("created", report.created), ("updated", report.updated), ("unchanged", report.unchanged)):
            for slug in slugs:
                self.stdout.write(f"{label:9} {slug}")
        for error in report.errors:
            self.stderr.write(f"error     {error.message}")
        self.stdout.write(
            f"{len(report.created)} created, {len(report.updated)} updated, "
            f"{len(report.unchanged)} unchanged, {len(report.errors)} malformed"
        )
        if not options["no_prepare"]:
            sent = expected_prepare_catalogue()
            if sent:
                self.stdout.write(f"{sent} version(s) sent to the workers to prepare their expected observations")
        if report.errors:
            raise CommandError(f"{len(report.errors)} malformed package(s); see the errors above")
