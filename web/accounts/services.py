"""Account state changes: the demo user for trying the site out."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction


@transaction.atomic
def demo_user_ensure(username: str, password: str) -> tuple[AbstractBaseUser, bool]:
    """Create the demo user, or reset its password so the printed login works."""
    user_model = get_user_model()
    user, created = user_model.objects.get_or_create(username=username)
    user.set_password(password)
    user.save(update_fields=["password"])
    return user, created
