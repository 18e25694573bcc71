#!/usr/bin/env bash
# Start the whole service on its embedded defaults and keep it in the foreground:
# SQLite under var/, Redis on 127.0.0.1:6379, a Celery worker, gunicorn on 127.0.0.1:8000 serving the
# ASGI app (pages and the interview's keystroke websockets, web/config/asgi.py) with uvicorn workers.
# Ctrl-C stops what this script started (and only that). WEB_PORT and REDIS_PORT choose other ports
# (`WEB_PORT=8001 REDIS_PORT=6380 make up`: a second checkout beside a first one).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
mkdir -p var/log var/run
export DJANGO_SETTINGS_MODULE=web.config.settings
export SANDBOX_BACKEND="${SANDBOX_BACKEND:-bwrap}"
# Warm sandboxes per worker process, by runtime profile (set SANDBOX_POOL=0 for cold starts).
export SANDBOX_POOL="${SANDBOX_POOL:-python=1,torch=1,torch-eager=1,tensorflow=1,onnx=1,tvm=1,mlir=1}"
export PYTHONPATH="$PWD"
# A secret key of this installation, made once and kept out of git (var/ is ignored).
[ -s var/secret_key ] || (umask 077 && $PY -c "import secrets; print(secrets.token_urlsafe(50))" > var/secret_key)
export SECRET_KEY="${SECRET_KEY:-$(cat var/secret_key)}"
export ALLOWED_HOSTS="${ALLOWED_HOSTS:-127.0.0.1,localhost}"
WEB_PORT="${WEB_PORT:-8000}"
REDIS_PORT="${REDIS_PORT:-6379}"
for port in "$WEB_PORT" "$REDIS_PORT"; do
  case "$port" in ''|*[!0-9]*) echo "error: WEB_PORT and REDIS_PORT must be port numbers, not '$port'" >&2; exit 2;; esac
done
# The broker, the cache and the keystroke relay's channel layer (and live documents): one Redis, a database each.
export CELERY_BROKER_URL="${CELERY_BROKER_URL:-redis://127.0.0.1:$REDIS_PORT/0}"
export CHANNELS_URL="${CHANNELS_URL:-redis://127.0.0.1:$REDIS_PORT/2}"

pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

# Redis first: sync_challenges queues the reference runs of new versions.
if ! redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping >/dev/null 2>&1; then
  # Append-only: queued gradings survive a Redis restart (the sweeper covers what is still lost).
  redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --save "" --appendonly yes --appendfsync everysec --dir var/run \
    --logfile "$PWD/var/log/redis.log" &
  pids+=($!)
  for _ in $(seq 50); do redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
fi

$PY manage.py migrate --noinput
$PY manage.py sync_challenges
# bwrap sandboxes start with the compiled kernels of packages that ask for them (built once).
if [ "$SANDBOX_BACKEND" = bwrap ]; then $PY -m sandbox.warm; fi
$PY manage.py collectstatic --noinput >/dev/null
demo_login=$($PY manage.py create_demo_user)

# Worker and beat log JSON lines through Django's LOGGING (web/config/logs.py), to stdout.
.venv/bin/celery -A web.config worker --loglevel=INFO --concurrency="${WORKER_CONCURRENCY:-2}" \
  >>"$PWD/var/log/worker.log" 2>&1 &
pids+=($!)
# Beat runs the sweeper that re-queues lost or stuck gradings (GRADING_SWEEP_SECONDS).
.venv/bin/celery -A web.config beat --loglevel=INFO --schedule "$PWD/var/run/celerybeat-schedule" \
  >>"$PWD/var/log/beat.log" 2>&1 &
pids+=($!)

echo
echo "  The service is starting on http://127.0.0.1:$WEB_PORT/"
echo "  $demo_login"
echo "  Logs: var/log/ (worker.log, beat.log, redis.log). Health: http://127.0.0.1:$WEB_PORT/healthz. Ctrl-C stops everything."
echo
.venv/bin/gunicorn web.config.asgi:application -k web.config.asgi_worker.Worker --bind "127.0.0.1:$WEB_PORT" --workers 3 \
  --access-logfile - &
pids+=($!)
wait -n "${pids[@]}"
