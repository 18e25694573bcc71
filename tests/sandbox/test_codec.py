"""sandbox.runner.codec: the one encoding of observations (sandbox -> worker, worker -> checks' sandbox, cache)."""

from __future__ import annotations

import io
import json
import math
import os
import warnings

import ml_dtypes
import numpy as np
import pytest
import torch

from sandbox.runner.codec import (
    MAX_BIGINT_DIGITS,
    MAX_DEPTH,
    MAX_NAME_CHARS,
    MAX_NODES,
    SHOWN_ELEMENTS,
    ObservationError,
    TaggedArray,
    decode_observation,
    encode_observation,
    to_jsonable,
)
from tests.helpers import DECODED_OBSERVATIONS, same_observation


def encode(value):
    blobs: list[bytes] = []
    return encode_observation(value, blobs), blobs


def round_trip(value):
    """Encode as the sandbox does, through strict JSON text, and decode as the worker does."""
    tree, blobs = encode(value)
    return decode_observation(json.loads(json.dumps(tree, allow_nan=False)), blobs)


def npy(array: np.ndarray, **kw) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array, **kw)
    return buf.getvalue()


def nested_list(depth: int, leaf=0):
    """A leaf at ``depth`` levels below the root."""
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


# ------------------------------------------------------------ plain values


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        False,
        0,
        -17,
        2**63 - 1,
        -(2**63),
        1.5,
        -0.0,
        1e-300,
        "",
        "héllo ✓",
        [],
        {},
        [1, "two", 3.0, None, [True]],
        {"a": {"b": [1, {"c": "d"}]}, "": 0},
    ],
)
def test_plain_values_round_trip_unchanged(value):
    result = round_trip(value)
    assert result == value
    assert type(result) is type(value)


@pytest.mark.parametrize("value", [2**63, -(2**63) - 1, 2**200, -(10**300)])
def test_ints_beyond_64_bits_travel_as_bigint(value):
    tree, _ = encode(value)
    assert tree == {"$bigint": str(value)}
    assert round_trip(value) == value


def test_non_finite_floats_round_trip():
    nan, pos, neg = round_trip([math.nan, math.inf, -math.inf])
    assert math.isnan(nan) and pos == math.inf and neg == -math.inf


def test_the_encoded_tree_is_strict_json():
    tree, _ = encode({"x": [math.nan, math.inf, -math.inf, 2**70, (1, 2)]})
    json.dumps(tree, allow_nan=False)
    assert tree == {"$map": {"x": [{"$float": "nan"}, {"$float": "inf"}, {"$float": "-inf"}, {"$bigint": str(2**70)}, [1, 2]]}}


def test_tuples_arrive_as_lists():
    assert round_trip((1, (2, 3))) == [1, [2, 3]]


def test_dict_keys_that_look_like_markers_stay_plain_keys():
    value = {"$float": "nan", "$array": 0, "$bigint": "1", "$map": {}}
    assert round_trip(value) == value


def test_a_numpy_float64_scalar_is_a_python_float():
    # np.float64 subclasses float, so it travels as a plain float, not an array.
    result = round_trip(np.float64(2.5))
    assert result == 2.5 and type(result) is float


# ------------------------------------------------------------ numpy arrays


@pytest.mark.parametrize(
    "dtype", ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint64", "bool", "complex64", "complex128"]
)
def test_numpy_arrays_round_trip_with_dtype_and_values(dtype):
    data = (np.arange(12).reshape(3, 4) % 3).astype(dtype)
    result = round_trip(data)
    assert isinstance(result, TaggedArray)
    assert (result.dtype, result.source) == (dtype, "numpy")
    assert result.data.dtype == np.dtype(dtype)
    assert result.data.shape == (3, 4)
    np.testing.assert_array_equal(result.data, data)


def test_special_float_values_in_arrays_survive():
    data = np.array([np.nan, np.inf, -np.inf, -0.0, 5e-324])
    result = round_trip(data)
    np.testing.assert_array_equal(result.data, data)
    assert np.signbit(result.data[3])


def test_zero_d_arrays_keep_their_shape():
    result = round_trip(np.array(2.5, dtype=np.float32))
    assert result.data.shape == ()
    assert result.data == np.float32(2.5)


@pytest.mark.parametrize(
    ("scalar", "dtype"), [(np.float32(1.5), "float32"), (np.int64(3), "int64"), (np.bool_(True), "bool"), (np.float16(0.5), "float16")]
)
def test_numpy_scalars_arrive_as_zero_d_arrays(scalar, dtype):
    result = round_trip(scalar)
    assert isinstance(result, TaggedArray)
    assert (result.dtype, result.data.shape) == (dtype, ())
    assert result.data.item() == scalar.item()


def test_zero_d_and_one_element_arrays_stay_distinguishable():
    assert round_trip(np.array(1.0)).data.shape != round_trip(np.array([1.0])).data.shape


def test_empty_arrays_keep_their_shape():
    result = round_trip(np.zeros((0, 3), dtype=np.float32))
    assert result.data.shape == (0, 3)
    assert result.data.dtype == np.float32


def test_non_contiguous_arrays_round_trip_by_value():
    base = np.arange(24, dtype=np.float64).reshape(4, 6)
    for view in (base.T, base[::2, 1::3], np.asfortranarray(base)):
        result = round_trip(view)
        np.testing.assert_array_equal(result.data, view)
        assert result.data.shape == view.shape


def test_numpy_bfloat16_travels_widened_with_its_real_name():
    data = np.array([1.0, 1.5, -2.0], dtype=ml_dtypes.bfloat16)
    result = round_trip(data)
    assert (result.dtype, result.source, result.data.dtype) == ("bfloat16", "numpy", np.float32)
    np.testing.assert_array_equal(result.data, [1.0, 1.5, -2.0])


def test_object_arrays_are_refused():
    with pytest.raises(ObservationError, match=r"object arrays cannot be observations \(at result\['x'\]\)"):
        encode({"x": np.array([1, "a"], dtype=object)})


# ------------------------------------------------------------ decoded observations travel on (checks' sandbox, cache)


@pytest.mark.parametrize("name", list(DECODED_OBSERVATIONS))
def test_a_decoded_observation_encodes_again_to_itself(name):
    """What the worker decoded goes on, unchanged, to the checks' sandbox and the cache."""
    assert same_observation(round_trip(DECODED_OBSERVATIONS[name]), DECODED_OBSERVATIONS[name])


def test_observations_can_share_one_blob_list():
    blobs: list[bytes] = []
    first = encode_observation(TaggedArray(np.ones(2), "float64", "numpy"), blobs)
    second = encode_observation({"a": np.zeros(3, dtype=np.int8), "b": np.arange(2.0)}, blobs)
    assert len(blobs) == 3
    assert first["$array"] == 0 and second["$map"]["b"]["$array"] == 2
    assert decode_observation(second, blobs)["b"].data.tolist() == [0.0, 1.0]
    assert decode_observation(first, blobs).data.tolist() == [1.0, 1.0]


@pytest.mark.parametrize(
    "bad", [TaggedArray([1.0, 2.0], "float64", "numpy"), TaggedArray(np.ones(1), None, "numpy"), TaggedArray(np.ones(1), "float64", 3)]
)
def test_a_tagged_array_with_the_wrong_fields_is_refused(bad):
    with pytest.raises(ObservationError, match="a TaggedArray needs a numpy array and string dtype and source"):
        encode(bad)


def test_a_tagged_array_of_objects_is_refused():
    with pytest.raises(ObservationError, match="object arrays cannot be observations"):
        encode(TaggedArray(np.array([None]), "object", "numpy"))


# ------------------------------------------------------------ torch


@pytest.mark.parametrize(
    ("dtype", "name", "numpy_dtype"),
    [
        (torch.float32, "float32", np.float32),
        (torch.float64, "float64", np.float64),
        (torch.int64, "int64", np.int64),
        (torch.float16, "float16", np.float16),
        (torch.bool, "bool", np.bool_),
        (torch.bfloat16, "bfloat16", np.float32),  # widened, keeps its name
    ],
)
def test_torch_tensors_round_trip(dtype, name, numpy_dtype):
    tensor = torch.tensor([[1.0, -2.5], [3.0, 0.0]]).to(dtype)
    result = round_trip(tensor)
    assert (result.dtype, result.source) == (name, "torch")
    assert result.data.dtype == numpy_dtype
    assert result.data.shape == (2, 2)
    np.testing.assert_array_equal(result.data, tensor.to(torch.float64).numpy().astype(numpy_dtype))


def test_torch_bfloat16_values_are_exact_after_widening():
    tensor = torch.tensor([1.0 + 2**-7, 3.140625, -1e30], dtype=torch.bfloat16)
    np.testing.assert_array_equal(round_trip(tensor).data, tensor.float().numpy())


def test_torch_tensors_that_need_grad_views_or_sparsity_are_materialised():
    leaf = torch.ones(2, 3, requires_grad=True)
    assert round_trip(leaf * 2).data.tolist() == [[2.0] * 3] * 2
    assert round_trip(torch.arange(6.0).reshape(2, 3).T).data.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    assert round_trip(torch.tensor([0.0, 2.0]).to_sparse()).data.tolist() == [0.0, 2.0]
    conj = round_trip(torch.tensor([1 + 2j]).conj())
    assert (conj.dtype, conj.data.tolist()) == ("complex64", [1 - 2j])


def test_a_zero_d_torch_tensor_keeps_its_shape():
    result = round_trip(torch.tensor(3.0))
    assert (result.dtype, result.data.shape) == ("float32", ())


def test_a_meta_tensor_is_refused():
    with pytest.raises(ObservationError, match="a meta or fake tensor has no values"):
        encode({"w": torch.empty(3, device="meta")})


# ------------------------------------------------------------ tensorflow


class FakeTFTensor:
    """Stands in for a tf.Tensor: the encoder recognises TensorFlow by module name, numpy() and dtype."""

    def __init__(self, data: np.ndarray, dtype_name: str) -> None:
        self._data = data
        self.dtype = type("DType", (), {"name": dtype_name})()

    def numpy(self) -> np.ndarray:
        return self._data


FakeTFTensor.__module__ = "tensorflow.python.framework.ops"


def test_the_tensorflow_branch_without_importing_tensorflow():
    result = round_trip(FakeTFTensor(np.array([[1.5, 2.0]], dtype=np.float32), "float32"))
    assert (result.dtype, result.source, result.data.shape) == ("float32", "tensorflow", (1, 2))
    widened = round_trip(FakeTFTensor(np.array([1.5], dtype=ml_dtypes.bfloat16), "bfloat16"))
    assert (widened.dtype, widened.source, widened.data.dtype) == ("bfloat16", "tensorflow", np.float32)
    assert round_trip(FakeTFTensor(np.float32(3.0), "float32")).data.shape == ()


# The real thing: importing TensorFlow costs a few seconds, paid once for this module.


@pytest.fixture(scope="module")
def tf():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # import-time deprecation noise from TF's dependencies
        return pytest.importorskip("tensorflow")


def test_tensorflow_tensors_round_trip(tf):
    result = round_trip(tf.constant([[1.5, 2.0]], dtype=tf.float32))
    assert (result.dtype, result.source, result.data.shape) == ("float32", "tensorflow", (1, 2))
    np.testing.assert_array_equal(result.data, [[1.5, 2.0]])
    ints = round_trip(tf.constant([1, 2], dtype=tf.int64))
    assert (ints.dtype, ints.data.dtype) == ("int64", np.int64)
    variable = round_trip(tf.Variable([1.0, 2.0]))
    assert (variable.source, variable.data.tolist()) == ("tensorflow", [1.0, 2.0])


def test_tensorflow_bfloat16_travels_widened_and_scalars_stay_zero_d(tf):
    result = round_trip(tf.constant([1.5], dtype=tf.bfloat16))
    assert (result.dtype, result.data.dtype) == ("bfloat16", np.float32)
    assert round_trip(tf.constant(3.0)).data.shape == ()


# ------------------------------------------------------------ encode errors and limits


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (object(), r"unsupported builtins\.object at result$"),
        ({"a": [1, {2}]}, r"unsupported builtins\.set at result\['a'\]\[1\]$"),
        ([1, 2, b"bytes"], r"unsupported builtins\.bytes at result\[2\]$"),
        ({"f": len}, r"unsupported builtins\.builtin_function_or_method at result\['f'\]$"),
        ([1 + 2j], r"unsupported builtins\.complex at result\[0\]$"),
    ],
)
def test_an_unsupported_type_names_its_path(value, message):
    with pytest.raises(ObservationError, match=message):
        encode(value)


def test_a_non_string_dict_key_is_refused_with_its_path():
    with pytest.raises(ObservationError, match=r"dict keys must be strings \(got int at result\['outer'\]\)"):
        encode({"outer": {1: "x"}})
    with pytest.raises(ObservationError, match="got tuple at result"):
        encode({(1, 2): 0})


def test_nesting_depth_limit():
    assert encode(nested_list(MAX_DEPTH))[0] == nested_list(MAX_DEPTH)
    with pytest.raises(ObservationError, match=f"nested deeper than {MAX_DEPTH} levels at result\\[0\\]"):
        encode(nested_list(MAX_DEPTH + 1))


def test_node_count_limit():
    tree, _ = encode([0] * (MAX_NODES - 1))  # the list itself is a node too
    assert len(tree) == MAX_NODES - 1
    with pytest.raises(ObservationError, match=f"more than {MAX_NODES} values"):
        encode([0] * MAX_NODES)


def test_decode_enforces_the_same_depth_and_node_limits():
    assert decode_observation(nested_list(MAX_DEPTH), []) == nested_list(MAX_DEPTH)
    with pytest.raises(ObservationError, match="too large or too deep"):
        decode_observation(nested_list(MAX_DEPTH + 1), [])
    assert len(decode_observation([0] * (MAX_NODES - 1), [])) == MAX_NODES - 1
    with pytest.raises(ObservationError, match="too large or too deep"):
        decode_observation([0] * MAX_NODES, [])


# ------------------------------------------------------------ decode: untrusted trees and blobs


def test_decode_rejects_an_out_of_range_array_index():
    blob = npy(np.ones(2))
    assert decode_observation({"$array": 0, "dtype": "float64", "source": "numpy"}, [blob]).data.tolist() == [1.0, 1.0]
    for index in (1, -1, "0", None):
        with pytest.raises(ObservationError, match="array reference out of range"):
            decode_observation({"$array": index, "dtype": "float64", "source": "numpy"}, [blob])


def test_decode_refuses_a_pickled_npy():
    # An object array saved with allow_pickle=True: loading it would unpickle, which must never happen.
    blob = npy(np.array([{"x": 1}, None], dtype=object), allow_pickle=True)
    with pytest.raises(ObservationError, match=r"array 0 is not a valid \.npy blob"):
        decode_observation({"$array": 0, "dtype": "float64", "source": "numpy"}, [blob])


def test_decode_refuses_a_raw_pickle_and_garbage():
    import pickle

    for blob in (pickle.dumps(np.ones(2)), b"not an array at all", b""):
        with pytest.raises(ObservationError, match=r"not a valid \.npy blob"):
            decode_observation({"$array": 0, "dtype": "float64", "source": "numpy"}, [blob])


def _header(shape: tuple[int, ...], descr: str = "<f8") -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False, "shape": shape})
    return buf.getvalue()


@pytest.mark.parametrize(
    ("shape", "data", "held"),
    [((10**12,), b"\0" * 16, 16), ((4, 10**9, 10**9), b"", 0), ((3,), b"\0" * 16, 16), ((1,), b"\0" * 16, 16)],
)
def test_decode_refuses_a_header_that_declares_other_bytes_than_the_blob_holds(shape, data, held):
    # np.load would allocate what the header declares (8 TB for the first) before reading 16 bytes.
    declared = int(np.prod(shape, dtype=object)) * 8
    with pytest.raises(ObservationError, match=f"its header declares {declared} bytes of data, the blob holds {held}"):
        decode_observation({"$array": 0, "dtype": "float64", "source": "numpy"}, [_header(shape) + data])
    # The same header with exactly its bytes loads.
    assert decode_observation({"$array": 0, "dtype": "float64", "source": "numpy"}, [_header((2,)) + b"\0" * 16]).data.shape == (2,)


def test_decode_refuses_npy_format_versions_np_save_does_not_write_here():
    blob = bytearray(npy(np.ones(2)))
    blob[6:8] = bytes([3, 0])  # format 3.0: a UTF-8 header
    with pytest.raises(ObservationError, match=r"\.npy format version 3\.0"):
        decode_observation({"$array": 0, "dtype": "float64", "source": "numpy"}, [bytes(blob)])


def test_decode_refuses_an_npz_blob():
    buf = io.BytesIO()
    np.savez(buf, a=np.arange(3))
    with pytest.raises(ObservationError):
        decode_observation({"$array": 0, "dtype": "int64", "source": "numpy"}, [buf.getvalue()])


def test_decode_requires_dtype_and_source_strings_and_truncates_them():
    blob = npy(np.ones(1))
    with pytest.raises(ObservationError, match="array without dtype or source"):
        decode_observation({"$array": 0, "dtype": "float64"}, [blob])
    with pytest.raises(ObservationError, match="array without dtype or source"):
        decode_observation({"$array": 0, "dtype": 1, "source": "numpy"}, [blob])
    long = decode_observation({"$array": 0, "dtype": "d" * 100, "source": "s" * 100}, [blob])
    assert (len(long.dtype), len(long.source)) == (MAX_NAME_CHARS, MAX_NAME_CHARS)


@pytest.mark.parametrize("bad", ["NaN", "infinity", "", 1, None, [], {}])
def test_decode_rejects_a_bad_float_marker(bad):
    with pytest.raises(ObservationError, match=r"bad \$float value"):
        decode_observation({"$float": bad}, [])


@pytest.mark.parametrize("bad", ["abc", "", "-", "1e5", "1_000", " 12", "--5", 12, None, ["1"], "9" * (MAX_BIGINT_DIGITS + 1)])
def test_decode_rejects_a_bad_bigint_marker(bad):
    with pytest.raises(ObservationError, match=r"bad \$bigint value"):
        decode_observation({"$bigint": bad}, [])


def test_decode_accepts_a_well_formed_bigint():
    digits = "9" * (MAX_BIGINT_DIGITS - 1)
    assert decode_observation({"$bigint": "-" + digits}, []) == -int(digits)  # MAX_BIGINT_DIGITS characters: the limit


@pytest.mark.parametrize(
    "tree",
    [
        {"unknown": 1},
        {"$map": {}, "extra": 1},
        {"$map": [1, 2]},
        {"$float": "nan", "extra": 1},
        {"$bigint": "1", "extra": 1},
    ],
)
def test_decode_rejects_unexpected_dicts(tree):
    with pytest.raises(ObservationError, match="unexpected dict in observation"):
        decode_observation(tree, [])


def test_decode_refuses_a_boolean_array_index():
    with pytest.raises(ObservationError, match="array reference out of range"):
        decode_observation({"$array": True, "dtype": "float64", "source": "numpy"}, [npy(np.ones(1)), npy(np.ones(2))])


@pytest.mark.parametrize("tree", [{1, 2}, b"bytes", (1, 2), 1j])
def test_decode_names_a_node_json_cannot_hold(tree):
    with pytest.raises(ObservationError, match=f"unexpected {type(tree).__name__} in observation"):
        decode_observation(tree, [])


def test_decode_rebuilds_maps_and_specials():
    tree = {"$map": {"a": [{"$float": "-inf"}, {"$bigint": "18446744073709551616"}], "b": None}}
    assert decode_observation(tree, []) == {"a": [-math.inf, 2**64], "b": None}


# ------------------------------------------------------------ to_jsonable


def test_to_jsonable_summarises_arrays_and_stringifies_non_finite_floats():
    small = TaggedArray(np.array([[1.0, np.nan]], dtype=np.float32), "bfloat16", "torch")
    big = TaggedArray(np.zeros(SHOWN_ELEMENTS + 1), "float64", "numpy")
    value = {"a": small, "b": [big, math.inf, -math.inf, math.nan, 1.5, "s", None]}
    result = to_jsonable(value)
    assert result == {
        "a": {"dtype": "bfloat16", "shape": [1, 2], "values": [[1.0, "nan"]]},
        "b": [{"dtype": "float64", "shape": [SHOWN_ELEMENTS + 1]}, "inf", "-inf", "nan", 1.5, "s", None],
    }
    json.dumps(result, allow_nan=False)


def test_to_jsonable_shows_values_up_to_a_limit():
    assert "values" in to_jsonable(TaggedArray(np.zeros(SHOWN_ELEMENTS), "float64", "numpy"))
    assert "values" not in to_jsonable(TaggedArray(np.zeros(SHOWN_ELEMENTS + 1), "float64", "numpy"))
    assert to_jsonable(TaggedArray(np.array(7, dtype=np.int64), "int64", "numpy")) == {"dtype": "int64", "shape": [], "values": 7}


def test_to_jsonable_makes_any_result_strict_json():
    """Also what a stored result goes through: numpy scalars, tuples, keys, complex and unknown types."""

    class Opaque:
        def __str__(self) -> str:
            return "opaque"

    value = {
        1: (np.float32(0.5), np.int64(3), np.bool_(True), np.float64(np.inf)),
        "c": 1 + 2j,
        "big": 2**70,
        "o": Opaque(),
        "nested": [{"x": -math.inf}],
    }
    result = to_jsonable(value)
    assert result == {
        "1": [0.5, 3, True, "inf"],
        "c": "(1+2j)",
        "big": 2**70,
        "o": "opaque",
        "nested": [{"x": "-inf"}],
    }
    assert type(result["1"][1]) is int and type(result["1"][2]) is bool
    json.dumps(result, allow_nan=False)


def test_to_jsonable_of_a_complex_array_shows_its_values_as_text():
    result = to_jsonable(TaggedArray(np.array([1 + 2j, 3 - 1j]), "complex128", "numpy"))
    assert result == {"dtype": "complex128", "shape": [2], "values": ["(1+2j)", "(3-1j)"]}
