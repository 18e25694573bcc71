"""Where a tensor is wrong, as a picture: a wrong fp16-stable-softmax in Chromium shows a heat-map and a histogram.

Real everything, as in test_submit_in_browser: the Django live server, Redis,
a Celery worker and the bwrap sandbox (torch in it). The package is the
catalogue's own fp16-stable-softmax, copied alone into a temporary catalogue;
the code is its shipped ``input-dtype-math`` solution, which rounds every step
to float16/bfloat16, so its float16 softmax is a few ULPs off in scattered
elements: the probe's custom check hands the grader its per-element ratio
(grader/error_report.py).

With ``ERROR_HEATMAP_SCREENSHOTS`` set to a folder, the failing probe is saved
there at 1280 px (error-heatmap.png) and 420 px (error-heatmap-420.png), and a
hidden probe's of the Submit (error-heatmap-hidden.png)
(scripts/screenshot-error-heatmap.sh).
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.test_submit_in_browser import candidate_on_challenge, fits_its_width_once_redrawn, type_into_editor
from tests.services import Worker

PACKAGE = Path(__file__).resolve().parents[2] / "challenges" / "framework-internals" / "fp16-stable-softmax"
WRONG = (PACKAGE / "solutions" / "input-dtype-math.py").read_text()

pytestmark = pytest.mark.browser


def chart_facts(page: Page, selector: str) -> dict[str, Any]:
    """What Chart.js drew on a canvas: its type, axis titles and how many data points."""
    return page.locator(selector).evaluate(
        """canvas => {
            const chart = Chart.getChart(canvas);
            if (!chart) return null;
            const s = chart.options.scales;
            return {type: chart.config.type, x: s.x.title.text, y: s.y.title.text,
                    points: chart.data.datasets[0].data.length, width: canvas.width, height: canvas.height};
        }"""
    )


def test_a_wrong_fp16_softmax_shows_a_heatmap_and_a_histogram_of_error_over_bound(
    live_server: Any,
    settings: Any,
    celery_worker: Worker,
    browser: Browser,
    tmp_path: Path,
) -> None:
    catalogue = tmp_path / "challenges"
    shutil.copytree(PACKAGE, catalogue / "framework-internals" / PACKAGE.name)
    page = candidate_on_challenge(browser, live_server.url, settings, catalogue, PACKAGE.name)
    type_into_editor(page, WRONG)

    # Run: a public probe's whole report.
    page.click("#run")
    expect(page.locator("#result")).to_have_attribute("data-status", "done", timeout=300_000)
    probe = page.locator('#probes .probe[data-probe="softmax_float16_small"]')
    expect(probe).to_have_attribute("data-passed", "false")
    report = probe.locator(".error-report")
    expect(report).to_have_attribute("data-drawn", "true")
    expect(report.locator(".error-report-facts")).to_contain_text("float16 (4, 16):")
    expect(report.locator(".error-report-facts")).to_contain_text("elements over their bound")
    expect(report.locator(".error-report-facts")).to_contain_text("ULP of float16")
    expect(report.locator(".error-report-label")).to_contain_text("float16 (4, 16)")
    expect(report.locator("figcaption").first).to_contain_text("the outlined cell holds the worst element, [")
    expect(report.locator(".error-legend")).to_contain_text("1 (bound)")

    heatmap = chart_facts(page, '.probe[data-probe="softmax_float16_small"] canvas.error-map')
    assert heatmap is not None and heatmap["type"] == "matrix"
    assert heatmap["points"] == 4 * 16  # every cell of the (4, 16) output: no down-sampling needed
    assert heatmap["x"] == "Columns: dim 1, the last (16)" and heatmap["y"] == "Rows: dim 0 (4)"
    assert heatmap["width"] > 200 and heatmap["height"] > 100
    # The worst cell's tooltip says where it is in the tensor and how far over its bound it is.
    row, col = (int(i) for i in re.search(r"worst at \[(\d+), (\d+)\]", report.locator(".error-report-facts").inner_text()).groups())  # type: ignore[union-attr]
    title, lines = page.locator('.probe[data-probe="softmax_float16_small"] canvas.error-map').evaluate(
        """(canvas, at) => {
            const chart = Chart.getChart(canvas);
            const index = chart.data.datasets[0].data.findIndex(d => d.y === at[0] && d.x === at[1]);
            chart.tooltip.setActiveElements([{datasetIndex: 0, index: index}], {x: 0, y: 0});
            chart.update();
            return [chart.tooltip.title, chart.tooltip.body.flatMap(b => b.lines)];
        }""",
        [row, col],
    )
    assert title == [f"dim 0 = {row}, dim 1 = {col}"]
    assert lines[0].startswith("worst here: error ") and lines[0].endswith("times the bound: out of bound")
    assert lines[1] == "the worst element of the tensor is in this cell"
    histogram = chart_facts(page, '.probe[data-probe="softmax_float16_small"] canvas.error-histogram')
    assert histogram is not None and histogram["type"] == "bar"
    assert histogram["x"].startswith("error / bound, by decade") and histogram["y"] == "elements (log scale)"
    # The bars count every element once, and the ones over the bound are the report's.
    counts = page.locator('.probe[data-probe="softmax_float16_small"] canvas.error-histogram').evaluate(
        "canvas => Chart.getChart(canvas).data.datasets[0].data"
    )
    assert sum(counts) == 64
    assert sum(counts[7:]) > 0, "input-dtype-math's float16 softmax has elements over their bound"

    shots = os.environ.get("ERROR_HEATMAP_SCREENSHOTS")
    if shots:
        page.set_viewport_size({"width": 1280, "height": 1600})  # tall enough that the page's sticky header covers none of the probe
        page.wait_for_timeout(300)  # Chart.js redraws on resize
        probe.scroll_into_view_if_needed()
        probe.screenshot(path=str(Path(shots) / "error-heatmap.png"))
    page.set_viewport_size({"width": 420, "height": 1600})  # tall enough that the page's sticky header covers none of the probe
    expect(report.locator("canvas.error-map")).to_be_visible()
    assert fits_its_width_once_redrawn(page, "#result"), "the error report overflows at 420 px"
    if shots:
        page.wait_for_timeout(300)  # Chart.js redraws on resize
        probe.screenshot(path=str(Path(shots) / "error-heatmap-420.png"))
    page.set_viewport_size({"width": 1280, "height": 900})

    # Submit: hidden probes get where and how far in decades, never a value.
    page.click("#submit")
    expect(page.locator("#result")).to_have_attribute("data-kind", "submit", timeout=60_000)
    expect(page.locator("#result")).to_have_attribute("data-status", "done", timeout=300_000)
    hidden = page.locator("#probes .probe[data-passed=false]").filter(has=page.locator(".error-report")).first
    expect(hidden.locator(".error-report")).to_have_attribute("data-drawn", "true")
    facts = hidden.locator(".error-report-facts")
    expect(facts).to_contain_text("over their bound")
    expect(hidden.locator(".error-report")).to_contain_text("no values")
    for value_word in ("max abs error", "ULP", "exact"):
        expect(hidden.locator(".error-report")).not_to_contain_text(value_word)
    expect(hidden.locator(".error-report-label")).to_have_count(0)
    if shots:
        hidden.scroll_into_view_if_needed()
        hidden.screenshot(path=str(Path(shots) / "error-heatmap-hidden.png"))
