#!/usr/bin/env bash
# `make loadtest`: drive the service over HTTP with simulated candidates (bench/loadtest.py).
#
#   LOADTEST_URL=http://host:port LOADTEST_REDIS_URL=redis://host:port/0 scripts/loadtest.sh   # a running service
#   scripts/loadtest.sh                                                                       # a throwaway stack
#
# Without LOADTEST_URL it starts its own stack in a temporary folder, on free
# loopback ports, the way `make up` runs the service (gunicorn with 3 uvicorn workers,
# one Celery worker with WORKER_CONCURRENCY graders and warm bwrap sandboxes,
# Redis, SQLite), runs the load test against it and stops what it started.
# Extra arguments go to bench/loadtest.py (e.g. --candidates 30 --duration 300).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
export PYTHONPATH="$PWD"

if [ -n "${LOADTEST_URL:-}" ]; then
  exec $PY -m bench.loadtest --url "$LOADTEST_URL" --redis-url "${LOADTEST_REDIS_URL:?set LOADTEST_REDIS_URL (the broker) too}" "$@"
fi

free_port() { $PY -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"; }
dir=$(mktemp -d /tmp/mlprep-loadtest.XXXXXX)
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
# Every simulated candidate signs up from 127.0.0.1: lift the per-address sign-up limit
# (web/accounts/throttle.py) that would stop the eleventh. A running service (LOADTEST_URL) needs the same.
export SIGNUPS_PER_IP=100000
export SANDBOX_BACKEND="${SANDBOX_BACKEND:-bwrap}"
export SANDBOX_POOL="${SANDBOX_POOL:-python=1,torch=1}"
# The challenges the candidates use (python and torch profiles: what most of the catalogue is).
slugs="${LOADTEST_SLUGS:-implement-engine-execute,autotune-tiled-matmul,custom-autograd-function,fp16-stable-softmax}"

redis-server --bind 127.0.0.1 --port "$redis_port" --save "" --appendonly no --dir "$dir" --logfile "$dir/redis.log" &
pids+=($!)
for _ in $(seq 50); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done

$PY manage.py migrate --noinput >"$dir/migrate.log"
$PY manage.py sync_challenges >"$dir/sync.log"

.venv/bin/celery -A web.config worker --loglevel=INFO --concurrency="${WORKER_CONCURRENCY:-2}" >"$dir/worker.log" 2>&1 &
pids+=($!)
# As `make up`: the ASGI app on uvicorn workers; WEB_APP=wsgi measures the plain WSGI app (sync workers) instead.
if [ "${WEB_APP:-asgi}" = wsgi ]; then app=(web.config.wsgi:application); else app=(web.config.asgi:application -k web.config.asgi_worker.Worker); fi
export CHANNELS_URL="redis://127.0.0.1:$redis_port/2"
.venv/bin/gunicorn "${app[@]}" --bind "127.0.0.1:$web_port" --workers "${WEB_WORKERS:-3}" \
  --access-logfile "$dir/access.log" >"$dir/gunicorn.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do $PY -c "import urllib.request, sys; urllib.request.urlopen(sys.argv[1], timeout=2)" "http://127.0.0.1:$web_port/" 2>/dev/null && break; sleep 0.2; done
# Let the warm pools fill before the clock starts, as on a service that has been up a while.
for _ in $(seq 60); do grep -q "ready" "$dir/worker.log" 2>/dev/null && break; sleep 1; done
sleep "${LOADTEST_WARMUP:-20}"

# The figures of docs/performance.md: 20 candidates running and submitting, 20 more reading, 3 minutes.
$PY -m bench.loadtest --url "http://127.0.0.1:$web_port" --redis-url "$CELERY_BROKER_URL" --slugs "$slugs" \
  --candidates 20 --readers 20 --duration 180 --json "$dir/loadtest.json" "$@"
