#!/usr/bin/env bash
# The live progress screenshots in docs/screenshots/: a Submit of count-slowly two probes in,
# live-progress.png (1280 px wide) and live-progress-420.png (the same grading, a probe later).
#
#   scripts/screenshot-live-progress.sh
#
# It runs the browser test that watches a wrong Submit's probes finish one by one through the
# real stack (live server, Redis, a Celery worker, the bwrap sandbox, headless Chromium) and
# asks it to save the running panel, so the picture is of a grading the test then checks.
# Needs what `make test` needs (redis-server, bubblewrap, /usr/bin/chromium).
set -euo pipefail
cd "$(dirname "$0")/.."
out="$PWD/docs/screenshots"
mkdir -p "$out"
LIVE_SCREENSHOTS="$out" PYTHONPATH="$PWD" .venv/bin/python -m pytest -q -p no:cacheprovider \
  "tests/browser/test_live_progress.py::test_a_submit_shows_each_probe_as_it_finishes_before_the_verdict"
echo "wrote $out/live-progress.png and live-progress-420.png"
