"""The observation codec: the one encoding of a probe's result, wherever it is stored or sent.

An observation is plain data (None, bool, int, float, str, lists, tuples,
dicts with string keys) and arrays (numpy arrays, torch and tensorflow
tensors). Encoded, it is a strict-JSON tree plus a list of ``.npy`` blobs:

- floats JSON cannot hold are ``{"$float": "nan" | "inf" | "-inf"}``;
- ints beyond 64 bits are ``{"$bigint": "<decimal>"}``;
- every dict is ``{"$map": {...}}``, so a key that looks like a marker stays a key;
- an array is ``{"$array": <blob index>, "dtype": <logical dtype>, "source": <framework>}``.

:func:`encode_observation` runs inside the sandbox on a probe's return value,
and in the trusted worker on decoded observations (:class:`TaggedArray`) that
travel on: to the sandbox that runs a less trusted package's custom checks
(``grader/sandboxed_checks.py``) and to the expected-observation cache
(``grader/expected.py``). :func:`decode_observation` validates every node
and loads arrays with ``allow_pickle=False``: nothing is ever unpickled or
evaluated. :func:`to_jsonable` turns a decoded observation (or any result
holding one) into strict JSON for display and storage.

The runner's frames (``wire.py``) carry these trees and blobs; this module
depends on the standard library and numpy only, because it is imported
inside the sandbox (as the top-level module ``codec``) before any candidate
code runs.
"""

from __future__ import annotations

import io
import math
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

MAX_DEPTH = 64
MAX_NODES = 200_000
MAX_BIGINT_DIGITS = 4000
# A decoded array's dtype and source names are cut to this length: they come from the sandbox.
MAX_NAME_CHARS = 32
# Arrays with at most this many elements show their values in to_jsonable.
SHOWN_ELEMENTS = 64

# Dtypes numpy cannot hold natively travel as float32 with their real name.
WIDENED_DTYPES = frozenset({"bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"})

_FLOATS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


class ObservationError(ValueError):
    """An observation cannot be encoded, or an encoded one does not follow the format."""


@dataclass(frozen=True)
class TaggedArray:
    """An array observation: its values plus the dtype and framework it had.

    ``dtype`` is the logical dtype ("bfloat16" even though ``data`` holds
    float32), which the checks use to pick tolerances.
    """

    data: np.ndarray
    dtype: str
    source: str  # "numpy", "torch" or "tensorflow"


# ---------------------------------------------------------------- encoding


def _array_from_value(value: Any) -> tuple[np.ndarray, str, str] | None:
    """Return (numpy data, logical dtype, source) if value is an array-like we know."""
    if isinstance(value, TaggedArray):
        if not isinstance(value.data, np.ndarray) or not isinstance(value.dtype, str) or not isinstance(value.source, str):
            raise ObservationError("a TaggedArray needs a numpy array and string dtype and source")
        return value.data, value.dtype, value.source
    if isinstance(value, np.ndarray | np.generic):
        arr = np.asarray(value)
        name = str(arr.dtype)
        if name in WIDENED_DTYPES:
            return arr.astype(np.float32), name, "numpy"
        return arr, name, "numpy"
    module = type(value).__module__
    if module.startswith("torch"):
        import torch  # already imported if a tensor exists

        if isinstance(value, torch.Tensor):
            t = value.detach()
            if t.device.type == "meta" or getattr(t, "fake_mode", None) is not None:
                raise ObservationError("a meta or fake tensor has no values; return its shape and dtype instead")
            if t.is_sparse:
                t = t.to_dense()
            t = t.cpu().resolve_conj().resolve_neg()
            name = str(t.dtype).removeprefix("torch.")
            if name in WIDENED_DTYPES:
                return t.to(torch.float32).numpy(), name, "torch"
            return t.contiguous().numpy(), name, "torch"
    if module.startswith("tensorflow") or module.startswith("keras"):
        if hasattr(value, "numpy") and hasattr(value, "dtype"):
            data = np.asarray(value.numpy())
            name = getattr(value.dtype, "name", str(data.dtype))
            if name in WIDENED_DTYPES or str(data.dtype) in WIDENED_DTYPES:
                return data.astype(np.float32), name, "tensorflow"
            return data, name, "tensorflow"
    return None


def encode_observation(value: Any, blobs: list[bytes]) -> Any:
    """Encode ``value`` into a strict-JSON tree, appending its arrays to ``blobs`` as .npy bytes.

    The tree's ``$array`` indices point into ``blobs``; several observations
    may share one list (decode each with that same list). Raises
    ObservationError, naming the path (``result['grad'][2]``), for a value
    that is not an observation or is over the size limits.
    """
    nodes = 0

    def enc(v: Any, depth: int, path: str) -> Any:
        nonlocal nodes
        nodes += 1
        if nodes > MAX_NODES:
            raise ObservationError(f"observation has more than {MAX_NODES} values")
        if depth > MAX_DEPTH:
            raise ObservationError(f"observation is nested deeper than {MAX_DEPTH} levels at {path}")
        if v is None or isinstance(v, bool | str):
            return v
        if isinstance(v, int):
            return v if -(2**63) <= v < 2**63 else {"$bigint": str(v)}
        if isinstance(v, float):  # np.float64 included: it subclasses float
            if math.isfinite(v):
                return float(v)
            return {"$float": "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")}
        if isinstance(v, list | tuple):
            return [enc(x, depth + 1, f"{path}[{i}]") for i, x in enumerate(v)]
        if isinstance(v, dict):
            out = {}
            for k, x in v.items():
                if not isinstance(k, str):
                    raise ObservationError(f"observation dict keys must be strings (got {type(k).__name__} at {path})")
                out[k] = enc(x, depth + 1, f"{path}[{k!r}]")
            return {"$map": out}
        arr = _array_from_value(v)
        if arr is not None:
            data, dtype, source = arr
            if data.dtype.hasobject:
                raise ObservationError(f"object arrays cannot be observations (at {path})")
            buf = io.BytesIO()
            np.save(buf, np.asarray(data, order="C"), allow_pickle=False)  # ascontiguousarray would make a 0-d array 1-d
            blobs.append(buf.getvalue())
            return {"$array": len(blobs) - 1, "dtype": dtype, "source": source}
        raise ObservationError(f"observation contains an unsupported {type(v).__module__}.{type(v).__qualname__} at {path}")

    return enc(value, 0, "result")


# ---------------------------------------------------------------- decoding


def _load_npy(blob: bytes) -> Any:
    """The array in one .npy blob, its header checked against its length before anything is allocated.

    ``np.load`` allocates the array its header declares and then reads into
    it: a header declaring 10^12 elements in a blob of 16 bytes would make
    the grader allocate first. So the header is read on its own (format
    versions 1.0 and 2.0, what ``np.save`` writes) and must declare exactly
    the bytes that follow it.
    """
    buf = io.BytesIO(blob)
    # numpy parses the header with ast.literal_eval, which CPython 3.11 does not make safe across threads
    # ("SystemError: AST constructor recursion depth mismatch" when validation's two lanes decode at once).
    with AST_LOCK:
        version = np.lib.format.read_magic(buf)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(buf)
        elif version == (2, 0):
            shape, _, dtype = np.lib.format.read_array_header_2_0(buf)
        else:
            raise ValueError(f".npy format version {version[0]}.{version[1]} is not one np.save writes here")
        if dtype.hasobject:
            raise ValueError("object arrays are not observations")
        declared = math.prod(shape) * dtype.itemsize
        held = len(blob) - buf.tell()
        if declared != held:
            raise ValueError(f"its header declares {declared} bytes of data, the blob holds {held}")
        buf.seek(0)
        return np.load(buf, allow_pickle=False)


# CPython 3.11 keeps the AST constructor's recursion depth per interpreter, not per thread: two threads that
# parse at once can fail with "SystemError: AST constructor recursion depth mismatch". Every ast.parse and
# literal_eval of the worker's threads (validation grades on two) holds this lock.
AST_LOCK = threading.Lock()


def _decode_array(v: dict[str, Any], blobs: list[bytes]) -> TaggedArray:
    idx = v["$array"]
    if not isinstance(idx, int) or isinstance(idx, bool) or not 0 <= idx < len(blobs):
        raise ObservationError("array reference out of range")
    try:
        data = _load_npy(blobs[idx])
    except (ValueError, OSError, EOFError) as exc:
        raise ObservationError(f"array {idx} is not a valid .npy blob: {exc}") from None
    if not isinstance(data, np.ndarray):  # an .npz archive loads as NpzFile
        raise ObservationError(f"array {idx} is not a single .npy array")
    dtype = v.get("dtype")
    source = v.get("source")
    if not isinstance(dtype, str) or not isinstance(source, str):
        raise ObservationError("array without dtype or source")
    return TaggedArray(data=data, dtype=dtype[:MAX_NAME_CHARS], source=source[:MAX_NAME_CHARS])


def decode_observation(tree: Any, blobs: list[bytes]) -> Any:
    """Rebuild an observation from its tree and blobs, validating every node; ObservationError if malformed."""
    nodes = 0

    def dec(v: Any, depth: int) -> Any:
        nonlocal nodes
        nodes += 1
        if nodes > MAX_NODES or depth > MAX_DEPTH:
            raise ObservationError("observation is too large or too deep")
        if v is None or isinstance(v, bool | int | float | str):
            return v
        if isinstance(v, list):
            return [dec(x, depth + 1) for x in v]
        if isinstance(v, dict):
            if "$map" in v and len(v) == 1 and isinstance(v["$map"], dict):
                return {str(k): dec(x, depth + 1) for k, x in v["$map"].items()}
            if "$float" in v and len(v) == 1:
                text = v["$float"]
                if not isinstance(text, str) or text not in _FLOATS:
                    raise ObservationError("bad $float value")
                return _FLOATS[text]
            if "$bigint" in v and len(v) == 1:
                text = v["$bigint"]
                if not isinstance(text, str) or len(text) > MAX_BIGINT_DIGITS or not text.removeprefix("-").isdecimal():
                    raise ObservationError("bad $bigint value")
                return int(text)
            if "$array" in v:
                return _decode_array(v, blobs)
        raise ObservationError(f"unexpected {type(v).__name__} in observation")

    return dec(tree, 0)


# ---------------------------------------------------------------- display and storage


def to_jsonable(value: Any) -> Any:
    """``value`` as strict JSON: what a candidate sees of an observation, and what a result is stored as.

    Arrays become summaries (dtype, shape, and values when small); floats
    strict JSON cannot hold (inf, nan) and complex numbers become their text;
    numpy scalars become Python numbers; tuples become lists; keys become
    strings; anything else becomes its ``str``. PostgreSQL's json types refuse
    Infinity and NaN, so a stored result must never hold them.
    """
    if isinstance(value, TaggedArray):
        out: dict[str, Any] = {"dtype": value.dtype, "shape": list(value.data.shape)}
        if value.data.size <= SHOWN_ELEMENTS:
            out["values"] = to_jsonable(value.data.tolist())
        return out
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else str(value)
    if isinstance(value, np.generic) and not isinstance(value, np.object_):
        return to_jsonable(value.item())
    if isinstance(value, list | tuple):
        return [to_jsonable(x) for x in value]
    if isinstance(value, dict):
        return {str(k): to_jsonable(x) for k, x in value.items()}
    return str(value)
