"""Login forms with throttling: Django's authentication forms, asking web.accounts.throttle first.

The site's login page and the admin's login page both use these, so neither
lets a password be guessed faster than the throttle allows. A refused attempt
never reaches the password check (a correct password does not get through a
block either, or the block would leak which guess was right).
"""

from __future__ import annotations

from typing import Any

from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
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
