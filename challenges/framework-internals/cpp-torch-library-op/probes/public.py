"""Public probes for cpp-torch-library-op: one per category, small inputs.

The first probe imports the solution, which builds the extension with g++
(10-20 s on a quiet machine), so it has a long time limit; the others reuse
that build from the shared /tmp.
"""

from __future__ import annotations

from typing import Any

import torch
from probekit import probe
from torch._subclasses.fake_tensor import FakeTensorMode


def op(x: torch.Tensor, window: int, stride: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
    """Call the operator through the dispatcher."""
    return torch.ops.interview.sliding_window_max(x, window, stride)


def describe(t: torch.Tensor) -> dict[str, Any]:
    """A fake tensor's metadata as plain data (fake tensors have no values)."""
    return {"shape": list(t.shape), "dtype": str(t.dtype), "stride": list(t.stride()), "device": t.device.type}


@probe(category="schema", timeout=240, hints=["schema-string"])
def schema_string(solution: Any) -> dict[str, Any]:
    """The schema registered by TORCH_LIBRARY, as torch prints it."""
    return {"schema": str(torch.ops.interview.sliding_window_max.default._schema)}


@probe(category="eager", hints=["kernel-loops", "ties-nan"])
def small_float32(solution: Any) -> dict[str, Any]:
    """float32 (2, 8), window 3, stride 2, with a tie in the first row."""
    x = torch.tensor([[1.0, 4.0, 4.0, 2.0, 0.5, 3.0, 3.0, -1.0], [0.0, -2.0, 5.0, 1.0, 1.5, -3.0, 2.5, 6.0]])
    values, indices = op(x, 3, 2)
    return {"values": values, "indices": indices}


@probe(category="fake", hints=["fake-kernel", "fake-shape", "fake-dtype"])
def fake_float32_and_bfloat16(solution: Any) -> dict[str, Any]:
    """FakeTensorMode, (4, 10) with window 4 and stride 3, float32 and bfloat16: metadata of both outputs."""
    out: dict[str, Any] = {}
    with FakeTensorMode():
        for dtype in (torch.float32, torch.bfloat16):
            values, indices = op(torch.empty(4, 10, dtype=dtype), 4, 3)
            out[str(dtype)] = {"values": describe(values), "indices": describe(indices)}
    return out


@probe(category="compile", rtol=1e-6, atol=1e-6, hints=["fake-kernel"])
def compile_aot_eager(solution: Any) -> dict[str, Any]:
    """torch.compile(fullgraph=True, backend="aot_eager") around the op, float32 (3, 12)."""

    def f(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        values, indices = op(x.abs(), 4, 2)
        return values + 1, indices

    x = torch.linspace(-3, 3, 36).reshape(3, 12)
    try:
        values, indices = torch.compile(f, fullgraph=True, backend="aot_eager")(x)
    except Exception as exc:  # noqa: BLE001 - the failure is the observation
        return {"error": type(exc).__name__, "values": None, "indices": None}
    return {"error": None, "values": values, "indices": indices}
