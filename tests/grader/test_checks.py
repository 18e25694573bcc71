"""grader.checks: the comparison of an observation with its expectation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from grader.checks import DEFAULT_TOLERANCES, check
from sandbox.runner.codec import TaggedArray


def arr(values, dtype: str, source: str = "numpy", *, logical: str | None = None) -> TaggedArray:
    """A decoded array observation; ``logical`` is the dtype name when numpy holds it widened."""
    return TaggedArray(np.asarray(values, dtype=dtype), logical or dtype, source)


def bf16(values) -> TaggedArray:
    # bfloat16 travels as float32 data with its real name (see codec.WIDENED_DTYPES).
    return arr(values, "float32", logical="bfloat16")


def ok(actual, expected, **options) -> bool:
    return check(actual, expected, **options).passed


# ------------------------------------------------------------ dtype-aware default tolerances


def test_default_tolerance_table_matches_the_documented_values():
    assert DEFAULT_TOLERANCES["float16"] == (1e-3, 1e-5)
    assert DEFAULT_TOLERANCES["bfloat16"] == (1.6e-2, 1e-5)
    assert DEFAULT_TOLERANCES["float32"] == (1.3e-6, 1e-5)
    assert DEFAULT_TOLERANCES["float64"] == (1e-7, 1e-7)


def test_float16_default_tolerance_accepts_one_ulp_and_rejects_two():
    # allowance at 1.0: 1e-5 + 1e-3 * 1 = 1.01e-3; float16 ulp at 1.0 is 2**-10 ~ 9.77e-4.
    expected = arr([1.0], "float16")
    assert ok(arr([1.0 + 2**-10], "float16"), expected)
    result = check(arr([1.0 + 2 * 2**-10], "float16"), expected)
    assert not result.passed
    assert "rtol=0.001, atol=1e-05" in result.message


def test_bfloat16_default_tolerance_accepts_two_ulps_and_rejects_three():
    # allowance at 1.0: 1e-5 + 1.6e-2 = 0.01601; bfloat16 ulp at 1.0 is 2**-7 = 0.0078125.
    expected = bf16([1.0])
    assert ok(bf16([1.0 + 2 * 2**-7]), expected)
    result = check(bf16([1.0 + 3 * 2**-7]), expected)
    assert not result.passed
    assert "rtol=0.016" in result.message


def test_float32_default_tolerance_boundary():
    # allowance at 1.0: 1e-5 + 1.3e-6 = 1.13e-5 (float32 ulp there is ~1.2e-7).
    expected = arr([1.0], "float32")
    assert ok(arr([1.0 + 1.10e-5], "float32"), expected)
    assert not ok(arr([1.0 + 1.17e-5], "float32"), expected)


def test_float64_default_tolerance_boundary_absolute_and_relative():
    # At 1.0 the allowance is 2e-7; at 1000.0 it is 1e-7 + 1e-4 (rtol scales with magnitude).
    assert ok(arr([1.0 + 1.9e-7], "float64"), arr([1.0], "float64"))
    assert not ok(arr([1.0 + 2.1e-7], "float64"), arr([1.0], "float64"))
    assert ok(arr([1000.0 + 1.0e-4], "float64"), arr([1000.0], "float64"))
    assert not ok(arr([1000.0 + 1.02e-4], "float64"), arr([1000.0], "float64"))


def test_python_float_uses_float64_tolerance():
    assert ok(1.0 + 1.9e-7, 1.0)
    result = check(1.0 + 2.1e-7, 1.0)
    assert not result.passed
    assert "rtol=1e-07, atol=1e-07" in result.message


def test_tolerance_follows_the_expected_dtype_not_a_global_default():
    # One float16 ulp is fine for float16 but far outside the float32 tolerance.
    assert ok(arr([1.0 + 2**-10], "float16"), arr([1.0], "float16"))
    assert not ok(arr([1.0 + 2**-10], "float32"), arr([1.0], "float32"))


# ------------------------------------------------------------ overrides


def test_atol_override_replaces_the_default():
    expected = arr([1.0], "float64")
    assert ok(arr([1.09], "float64"), expected, rtol=0, atol=0.1)
    assert not ok(arr([1.11], "float64"), expected, rtol=0, atol=0.1)


def test_rtol_override_scales_with_the_expected_magnitude():
    expected = arr([10.0], "float64")
    assert ok(arr([10.99], "float64"), expected, rtol=0.1, atol=0)
    assert not ok(arr([11.01], "float64"), expected, rtol=0.1, atol=0)


def test_overriding_only_rtol_keeps_the_default_atol():
    # rtol=0 leaves the float64 atol of 1e-7.
    assert ok(arr([1.0 + 0.9e-7], "float64"), arr([1.0], "float64"), rtol=0)
    assert not ok(arr([1.0 + 1.1e-7], "float64"), arr([1.0], "float64"), rtol=0)


def test_overrides_apply_to_python_floats():
    assert ok(1.5, 1.0, rtol=0, atol=0.5)
    result = check(1.51, 1.0, rtol=0, atol=0.5)
    assert not result.passed
    assert "rtol=0, atol=0.5" in result.message


def test_a_loose_override_can_accept_what_the_default_rejects():
    assert not ok(arr([1.001], "float32"), arr([1.0], "float32"))
    assert ok(arr([1.001], "float32"), arr([1.0], "float32"), rtol=1e-2)


# ------------------------------------------------------------ shape and dtype


def test_shape_mismatch_is_reported_as_such():
    result = check(arr(np.zeros((3, 2)), "float32"), arr(np.zeros((2, 3)), "float32"))
    assert not result.passed
    assert result.message == "result: shape mismatch: expected (2, 3), got (3, 2)"
    assert result.details == {"failure": "shape", "path": [], "expected_shape": [2, 3], "actual_shape": [3, 2]}
    assert ok(arr(np.zeros((2, 3)), "float32"), arr(np.zeros((2, 3)), "float32"))


def test_dtype_mismatch_is_reported_even_when_values_are_equal():
    result = check(arr([1.0, 2.0], "float64"), arr([1.0, 2.0], "float32"))
    assert not result.passed
    assert result.message == "result: dtype mismatch: expected float32, got float64"
    assert ok(arr([1.0, 2.0], "float32"), arr([1.0, 2.0], "float32"))


def test_bfloat16_and_float32_are_different_dtypes_despite_the_same_storage():
    result = check(arr([1.0], "float32"), bf16([1.0]))
    assert not result.passed
    assert "dtype mismatch: expected bfloat16, got float32" in result.message


def test_zero_d_and_one_element_arrays_differ_in_shape():
    result = check(arr([1.0], "float64"), arr(1.0, "float64"))
    assert not result.passed
    assert "shape mismatch: expected (), got (1,)" in result.message


# ------------------------------------------------------------ NaN and infinities


def test_nan_matches_nan_in_arrays():
    assert ok(arr([np.nan, 1.0], "float32"), arr([np.nan, 1.0], "float32"))
    assert ok(arr([np.nan], "float64"), arr([np.nan], "float64"), mode="exact")


def test_nan_does_not_match_a_finite_value_either_way():
    assert not ok(arr([1.0], "float64"), arr([np.nan], "float64"))
    assert not ok(arr([np.nan], "float64"), arr([1.0], "float64"))


def test_nan_where_a_finite_value_was_expected_is_reported():
    result = check(arr([1.0, np.nan, 3.0], "float32"), arr([1.0, 2.0, 3.0], "float32"))
    assert not result.passed
    assert "1 of 3 elements differ" in result.message
    assert "worst at index [1]" in result.message
    assert "(NaN where a finite value was expected)" in result.message
    assert result.details["worst_index"] == [1]


def test_nan_python_floats():
    assert ok(math.nan, math.nan)
    assert ok(math.nan, math.nan, mode="exact")
    got_nan = check(math.nan, 1.0)
    assert not got_nan.passed
    assert "(NaN)" in got_nan.message
    assert not ok(1.0, math.nan)


def test_positive_infinity_matches_only_positive_infinity():
    assert ok(arr([np.inf, -np.inf], "float64"), arr([np.inf, -np.inf], "float64"))
    result = check(arr([-np.inf], "float64"), arr([np.inf], "float64"))
    assert not result.passed
    assert "expected inf, got -inf" in result.message
    assert ok(math.inf, math.inf)
    assert not ok(-math.inf, math.inf)
    assert not ok(math.inf, -math.inf)


def test_infinity_is_not_close_to_a_huge_finite_value():
    assert not ok(arr([1e308], "float64"), arr([np.inf], "float64"), rtol=1.0)
    assert not ok(1e308, math.inf, rtol=1.0)
    assert not ok(math.inf, 1e308, rtol=1.0)


def test_infinite_where_a_finite_value_was_expected_is_reported():
    result = check(arr([np.inf, 2.0], "float32"), arr([1.0, 2.0], "float32"))
    assert not result.passed
    assert "(infinite where a finite value was expected)" in result.message


# ------------------------------------------------------------ the failure message


def test_message_reports_count_worst_index_and_max_errors():
    expected = np.ones((3, 4))
    actual = expected.copy()
    actual[0, 1] += 0.5  # the first mismatch in C order, but not the worst
    actual[1, 2] += 1e-3
    actual[2, 3] += 3.0  # the worst: furthest over its allowance
    result = check(arr(actual, "float64"), arr(expected, "float64"))
    assert not result.passed
    assert result.message.startswith("result: 3 of 12 elements differ; worst at index [2, 3]: expected 1, got 4;")
    assert "max abs error 3," in result.message
    assert "max rel error 3 " in result.message
    assert "(rtol=1e-07, atol=1e-07)" in result.message
    assert result.details["mismatches"] == 3
    assert result.details["elements"] == 12
    assert result.details["worst_index"] == [2, 3]
    assert result.details["max_abs_error"] == pytest.approx(3.0)
    assert result.details["max_rel_error"] == pytest.approx(3.0)


def test_worst_index_is_the_element_furthest_over_its_allowance():
    # Index [0] has the bigger absolute error but a big allowance (rtol * 1000);
    # index [1] is further over its allowance.
    expected = np.array([1000.0, 1.0])
    actual = np.array([1000.5, 1.4])
    result = check(arr(actual, "float64"), arr(expected, "float64"), rtol=1e-3, atol=0)
    assert not result.passed
    assert result.details["worst_index"] == [1]
    assert "1 of 2 elements differ" in result.message


def test_a_nan_mismatch_is_the_worst_even_with_larger_finite_errors():
    result = check(arr([100.0, np.nan], "float64"), arr([1.0, 1.0], "float64"))
    assert result.details["mismatches"] == 2
    assert result.details["worst_index"] == [1]


def test_path_names_the_nested_location():
    expected = {"grad": [1.0, 2.0, 3.0]}
    result = check({"grad": [1.0, 2.0, 3.5]}, expected)
    assert not result.passed
    assert result.message.startswith("result['grad'][2]: expected 3.0, got 3.5")


# ------------------------------------------------------------ exact mode


def test_exact_mode_on_float_arrays_rejects_a_one_ulp_difference():
    one = np.float32(1.0)
    next_up = np.nextafter(one, np.float32(2.0))
    assert ok(arr([one], "float32"), arr([one], "float32"), mode="exact")
    result = check(arr([next_up], "float32"), arr([one], "float32"), mode="exact")
    assert not result.passed
    assert "(exact comparison)" in result.message
    assert ok(arr([next_up], "float32"), arr([one], "float32"))  # auto mode accepts it


def test_exact_mode_on_python_floats():
    assert not ok(0.1 + 0.2, 0.3, mode="exact")
    assert ok(0.1 + 0.2, 0.3)
    assert ok(0.3, 0.3, mode="exact")


def test_unknown_mode_is_an_error():
    with pytest.raises(ValueError, match="unknown check mode"):
        check(1, 1, mode="close")


# ------------------------------------------------------------ ints, floats, bools and plain values


def test_int_expectation_is_exact():
    assert ok(3, 3)
    result = check(4, 3)
    assert not result.passed
    assert result.message == "result: expected 3, got 4"


def test_int_expectation_accepts_an_equal_integral_float_only_in_auto_mode():
    assert ok(3.0, 3)
    assert not ok(3.0, 3, mode="exact")
    assert not ok(3.5, 3)
    assert not ok(math.nan, 3)
    assert not ok(math.inf, 3)


def test_bool_is_not_an_int_and_an_int_is_not_a_bool():
    assert not ok(True, 1)
    assert not ok(1, True)
    assert ok(True, True)
    assert not ok(False, True)


def test_float_expectation_accepts_an_int_within_tolerance_but_not_a_bool_or_str():
    assert ok(3, 3.0)
    assert not ok(4, 3.0)
    result = check(True, 1.0)
    assert not result.passed
    assert "expected the float 1, got True" in result.message
    assert not ok("1.0", 1.0)


def test_none_and_str_compare_exactly():
    assert ok(None, None)
    assert not ok(0, None)
    assert ok("abc", "abc")
    assert not ok("abd", "abc")


def test_big_ints_compare_exactly():
    assert ok(2**80, 2**80)
    assert not ok(2**80 + 1, 2**80)


def test_int_arrays_are_exact_even_with_a_tolerance():
    expected = arr([1, 2, 3], "int64")
    assert ok(arr([1, 2, 3], "int64"), expected, rtol=1.0, atol=1.0)
    result = check(arr([1, 2, 4], "int64"), expected, rtol=1.0, atol=1.0)
    assert not result.passed
    assert result.message == "result: 1 of 3 elements differ; first at [2]: expected 3, got 4"


def test_bool_arrays_compare_exactly():
    assert ok(arr([True, False], "bool"), arr([True, False], "bool"))
    assert not ok(arr([True, True], "bool"), arr([True, False], "bool"))


# ------------------------------------------------------------ containers


def test_dict_missing_and_extra_keys_are_named():
    expected = {"a": 1, "b": 2}
    assert ok({"b": 2, "a": 1}, expected)
    result = check({"a": 1, "c": 2}, expected)
    assert not result.passed
    assert result.message == "result: missing keys 'b'; unexpected keys 'c'"
    only_missing = check({"a": 1}, expected)
    assert only_missing.message == "result: missing keys 'b'"
    only_extra = check({"a": 1, "b": 2, "z": 0}, expected)
    assert only_extra.message == "result: unexpected keys 'z'"


def test_dict_expected_but_something_else_returned():
    result = check([1, 2], {"a": 1})
    assert not result.passed
    assert result.message == "result: expected a dict, got a list"


def test_list_length_mismatch_is_reported():
    assert ok([1, 2, 3], [1, 2, 3])
    result = check([1, 2], [1, 2, 3])
    assert not result.passed
    assert result.message == "result: expected 3 items, got 2"


def test_list_expected_but_an_array_returned():
    result = check(arr([1, 2, 3], "int64"), [1, 2, 3])
    assert not result.passed
    assert result.message == "result: expected a list of 3, got a numpy array"


def test_list_items_are_compared_in_order():
    assert not ok([2, 1], [1, 2])
    assert check([1, {"x": 2}], [1, {"x": 3}]).message == "result[1]['x']: expected 3, got 2"


# ------------------------------------------------------------ array sources and kinds


def test_array_source_mismatch_torch_vs_numpy():
    expected = arr([1.0], "float32", "torch")
    assert ok(arr([1.0], "float32", "torch"), expected)
    result = check(arr([1.0], "float32", "numpy"), expected)
    assert not result.passed
    assert result.message == "result: expected a torch array, got a numpy array"


def test_array_expected_but_a_plain_value_returned():
    result = check([1.0], arr([1.0], "float32"))
    assert not result.passed
    assert result.message == "result: expected a numpy array of dtype float32, got a list"


def test_zero_d_arrays_use_the_tolerance_and_report_an_empty_index():
    expected = arr(1.0, "float64")
    assert ok(arr(1.0 + 1e-7, "float64"), expected)
    result = check(arr(1.5, "float64"), expected)
    assert not result.passed
    assert "1 of 1 elements differ; worst at index []" in result.message
    assert result.details["worst_index"] == []


def test_empty_arrays_match_when_shape_and_dtype_match():
    assert ok(arr(np.zeros((0, 3)), "float32"), arr(np.zeros((0, 3)), "float32"))
    assert not ok(arr(np.zeros((0, 4)), "float32"), arr(np.zeros((0, 3)), "float32"))
    assert not ok(arr(np.zeros((0, 3)), "float64"), arr(np.zeros((0, 3)), "float32"))


def test_complex_arrays_use_the_tolerance_on_the_complex_distance():
    expected = arr([1 + 1j, 2 + 0j], "complex128")
    assert ok(arr([1 + 1j, 2 + 1e-8j], "complex128"), expected)
    result = check(arr([1 + 1j, 2 + 1e-3j], "complex128"), expected)
    assert not result.passed
    assert "worst at index [1]: expected 2+0j, got 2+0.001j" in result.message
    assert result.details["max_abs_error"] == pytest.approx(1e-3)


def test_complex64_default_tolerance_is_the_float32_one():
    expected = arr([1 + 0j], "complex64")
    assert ok(arr([1 + 1.10e-5j], "complex64"), expected)
    assert not ok(arr([1 + 1.17e-5j], "complex64"), expected)


def test_complex_nan_matches_complex_nan():
    value = complex(np.nan, 0)
    assert ok(arr([value], "complex128"), arr([value], "complex128"))
    assert not ok(arr([1 + 0j], "complex128"), arr([value], "complex128"))


def test_passing_check_reports_its_max_error_in_details():
    result = check(arr([1.0, 2.0 + 1e-8], "float64"), arr([1.0, 2.0], "float64"))
    assert result.passed
    assert result.message == ""
    assert result.details["max_abs_error"] == pytest.approx(1e-8)


def test_infinite_arrays_compare_without_numpy_warnings():
    # inf - inf and 0 * inf happen inside the comparison; they are masked and must not warn
    # (pytest.ini turns warnings into errors, and a worker log should not fill with them).
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ok(arr([np.inf, -np.inf, 1.0], "float64"), arr([np.inf, -np.inf, 1.0], "float64"))
        assert ok(arr([np.inf], "float32"), arr([np.inf], "float32"), mode="exact")
        assert ok(arr([np.inf], "float64"), arr([np.inf], "float64"), rtol=0)
        assert not ok(arr([-np.inf], "float64"), arr([np.inf], "float64"), mode="exact")


# ------------------------------------------------------------ structured details (what the feedback policy reads)


@pytest.mark.parametrize(
    ("actual", "expected", "failure", "path"),
    [
        ([1, 2], {"a": 1}, "type", []),
        ({"a": 1, "b": 2}, {"a": 1}, "keys", []),
        ({"a": [1, 2]}, {"a": [1, 2, 3]}, "length", ["a"]),
        ({"a": [1, "x"]}, {"a": [1, "y"]}, "value", ["a", 1]),
        ([1.0, 2.5], [1.0, 2.0], "float", [1]),
        ([float("nan")], [1.0], "nonfinite", [0]),
        (arr([1.0], "float32", "torch"), arr([1.0], "float32"), "framework", []),
        (arr([1.0, 2.0], "float32"), arr([1.0], "float32"), "shape", []),
        (arr([1.0], "float64"), arr([1.0], "float32"), "dtype", []),
        (arr([1.0, 5.0], "float32"), arr([1.0, 2.0], "float32"), "elements", []),
        (arr([1, 5], "int64"), arr([1, 2], "int64"), "elements", []),
        (arr([1.0, np.inf], "float32"), arr([1.0, 2.0], "float32"), "nonfinite", []),
    ],
)
def test_a_failure_names_the_property_and_where_in_its_details(actual, expected, failure, path):
    result = check(actual, expected)
    assert not result.passed
    assert (result.details["failure"], result.details["path"]) == (failure, path)


def test_an_array_failure_reports_its_worst_elements_error_over_its_allowance():
    # atol 0, rtol 0.1: element [1] may be off by 0.2 and is off by 1.0, five times that.
    result = check(arr([1.0, 3.0, 4.0], "float64"), arr([1.0, 2.0, 4.0], "float64"), rtol=0.1, atol=0)
    assert result.details["worst_index"] == [1]
    assert result.details["error_ratio"] == pytest.approx(5.0)


def test_a_float_failure_reports_its_error_over_its_allowance_and_exact_is_infinite():
    assert check(2.5, 2.0, rtol=0.1, atol=0).details["error_ratio"] == pytest.approx(2.5)
    assert check(arr([1.0, 2.5], "float64"), arr([1.0, 2.0], "float64"), mode="exact").details["error_ratio"] == math.inf
