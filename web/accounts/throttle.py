"""Login, sign-up and password-reset throttling: failed logins per username and per client IP, accounts made and reset
emails asked per IP, in Django's cache.

The login forms (``web.accounts.forms``) ask ``login_blocked`` before they
check a password, report each failure with ``login_failed`` and each success
with ``login_succeeded``. A username that failed ``LOGIN_FAILURES_PER_USERNAME``
times, or an address that failed ``LOGIN_FAILURES_PER_IP`` times, is refused
for ``LOGIN_THROTTLE_SECONDS`` counted from its first failure (a fixed
window: the counter expires as a whole). The username limit stops guessing
one account's password from many addresses; the IP limit stops one address
trying many accounts.

Sign-ups: an address that made ``SIGNUPS_PER_IP`` accounts within
``SIGNUP_THROTTLE_SECONDS`` is refused more until the window ends (each
account costs a password hash and a row; a script would otherwise make
thousands, each with its own submission limits).

Password resets: an address that asked ``PASSWORD_RESETS_PER_IP`` reset
emails within ``PASSWORD_RESET_THROTTLE_SECONDS`` is refused more (each sends
mail). Sign-ups and resets share one per-address counter.

Why not django-axes, the kept library for this: it records every attempt as a
database row and adds its own authentication backend and middleware, for the
login form only; these few counters cover login, the admin's login, sign-up
and password reset alike, write nothing to the database on the login path,
and answer through the web's one error table (a 429 with Retry-After).

The counts live in the cache, so every web process must share one cache:
Redis in production (``CACHE_URL``; settings_production refuses anything
else). If the cache is unreachable the check lets the attempt through and
logs it: an outage of Redis must not lock every user out of the site.
"""

from __future__ import annotations

import hashlib
import logging

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest

from web.errors import Throttled

logger = logging.getLogger(__name__)

_PREFIX = "login-failures"


class LoginBlocked(Throttled):
    """Why an attempt is refused; the message is meant for the person logging in.

    A ``Throttled`` of the web's error tree, so the page that shows it in its
    form answers with the tree's status and Retry-After (web/errors.py).
    ``retry_after`` is an upper bound in seconds.
    """

    def __init__(self, scope: str, message: str, retry_after: int) -> None:
        super().__init__(message, retry_after)
        self.scope = scope  # "username" or "ip"


def client_ip(request: HttpRequest) -> str:
    """The address the request came from, as the nearest untrusted hop saw it.

    With ``TRUSTED_PROXY_COUNT = 0`` (gunicorn faces clients) that is
    REMOTE_ADDR: X-Forwarded-For is ignored, a client can write it itself.
    Behind N trusted proxies, each appends the address it received from to
    X-Forwarded-For, so the N-th entry from the right is the client's as the
    outermost proxy saw it; entries further left are the client's own words.
    A header shorter than N (a request that bypassed a proxy, or a proxy that
    does not append) gives its leftmost entry, and no header REMOTE_ADDR.
    """
    proxies = int(getattr(settings, "TRUSTED_PROXY_COUNT", 0))
    remote = str(request.META.get("REMOTE_ADDR") or "unknown")
    if proxies <= 0:
        return remote
    forwarded = [part.strip() for part in str(request.META.get("HTTP_X_FORWARDED_FOR", "")).split(",") if part.strip()]
    if not forwarded:
        return remote
    return forwarded[-proxies] if len(forwarded) >= proxies else forwarded[0]


def _username_key(username: str) -> str:
    # Hashed: usernames may hold characters a cache key must not, and the
    # cache then holds no list of who tried to log in.
    digest = hashlib.sha256(username.strip().casefold().encode("utf-8")).hexdigest()[:32]
    return f"{_PREFIX}:user:{digest}"


def _ip_key(ip: str) -> str:
    return f"{_PREFIX}:ip:{hashlib.sha256(ip.encode('utf-8')).hexdigest()[:32]}"


def _window() -> int:
    return int(settings.LOGIN_THROTTLE_SECONDS)


def _minutes(seconds: int) -> str:
    minutes = max(1, -(-seconds // 60))
    return f"{minutes} minute{'s' if minutes != 1 else ''}"


def login_blocked(username: str, ip: str) -> LoginBlocked | None:
    """The reason this attempt must be refused without checking the password, or None."""
    try:
        counts = cache.get_many([_username_key(username), _ip_key(ip)])
    except Exception:
        logger.exception("login throttle: the cache is unreachable; not limiting this attempt")
        return None
    window = _window()
    if int(counts.get(_username_key(username)) or 0) >= settings.LOGIN_FAILURES_PER_USERNAME:
        return LoginBlocked(
            "username",
            f"Too many failed logins for this account. Try again in {_minutes(window)}, or reset your password.",
            window,
        )
    if int(counts.get(_ip_key(ip)) or 0) >= settings.LOGIN_FAILURES_PER_IP:
        return LoginBlocked("ip", f"Too many failed logins from your network address. Try again in {_minutes(window)}.", window)
    return None


def _count(key: str, timeout: int | None = None) -> int:
    """Add one to the counter ``key`` (made with a ``timeout``-second life, the login window by default)."""
    timeout = _window() if timeout is None else timeout
    # add() only creates the counter (with its expiry) if it is absent; incr()
    # is atomic in Redis, so concurrent events are all counted.
    cache.add(key, 0, timeout=timeout)
    try:
        return int(cache.incr(key))
    except ValueError:  # expired between add() and incr()
        cache.add(key, 1, timeout=timeout)
        return 1


def login_failed(username: str, ip: str) -> None:
    try:
        by_user = _count(_username_key(username))
        by_ip = _count(_ip_key(ip))
    except Exception:
        logger.exception("login throttle: the cache is unreachable; failure not counted")
        return
    if by_user == settings.LOGIN_FAILURES_PER_USERNAME or by_ip == settings.LOGIN_FAILURES_PER_IP:
        logger.warning("login throttle engaged (failures: %s for the username, %s from %s)", by_user, by_ip, ip)


def login_succeeded(username: str) -> None:
    """A correct password clears the username's count (not the address's: others may share it)."""
    try:
        cache.delete(_username_key(username))
    except Exception:
        logger.exception("login throttle: the cache is unreachable; count not cleared")


# --- Sign-ups and password resets: a count per client address and window ----------------


def _per_ip_key(kind: str, ip: str) -> str:
    return f"{kind}:ip:{hashlib.sha256(ip.encode('utf-8')).hexdigest()[:32]}"


def _per_ip_blocked(kind: str, ip: str, allowed: int, window: int, message: str) -> LoginBlocked | None:
    try:
        made = int(cache.get(_per_ip_key(kind, ip)) or 0)
    except Exception:
        logger.exception("%s throttle: the cache is unreachable; not limiting this request", kind)
        return None
    return None if made < allowed else LoginBlocked("ip", message.format(wait=_minutes(window)), window)


def _per_ip_done(kind: str, ip: str, allowed: int, window: int) -> None:
    try:
        made = _count(_per_ip_key(kind, ip), window)
    except Exception:
        logger.exception("%s throttle: the cache is unreachable; request not counted", kind)
        return
    if made == allowed:
        logger.warning("%s throttle engaged (%s from %s)", kind, made, ip)


def signup_blocked(ip: str) -> LoginBlocked | None:
    """Why another account from this address must be refused now, or None."""
    message = "Too many new accounts from your network address. Try again in {wait}."
    return _per_ip_blocked("signups", ip, settings.SIGNUPS_PER_IP, int(settings.SIGNUP_THROTTLE_SECONDS), message)


def signup_done(ip: str) -> None:
    _per_ip_done("signups", ip, settings.SIGNUPS_PER_IP, int(settings.SIGNUP_THROTTLE_SECONDS))


def reset_blocked(ip: str) -> LoginBlocked | None:
    """Why another password-reset email asked from this address must be refused now (each sends mail), or None."""
    message = "Too many password resets asked from your network address. Try again in {wait}."
    return _per_ip_blocked("password-resets", ip, settings.PASSWORD_RESETS_PER_IP, int(settings.PASSWORD_RESET_THROTTLE_SECONDS), message)


def reset_asked(ip: str) -> None:
    _per_ip_done("password-resets", ip, settings.PASSWORD_RESETS_PER_IP, int(settings.PASSWORD_RESET_THROTTLE_SECONDS))
