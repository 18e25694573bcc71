"""The wire format between a sandbox and the trusted worker.

Two halves live here so they cannot drift apart:

- ``encode_observation`` runs inside the sandbox and turns a probe's return
  value into a JSON tree plus a list of ``.npy`` blobs;
- ``decode_observation`` runs in the trusted worker and turns them back into
  plain Python values and :class:`TaggedArray` objects, loading arrays with
  ``allow_pickle=False``. Nothing is ever unpickled or evaluated.

The stream itself is a sequence of frames: a 4-byte big-endian length, that
many bytes of a JSON object (the header), then, if the header names a
``blob_len``, that many raw bytes. The reader enforces a byte budget so a
sandbox cannot make the worker buffer without bound.

This module depends on the standard library and numpy only, because it is
imported inside the sandbox before any candidate code runs.
"""

from __future__ import annotations

import io
import json
import math
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

import numpy as np

MAX_HEADER_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 64
MAX_NODES = 200_000

# Dtypes numpy cannot hold natively travel as float32 with their real name.
_WIDENED_DTYPES = {"bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"}


class WireError(ValueError):
    """The stream or an observation does not follow the format."""


@dataclass(frozen=True)
class TaggedArray:
    """An array observation: its values plus the dtype and framework it had.

    ``dtype`` is the logical dtype ("bfloat16" even though ``data`` holds
    float32), which the checks use to pick tolerances.
    """

    data: np.ndarray
    dtype: str
    source: str  # "numpy", "torch" or "tensorflow"


# ---------------------------------------------------------------- frames


def write_frame(out: BinaryIO, header: dict[str, Any], blob: bytes | None = None) -> None:
    if blob is not None:
        header = {**header, "blob_len": len(blob)}
    raw = json.dumps(header, allow_nan=False, separators=(",", ":")).encode()
    out.write(struct.pack(">I", len(raw)))
    out.write(raw)
    if blob is not None:
        out.write(blob)
    out.flush()


def _read_exact(src: BinaryIO, n: int) -> bytes:
    chunks = []
    remaining = n
    while remaining:
        chunk = src.read(remaining)
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_frames(src: BinaryIO, budget: int) -> Iterator[tuple[dict[str, Any], bytes | None]]:
    """Yield (header, blob) frames until EOF; raise WireError past ``budget`` bytes.

    A stream cut in the middle of a frame ends iteration with WireError, so a
    caller can tell "the runner stopped cleanly" from "it died mid-write".
    """
    used = 0
    while True:
        prefix = src.read(4)
        if not prefix:
            return
        if len(prefix) < 4:
            raise WireError("stream ended inside a frame length")
        (size,) = struct.unpack(">I", prefix)
        if size > MAX_HEADER_BYTES:
            raise WireError(f"frame header of {size} bytes is over the {MAX_HEADER_BYTES}-byte limit")
        used += 4 + size
        if used > budget:
            raise WireError(f"output is over the {budget}-byte limit")
        try:
            header = json.loads(_read_exact(src, size))
        except EOFError:
            raise WireError("stream ended inside a frame header") from None
        except (ValueError, RecursionError) as exc:  # RecursionError: "[[[[..." nested past the interpreter's limit
            raise WireError(f"frame header is not JSON: {exc}") from None
        if not isinstance(header, dict):
            raise WireError("frame header is not a JSON object")
        blob = None
        blob_len = header.get("blob_len")
        if blob_len is not None:
            if not isinstance(blob_len, int) or blob_len < 0:
                raise WireError("frame has an invalid blob_len")
            used += blob_len
            if used > budget:
                raise WireError(f"output is over the {budget}-byte limit")
            try:
                blob = _read_exact(src, blob_len)
            except EOFError:
                raise WireError("stream ended inside a frame body") from None
        yield header, blob


# ---------------------------------------------------------------- encoding (sandbox side)


def _array_from_value(value: Any) -> tuple[np.ndarray, str, str] | None:
    """Return (numpy data, logical dtype, source) if value is an array-like we know."""
    if isinstance(value, np.ndarray | np.generic):
        arr = np.asarray(value)
        name = str(arr.dtype)
        if name in _WIDENED_DTYPES:
            return arr.astype(np.float32), name, "numpy"
        return arr, name, "numpy"
    module = type(value).__module__
    if module.startswith("torch"):
        import torch  # already imported if a tensor exists

        if isinstance(value, torch.Tensor):
            t = value.detach()
            if t.device.type == "meta" or getattr(t, "fake_mode", None) is not None:
                raise WireError("a meta or fake tensor has no values; return its shape and dtype instead")
            if t.is_sparse:
                t = t.to_dense()
            t = t.cpu().resolve_conj().resolve_neg()
            name = str(t.dtype).removeprefix("torch.")
            if name in _WIDENED_DTYPES:
                return t.to(torch.float32).numpy(), name, "torch"
            return t.contiguous().numpy(), name, "torch"
    if module.startswith("tensorflow") or module.startswith("keras"):
        if hasattr(value, "numpy") and hasattr(value, "dtype"):
            data = np.asarray(value.numpy())
            name = getattr(value.dtype, "name", str(data.dtype))
            if name in _WIDENED_DTYPES or str(data.dtype) in _WIDENED_DTYPES:
                return data.astype(np.float32), name, "tensorflow"
            return data, name, "tensorflow"
    return None


def encode_observation(value: Any) -> tuple[Any, list[bytes]]:
    """Encode a probe's return value into a JSON-able tree and .npy blobs."""
    blobs: list[bytes] = []
    nodes = 0

    def enc(v: Any, depth: int, path: str) -> Any:
        nonlocal nodes
        nodes += 1
        if nodes > MAX_NODES:
            raise WireError(f"observation has more than {MAX_NODES} values")
        if depth > MAX_DEPTH:
            raise WireError(f"observation is nested deeper than {MAX_DEPTH} levels at {path}")
        if v is None or isinstance(v, bool | str):
            return v
        if isinstance(v, int):
            return v if -(2**63) <= v < 2**63 else {"$bigint": str(v)}
        if isinstance(v, float):
            if math.isfinite(v):
                return v
            return {"$float": "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")}
        if isinstance(v, list | tuple):
            return [enc(x, depth + 1, f"{path}[{i}]") for i, x in enumerate(v)]
        if isinstance(v, dict):
            out = {}
            for k, x in v.items():
                if not isinstance(k, str):
                    raise WireError(f"observation dict keys must be strings (got {type(k).__name__} at {path})")
                out[k] = enc(x, depth + 1, f"{path}[{k!r}]")
            return {"$map": out}
        arr = _array_from_value(v)
        if arr is not None:
            data, dtype, source = arr
            if data.dtype.hasobject:
                raise WireError(f"object arrays cannot be observations (at {path})")
            buf = io.BytesIO()
            np.save(buf, np.asarray(data, order="C"), allow_pickle=False)  # ascontiguousarray would make a 0-d array 1-d
            blobs.append(buf.getvalue())
            return {"$array": len(blobs) - 1, "dtype": dtype, "source": source}
        raise WireError(f"observation contains an unsupported {type(v).__module__}.{type(v).__qualname__} at {path}")

    return enc(value, 0, "result"), blobs


# ---------------------------------------------------------------- decoding (trusted side)


def decode_observation(tree: Any, blobs: list[bytes]) -> Any:
    """Rebuild an observation from its tree and blobs, validating every node."""
    nodes = 0

    def dec(v: Any, depth: int) -> Any:
        nonlocal nodes
        nodes += 1
        if nodes > MAX_NODES or depth > MAX_DEPTH:
            raise WireError("observation is too large or too deep")
        if v is None or isinstance(v, bool | int | float | str):
            return v
        if isinstance(v, list):
            return [dec(x, depth + 1) for x in v]
        if isinstance(v, dict):
            if "$map" in v and len(v) == 1 and isinstance(v["$map"], dict):
                return {str(k): dec(x, depth + 1) for k, x in v["$map"].items()}
            if "$float" in v and len(v) == 1:
                mapping = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}
                if not isinstance(v["$float"], str) or v["$float"] not in mapping:
                    raise WireError("bad $float value")
                return mapping[v["$float"]]
            if "$bigint" in v and len(v) == 1:
                text = v["$bigint"]
                if not isinstance(text, str) or len(text) > 4000 or not text.removeprefix("-").isdecimal():
                    raise WireError("bad $bigint value")
                return int(text)
            if "$array" in v:
                idx = v["$array"]
                if not isinstance(idx, int) or not 0 <= idx < len(blobs):
                    raise WireError("array reference out of range")
                try:
                    data = np.load(io.BytesIO(blobs[idx]), allow_pickle=False)
                except (ValueError, OSError, EOFError) as exc:
                    raise WireError(f"array {idx} is not a valid .npy blob: {exc}") from None
                if not isinstance(data, np.ndarray):  # an .npz archive loads as NpzFile
                    raise WireError(f"array {idx} is not a single .npy array")
                dtype = v.get("dtype")
                source = v.get("source")
                if not isinstance(dtype, str) or not isinstance(source, str):
                    raise WireError("array without dtype or source")
                return TaggedArray(data=data, dtype=dtype[:32], source=source[:32])
        raise WireError(f"unexpected {type(v).__name__} in observation")

    return dec(tree, 0)


def to_jsonable(value: Any) -> Any:
    """Turn a decoded observation into JSON for display and storage.

    Arrays become summaries (dtype, shape, and values when small), which is
    what a candidate sees for a public probe.
    """
    if isinstance(value, TaggedArray):
        out: dict[str, Any] = {"dtype": value.dtype, "shape": list(value.data.shape)}
        if value.data.size <= 64:
            out["values"] = to_jsonable(value.data.tolist())
        return out
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, complex):
        return str(value)
    if isinstance(value, list):
        return [to_jsonable(x) for x in value]
    if isinstance(value, dict):
        return {k: to_jsonable(x) for k, x in value.items()}
    return value
