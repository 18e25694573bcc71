#!/usr/bin/env bash
# Measure the live-progress delay (bench/live_delay.py) on a throwaway stack run the way `make up` runs
# the service: gunicorn with 3 uvicorn workers (WEB_APP=wsgi: 3 sync workers), a Celery worker
# (concurrency 2) grading in warm bwrap sandboxes, Redis, SQLite; on free loopback ports, in a
# temporary folder. Stops what it started.
# Extra arguments go to bench/live_delay.py (e.g. --runs 20).
source "$(dirname "$0")/throwaway-stack.sh" mlprep-live-delay
export SANDBOX_BACKEND="${SANDBOX_BACKEND:-bwrap}"
export SANDBOX_POOL="${SANDBOX_POOL:-python=1}"
export CHALLENGES_DIR="$PWD/tests/browser/fixtures/live_packages"
password="$($PY -c 'import secrets; print(secrets.token_urlsafe(16))')"

stack_database
$PY manage.py collectstatic --noinput >/dev/null
$PY manage.py shell -c "from django.contrib.auth.models import User; User.objects.create_user('timer', password='$password')"

stack_worker
stack_web
stack_worker_ready "${LIVE_DELAY_WARMUP:-5}"

$PY -m bench.live_delay --url "http://127.0.0.1:$web_port" --user timer --password "$password" --db "$dir/db.sqlite3" \
  --json "$dir/live-delay.json" "$@"
