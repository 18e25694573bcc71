#!/usr/bin/env bash
# The result panel's screenshots in docs/screenshots/: a wrong Run's panel, result-panel.png (1280 px wide)
# and result-panel-420.png, and a wrong Submit's after one hint was revealed, result-panel-hints.png.
#
#   scripts/screenshot-result-panel.sh
#
# It runs the browser tests that drive a wrong Run of the train-step fixture
# and a wrong Submit of add-numbers through the real stack (live server, Redis, a Celery worker, the bwrap
# sandbox, headless Chromium) and asks them to save the panel they checked, so the
# picture is of a result the test has just asserted, not one arranged by hand.
# Needs what `make test` needs (redis-server, bubblewrap, /usr/bin/chromium).
set -euo pipefail
cd "$(dirname "$0")/.."
out="$PWD/docs/screenshots"
mkdir -p "$out"
RESULT_PANEL_SCREENSHOTS="$out" PYTHONPATH="$PWD" .venv/bin/python -m pytest -q -p no:cacheprovider \
  tests/browser/test_result_panel.py
echo "wrote $out/result-panel.png, result-panel-420.png and result-panel-hints.png"
