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

source scripts/throwaway-stack.sh mlprep-loadtest  # from the repository root, where this script moved
# Every simulated candidate signs up from 127.0.0.1: lift the per-address sign-up limit
# (web/accounts/throttle.py) that would stop the eleventh. A running service (LOADTEST_URL) needs the same.
export SIGNUPS_PER_IP=100000
export SANDBOX_BACKEND="${SANDBOX_BACKEND:-bwrap}"
export SANDBOX_POOL="${SANDBOX_POOL:-python=1,torch=1,torch-eager=1}"
# The challenges the candidates use (python and torch profiles: what most of the catalogue is).
slugs="${LOADTEST_SLUGS:-implement-engine-execute,autotune-tiled-matmul,custom-autograd-function,fp16-stable-softmax}"

stack_database

stack_worker
stack_web
# Let the warm pools fill before the clock starts, as on a service that has been up a while.
stack_worker_ready "${LOADTEST_WARMUP:-20}"

# The figures of docs/performance.md: 20 candidates running and submitting, 20 more reading, 3 minutes.
$PY -m bench.loadtest --url "http://127.0.0.1:$web_port" --redis-url "$CELERY_BROKER_URL" --slugs "$slugs" \
  --candidates 20 --readers 20 --duration 180 --settle "${LOADTEST_SETTLE:-600}" --json "$dir/loadtest.json" "$@"
