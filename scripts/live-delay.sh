#!/usr/bin/env bash
# Measure the live-progress delay (bench/live_delay.py) on a throwaway stack run the way `make up` runs
# the service: gunicorn with 3 uvicorn workers (WEB_APP=wsgi: 3 sync workers), a Celery worker
# (concurrency 2) grading in warm bwrap sandboxes, Redis, SQLite; on free loopback ports, in a
# temporary folder. Stops what it started.
# Extra arguments go to bench/live_delay.py (e.g. --runs 20).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
export PYTHONPATH="$PWD"

free_port() { $PY -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"; }
dir=$(mktemp -d /tmp/mlprep-live-delay.XXXXXX)
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
export SECRET_KEY="$($PY -c 'import secrets; print(secrets.token_urlsafe(50))')"
export DEBUG=0 ALLOWED_HOSTS=127.0.0.1
export SANDBOX_BACKEND="${SANDBOX_BACKEND:-bwrap}"
export SANDBOX_POOL="${SANDBOX_POOL:-python=1}"
export CHALLENGES_DIR="$PWD/tests/browser/fixtures/live_packages"
password="$($PY -c 'import secrets; print(secrets.token_urlsafe(16))')"

redis-server --bind 127.0.0.1 --port "$redis_port" --save "" --appendonly no --dir "$dir" --logfile "$dir/redis.log" &
pids+=($!)
for _ in $(seq 50); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done

$PY manage.py migrate --noinput >"$dir/migrate.log"
$PY manage.py sync_challenges >"$dir/sync.log"
$PY manage.py collectstatic --noinput >/dev/null
$PY manage.py shell -c "from django.contrib.auth.models import User; User.objects.create_user('timer', password='$password')"

.venv/bin/celery -A web.config worker --loglevel=INFO --concurrency="${WORKER_CONCURRENCY:-2}" >"$dir/worker.log" 2>&1 &
pids+=($!)
# As `make up`: the ASGI app on uvicorn workers; WEB_APP=wsgi measures the plain WSGI app (sync workers) instead.
if [ "${WEB_APP:-asgi}" = wsgi ]; then app=(web.config.wsgi:application); else app=(web.config.asgi:application -k web.config.asgi_worker.Worker); fi
export CHANNELS_URL="redis://127.0.0.1:$redis_port/2"
.venv/bin/gunicorn "${app[@]}" --bind "127.0.0.1:$web_port" --workers "${WEB_WORKERS:-3}" \
  --access-logfile "$dir/access.log" >"$dir/gunicorn.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do $PY -c "import urllib.request, sys; urllib.request.urlopen(sys.argv[1], timeout=2)" "http://127.0.0.1:$web_port/" 2>/dev/null && break; sleep 0.2; done
for _ in $(seq 60); do grep -q "ready" "$dir/worker.log" 2>/dev/null && break; sleep 1; done
sleep "${LIVE_DELAY_WARMUP:-5}"

$PY -m bench.live_delay --url "http://127.0.0.1:$web_port" --user timer --password "$password" --db "$dir/db.sqlite3" \
  --json "$dir/live-delay.json" "$@"
