"""grader.expected: the cache of expected observations, keyed by package version."""

from __future__ import annotations

import io
import json
import math

import numpy as np
import pytest

from grader import expected
from sandbox.runner.codec import ObservationError, TaggedArray
from tests.helpers import DECODED_OBSERVATIONS, same_observation

VERSION = "f" * 64


@pytest.fixture(autouse=True)
def cache_in_tmp(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_store_then_load_round_trips_every_kind_of_value():
    expected.store(VERSION, False, DECODED_OBSERVATIONS)
    loaded = expected.load(VERSION, False)
    assert loaded is not None
    assert loaded.keys() == DECODED_OBSERVATIONS.keys()
    for name, value in DECODED_OBSERVATIONS.items():
        assert same_observation(loaded[name], value), name


def test_nan_and_infinities_come_back_as_floats():
    expected.store(VERSION, True, {"p": [math.nan, math.inf, -math.inf]})
    nan, pos, neg = expected.load(VERSION, True)["p"]
    assert math.isnan(nan) and pos == math.inf and neg == -math.inf


def test_tagged_array_keeps_its_logical_dtype_and_source():
    expected.store(VERSION, False, {"p": DECODED_OBSERVATIONS["bfloat16"]})
    loaded = expected.load(VERSION, False)["p"]
    assert isinstance(loaded, TaggedArray)
    assert (loaded.dtype, loaded.source, loaded.data.dtype) == ("bfloat16", "torch", np.float32)


def test_a_missing_entry_returns_none():
    assert expected.load(VERSION, False) is None
    expected.store(VERSION, True, {"p": 1})
    assert expected.load(VERSION, False) is None  # hidden is a separate entry from public
    assert expected.load("0" * 64, True) is None  # another version
    assert expected.load(VERSION, True) == {"p": 1}


def test_public_and_hidden_entries_do_not_overwrite_each_other():
    expected.store(VERSION, True, {"pub": 1})
    expected.store(VERSION, False, {"hid": 2})
    assert expected.load(VERSION, True) == {"pub": 1}
    assert expected.load(VERSION, False) == {"hid": 2}


def test_storing_again_replaces_the_entry():
    expected.store(VERSION, False, {"p": 1})
    expected.store(VERSION, False, {"q": TaggedArray(np.ones(1), "float64", "numpy")})
    loaded = expected.load(VERSION, False)
    assert list(loaded) == ["q"]


def test_an_entry_without_arrays_round_trips():
    expected.store(VERSION, False, {"p": {"a": [1, 2]}, "q": None})
    assert expected.load(VERSION, False) == {"p": {"a": [1, 2]}, "q": None}


def test_the_cache_lives_in_grader_cache_dir(cache_in_tmp):
    assert expected.cache_dir() == cache_in_tmp
    expected.store(VERSION, False, {"p": 1})
    assert sorted(p.name for p in expected.entry_dir(VERSION).iterdir()) == ["hidden.json", "hidden.npz"]
    assert not any(p.name.startswith(".tmp-") for p in cache_in_tmp.rglob("*"))


def test_grader_cache_dir_is_read_at_call_time(tmp_path, monkeypatch):
    expected.store(VERSION, False, {"p": 1})
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path / "other"))
    assert expected.load(VERSION, False) is None
    expected.store(VERSION, False, {"p": 2})
    assert (expected.entry_dir(VERSION) / "hidden.json").exists()
    assert expected.entry_dir(VERSION).is_relative_to(tmp_path / "other")


def test_a_new_runtime_never_reads_expectations_of_the_old_one(cache_in_tmp, monkeypatch):
    expected.store(VERSION, False, {"p": 1.0})
    monkeypatch.setattr(expected, "runtime_fingerprint", lambda: "torch-upgraded")
    assert expected.load(VERSION, False) is None


def test_the_default_cache_dir_is_under_var(monkeypatch):
    monkeypatch.delenv("GRADER_CACHE_DIR")
    assert expected.cache_dir() == expected.DEFAULT_DIR
    assert expected.DEFAULT_DIR.parts[-3:] == ("var", "cache", "expected")


def test_a_corrupt_entry_reads_as_missing(cache_in_tmp):
    expected.store(VERSION, False, {"p": TaggedArray(np.ones(2), "float64", "numpy")})
    (expected.entry_dir(VERSION) / "hidden.json").write_text("{not json")
    assert expected.load(VERSION, False) is None


def test_an_entry_whose_arrays_are_missing_reads_as_missing(cache_in_tmp):
    expected.store(VERSION, False, {"p": TaggedArray(np.ones(2), "float64", "numpy")})
    (expected.entry_dir(VERSION) / "hidden.npz").unlink()
    assert expected.load(VERSION, False) is None


def test_a_pickled_array_in_the_cache_is_not_loaded(cache_in_tmp):
    expected.store(VERSION, False, {"p": TaggedArray(np.ones(2), "float64", "numpy")})
    buf = io.BytesIO()
    np.savez(buf, a0=np.array([{"x": 1}], dtype=object), allow_pickle=True)
    (expected.entry_dir(VERSION) / "hidden.npz").write_bytes(buf.getvalue())
    assert expected.load(VERSION, False) is None


def test_an_entry_is_the_codecs_trees_and_an_npz_of_their_blobs():
    ones = TaggedArray(np.ones(1), "float64", "numpy")
    expected.store(VERSION, False, {"p": [math.nan, ones], "q": {"x": TaggedArray(np.arange(3), "int64", "numpy")}})
    meta = json.loads((expected.entry_dir(VERSION) / "hidden.json").read_text())
    assert meta == {
        "probes": {
            "p": [{"$float": "nan"}, {"$array": 0, "dtype": "float64", "source": "numpy"}],
            "q": {"$map": {"x": {"$array": 1, "dtype": "int64", "source": "numpy"}}},
        },
        "arrays": 2,
    }
    with np.load(expected.entry_dir(VERSION) / "hidden.npz", allow_pickle=False) as arrays:
        assert sorted(arrays.files) == ["a0", "a1"]
        assert arrays["a1"].tolist() == [0, 1, 2]


def test_an_entry_in_an_older_format_reads_as_missing():
    """The entry layout before the shared codec: "$tagged" arrays and no array count."""
    entry = expected.entry_dir(VERSION)
    entry.mkdir(parents=True)
    (entry / "hidden.json").write_text(json.dumps({"probes": {"p": {"$tagged": 0, "dtype": "float64", "source": "numpy"}}}))
    buf = io.BytesIO()
    np.savez(buf, a0=np.ones(2))
    (entry / "hidden.npz").write_bytes(buf.getvalue())
    assert expected.load(VERSION, False) is None


def test_an_entry_that_names_more_arrays_than_it_holds_reads_as_missing():
    expected.store(VERSION, False, {"p": TaggedArray(np.ones(2), "float64", "numpy")})
    meta_path = expected.entry_dir(VERSION) / "hidden.json"
    meta_path.write_text(json.dumps({**json.loads(meta_path.read_text()), "arrays": 2}))
    assert expected.load(VERSION, False) is None


def test_a_value_that_is_not_an_observation_is_refused_when_stored():
    with pytest.raises(ObservationError, match=r"unsupported builtins\.set at result\['k'\]"):
        expected.store(VERSION, False, {"p": {"k": {1, 2}}})
