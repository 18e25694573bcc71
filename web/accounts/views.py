"""Sign-up and login (Django's UserCreationForm with an email, a new account is logged in at once; a throttled LoginView), a
throttled password reset by email (Django's views and tokens), and the API token page.

A throttled attempt re-renders its form with the message; the status and
Retry-After come from the web's error table (web/errors.py), like every refusal.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme

from web.accounts.forms import THROTTLED, SignupForm, ThrottledAuthenticationForm
from web.accounts.services import api_token_ensure, api_token_get, api_token_revoke
from web.accounts.throttle import client_ip, reset_asked, reset_blocked, signup_blocked, signup_done
from web.errors import answered_as


def _safe_next(request: HttpRequest) -> str:
    target = request.POST.get("next") or request.GET.get("next") or ""
    if url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return target
    return "catalogue"


def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("catalogue")
    form = SignupForm(request.POST or None)
    if request.method == "POST":
        ip = client_ip(request)
        blocked = signup_blocked(ip)
        if blocked is not None:
            form.is_valid()  # show the form's own errors too
            form.add_error(None, str(blocked))
            return answered_as(render(request, "accounts/signup.html", {"form": form, "next": request.GET.get("next", "")}), blocked)
        if form.is_valid():
            user = form.save()
            signup_done(ip)
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            return redirect(_safe_next(request))
    return render(request, "accounts/signup.html", {"form": form, "next": request.GET.get("next", "")})


class LoginView(auth_views.LoginView):
    """Django's login page on the throttled form; a refused attempt answers 429 with the form's message."""

    authentication_form = ThrottledAuthenticationForm
    redirect_authenticated_user = True

    def form_invalid(self, form: ThrottledAuthenticationForm) -> HttpResponse:
        response = super().form_invalid(form)
        if form.blocked is not None and form.has_error("__all__", code=THROTTLED):
            return answered_as(response, form.blocked)
        return response


class PasswordResetView(auth_views.PasswordResetView):
    """Django's reset request, throttled per client address (each request may send mail); the same answer whether or
    not an account has that email, so the page tells nobody which addresses have accounts."""

    def form_valid(self, form: Any) -> HttpResponse:
        ip = client_ip(self.request)
        blocked = reset_blocked(ip)
        if blocked is not None:
            form.add_error(None, str(blocked))
            return answered_as(self.form_invalid(form), blocked)
        reset_asked(ip)
        return super().form_valid(form)


@login_required
def api_token(request: HttpRequest) -> HttpResponse:
    """The user's own API token: shown, created, replaced or revoked (POST, then back here)."""
    if request.method == "POST":
        action = request.POST.get("action")
        if action in ("create", "replace"):
            api_token_ensure(request.user, replace=action == "replace")
            messages.success(request, "Your new API token is below." if action == "replace" else "Your API token is below.")
        elif action == "revoke":
            api_token_revoke(request.user)
            messages.success(request, "Your API token was deleted; scripts using it are refused from now on.")
        else:
            return HttpResponse("Unknown action; use create, replace or revoke.", status=400, content_type="text/plain")
        return redirect("api-token")
    return render(request, "accounts/api_token.html", {"token": api_token_get(request.user)})
