"""OpCounter: count aten calls and matmul/conv FLOPs with a TorchDispatchMode.

RED-TEAM CORRECT ALTERNATIVE. Different method from the reference:
- arguments are bound to their aten schema names (func._schema.arguments), positional or keyword;
- matmul FLOPs are read from the *result*: 2 * numel(result) * K (K = inner dim of the 1st factor);
- convolution FLOPs from the result's numel; convolution_backward charges F once for each of
  grad_input / grad_weight that output_mask (bound by name) requests;
- the key is the schema's qualified name with "::" -> ".";
- the state is an event log per entry; the three results are properties that aggregate it.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

_MATMULS = {  # schema name -> (first factor argument, batched?)
    "aten::mm": "self",
    "aten::addmm": "mat1",
    "aten::bmm": "self",
    "aten::baddbmm": "batch1",
}


def _numel(shape: Any) -> int:
    n = 1
    for s in shape:
        n *= int(s)
    return n


def _bind(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    bound = {}
    for spec, value in zip(func._schema.arguments, args, strict=False):
        bound[spec.name] = value
    bound.update(kwargs)
    return bound


def _flops(schema_name: str, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> int | None:
    if schema_name in _MATMULS:
        bound = _bind(func, args, kwargs)
        first = bound[_MATMULS[schema_name]]
        k = int(first.shape[-1])
        out = result if isinstance(result, torch.Tensor) else result[0]
        return 2 * _numel(out.shape) * k
    if schema_name == "aten::convolution":
        bound = _bind(func, args, kwargs)
        weight = bound["weight"]
        return 2 * _numel(result.shape) * _numel(weight.shape[1:])
    if schema_name == "aten::convolution_backward":
        bound = _bind(func, args, kwargs)
        per_pass = 2 * _numel(bound["grad_output"].shape) * _numel(bound["weight"].shape[1:])
        mask = bound["output_mask"]
        return per_pass * sum(1 for requested in mask[:2] if requested)
    return None


class OpCounter(TorchDispatchMode):
    """Counts aten calls by overload packet, and the FLOPs of matmul-like ops, while active."""

    def __init__(self) -> None:
        super().__init__()
        self._events: list[tuple[str, int | None]] = []

    def __enter__(self) -> OpCounter:
        self._events = []
        super().__enter__()
        return self

    @property
    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for name, _ in self._events:
            out[name] = out.get(name, 0) + 1
        return out

    @property
    def flops_by_op(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for name, f in self._events:
            if f is not None:
                out[name] = out.get(name, 0) + f
        return out

    @property
    def flops(self) -> int:
        total = 0
        for _, f in self._events:
            if f is not None:
                total += f
        return total

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None) -> Any:
        kwargs = kwargs if kwargs is not None else {}
        result = func(*args, **kwargs)
        schema_name = func._schema.name
        self._events.append((schema_name.replace("::", "."), _flops(schema_name, func, args, kwargs, result)))
        return result
