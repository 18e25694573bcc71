"""manage.py grant_coach USERNAME [--revoke]: give a user the coach role (web.accounts.roles), or take it away."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from web.accounts.roles import coach_grant, coach_revoke, is_coach


class Command(BaseCommand):
    help = "Make a user a coach (or, with --revoke, a candidate again)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--revoke", action="store_true", help="take the coach role away")

    def handle(self, *args: Any, username: str, revoke: bool, **options: Any) -> None:
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"No user {username!r}.")
        if revoke:
            coach_revoke(user)
            still = " (still a coach: staff users always are)" if is_coach(user) else ""
            self.stdout.write(f"{username} is no longer in the coach group{still}.")
        else:
            coach_grant(user)
            self.stdout.write(f"{username} is a coach.")
