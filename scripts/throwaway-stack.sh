# Sourced by the measuring scripts (loadtest.sh, live-delay.sh, keys-delay.sh): a throwaway stack run the
# way `make up` runs the service, in a temporary folder on free loopback ports, stopped on exit.
#
#   source scripts/throwaway-stack.sh NAME   # folder /tmp/NAME.XXXXXX, Redis started, settings exported
#   stack_database                            # migrate and sync the challenges (CHALLENGES_DIR)
#   stack_worker                              # a Celery worker (WORKER_CONCURRENCY, default 2)
#   stack_web                                 # gunicorn with WEB_WORKERS uvicorn workers on the ASGI app
#                                             # (WEB_APP=wsgi: sync workers on the WSGI app), once it answers
#   stack_worker_ready SECONDS                # the worker said ready, then SECONDS for the warm pools
# Sets: PY, dir, redis_port, web_port; every process it starts is stopped by the EXIT trap.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PY=.venv/bin/python
export PYTHONPATH="$PWD"

free_port() { $PY -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"; }
dir=$(mktemp -d "/tmp/$1.XXXXXX")
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

redis-server --bind 127.0.0.1 --port "$redis_port" --save "" --appendonly no --dir "$dir" --logfile "$dir/redis.log" &
pids+=($!)
for _ in $(seq 50); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done

stack_database() {
  $PY manage.py migrate --noinput >"$dir/migrate.log"
  $PY manage.py sync_challenges >"$dir/sync.log"
}

stack_worker() {
  .venv/bin/celery -A web.config worker --loglevel=INFO --concurrency="${WORKER_CONCURRENCY:-2}" >"$dir/worker.log" 2>&1 &
  pids+=($!)
}

stack_web() {
  # As `make up`: the ASGI app on uvicorn workers; WEB_APP=wsgi measures the plain WSGI app (sync workers) instead.
  local app
  if [ "${WEB_APP:-asgi}" = wsgi ]; then app=(web.config.wsgi:application); else app=(web.config.asgi:application -k web.config.asgi_worker.Worker); fi
  .venv/bin/gunicorn "${app[@]}" --bind "127.0.0.1:$web_port" --workers "${WEB_WORKERS:-3}" \
    --access-logfile "$dir/access.log" >"$dir/gunicorn.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do $PY -c "import urllib.request, sys; urllib.request.urlopen(sys.argv[1], timeout=2)" "http://127.0.0.1:$web_port/" 2>/dev/null && break; sleep 0.2; done
}

stack_worker_ready() {
  for _ in $(seq 60); do grep -q "ready" "$dir/worker.log" 2>/dev/null && break; sleep 1; done
  sleep "$1"
}
