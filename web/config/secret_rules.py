"""What makes a production secret weak: the rules settings_production.py applies at start-up.

Kept apart from the settings module, which raises on import when a check
fails, so the rules can be read and tested alone: deploy/password-rules.sh
applies the password rule inside the Postgres and Redis containers, and
tests/deploy/test_password_rules.py holds the two to the same answers.
"""

from urllib.parse import unquote, urlsplit

DEV_SECRET_KEY = "dev-only-insecure-secret-key-do-not-deploy"  # noqa: S105 - the key this module refuses
MIN_SECRET_KEY_LENGTH = 32
MIN_PASSWORD_LENGTH = 12
# Passwords that were defaults somewhere (this project's compose file used
# "mlprep") or are the first any scanner tries.
DEFAULT_PASSWORDS = frozenset({"mlprep", "postgres", "redis", "password", "changeme", "secret", "admin"})


def secret_key_problem(key: str) -> str | None:
    """What is wrong with a production SECRET_KEY, or None."""
    if not key:
        return "SECRET_KEY is not set"
    if key == DEV_SECRET_KEY or key.startswith("django-insecure-"):
        return "SECRET_KEY is a development placeholder"
    if len(key) < MIN_SECRET_KEY_LENGTH or len(set(key)) < 5:
        return f"SECRET_KEY is too weak (use at least {MIN_SECRET_KEY_LENGTH} random characters)"
    return None


def service_password_problem(name: str, url: str) -> str | None:
    """What is wrong with the password in a database or Redis URL, or None.

    ``name`` is the setting, named in the message. The password itself is never repeated.
    """
    if not url:
        return None
    password = unquote(urlsplit(url).password or "")
    if not password:
        return f"{name} has no password"
    if password.lower() in DEFAULT_PASSWORDS:
        return f"{name} uses a default password"
    if len(password) < MIN_PASSWORD_LENGTH or len(set(password)) < 5:
        return f"{name}'s password is too weak (use at least {MIN_PASSWORD_LENGTH} random characters)"
    return None
