#!/usr/bin/env bash
# Run the whole suite. Tests start the services they need themselves (Redis on
# a free port, a Celery worker, the live server); the sandbox is real bwrap.
set -euo pipefail
cd "$(dirname "$0")/.."
export SANDBOX_BACKEND="${SANDBOX_BACKEND:-bwrap}"
export GRADER_CACHE_DIR="${GRADER_CACHE_DIR:-$(mktemp -d /tmp/mlprep-test-cache.XXXXXX)}"
export PYTHONPATH="$PWD"
# One test database per run: two runs at once (a developer's and CI's, or two
# helpers') would otherwise share var/test-db.sqlite3 and fail with I/O errors.
# The worker processes the tests start inherit the variable.
if [ -z "${TEST_DB_PATH:-}" ]; then
  TEST_DB_DIR=$(mktemp -d /tmp/mlprep-test-db.XXXXXX)
  export TEST_DB_PATH="$TEST_DB_DIR/test-db.sqlite3"
  trap 'rm -rf "$TEST_DB_DIR"' EXIT
fi
# The test settings (a throwaway key, eager Celery unless a test starts a worker).
export DJANGO_SETTINGS_MODULE=web.config.settings_test
.venv/bin/python -m pytest "$@"
