"""Account state changes: the demo user for trying the site out, and API tokens."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from rest_framework.authtoken.models import Token


@transaction.atomic
def demo_user_ensure(username: str, password: str) -> tuple[AbstractBaseUser, bool]:
    """Create the demo user, or reset its password so the printed login works."""
    user_model = get_user_model()
    user, created = user_model.objects.get_or_create(username=username)
    user.set_password(password)
    user.save(update_fields=["password"])
    return user, created


@transaction.atomic
def api_token_ensure(user: AbstractBaseUser, *, replace: bool = False) -> str:
    """The user's API token (DRF authtoken), created if missing; ``replace`` makes a new one."""
    if replace:
        Token.objects.filter(user=user).delete()
    token, _ = Token.objects.get_or_create(user=user)
    return str(token.key)


def api_token_get(user: AbstractBaseUser) -> str | None:
    return Token.objects.filter(user=user).values_list("key", flat=True).first()


def api_token_revoke(user: AbstractBaseUser) -> bool:
    """Delete the user's API token; whether there was one."""
    deleted, _ = Token.objects.filter(user=user).delete()
    return bool(deleted)
