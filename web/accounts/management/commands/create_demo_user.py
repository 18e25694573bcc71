"""``manage.py create_demo_user``: a candidate account to try the site with; prints the login."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from web.accounts.services import demo_user_ensure


class Command(BaseCommand):
    help = "Create (or reset) the demo candidate account and print its login."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--username", default="demo")
        parser.add_argument("--password", default="demo-password-123")

    def handle(self, *args: Any, **options: Any) -> None:
        _, created = demo_user_ensure(options["username"], options["password"])
        self.stdout.write(f"{'Created' if created else 'Reset'} demo user.")
        self.stdout.write(f"login: {options['username']}  password: {options['password']}")
