#!/usr/bin/env bash
# Measure the keystroke-to-interviewer delay of the mock interview's live view (bench/keys_delay.py) on a
# throwaway stack run the way `make up` runs the service: gunicorn with 3 uvicorn workers serving the ASGI
# app (pages and websockets), Redis as the channel layer and document store, SQLite; on free loopback
# ports, in a temporary folder. No Celery worker: nothing is graded. Stops what it started.
# Extra arguments go to bench/keys_delay.py (e.g. --keys 500 --gap 20).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
export PYTHONPATH="$PWD"

free_port() { $PY -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"; }
dir=$(mktemp -d /tmp/mlprep-keys-delay.XXXXXX)
redis_port=$(free_port)
web_port=$(free_port)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  echo "logs of the throwaway stack: $dir"
}
trap cleanup EXIT INT TERM

export DJANGO_SETTINGS_MODULE=web.config.settings
export DATABASE_URL="sqlite:///$dir/db.sqlite3"
export CELERY_BROKER_URL="redis://127.0.0.1:$redis_port/0"
export CACHE_URL="redis://127.0.0.1:$redis_port/1"
export CHANNELS_URL="redis://127.0.0.1:$redis_port/2"
export SECRET_KEY="$($PY -c 'import secrets; print(secrets.token_urlsafe(50))')"
export DEBUG=0 ALLOWED_HOSTS=127.0.0.1
export CHALLENGES_DIR="$PWD/tests/fixtures/packages"
password="$($PY -c 'import secrets; print(secrets.token_urlsafe(16))')"

redis-server --bind 127.0.0.1 --port "$redis_port" --save "" --appendonly no --dir "$dir" --logfile "$dir/redis.log" &
pids+=($!)
for _ in $(seq 50); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done

$PY manage.py migrate --noinput >"$dir/migrate.log"
$PY manage.py sync_challenges >"$dir/sync.log"
$PY manage.py collectstatic --noinput >/dev/null
read -r interview token < <($PY manage.py shell --no-imports -c "
from django.contrib.auth.models import User
from web.accounts.roles import coach_grant
from web.challenges.models import Challenge
from web.interviews.services import interview_create
coach = User.objects.create_user('grace', password='$password'); coach_grant(coach)
User.objects.create_user('ada', password='$password')
i = interview_create(coach, candidate_username='ada', challenges=[Challenge.objects.get(slug='add-numbers')], duration_minutes=60)
print(i.pk, i.token)")

.venv/bin/gunicorn web.config.asgi:application -k web.config.asgi_worker.Worker --bind "127.0.0.1:$web_port" \
  --workers "${WEB_WORKERS:-3}" --access-logfile "$dir/access.log" >"$dir/gunicorn.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do $PY -c "import urllib.request, sys; urllib.request.urlopen(sys.argv[1], timeout=2)" "http://127.0.0.1:$web_port/" 2>/dev/null && break; sleep 0.2; done

$PY -m bench.keys_delay --url "http://127.0.0.1:$web_port" --coach grace --candidate ada --password "$password" \
  --interview "$interview" --token "$token" --json "$dir/keys-delay.json" "$@"
