"""Settings for the test suite: the real settings plus a throwaway key and fast hashing.

Tests run Celery tasks eagerly (in the test process) so that a queued
submission is graded where the test can see it; no broker is needed.
"""

import os

os.environ.setdefault("SECRET_KEY", "test-only-not-a-secret")

from web.config.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
CELERY_TASK_ALWAYS_EAGER = True
# Not propagated: Celery's eager mode can only run a task's retries when its
# errors are not re-raised. Tests assert on the stored outcome instead.
CELERY_TASK_EAGER_PROPAGATES = False
CELERY_BROKER_URL = "memory://"
# Eager Celery would run every reference of every sync inside the test that
# synced; the tests of the preparation turn it on (tests/web/test_expected_prepare.py).
EXPECTED_PREPARE = False
# The keystroke relay in one process; the tests that need the real Redis layer set CHANNELS_URL themselves.
CHANNELS_URL = "memory://"
CHANNEL_LAYERS = channel_layers(CHANNELS_URL)  # noqa: F405

# A file, not SQLite's in-memory default: the end-to-end tests start a real
# Celery worker process that must open the same test database.
DATABASES["default"]["TEST"] = {  # noqa: F405
    "NAME": os.environ.get("TEST_DB_PATH", str(REPO_DIR / "var" / "test-db.sqlite3")),  # noqa: F405
}
