#!/usr/bin/env bash
# The result panel's screenshots in docs/screenshots/: result-panel.png (1280 px wide) and result-panel-420.png.
#
#   scripts/screenshot-result-panel.sh
#
# It runs the browser test that drives a wrong Run of the train-step fixture
# through the real stack (live server, Redis, a Celery worker, the bwrap
# sandbox, headless Chromium) and asks it to save the panel it checked, so the
# picture is of a result the test has just asserted, not one arranged by hand.
# Needs what `make test` needs (redis-server, bubblewrap, /usr/bin/chromium).
set -euo pipefail
cd "$(dirname "$0")/.."
out="$PWD/docs/screenshots"
mkdir -p "$out"
RESULT_PANEL_SCREENSHOTS="$out" PYTHONPATH="$PWD" .venv/bin/python -m pytest -q -p no:cacheprovider \
  "tests/browser/test_result_panel.py::test_a_wrong_run_shows_where_it_differs_and_the_expected_value_beside_an_error"
echo "wrote $out/result-panel.png and $out/result-panel-420.png"
