#!/usr/bin/env bash
# The error report's screenshots in docs/screenshots/: a wrong fp16-stable-softmax Run's failing probe with its
# heat-map and histogram, error-heatmap.png (1280 px wide) and error-heatmap-420.png, and a hidden probe's
# of the Submit, error-heatmap-hidden.png (positions and decades only).
#
#   scripts/screenshot-error-heatmap.sh
#
# It runs the browser test that drives the wrong Run and Submit through the real stack (live server, Redis,
# a Celery worker, the bwrap sandbox with torch, headless Chromium) and asks it to save the probe it checked,
# so the picture is of a result the test has just asserted, not one arranged by hand.
# Needs what `make test` needs (redis-server, bubblewrap, /usr/bin/chromium).
set -euo pipefail
cd "$(dirname "$0")/.."
out="$PWD/docs/screenshots"
mkdir -p "$out"
ERROR_HEATMAP_SCREENSHOTS="$out" PYTHONPATH="$PWD" .venv/bin/python -m pytest -q -p no:cacheprovider \
  tests/browser/test_error_heatmap.py
echo "wrote $out/error-heatmap.png, error-heatmap-420.png and error-heatmap-hidden.png"
