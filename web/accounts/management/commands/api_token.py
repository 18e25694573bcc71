"""manage.py api_token USERNAME [--new | --revoke]: show, create, replace or delete a user's API token.

The token authenticates the JSON API (/api/v1/) and the command-line client
(``python -m web.cli``). Without options it prints the user's token, creating
one if there is none; ``--new`` replaces it (the old one stops working);
``--revoke`` deletes it.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from web.accounts.services import api_token_ensure, api_token_revoke


class Command(BaseCommand):
    help = "Print a user's API token (creating it if needed); --new replaces it, --revoke deletes it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        group = parser.add_mutually_exclusive_group()
        group.add_argument("--new", action="store_true", help="replace the token with a new one")
        group.add_argument("--revoke", action="store_true", help="delete the token")

    def handle(self, *args: Any, username: str, new: bool, revoke: bool, **options: Any) -> None:
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"No user {username!r}.")
        if revoke:
            deleted = api_token_revoke(user)
            self.stdout.write(f"{username}'s API token was deleted." if deleted else f"{username} had no API token.")
            return
        self.stdout.write(api_token_ensure(user, replace=new))
