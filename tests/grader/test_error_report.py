"""grader.error_report: where a float tensor is wrong, from small hand-made arrays, and how big the report is."""

from __future__ import annotations

import json

import numpy as np
import pytest

from grader import error_report as er
from grader.checks import check
from sandbox.runner.codec import TaggedArray


def ta(values, dtype: str) -> TaggedArray:
    return TaggedArray(np.asarray(values, dtype=np.float32 if dtype == "bfloat16" else dtype), dtype, "torch")


def auto(actual: TaggedArray, expected: TaggedArray, **tolerances) -> dict:
    outcome = check(actual, expected, **tolerances)
    assert not outcome.passed
    report = er.auto_report(actual, expected, outcome.details, rtol=outcome.details["rtol"], atol=outcome.details["atol"])
    assert report is not None
    return report


def cells(report: dict) -> list[str]:
    grid = report["map"]
    text = grid["cells"]
    width = grid["cols"]["cells"]
    return [text[i : i + width] for i in range(0, len(text), width)]


# ---------------------------------------------------------------- the numbers


@pytest.mark.parametrize(
    ("dtype", "ulp_at_one"),
    [("float16", 2.0**-10), ("bfloat16", 2.0**-7), ("float32", 2.0**-23)],
)
def test_the_error_in_ulps_is_counted_in_the_observations_dtype(dtype, ulp_at_one):
    expected = ta([1.0, 1.0, 2.0, 0.5], dtype)
    actual = ta([1.0 + 3 * ulp_at_one, 1.0, 2.0, 0.5], dtype)
    report = auto(actual, expected, rtol=0.0, atol=0.0)
    assert report["max_ulp_error"] == 3.0
    assert report["max_abs_error"] == pytest.approx(3 * ulp_at_one, rel=1e-3)
    assert report["max_rel_error"] == pytest.approx(3 * ulp_at_one, rel=1e-3)
    assert report["worst_index"] == [0]
    assert report["over_bound"] == 1


def test_an_ulp_near_zero_is_the_dtypes_smallest_subnormal():
    assert er.ulp(np.array([0.0, 2.0**-30, 1.0, 3.0]), "float16").tolist() == [2.0**-24, 2.0**-24, 2.0**-10, 2.0**-9]


def test_the_ratio_is_the_error_over_atol_plus_rtol_times_the_expected_magnitude():
    expected = ta([[1.0, 10.0], [100.0, 0.0]], "float64")
    actual = ta([[1.0, 10.5], [100.0, 0.0]], "float64")
    report = auto(actual, expected, rtol=0.01, atol=0.1)
    assert report["worst_ratio"] == pytest.approx(0.5 / (0.1 + 0.01 * 10.0))  # 2.5
    assert report["worst_index"] == [0, 1]
    assert report["over_bound"] == 1
    # error 0.5 over a bound of 0.2: the decade (1, 10]; three exact elements at most 1e-6
    assert report["histogram"]["counts"] == [3, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]
    assert report["histogram"]["edges"][6] == 0  # the bound


def test_nan_and_inf_mismatches_are_counted_and_lead_as_the_worst():
    expected = ta([1.0, np.inf, 3.0, np.nan, 5.0, -np.inf], "float32")
    actual = ta([1.5, 2.0, np.nan, np.nan, np.inf, -np.inf], "float32")
    report = auto(actual, expected)
    assert report["nan_mismatches"] == 1  # index 2; both NaN at 3 match
    assert report["inf_mismatches"] == 2  # index 1 and 4; -inf at 5 matches
    assert report["over_bound"] == 4
    assert report["worst_index"] == [1]
    assert report["worst_ratio"] is None
    assert report["histogram"]["nonfinite"] == 3
    row = cells(report)[0]
    assert [c == "!" for c in row] == [False, True, True, False, True, False]
    assert row[0] > er.LEVELS[er.BOUND_LEVEL]  # 0.5 off at 1.0 in float32: far out of bound
    assert "1 NaN and 2 Inf mismatches" in report["summary"]


def test_a_level_above_30_means_out_of_bound():
    levels = er.level(np.array([0.0, 1e-9, 1e-6, 0.999, 1.0, 1.0001, 2.0, 1e6, 1e7, np.inf]))
    assert levels.tolist() == [0, 1, 1, 30, 30, 31, 32, 60, 61, 61]


# ---------------------------------------------------------------- the map


def test_a_3d_tensor_is_mapped_with_leading_dims_as_rows_and_the_last_as_columns():
    expected = np.zeros((2, 3, 4))
    actual = expected.copy()
    actual[1, 2, 3] = 1.0  # row 1*3+2 = 5, column 3
    report = auto(ta(actual, "float64"), ta(expected, "float64"))
    grid = report["map"]
    assert grid["rows"] == {"dims": [0, 1], "shape": [2, 3], "size": 6, "cells": 6}
    assert grid["cols"] == {"dims": [2], "shape": [4], "size": 4, "cells": 4}
    rows = cells(report)
    assert [r.index(max(r)) if max(r) > "0" else None for r in rows] == [None, None, None, None, None, 3]
    assert report["worst_index"] == [1, 2, 3]


def test_a_large_tensor_is_reduced_to_64_by_64_cells_each_the_worst_of_its_block():
    expected = np.ones((5, 200, 130), dtype=np.float32)
    actual = expected.copy()
    actual[4, 199, 0] = 3.0  # the last row of all, the first column
    report = auto(ta(actual, "float32"), ta(expected, "float32"))
    grid = report["map"]
    assert (grid["rows"]["cells"], grid["cols"]["cells"]) == (64, 64)
    assert grid["rows"]["size"] == 1000 and grid["cols"]["size"] == 130
    rows = cells(report)
    assert len(rows) == 64 and all(len(r) == 64 for r in rows)
    assert rows[63][0] > er.LEVELS[er.BOUND_LEVEL]
    assert set("".join(rows[:63]) + rows[63][1:]) == {"0"}


def test_a_1d_tensor_is_one_strip():
    expected = np.linspace(1, 2, 300)
    actual = expected.copy()
    actual[150] += 1
    report = auto(ta(actual, "float64"), ta(expected, "float64"))
    grid = report["map"]
    assert grid["rows"] == {"dims": [], "shape": [], "size": 1, "cells": 1}
    assert grid["cols"]["dims"] == [0] and grid["cols"]["cells"] == 64
    strip = cells(report)[0]
    assert strip.index(max(strip)) == 150 * 64 // 300


def test_the_report_stays_a_few_kib_for_a_million_elements():
    rng = np.random.default_rng(0)
    expected = rng.standard_normal((1000, 1000)).astype(np.float32)
    actual = expected + rng.standard_normal((1000, 1000)).astype(np.float32) * 1e-3
    report = auto(ta(actual, "float32"), ta(expected, "float32"))
    size = len(json.dumps(report))
    assert size < 6 * 1024, size
    assert len(report["map"]["cells"]) == 64 * 64


def test_no_report_for_a_shape_failure_a_scalar_or_an_integer_array():
    assert (
        er.auto_report(
            ta([1.0], "float32"), ta([1.0, 2.0], "float32"), check(ta([1.0], "float32"), ta([1.0, 2.0], "float32")).details, rtol=0, atol=0
        )
        is None
    )
    assert er.auto_report(1.5, 1.0, check(1.5, 1.0).details, rtol=0, atol=0) is None
    ints = TaggedArray(np.array([1, 2]), "int64", "numpy")
    assert (
        er.auto_report(
            ints,
            TaggedArray(np.array([1, 3]), "int64", "numpy"),
            check(ints, TaggedArray(np.array([1, 3]), "int64", "numpy")).details,
            rtol=0,
            atol=0,
        )
        is None
    )


def test_a_report_from_a_custom_check_uses_its_own_ratio():
    ratio = np.array([[0.5, 4.0], [0.0, 1.0]])
    report = er.report_from_check({"ratio": ratio, "abs_error": ratio * 1e-3, "truth": np.ones((2, 2)), "dtype": "float16", "label": "case a"}, None)
    assert report["over_bound"] == 1 and report["worst_index"] == [0, 1] and report["worst_ratio"] == 4.0
    assert report["label"] == "case a" and report["max_ulp_error"] == pytest.approx(4e-3 / 2.0**-10, rel=1e-3)
    assert er.report_from_check((True, "no"), None) is None
    with pytest.raises(ValueError, match="shape"):
        er.report_from_check({"ratio": ratio, "truth": np.ones(3)}, None)


# ---------------------------------------------------------------- what a hidden probe's candidate sees


def test_a_hidden_view_keeps_positions_and_decades_and_drops_every_value():
    expected = np.full((4, 4), 0.123456)
    actual = expected.copy()
    actual[2, 1] += 0.0007  # about 5.7 times float64's bound here
    report = auto(ta(actual, "float64"), ta(expected, "float64"), rtol=1e-3, atol=0.0)
    view = er.hidden_view(report)
    text = json.dumps(view)
    for value in ("0.123", "0.0007", "7e-04", "5.6", "5.7"):
        assert value not in text
    assert "summary" not in view and "label" not in view and "max_abs_error" not in view and "worst_ratio" not in view
    assert view["worst_index"] == [2, 1] and view["over_bound"] == 1 and view["shape"] == [4, 4]
    public_level = cells(report)[2][1]
    hidden_level = view["map"]["cells"][2 * 4 + 1]
    assert er.LEVELS.index(hidden_level) == er.BOUND_LEVEL + er.STEPS_PER_DECADE  # the decade (1, 10]
    assert er.LEVELS.index(public_level) < er.LEVELS.index(hidden_level)
    assert set(view["map"]["cells"]) <= set(er.LEVELS[:: er.STEPS_PER_DECADE] + er.LEVELS[-1] + er.NONFINITE)


def test_a_hidden_view_rebuilds_every_field_from_its_type():
    hostile = {
        "dtype": "secret",
        "shape": ["x"],
        "worst_index": [1, "y"],
        "over_bound": "z",
        "map": {"cells": "abc<script>", "rows": {}},
        "histogram": {"counts": ["q"]},
    }
    view = er.hidden_view(hostile)
    assert "secret" not in json.dumps(view) and "script" not in json.dumps(view)
    assert view["map"] is None and view["histogram"]["counts"] == []
    assert er.hidden_view("not a report") is None
