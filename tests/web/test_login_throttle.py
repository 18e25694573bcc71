"""Login throttling: web/accounts/throttle.py through the login pages (site and admin), on real caches.

The same scenarios run on the per-process memory cache (development, tests)
and on a real Redis (production's shared cache, CACHE_URL).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client, RequestFactory
from django.urls import reverse

from tests.services import redis_url  # noqa: F401 - pytest fixture
from web.accounts import throttle


@pytest.fixture(params=["locmem", "redis"])
def cache_backend(request: pytest.FixtureRequest, settings: Any) -> Iterator[str]:
    settings.LOGIN_FAILURES_PER_USERNAME = 3
    settings.LOGIN_FAILURES_PER_IP = 6
    settings.LOGIN_THROTTLE_SECONDS = 600
    if request.param == "redis":
        url = request.getfixturevalue("redis_url")
        settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url, "KEY_PREFIX": "t"}}
    cache.clear()
    yield request.param
    cache.clear()


def login(client: Client, username: str, password: str, ip: str = "10.0.0.1") -> Any:
    return client.post(reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=ip)


def test_a_username_is_blocked_after_its_failures_even_with_the_right_password(
    cache_backend: str, client: Client, user: User, settings: Any
) -> None:
    for ip in ("10.0.0.1", "10.0.0.2", "10.0.0.3"):  # from several addresses: the per-username limit
        assert login(client, "alice", "wrong", ip).status_code == 200
    blocked = login(client, "alice", "pw-alice-123", "10.0.0.4")

    assert blocked.status_code == 429 and blocked["Retry-After"] == str(settings.LOGIN_THROTTLE_SECONDS)
    assert "Too many failed logins for this account" in blocked.content.decode()
    assert "_auth_user_id" not in client.session


def test_usernames_are_counted_case_insensitively(cache_backend: str, client: Client, user: User) -> None:
    for name in ("alice", "ALICE", "Alice"):
        login(client, name, "wrong")
    assert login(client, "alice", "pw-alice-123").status_code == 429


def test_other_accounts_are_not_blocked_by_one_accounts_failures(cache_backend: str, client: Client, user: User, other_user: User) -> None:
    for _ in range(3):
        login(client, "alice", "wrong")
    assert login(client, "mallory", "pw-mallory-123").status_code == 302


def test_an_address_is_blocked_after_failures_across_usernames(cache_backend: str, client: Client, user: User) -> None:
    for i in range(6):
        login(client, f"guess{i}", "wrong", "10.9.9.9")
    blocked = login(client, "alice", "pw-alice-123", "10.9.9.9")
    assert blocked.status_code == 429 and "from your network address" in blocked.content.decode()
    assert login(client, "alice", "pw-alice-123", "10.1.1.1").status_code == 302  # another address is fine


def test_a_successful_login_clears_the_usernames_count(cache_backend: str, client: Client, user: User) -> None:
    for _ in range(2):
        login(client, "alice", "wrong")
    assert login(client, "alice", "pw-alice-123").status_code == 302
    client.logout()
    for _ in range(2):
        login(client, "alice", "wrong")
    assert login(client, "alice", "pw-alice-123").status_code == 302


def test_the_block_ends_with_its_window(cache_backend: str, client: Client, user: User, settings: Any) -> None:
    for _ in range(3):
        login(client, "alice", "wrong")
    assert throttle.login_blocked("alice", "10.0.0.1") is not None
    # The window is the counter's expiry; deleting it is what expiry does.
    cache.delete(throttle._username_key("alice"))
    assert login(client, "alice", "pw-alice-123").status_code == 302


def test_the_admin_login_is_throttled_too(cache_backend: str, client: Client, db: None) -> None:
    User.objects.create_user("coach", password="pw-coach-123", is_staff=True)
    for _ in range(3):
        client.post("/admin/login/", {"username": "coach", "password": "wrong"}, REMOTE_ADDR="10.0.0.1")
    response = client.post("/admin/login/", {"username": "coach", "password": "pw-coach-123"}, REMOTE_ADDR="10.0.0.1")
    assert "Too many failed logins" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_counters_expire_with_the_window(cache_backend: str, settings: Any) -> None:
    throttle.login_failed("alice", "10.0.0.1")
    if cache_backend == "redis":
        import redis
        from django.conf import settings as live

        client = redis.Redis.from_url(live.CACHES["default"]["LOCATION"])
        keys = client.keys("t:*")
        assert keys and all(0 < client.ttl(k) <= 600 for k in keys)
    else:
        assert cache.get(throttle._username_key("alice")) == 1


def test_an_unreachable_cache_lets_logins_through(client: Client, user: User, settings: Any) -> None:
    """Redis down must not lock everyone out: the throttle logs and steps aside."""
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "redis://127.0.0.1:9/0",
                    "OPTIONS": {"socket_connect_timeout": 0.2}},
    }  # fmt: skip
    assert throttle.login_blocked("alice", "10.0.0.1") is None
    assert login(client, "alice", "wrong").status_code == 200
    assert login(client, "alice", "pw-alice-123").status_code == 302


# --- Sign-ups ---------------------------------------------------------------------------------


def signup(client: Client, username: str, ip: str) -> Any:
    data = {"username": username, "email": f"{username}@example.com", "password1": "pw-long-enough-123", "password2": "pw-long-enough-123"}
    return client.post(reverse("signup"), data, REMOTE_ADDR=ip)


def test_an_address_that_made_its_accounts_is_refused_more_with_a_clear_429(cache_backend: str, settings: Any, db: None) -> None:
    settings.SIGNUPS_PER_IP = 2
    for name in ("new1", "new2"):
        assert signup(Client(), name, "10.0.0.7").status_code == 302

    refused = signup(Client(), "new3", "10.0.0.7")

    assert refused.status_code == 429 and refused["Retry-After"] == str(settings.SIGNUP_THROTTLE_SECONDS)
    assert "Too many new accounts from your network address. Try again in 60 minutes." in refused.content.decode()
    assert not User.objects.filter(username="new3").exists()
    assert signup(Client(), "new3", "10.0.0.8").status_code == 302  # another address is not affected


def test_a_sign_up_the_form_rejects_is_not_counted(cache_backend: str, settings: Any, db: None) -> None:
    settings.SIGNUPS_PER_IP = 1
    bad = Client().post(reverse("signup"), {"username": "x", "password1": "a", "password2": "b"}, REMOTE_ADDR="10.0.0.9")
    assert bad.status_code == 200
    assert signup(Client(), "fine", "10.0.0.9").status_code == 302


# --- Behind a reverse proxy -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("proxies", "forwarded", "expected"),
    [
        (0, "203.0.113.5", "10.0.0.2"),  # no trusted proxy: the header is the client's own words
        (1, "203.0.113.5", "203.0.113.5"),
        (1, "6.6.6.6, 203.0.113.5", "203.0.113.5"),  # a forged entry left of what the proxy appended
        (2, "6.6.6.6, 203.0.113.5, 10.1.1.1", "203.0.113.5"),  # two proxies: the outer one saw the client
        (2, "203.0.113.5", "203.0.113.5"),  # shorter than the chain: its leftmost entry
        (1, "", "10.0.0.2"),  # no header: the address the server saw
    ],
)
def test_the_client_address_is_read_from_what_trusted_proxies_appended(proxies: int, forwarded: str, expected: str, settings: Any) -> None:
    settings.TRUSTED_PROXY_COUNT = proxies
    request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR=forwarded)
    assert throttle.client_ip(request) == expected


def test_behind_a_proxy_one_client_is_throttled_and_not_everyone(cache_backend: str, settings: Any, db: None) -> None:
    # Every request reaches gunicorn from the proxy's address; only X-Forwarded-For tells clients apart.
    settings.TRUSTED_PROXY_COUNT = 1
    settings.SIGNUPS_PER_IP = 1
    data = {"password1": "pw-long-enough-123", "password2": "pw-long-enough-123"}

    def via_proxy(username: str, client_address: str) -> Any:
        fields = {**data, "username": username, "email": f"{username}@example.com"}
        return Client().post(reverse("signup"), fields, REMOTE_ADDR="172.18.0.5", HTTP_X_FORWARDED_FOR=client_address)

    assert via_proxy("first", "203.0.113.5").status_code == 302
    assert via_proxy("second", "203.0.113.5").status_code == 429
    assert via_proxy("third", "198.51.100.7").status_code == 302, "another client behind the same proxy is not locked out"
