"""grader.diff: the structured diff a public probe's page shows (pure: decoded observations built by hand)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from grader.checks import check
from grader.diff import MAX_DIFFERENCES, MAX_INDICES, describe, expected_summary, preview, structured_diff
from sandbox.runner.codec import TaggedArray


def ta(values, dtype: str, source: str = "numpy") -> TaggedArray:
    return TaggedArray(np.asarray(values, dtype=dtype), dtype, source)


def differing(node: dict) -> list[dict]:
    """Every spelled-out differing leaf of a tree, in order."""
    if "children" not in node:
        return [] if node.get("equal") or "collapsed" in node or "omitted" in node else [node]
    return [leaf for child in node["children"] for leaf in differing(child)]


def test_type_shape_and_dtype_come_first():
    diff = structured_diff(ta(np.zeros((2, 3)), "float64", "torch"), ta(np.zeros((3, 2)), "float32"))
    assert (diff["received"], diff["expected"]) == ("torch float64 array, shape (2, 3)", "numpy float32 array, shape (3, 2)")
    assert diff["tree"]["failure"] == "framework" and "first" not in diff["tree"]
    assert describe({"a": 1}) == "dict of 1 key" and describe([1, 2]) == "list of 2 items" and describe(0.5) == "float 0.5"


def test_equal_parts_collapse_and_the_differing_leaf_is_named_by_its_path():
    steps = list(range(12))
    actual = {"loss": 0.25, "steps": steps, "grad": [1.0, 2.0, 0.0, 4.0]}
    expected = {"loss": 0.25, "steps": steps, "grad": [1.0, 2.0, 3.0, 4.0]}
    diff = structured_diff(actual, expected)
    top = diff["tree"]["children"]
    assert top[0] == {"collapsed": 2, "first": "['loss']", "last": "['steps']"}
    [leaf] = differing(diff["tree"])
    assert (leaf["path"], leaf["received"], leaf["expected"]) == ("result['grad'][2]", "0.0", "3.0")
    grad = top[1]["children"]
    assert [c.get("collapsed") for c in grad] == [2, None, 1]
    assert (diff["equal"], diff["shown"], diff["omitted"]) == (False, 1, 0)


def test_a_list_of_twelve_equal_entries_is_one_collapsed_entry():
    diff = structured_diff({"a": list(range(12)), "b": 1}, {"a": list(range(12)), "b": 2})
    assert diff["tree"]["children"][0] == {"collapsed": 1, "first": "['a']", "last": "['a']"}
    assert structured_diff(list(range(12)), list(range(12)))["tree"] == {
        "label": "result", "path": "result", "equal": True, "received": "list of 12 items", "expected": "list of 12 items",
        "children": [{"collapsed": 12, "first": "[0]", "last": "[11]"}],
    }  # fmt: skip


def test_floats_within_tolerance_are_equal_and_exact_mode_is_respected():
    assert structured_diff([1.0, 2.0], [1.0, 2.0 + 1e-9])["equal"] is True
    assert structured_diff([1.0, 2.0], [1.0, 2.0 + 1e-9], check_mode="exact")["equal"] is False
    assert structured_diff([1.0], [1.5], rtol=0.5)["equal"] is True


def test_an_array_lists_its_first_mismatching_indices_with_both_values_and_the_tolerance():
    expected = np.arange(20, dtype=np.float32).reshape(4, 5)
    actual = expected.copy()
    actual[1, 2] = -1
    actual[3, 0] = np.nan
    diff = structured_diff(ta(actual, "float32"), ta(expected, "float32"))
    node = diff["tree"]
    assert node["first"] == [
        {"index": [1, 2], "received": "-1.0", "expected": "7.0", "equal_before": 7},
        {"index": [3, 0], "received": "nan", "expected": "15.0", "equal_before": 7},
    ]
    assert node["equal_after"] == 4  # every mismatch is listed: the equal elements after the last one
    assert (node["mismatches"], node["elements"], node["tolerance"]) == (2, 20, "rtol=1.3e-06, atol=1e-05")
    assert node["worst"]["index"] == [3, 0]  # a NaN mismatch is the worst, as the check reports it


def test_an_array_counts_the_same_mismatches_as_its_check():
    rng = np.random.default_rng(3)
    expected = rng.normal(size=(50, 40)).astype(np.float16)
    actual = (expected.astype(np.float32) * (1 + rng.normal(scale=2e-3, size=expected.shape))).astype(np.float16)
    actual[0, 0] = np.inf
    a, e = ta(actual, "float16"), ta(expected, "float16")
    assert structured_diff(a, e)["tree"]["mismatches"] == check(a, e).details["mismatches"]
    assert structured_diff(a, e, rtol=1e-2, atol=1e-2)["tree"]["mismatches"] == check(a, e, rtol=1e-2, atol=1e-2).details["mismatches"]


def test_integer_arrays_compare_exactly():
    node = structured_diff(ta([1, 2, 3], "int64"), ta([1, 5, 3], "int64"))["tree"]
    assert (node["tolerance"], node["first"]) == ("exact comparison", [{"index": [1], "received": "2", "expected": "5", "equal_before": 1}])


def test_a_huge_array_gives_a_small_diff():
    expected = np.zeros((1000, 1000), dtype=np.float32)
    diff = structured_diff(ta(expected + 1, "float32"), ta(expected, "float32"))
    assert len(diff["tree"]["first"]) == MAX_INDICES and diff["tree"]["mismatches"] == 1_000_000
    assert "equal_after" not in diff["tree"]  # more mismatches follow the listed ones
    assert len(json.dumps(diff)) < 2_000


def test_many_differences_are_capped_and_counted():
    diff = structured_diff(list(range(1000)), [-1] * 1000)
    assert diff["shown"] == MAX_DIFFERENCES and diff["omitted"] == 1000 - MAX_DIFFERENCES
    assert diff["tree"]["children"][-1] == {"omitted": 1000 - MAX_DIFFERENCES}
    assert len(json.dumps(diff)) < 8_000


def test_keys_lengths_and_types_that_differ_say_so():
    keys = structured_diff({"a": 1, "b": 2}, {"a": 1, "c": 2})["tree"]
    assert keys["note"] == "missing keys 'c'; unexpected keys 'b'" and keys["equal"] is False
    length = structured_diff([1, 2, 3], [1, 2])["tree"]
    assert length["note"] == "3 items where 2 are expected"
    [leaf] = differing(structured_diff({"x": "3"}, {"x": 3})["tree"])
    assert (leaf["path"], leaf["note"]) == ("result['x']", "a str where an int is expected")
    shape = structured_diff(ta(np.zeros(3), "float64"), ta(np.zeros(4), "float64"))["tree"]
    assert shape["note"] == "another shape than expected"


def test_a_custom_check_is_diffed_with_the_defaults_and_flagged():
    diff = structured_diff([3, 1, 2], [1, 2, 3], check_mode="sorted_equal")
    assert diff["custom_check"] is True and len(differing(diff["tree"])) == 3


@pytest.mark.parametrize(
    "value, text",
    [
        (ta([1, 2, 3, 4], "float32"), "float32 array (4,) [1.0, 2.0, 3.0, 4.0]"),
        (ta(np.zeros(100), "float64"), "float64 array (100,) [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, … 92 more]"),
        ({"loss": 0.5, "ok": True, "name": "x"}, "{'loss': 0.5, 'ok': True, 'name': 'x'}"),
    ],
)
def test_the_preview_of_an_expected_value(value, text):
    assert preview(value) == text


def test_the_preview_is_bounded():
    assert len(preview(list(range(100_000)))) <= 600
    summary = expected_summary([0.5] * 10_000)
    assert summary["received"] is None and summary["tree"] is None and len(json.dumps(summary)) < 1_000
