"""Hidden probes for cpp-torch-library-op: they make the score.

Four categories: ``schema`` (the registered schema, that the definition and
the CPU kernel come from C++, keyword calls), ``eager`` (the kernel's values
and indices against the reference kernel's, exact: a maximum is a copy of an
input element), ``fake`` (FakeTensorMode and the meta device: every output's
shape, dtype, strides and device, and the argument checks) and ``compile``
(torch.compile with aot_eager and dynamic shapes, and opcheck).

The first probe to run imports the solution, which builds the extension:
about 10-20 s with g++ on a quiet 2-core machine. Later probes find the
library in the solution's build folder under /tmp, which every probe of one
run shares, and only load it. So the first probe gets a long time limit.
"""

from __future__ import annotations

import ctypes
import gc
import math
import mmap
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from probekit import probe, raises
from torch._subclasses.fake_tensor import FakeTensorMode

NAME = "interview::sliding_window_max"
CPP_FILE = re.compile(r"\.(cpp|cc|cxx|C)(:\d+)?\b")


def op(x: torch.Tensor, window: int, stride: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
    """Call the operator through the dispatcher."""
    return torch.ops.interview.sliding_window_max(x, window, stride)


def randn(*shape: int, dtype: torch.dtype = torch.float32, seed: int = 0) -> torch.Tensor:
    """Seeded normal samples, independent of the global generator."""
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=gen, dtype=torch.float64).to(dtype)


def describe(t: torch.Tensor) -> dict[str, Any]:
    """A fake or meta tensor's metadata as plain data (such tensors have no values)."""
    return {"shape": list(t.shape), "dtype": str(t.dtype), "stride": list(t.stride()), "device": t.device.type}


def fake_call(x: torch.Tensor, window: int, stride: int) -> dict[str, Any]:
    values, indices = op(x, window, stride)
    return {"values": describe(values), "indices": describe(indices)}


def error_name(fn: Callable[[], Any]) -> str:
    """Run fn; "ok" if it returned, else the class name of what it raised."""
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the failure is the observation
        return type(exc).__name__
    return "ok"


# ---------------------------------------------------------------- schema


@probe(category="schema", weight=2, timeout=240, hints=["schema-string", "cpp-registration"])
def schema_and_registration(solution: Any) -> dict[str, Any]:
    """The schema string, and where the definition, the CPU kernel and the fake kernel come from."""
    schema = torch.ops.interview.sliding_window_max.default._schema
    dump = torch._C._dispatch_dump(NAME)
    lines = {line.split(":", 1)[0].strip(): line for line in dump.splitlines() if ":" in line}
    return {
        "schema": str(schema),
        "mutable": schema.is_mutable,
        "defined in C++": bool(CPP_FILE.search(lines.get("debug", ""))),
        "CPU kernel in C++": bool(CPP_FILE.search(lines.get("CPU", ""))),
        "has a Meta kernel (register_fake)": "Meta" in lines,
    }


@probe(category="schema", hints=["schema-string"])
def keyword_and_default_arguments(solution: Any) -> dict[str, Any]:
    """Calls by keyword (window=, stride=) and with stride left out."""
    x = randn(2, 9, seed=1)
    values_kw, indices_kw = torch.ops.interview.sliding_window_max(x, window=3, stride=2)
    values_default, indices_default = torch.ops.interview.sliding_window_max(x, 4)
    return {
        "keywords": {"values": values_kw, "indices": indices_kw},
        "default stride": {"values": values_default, "indices": indices_default},
    }


# ---------------------------------------------------------------- eager


@probe(category="eager", weight=2, hints=["kernel-loops"])
def float32_batch(solution: Any) -> dict[str, Any]:
    """float32 (3, 4, 20), window 5, stride 2; window 1 (each element its own window); an empty batch (0, 6)."""
    values, indices = op(randn(3, 4, 20, seed=2), 5, 2)
    single_values, single_indices = op(randn(2, 7, seed=24), 1, 1)
    empty_values, empty_indices = op(randn(0, 6, seed=3), 2, 1)
    return {
        "values": values,
        "indices": indices,
        "window 1 values": single_values,
        "window 1 indices": single_indices,
        "empty values": empty_values,
        "empty indices": empty_indices,
    }


@probe(category="eager", weight=2, hints=["compare-precision", "kernel-loops"])
def float64_fine_differences(solution: Any) -> dict[str, Any]:
    """float64, 1-D: values that differ by less than float32 can resolve; window equal to the length."""
    base = torch.tensor([1.0, 1.0 + 3e-12, 1.0 + 1e-12, 1.0 + 2e-12, 1.0, 1.0 + 5e-13], dtype=torch.float64)
    windows = {}
    for window, stride in ((2, 1), (3, 2), (6, 1)):
        values, indices = op(base, window, stride)
        windows[f"window={window} stride={stride}"] = {"values": values, "indices": indices}
    return windows


@probe(category="eager", weight=2, hints=["dtype-dispatch"])
def half_precision(solution: Any) -> dict[str, Any]:
    """bfloat16 and float16 (2, 17), window 4, stride 3: values keep the input dtype."""
    out: dict[str, Any] = {}
    for i, dtype in enumerate((torch.bfloat16, torch.float16)):
        values, indices = op(randn(2, 17, dtype=dtype, seed=4 + i), 4, 3)
        out[str(dtype)] = {"values": values, "indices": indices}
    return out


@probe(category="eager", weight=2, hints=["non-contiguous"])
def non_contiguous_inputs(solution: Any) -> dict[str, Any]:
    """Transposed, step-sliced and broadcast (stride-0) inputs; outputs must be contiguous."""
    cases = {
        "transposed (12, 3).t()": (randn(12, 3, seed=6).t(), 4, 2),
        "sliced [:, ::3]": (randn(4, 30, seed=7)[:, ::3], 3, 1),
        "expanded (5,) -> (3, 5)": (randn(5, seed=8).expand(3, 5), 2, 2),
    }
    out: dict[str, Any] = {}
    for name, (x, window, stride) in cases.items():
        values, indices = op(x, window, stride)
        out[name] = {
            "values": values,
            "indices": indices,
            "contiguous": [values.is_contiguous(), indices.is_contiguous()],
        }
    return out


@probe(category="eager", weight=2, hints=["ties-nan"])
def ties_pick_first(solution: Any) -> dict[str, Any]:
    """Windows whose maximum appears more than once, and -inf values: the first position wins."""
    x = torch.tensor(
        [[3.0, 1.0, 3.0, 3.0, 2.0, 2.0, 2.0, 0.0, 3.0],
         [float("-inf"), float("-inf"), float("-inf"), 5.0, 5.0, -1.0, 5.0, 5.0, -1.0]]
    )  # fmt: skip
    out: dict[str, Any] = {}
    for window, stride in ((3, 1), (4, 2), (2, 3)):
        values, indices = op(x, window, stride)
        out[f"window={window} stride={stride}"] = {"values": values, "indices": indices}
    return out


@probe(category="eager", weight=2, hints=["ties-nan"])
def nan_wins(solution: Any) -> dict[str, Any]:
    """NaN counts as the maximum of its window; with several NaNs the first one wins."""
    nan = float("nan")
    x = torch.tensor(
        [[1.0, nan, 7.0, 2.0, nan, nan, 4.0, 9.0],
         [nan, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, nan]]
    )  # fmt: skip
    out: dict[str, Any] = {}
    for window, stride in ((3, 1), (2, 2), (8, 1)):
        values, indices = op(x, window, stride)
        out[f"window={window} stride={stride}"] = {"values": values, "indices": indices}
    return out


# NaN with the sign bit set (the quiet NaN x86 makes for 0 * inf, inf - inf and 0 / 0), as a signed integer of the dtype's width.
NEGATIVE_NAN_BITS = {torch.float32: -0x400000, torch.float64: -0x8000000000000, torch.bfloat16: -0x40, torch.float16: -0x200}
INT_OF_WIDTH = {torch.float32: torch.int32, torch.float64: torch.int64, torch.bfloat16: torch.int16, torch.float16: torch.int16}


def with_negative_nans(rows: list[list[float | None]], dtype: torch.dtype) -> torch.Tensor:
    """rows as a tensor of dtype, each None replaced by a NaN whose sign bit is set.

    The NaN is written as bits: a conversion (to bfloat16, for one) may drop a NaN's sign.
    """
    x = torch.tensor([[0.0 if v is None else v for v in row] for row in rows], dtype=dtype)
    bits = x.view(INT_OF_WIDTH[dtype])
    bits[torch.tensor([[v is None for v in row] for row in rows])] = NEGATIVE_NAN_BITS[dtype]
    return x


@probe(category="eager", weight=2, hints=["ties-nan", "ordering-keys"])
def nan_beside_inf(solution: Any) -> dict[str, Any]:
    """+inf and NaN in the same window, in both orders, four dtypes: the NaN is the maximum."""
    nan, inf = float("nan"), float("inf")
    rows = [
        [1.0, inf, 2.0, nan, 3.0, inf, -inf, nan],
        [nan, inf, 5.0, inf, nan, 1.0, inf, 4.0],
        [inf, inf, -inf, nan, inf, nan, 0.0, inf],
    ]
    out: dict[str, Any] = {}
    for dtype in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
        x = torch.tensor(rows, dtype=dtype)
        for window, stride in ((2, 1), (4, 2), (3, 3), (8, 1)):
            values, indices = op(x, window, stride)
            out[f"{dtype} window={window} stride={stride}"] = {"values": values, "indices": indices}
    return out


@probe(category="eager", weight=2, hints=["ties-nan", "ordering-keys"])
def nan_with_sign_bit(solution: Any) -> dict[str, Any]:
    """NaNs whose sign bit is set (x86 makes them for 0 * inf), beside numbers, -inf, +inf and ordinary NaNs, four dtypes."""
    inf = float("inf")
    out: dict[str, Any] = {}
    for dtype in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
        nan = float("nan")
        x = with_negative_nans(
            [[None, 1.0, -inf, None, 2.0, inf, None, nan, 0.5],
             [-inf, None, -2.0, -1.0, None, -inf, 3.0, -4.0, None]],
            dtype,
        )  # fmt: skip
        for window, stride in ((2, 1), (3, 2), (9, 1)):
            values, indices = op(x, window, stride)
            out[f"{dtype} window={window} stride={stride}"] = {"values": values, "indices": indices}
    return out


@probe(category="eager", weight=2, hints=["ties-nan", "ordering-keys"])
def signed_zeros_tie(solution: Any) -> dict[str, Any]:
    """-0.0 and +0.0 are equal: where they tie for the maximum, the first position wins, four dtypes."""
    out: dict[str, Any] = {}
    for dtype in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
        x = torch.tensor(
            [[-0.0, 0.0, 0.0, -0.0, -1.0, 0.0, -0.0, -3.0],
             [0.0, -0.0, -0.0, 0.0, -2.0, -0.0, 0.0, -0.0]],
            dtype=dtype,
        )  # fmt: skip
        for window, stride in ((2, 1), (3, 2), (8, 1)):
            values, indices = op(x, window, stride)
            out[f"{dtype} window={window} stride={stride}"] = {"values": values, "indices": indices}
    return out


def zero_rows(dtype: torch.dtype) -> torch.Tensor:
    """Rows of 12 whose windows' maxima are zeros: a lone -0.0 (no +0.0 near it), and -0.0/+0.0 ties in both orders."""
    z, p = -0.0, 0.0
    return torch.tensor(
        [[z, -1.0, -2.0, -3.0, z, -5.0, -1.0, -2.0, z, float("-inf"), -7.0, z],
         [z, p, -1.0, p, z, -2.0, z, p, -3.0, z, p, z],
         [p, z, -1.0, z, p, -2.0, p, z, z, p, -4.0, p],
         [-1.0, z, z, -2.0, -3.0, z, -1.0, p, p, -1.0, -2.0, z]],
        dtype=dtype,
    )  # fmt: skip


def wide_zero_rows(dtype: torch.dtype) -> torch.Tensor:
    """Rows of 300 for windows of 64 and more, where a vectorised reduction combines lanes.

    Row 0 is +0.0 but for a -0.0 every 64 positions, row 1 the reverse; in row 2
    each -0.0 is followed by a +0.0 32 positions later among -1s; in row 3 a
    lone -0.0 in each stretch of 64 among -1s.
    """
    x = torch.empty(4, 300, dtype=dtype)
    x[0] = 0.0
    x[0, ::64] = -0.0
    x[1] = -0.0
    x[1, ::64] = 0.0
    x[2] = -1.0
    x[2, ::64] = -0.0
    x[2, 32::64] = 0.0
    x[3] = -1.0
    x[3, 5::64] = -0.0
    return x


def bits(t: torch.Tensor) -> torch.Tensor:
    """A float tensor's bit patterns, as signed integers of its width."""
    return t.view(INT_OF_WIDTH[t.dtype])


def element_at_index(x: torch.Tensor, values: torch.Tensor, indices: torch.Tensor) -> bool:
    """Whether values equals x.gather(-1, indices) bit for bit (two NaNs count as equal whatever their bits)."""
    if values.shape != indices.shape or values.dtype != x.dtype or indices.dtype != torch.int64:
        return False
    length = x.shape[-1]
    if indices.numel() and (int(indices.min()) < 0 or int(indices.max()) >= length):
        return False
    picked = x.gather(-1, indices)
    both_nan = torch.isnan(values) & torch.isnan(picked)
    return bool(((bits(values) == bits(picked)) | both_nan).all())


def zero_sign_case(x: torch.Tensor, values: torch.Tensor, indices: torch.Tensor) -> dict[str, Any]:
    """One call's observation, copied at once (what later calls do to the outputs is repeated_calls' to judge)."""
    return {
        "indices": indices.clone(),
        "value bits": (bits(values) if values.dtype == x.dtype else values).clone(),
        "values are x at indices, bit for bit": element_at_index(x, values, indices),
    }


@probe(category="eager", weight=2, hints=["ties-nan", "value-is-element"])
def zero_maximum_keeps_its_sign(solution: Any) -> dict[str, Any]:
    """A zero maximum is the element at its index, sign bit included: a lone -0.0, -0.0/+0.0 ties both ways, windows up to 300, four dtypes."""
    out: dict[str, Any] = {}
    for dtype in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
        x = zero_rows(dtype)
        for window, stride in ((1, 1), (2, 1), (3, 3), (3, 1), (5, 2), (12, 1)):
            values, indices = op(x, window, stride)
            out[f"{dtype} (4, 12) window={window} stride={stride}"] = zero_sign_case(x, values, indices)
        wide = wide_zero_rows(dtype)
        for window, stride in ((64, 64), (128, 64), (96, 1), (300, 1)):
            values, indices = op(wide, window, stride)
            out[f"{dtype} (4, 300) window={window} stride={stride}"] = zero_sign_case(wide, values, indices)
        transposed = wide.t().contiguous().t()
        values, indices = op(transposed, 64, 64)
        out[f"{dtype} (4, 300) transposed window=64 stride=64"] = zero_sign_case(transposed, values, indices)
    return out


@probe(category="compile", weight=1, hints=["value-is-element", "fake-kernel"])
def compiled_zero_maximum_keeps_its_sign(solution: Any) -> dict[str, Any]:
    """torch.compile(fullgraph=True, backend="aot_eager", dynamic=True): values whose maximum is a signed zero keep the element's bits."""

    def two_windows(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        short_values, short_indices = torch.ops.interview.sliding_window_max(x, 3, 1)
        wide_values, wide_indices = torch.ops.interview.sliding_window_max(x, 64, 64)
        return short_values, short_indices, wide_values, wide_indices

    compiled = torch.compile(two_windows, fullgraph=True, backend="aot_eager", dynamic=True)
    inputs = {
        "float32 (4, 300)": wide_zero_rows(torch.float32),
        "float32 (3, 200)": wide_zero_rows(torch.float32)[1:, 50:250],
        "bfloat16 (4, 300)": wide_zero_rows(torch.bfloat16),
    }
    out: dict[str, Any] = {}
    for name, x in inputs.items():
        try:
            short_values, short_indices, wide_values, wide_indices = compiled(x)
            out[name] = {
                "error": None,
                "window=3 stride=1": zero_sign_case(x, short_values, short_indices),
                "window=64 stride=64": zero_sign_case(x, wide_values, wide_indices),
            }
        except Exception as exc:  # noqa: BLE001 - the failure is the observation
            out[name] = {"error": type(exc).__name__, "window=3 stride=1": None, "window=64 stride=64": None}
    return out


def shares_memory(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether the storages behind a and b overlap anywhere."""
    sa, sb = a.untyped_storage(), b.untyped_storage()
    if sa.nbytes() == 0 or sb.nbytes() == 0:
        return False
    return sa.data_ptr() < sb.data_ptr() + sb.nbytes() and sb.data_ptr() < sa.data_ptr() + sa.nbytes()


@probe(category="eager", weight=2, hints=["new-outputs"])
def outputs_are_new_tensors(solution: Any) -> dict[str, Any]:
    """Window 1 and other windows: both outputs are contiguous and share no memory with x."""
    cases = {
        "(2, 3) window=1 stride=1": (randn(2, 3, seed=40), 1, 1),
        "(6,) window=1 stride=1": (randn(6, seed=41), 1, 1),
        "(2, 3, 4) window=1 stride=1": (randn(2, 3, 4, dtype=torch.float64, seed=42), 1, 1),
        "(3, 7) window=1 stride=2": (randn(3, 7, seed=43), 1, 2),
        "(4, 5) transposed window=1 stride=1": (randn(5, 4, seed=44).t(), 1, 1),
        "(3, 6) window=6 stride=1": (randn(3, 6, seed=45), 6, 1),
        "(2, 9) window=3 stride=2": (randn(2, 9, dtype=torch.bfloat16, seed=46), 3, 2),
    }
    out: dict[str, Any] = {}
    for name, (x, window, stride) in cases.items():
        values, indices = op(x, window, stride)
        out[name] = {
            "values": values,
            "indices": indices,
            "contiguous": [values.is_contiguous(), indices.is_contiguous()],
            "shares memory with x": [shares_memory(values, x), shares_memory(indices, x)],
        }
    return out


@probe(category="eager", weight=2, hints=["non-contiguous"])
def strided_and_offset_views(solution: Any) -> dict[str, Any]:
    """Views of rank 3 and 4 whose batch dims cannot be merged, and views that start past the storage's first element."""
    cases = {
        "(4, 3, 5)[::2] window=3 stride=2": (randn(4, 3, 5, seed=50)[::2], 3, 2),
        "(3, 4, 6).permute(1, 0, 2) window=2 stride=2": (randn(3, 4, 6, seed=51).permute(1, 0, 2), 2, 2),
        "(2, 3, 4, 7)[:, ::2, 1:] window=3 stride=1": (randn(2, 3, 4, 7, dtype=torch.float64, seed=52)[:, ::2, 1:], 3, 1),
        "(2, 5, 6).transpose(-1, -2) window=2 stride=1": (randn(2, 5, 6, seed=53).transpose(-1, -2), 2, 1),
        "(3, 8)[1:] window=2 stride=1": (randn(3, 8, seed=54)[1:], 2, 1),
        "(4, 9)[1:, 2:] window=3 stride=2": (randn(4, 9, dtype=torch.bfloat16, seed=55)[1:, 2:], 3, 2),
        "(3, 10)[:, 1:7] window=2 stride=2": (randn(3, 10, seed=56)[:, 1:7], 2, 2),
        "(12,)[3:] window=4 stride=1": (randn(12, dtype=torch.float16, seed=57)[3:], 4, 1),
        "(5, 2, 6)[2:, 1] window=6 stride=1": (randn(5, 2, 6, seed=58)[2:, 1], 6, 1),
    }
    out: dict[str, Any] = {}
    for name, (x, window, stride) in cases.items():
        values, indices = op(x, window, stride)
        out[name] = {
            "values": values,
            "indices": indices,
            "contiguous": [values.is_contiguous(), indices.is_contiguous()],
        }
    return out


# Buffers behind the guarded tensors: a tensor from torch.frombuffer does not keep its memory alive.
_GUARDED: list[mmap.mmap] = []


def guarded(shape: tuple[int, ...], seed: int) -> torch.Tensor:
    """A contiguous float32 tensor whose last element ends exactly where an unreadable page begins.

    ``x.contiguous()`` returns such a tensor itself, so a kernel that reads
    even one element past the end of ``x`` touches the guard page and the
    process dies (SIGSEGV) instead of reading whatever memory follows.
    """
    count = math.prod(shape)
    size = count * 4
    page = mmap.PAGESIZE
    pages = -(-size // page)
    buffer = mmap.mmap(-1, (pages + 1) * page)
    _GUARDED.append(buffer)
    address = ctypes.addressof(ctypes.c_char.from_buffer(buffer))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    if libc.mprotect(address + pages * page, page, 0) != 0:  # 0 is PROT_NONE
        raise OSError(ctypes.get_errno(), "mprotect failed")
    x = torch.frombuffer(buffer, dtype=torch.float32, count=count, offset=pages * page - size).view(shape)
    x.copy_(randn(*shape, seed=seed))
    return x


@probe(category="eager", weight=2, hints=["kernel-loops"])
def reads_stay_inside_x(solution: Any) -> dict[str, Any]:
    """Inputs that end right before an unreadable page: no loop may read past the last window of the last row."""
    cases = {
        "(3, 10) window=10 stride=1": ((3, 10), 10, 1),
        "(4, 11) window=3 stride=2": ((4, 11), 3, 2),
        "(2, 8) window=2 stride=3": ((2, 8), 2, 3),
        "(9,) window=4 stride=5": ((9,), 4, 5),
        "(5,) window=1 stride=1": ((5,), 1, 1),
    }
    out: dict[str, Any] = {}
    for i, (name, (shape, window, stride)) in enumerate(cases.items()):
        values, indices = op(guarded(shape, seed=30 + i), window, stride)
        out[name] = {"values": values, "indices": indices}
    return out


@probe(category="eager", hints=["argument-checks"])
def eager_argument_checks(solution: Any) -> dict[str, Any]:
    """Invalid arguments raise RuntimeError (TORCH_CHECK) instead of reading out of bounds; valid ones of any int64 size work.

    ``window`` and ``stride`` are int64, so the checks hold for every value
    of that range: negative ones (a test for 0 alone lets them through),
    ones whose low 32 bits look valid (a kernel that narrows them to ``int``
    checks and uses another number), and inputs without elements (an empty
    batch, or ``L = 0`` where every window is too long: a check after an
    early return, or a division by ``L`` before the check, never fires). A
    valid stride near 2**63 gives one window per row: a count written as
    ``(L - window + stride) / stride`` overflows there. A call that crashes
    the process fails the probe.
    """
    x = randn(2, 5, seed=9)
    y = randn(2, 8, seed=90)
    checks = {
        "window 0": raises(op, x, 0, 1),
        "window longer than x": raises(op, x, 6, 3),
        "stride 0": raises(op, x, 2, 0),
        "0-d x": raises(op, torch.tensor(1.0), 1, 1),
        "negative window": raises(op, y, -1, 3),
        "negative window, more windows than L": raises(op, y, -3, 4),
        "negative stride": raises(op, y, 3, -1),
        "negative stride, size would be 0 or 1": raises(op, y, 3, -10),
        "negative stride, size would be 0": raises(op, y, 3, -5),
        "window past 2**32, valid low bits": raises(op, y, 2**32 + 2, 1),
        "window near 2**63": raises(op, y, 2**63 - 1, 1),
        "negative window, valid low bits": raises(op, y, -(2**32) + 3, 1),
        "negative stride, valid low bits": raises(op, y, 3, -(2**32) + 1),
        "lowest int64 stride": raises(op, y, 3, -(2**63)),
        "empty batch, window longer than L": raises(op, randn(0, 6, seed=91), 7, 1),
        "empty batch, window 0": raises(op, randn(0, 6, seed=91), 0, 1),
        "empty batch, negative window": raises(op, randn(0, 6, seed=91), -2, 1),
        "empty inner batch, stride 0": raises(op, randn(2, 0, 6, seed=92), 2, 0),
        "empty batch, negative stride": raises(op, randn(0, 6, seed=91), 2, -10),
        "L = 0, window 1": raises(op, randn(3, 0, seed=93), 1, 1),
        "1-D, L = 0": raises(op, randn(0, seed=94), 1, 1),
        "empty batch and L = 0": raises(op, randn(0, 0, seed=95), 1, 1),
    }
    valid_cases = {
        "stride 2**31": (y, 3, 2**31),
        "stride 2**32": (y, 3, 2**32),
        "stride 2**32 + 1": (y, 3, 2**32 + 1),
        "stride 2**63 - 1": (y, 3, 2**63 - 1),
        "stride 2**63 - 4": (y, 3, 2**63 - 4),
        "stride 2**63 - 2, window of the whole length": (y, 8, 2**63 - 2),
        "(3, 2, 7) stride 2**62 + 1, window 1": (randn(3, 2, 7, dtype=torch.float64, seed=96), 1, 2**62 + 1),
        "empty batch, stride 2**63 - 1": (randn(0, 6, seed=91), 2, 2**63 - 1),
    }
    valid: dict[str, Any] = {}
    for name, (t, window, stride) in valid_cases.items():
        try:
            values, indices = op(t, window, stride)
            valid[name] = {"error": None, "values": values, "indices": indices}
        except Exception as exc:  # noqa: BLE001 - the failure is the observation
            valid[name] = {"error": type(exc).__name__, "values": None, "indices": None}
    return {"invalid": checks, "valid": valid}


def _window_max_truth(x: torch.Tensor, window: int, stride: int) -> dict[str, Any]:
    """The statement's answer for x as it is now, computed in Python from its values (inputs without NaN).

    float64 holds every value of the four dtypes exactly; a later element
    replaces the best only when it is larger, so the first of a tie wins.
    """
    length = x.shape[-1]
    count = (length - window) // stride + 1
    values: list[list[float]] = []
    indices: list[list[int]] = []
    for row in x.detach().to(torch.float64).reshape(-1, length).tolist():
        best = [max(range(j * stride, j * stride + window), key=lambda k, row=row: (row[k], -k)) for j in range(count)]
        values.append([row[k] for k in best])
        indices.append(best)
    return {"shape": [*x.shape[:-1], count], "dtype": x.dtype, "values": values, "indices": indices}


def _matches_truth(result: tuple[torch.Tensor, torch.Tensor], truth: dict[str, Any]) -> bool:
    values, indices = result
    shape = truth["shape"]
    return (
        list(values.shape) == shape
        and list(indices.shape) == shape
        and values.dtype == truth["dtype"]
        and indices.dtype == torch.int64
        and values.to(torch.float64).reshape(-1, shape[-1]).tolist() == truth["values"]
        and indices.reshape(-1, shape[-1]).tolist() == truth["indices"]
    )


def _clone_into_freed_id(source: torch.Tensor, freed_id: int) -> torch.Tensor:
    """A clone of ``source`` that is, as a rule, a new object at the id of a freed tensor.

    Clones that land elsewhere are kept alive until the one wanted comes up,
    so each try takes the next free slot of the allocator (gc.collect() frees
    a few hundred objects of a tensor's size on top of the ones wanted);
    after 4096 tries the last one is used.
    """
    spare: list[torch.Tensor] = []
    for _ in range(4096):
        fresh = source.clone()
        if id(fresh) == freed_id:
            return fresh
        spare.append(fresh)
    return spare.pop()


@probe(category="eager", weight=2, hints=["state"])
def repeated_calls(solution: Any) -> dict[str, Any]:
    """Many calls in one process, on inputs changed in place, look-alike or rebuilt: every result right, also after later calls.

    The steps: the same tensors (contiguous, strided, half precision) changed
    in place between calls; new tensors of the same shapes, strides and
    dtypes; tensors freed and rebuilt at the same ids; new tensors and views
    over the memory of earlier ones (the same data_ptr() and a fresh version
    counter), rewritten between calls.

    Each call's outputs are judged against the answer computed in Python
    from x as it was at that call: right after the call ("at each call": a
    memo of results or of contiguous copies keyed on an address, a version
    counter, shapes, strides or dtype returns an earlier call's answer at one
    of the steps), and once more after every call has run ("after all
    calls": an output tensor that a later call refills changes a result the
    caller already holds). No two calls may return tensors that share memory.
    """
    truths: dict[str, dict[str, Any]] = {}
    returned: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}
    at_call: dict[str, bool] = {}

    def call(step: str, x: torch.Tensor, window: int, stride: int) -> None:
        truths[step] = _window_max_truth(x, window, stride)
        returned[step] = op(x, window, stride)
        at_call[step] = _matches_truth(returned[step], truths[step])

    # The same tensors, changed in place between calls (a parameter update, a refilled batch).
    x = randn(3, 4, 12, seed=700)
    call("first call", x, 3, 2)
    x.mul_(-1.5).add_(randn(3, 4, 12, seed=701))
    call("same tensor changed in place", x, 3, 2)
    x[1].copy_(randn(4, 12, seed=702))
    call("same tensor, part of it rewritten", x, 3, 2)
    call("same tensor, called again unchanged", x, 3, 2)
    base = randn(2, 10, 6, dtype=torch.float64, seed=703)
    view = base.transpose(-1, -2)
    call("strided view", view, 4, 3)
    base.copy_(randn(2, 10, 6, dtype=torch.float64, seed=704))
    call("strided view, its base changed in place", view, 4, 3)
    half = randn(5, 10, dtype=torch.bfloat16, seed=705)[:, 1:]
    call("half-precision slice", half, 2, 1)
    half.mul_(-1)
    call("half-precision slice changed in place", half, 2, 1)

    # New tensors with the same shapes, strides and dtypes and other values, the old ones still alive.
    y = randn(3, 4, 12, seed=710)
    call("new tensor of the same shape", y, 3, 2)
    call("new strided view of the same layout", randn(2, 10, 6, dtype=torch.float64, seed=711).transpose(-1, -2), 4, 3)

    # Tensors freed and rebuilt as new objects at the ids of the freed ones.
    ids_taken = []
    for k in range(2):
        source = randn(3, 4, 12, seed=720 + k)
        freed = id(y)
        del y
        gc.collect()
        y = _clone_into_freed_id(source, freed)
        ids_taken.append(id(y) == freed)
        call(f"tensor freed and rebuilt, call {k + 1}", y, 3, 2)

    # New tensors over the memory of earlier ones (same data_ptr(), shape, strides and dtype, version 0):
    # a loader that writes each batch into one buffer, here through NumPy.
    memory = np.empty((3, 4, 12), dtype=np.float32)
    addresses = set()
    for k in range(3):
        memory[...] = randn(3, 4, 12, seed=730 + k).numpy()
        z = torch.from_numpy(memory)
        addresses.add(z.data_ptr())
        call(f"new tensor over earlier memory, call {k + 1}", z, 3, 2)
        call(f"new strided view over earlier memory, call {k + 1}", z[:, ::2, 1:], 3, 2)
        del z
        gc.collect()

    outputs = [t for result in returned.values() for t in result]
    return {
        "at each call": at_call,
        "after all calls": {step: _matches_truth(returned[step], truths[step]) for step in returned},
        "no two calls return tensors that share memory": not any(
            shares_memory(a, b) for i, a in enumerate(outputs) for b in outputs[i + 1 :]
        ),
        "a rebuilt tensor took the freed id": any(ids_taken),
        "new tensors over one buffer had its address": len(addresses) == 1,
    }


# ---------------------------------------------------------------- fake


@probe(category="fake", weight=2, hints=["fake-kernel", "fake-shape", "fake-dtype"])
def fake_shapes_and_dtypes(solution: Any) -> dict[str, Any]:
    """FakeTensorMode: ranks 1 to 3, several windows and strides, four dtypes."""
    cases = (
        ((10,), 3, 1, torch.float32),
        ((10,), 10, 4, torch.float64),
        ((4, 11), 4, 3, torch.bfloat16),
        ((2, 3, 16), 5, 2, torch.float16),
        ((0, 7), 7, 2, torch.float32),
        ((3, 9), 1, 5, torch.float64),
    )
    out: dict[str, Any] = {}
    with FakeTensorMode():
        for shape, window, stride, dtype in cases:
            key = f"{list(shape)} window={window} stride={stride} {dtype}"
            out[key] = fake_call(torch.empty(shape, dtype=dtype), window, stride)
    return out


@probe(category="fake", weight=2, hints=["fake-strides", "fake-device"])
def fake_non_contiguous_and_meta(solution: Any) -> dict[str, Any]:
    """Transposed fake inputs, and tensors on the meta device: contiguous outputs on x's device."""
    out: dict[str, Any] = {}
    with FakeTensorMode():
        out["fake transposed"] = fake_call(torch.empty(12, 5).t(), 4, 2)
        out["fake permuted"] = fake_call(torch.empty(6, 2, 3, dtype=torch.float64).permute(1, 2, 0), 3, 3)
    out["meta"] = fake_call(torch.empty(3, 8, dtype=torch.bfloat16, device="meta"), 2, 2)
    return out


@probe(category="fake", hints=["argument-checks", "fake-kernel"])
def fake_argument_checks(solution: Any) -> dict[str, Any]:
    """The fake kernel rejects the arguments the real kernel rejects, with RuntimeError, even where the size would be 0.

    A fake kernel without the checks can still fail on some of them, but
    with another error: IndexError for a 0-d x (``x.shape[-1]``),
    ZeroDivisionError for stride 0 (``// stride``). The checks hold for
    negative windows and strides, and for inputs without elements (an empty
    batch, ``L = 0``), under FakeTensorMode and on the meta device; valid
    strides of any int64 size are accepted.
    """
    out: dict[str, Any] = {}
    with FakeTensorMode():
        x = torch.empty(2, 5)
        y = torch.empty(2, 8)
        out["window longer than x (size would be 0)"] = error_name(lambda: op(x, 6, 3))
        out["window 0"] = error_name(lambda: op(x, 0, 1))
        out["stride 0"] = error_name(lambda: op(x, 2, 0))
        out["0-d x"] = error_name(lambda: op(torch.empty(()), 1, 1))
        out["valid"] = error_name(lambda: op(x, 5, 3))
        out["negative window"] = error_name(lambda: op(y, -1, 3))
        out["negative stride (size would be 0)"] = error_name(lambda: op(y, 3, -10))
        out["window past 2**32"] = error_name(lambda: op(y, 2**32 + 2, 1))
        out["empty batch, window longer than L"] = error_name(lambda: op(torch.empty(0, 6), 7, 1))
        out["empty batch, window 0"] = error_name(lambda: op(torch.empty(0, 6), 0, 1))
        out["empty inner batch, stride 0"] = error_name(lambda: op(torch.empty(2, 0, 6), 2, 0))
        out["empty batch, negative stride"] = error_name(lambda: op(torch.empty(0, 6), 2, -3))
        out["L = 0, window 1"] = error_name(lambda: op(torch.empty(3, 0), 1, 1))
        out["valid, stride 2**63 - 1"] = error_name(lambda: op(y, 3, 2**63 - 1))
        out["valid, empty batch, stride 2**32 + 1"] = error_name(lambda: op(torch.empty(0, 6), 2, 2**32 + 1))
    meta = {"device": "meta"}
    out["meta: empty batch, window longer than L"] = error_name(lambda: op(torch.empty(0, 6, **meta), 7, 1))
    out["meta: L = 0, window 1"] = error_name(lambda: op(torch.empty(3, 0, **meta), 1, 1))
    out["meta: negative window"] = error_name(lambda: op(torch.empty(2, 8, **meta), -1, 3))
    out["meta: negative stride"] = error_name(lambda: op(torch.empty(2, 8, **meta), 3, -5))
    return out


@probe(category="fake", weight=2, hints=["fake-strides", "fake-empty"])
def fake_empty_batches(solution: Any) -> dict[str, Any]:
    """Empty batches with the 0-size dim anywhere before the last, under FakeTensorMode and on meta: the real kernel's metadata."""
    cases = (
        ((2, 0, 6), 3, 2, torch.float32),
        ((3, 0, 4, 5), 2, 1, torch.float64),
        ((0, 3, 5), 5, 1, torch.bfloat16),
        ((4, 0, 7), 1, 3, torch.float16),
        ((2, 1, 0, 4), 2, 2, torch.float32),
    )
    out: dict[str, Any] = {}
    for shape, window, stride, dtype in cases:
        key = f"{list(shape)} window={window} stride={stride} {dtype}"
        real = [describe(t) for t in op(torch.empty(shape, dtype=dtype), window, stride)]
        with FakeTensorMode():
            fake = [describe(t) for t in op(torch.empty(shape, dtype=dtype), window, stride)]
        meta = [describe(t) for t in op(torch.empty(shape, dtype=dtype, device="meta"), window, stride)]
        out[key] = {
            "fake": [{k: v for k, v in d.items() if k != "stride"} for d in fake],
            "meta": [{k: v for k, v in d.items() if k != "stride"} for d in meta],
            "fake strides are the real kernel's": [f["stride"] == r["stride"] for f, r in zip(fake, real)],
            "meta strides are the real kernel's": [m["stride"] == r["stride"] for m, r in zip(meta, real)],
        }
    return out


# ---------------------------------------------------------------- compile


@probe(category="compile", weight=2, rtol=1e-6, atol=1e-6, hints=["fake-kernel", "fake-shape"])
def compile_dynamic_shapes(solution: Any) -> dict[str, Any]:
    """torch.compile(fullgraph=True, backend="aot_eager", dynamic=True), three input lengths."""

    def pooled_features(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        values, indices = torch.ops.interview.sliding_window_max(torch.tanh(x), 3, 2)
        return values * 2 + 1, indices.float().mean(-1)

    compiled = torch.compile(pooled_features, fullgraph=True, backend="aot_eager", dynamic=True)
    out: dict[str, Any] = {}
    for i, shape in enumerate(((2, 9), (3, 14), (1, 4, 7))):
        try:
            values, mean_index = compiled(randn(*shape, seed=10 + i))
            out[str(list(shape))] = {"error": None, "values": values, "mean index": mean_index}
        except Exception as exc:  # noqa: BLE001 - the failure is the observation
            out[str(list(shape))] = {"error": type(exc).__name__, "values": None, "mean index": None}
    return out


@probe(category="compile", weight=2, hints=["fake-kernel", "fake-shape", "fake-dtype"])
def opcheck_samples(solution: Any) -> dict[str, Any]:
    """torch.library.opcheck (test_schema, test_faketensor, test_aot_dispatch_dynamic) on four samples."""
    samples = {
        "float32 (3, 12) window=4 stride=2": (randn(3, 12, seed=20), 4, 2),
        "bfloat16 (2, 2, 9) window=3 stride=3": (randn(2, 2, 9, dtype=torch.bfloat16, seed=21), 3, 3),
        "float64 transposed window=2 stride=1": (randn(7, 3, dtype=torch.float64, seed=22).t(), 2, 1),
        "float32 (10,) window=10 stride=1": (randn(10, seed=23), 10, 1),
    }
    tests = ("test_schema", "test_faketensor", "test_aot_dispatch_dynamic")
    target = torch.ops.interview.sliding_window_max.default
    return {
        name: {test: error_name(lambda args=args, test=test: torch.library.opcheck(target, args, test_utils=test)) for test in tests}
        for name, args in samples.items()
    }


@probe(category="compile", weight=2, hints=["fake-kernel", "fake-empty", "new-outputs"])
def opcheck_window_one_and_empty(solution: Any) -> dict[str, Any]:
    """torch.library.opcheck on window-1 samples and on empty batches."""
    samples = {
        "float32 (2, 3) window=1 stride=1": (randn(2, 3, seed=60), 1, 1),
        "float64 (3, 7) window=1 stride=2": (randn(3, 7, dtype=torch.float64, seed=61), 1, 2),
        "float32 (2, 0, 6) window=3 stride=2": (randn(2, 0, 6, seed=62), 3, 2),
    }
    tests = ("test_schema", "test_faketensor", "test_aot_dispatch_dynamic")
    target = torch.ops.interview.sliding_window_max.default
    return {
        name: {test: error_name(lambda args=args, test=test: torch.library.opcheck(target, args, test_utils=test)) for test in tests}
        for name, args in samples.items()
    }
