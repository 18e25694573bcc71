#!/usr/bin/env bash
# Run the whole suite. Tests start the services they need themselves (Redis on
# a free port, a Celery worker, the live server); the sandbox is real bwrap.
set -euo pipefail
cd "$(dirname "$0")/.."
export SANDBOX_BACKEND="${SANDBOX_BACKEND:-bwrap}"
export GRADER_CACHE_DIR="${GRADER_CACHE_DIR:-$(mktemp -d /tmp/mlprep-test-cache.XXXXXX)}"
export PYTHONPATH="$PWD"
# The test settings (a throwaway key, eager Celery unless a test starts a worker).
export DJANGO_SETTINGS_MODULE=web.config.settings_test
exec .venv/bin/python -m pytest "$@"
