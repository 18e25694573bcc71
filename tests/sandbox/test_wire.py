"""sandbox.runner.wire: the frames a sandbox's stream to the trusted worker is cut into."""

from __future__ import annotations

import io
import json
import math
import struct

import numpy as np
import pytest

from sandbox.runner.codec import TaggedArray, decode_observation, encode_observation
from sandbox.runner.wire import MAX_HEADER_BYTES, WireError, read_frames, write_frame


def frames_of(*frames) -> bytes:
    out = io.BytesIO()
    for header, blob in frames:
        write_frame(out, header, blob)
    return out.getvalue()


def test_frames_round_trip_with_and_without_blobs():
    data = frames_of(({"type": "ready"}, None), ({"type": "array", "probe": "p"}, b"\x00\x01binary"), ({"type": "done"}, b""))
    frames = list(read_frames(io.BytesIO(data), len(data)))
    assert frames == [
        ({"type": "ready"}, None),
        ({"type": "array", "probe": "p", "blob_len": 8}, b"\x00\x01binary"),
        ({"type": "done", "blob_len": 0}, b""),
    ]


def test_an_empty_stream_has_no_frames():
    assert list(read_frames(io.BytesIO(b""), 100)) == []


def test_write_frame_refuses_non_finite_floats_in_a_header():
    with pytest.raises(ValueError):
        write_frame(io.BytesIO(), {"x": math.nan})


def test_the_budget_counts_headers_and_blobs_and_is_inclusive():
    data = frames_of(({"type": "a"}, b"x" * 100), ({"type": "b"}, None))
    assert len(list(read_frames(io.BytesIO(data), len(data)))) == 2
    with pytest.raises(WireError, match=f"output is over the {len(data) - 1}-byte limit"):
        list(read_frames(io.BytesIO(data), len(data) - 1))


def test_the_budget_stops_before_buffering_an_oversized_blob():
    # A header claiming a 1 GB blob must fail on the claim, not after reading it.
    header = json.dumps({"type": "array", "blob_len": 10**9}).encode()
    data = struct.pack(">I", len(header)) + header
    with pytest.raises(WireError, match="output is over the 1000-byte limit"):
        list(read_frames(io.BytesIO(data), 1000))


def test_frames_before_the_budget_is_exceeded_are_yielded():
    data = frames_of(({"type": "first"}, None), ({"type": "second"}, b"y" * 1000))
    reader = read_frames(io.BytesIO(data), 100)
    assert next(reader) == ({"type": "first"}, None)
    with pytest.raises(WireError, match="over the 100-byte limit"):
        next(reader)


def test_a_header_over_the_size_limit_is_refused_without_reading_it():
    data = struct.pack(">I", MAX_HEADER_BYTES + 1) + b"{}"
    with pytest.raises(WireError, match=rf"frame header of {MAX_HEADER_BYTES + 1} bytes is over the {MAX_HEADER_BYTES}-byte limit"):
        list(read_frames(io.BytesIO(data), 1 << 30))


@pytest.mark.parametrize(
    ("cut", "message"),
    [
        (2, "stream ended inside a frame length"),
        (4 + 3, "stream ended inside a frame header"),
        (None, "stream ended inside a frame body"),  # None: all but the last blob byte
    ],
)
def test_a_truncated_stream_raises(cut, message):
    data = frames_of(({"type": "array"}, b"0123456789"))
    truncated = data[: (len(data) - 1 if cut is None else cut)]
    with pytest.raises(WireError, match=message):
        list(read_frames(io.BytesIO(truncated), 1 << 20))


def test_a_stream_cut_after_a_whole_frame_ends_cleanly():
    data = frames_of(({"type": "a"}, None), ({"type": "b"}, b"xyz"))
    assert [h["type"] for h, _ in read_frames(io.BytesIO(data), 1 << 20)] == ["a", "b"]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"{not json", "frame header is not JSON"),
        (b"\xff\xfe", "frame header is not JSON"),
        (b"[1, 2]", "frame header is not a JSON object"),
        (b'{"blob_len": -1}', "invalid blob_len"),
        (b'{"blob_len": "3"}', "invalid blob_len"),
        (b"[" * 100_000 + b"]" * 100_000, "frame header is not JSON"),  # deeper than the JSON parser recurses
    ],
)
def test_a_malformed_header_raises_wire_error(raw, message):
    data = struct.pack(">I", len(raw)) + raw
    with pytest.raises(WireError, match=message):
        list(read_frames(io.BytesIO(data), 1 << 30))


def test_an_observation_crosses_in_frames_as_the_runner_sends_it():
    """The runner's probe frame carries the codec's tree; each array follows in its own frame."""
    value = {"grad": np.arange(6, dtype=np.float32).reshape(2, 3), "loss": math.nan, "steps": [1, 2]}
    blobs: list[bytes] = []
    tree = encode_observation(value, blobs)
    data = frames_of(({"type": "probe", "tree": tree, "arrays": len(blobs)}, None), *(({"type": "array"}, b) for b in blobs))
    header, *arrays = read_frames(io.BytesIO(data), len(data))
    result = decode_observation(header[0]["tree"], [blob for _, blob in arrays])
    assert isinstance(result["grad"], TaggedArray) and result["grad"].dtype == "float32"
    np.testing.assert_array_equal(result["grad"].data, value["grad"])
    assert math.isnan(result["loss"]) and result["steps"] == [1, 2]
