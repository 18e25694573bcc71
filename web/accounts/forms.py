"""Account forms: login with throttling, and sign-up with an email (where a password reset is sent).

The site's login page and the admin's login page both use the throttled
forms, so neither lets a password be guessed faster than the throttle
allows. A refused attempt never reaches the password check (a correct
password does not get through a block either, or the block would leak which
guess was right).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm, UserCreationForm
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError

from web.accounts import throttle

THROTTLED = "throttled"


class _ThrottleMixin:
    request: Any
    cleaned_data: dict[str, Any]
    # The refusal, for the view to answer with its status and Retry-After.
    blocked: throttle.LoginBlocked | None = None

    def clean(self) -> dict[str, Any]:
        username = str(self.cleaned_data.get("username") or "")
        ip = throttle.client_ip(self.request) if self.request is not None else "unknown"
        self.blocked = throttle.login_blocked(username, ip)
        if self.blocked is not None:
            raise ValidationError(str(self.blocked), code=THROTTLED)
        try:
            cleaned: dict[str, Any] = super().clean()  # type: ignore[misc]
        except ValidationError:
            throttle.login_failed(username, ip)
            raise
        throttle.login_succeeded(username)
        return cleaned


class ThrottledAuthenticationForm(_ThrottleMixin, AuthenticationForm):
    pass


class ThrottledAdminAuthenticationForm(_ThrottleMixin, AdminAuthenticationForm):
    pass


class SignupForm(UserCreationForm):
    """Django's sign-up form with an email address: the one a forgotten password's reset link goes to, one per account."""

    email = forms.EmailField(help_text="Where a password reset is sent if you forget your password. Never shown to anyone.")

    class Meta(UserCreationForm.Meta):
        model = User
        fields = ("username", "email")

    def clean_email(self) -> str:
        email = str(self.cleaned_data["email"]).strip()
        if User.objects.filter(email__iexact=email).exists():
            raise ValidationError("An account with this email already exists. Log in, or reset its password.")
        return email
