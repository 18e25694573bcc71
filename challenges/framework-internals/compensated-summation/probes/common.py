"""What the public and hidden probes of compensated-summation share, imported by both as ``probe_common``."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch.overrides import TorchFunctionMode

# ---------------------------------------------------------------- the rules, watched

# Ops that accumulate in float64 inside on CPU: cumsum(float32)[-1] and
# var_mean/std_mean's mean are float64 sums rounded once.
BANNED_OPS = {"cumsum", "cumulative_trapezoid", "var", "std", "var_mean", "std_mean"}
BANNED_PARTS = ("batch_norm", "layer_norm", "group_norm", "instance_norm")
OUT_OF_TORCH = {"item", "tolist", "numpy", "__float__", "__array__", "__complex__"}
WIDE_DTYPES = (torch.float64, torch.complex128)


def _tensors(obj: Any) -> list[torch.Tensor]:
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, list | tuple):
        return [t for item in obj for t in _tensors(item)]
    if isinstance(obj, dict):
        return [t for item in obj.values() for t in _tensors(item)]
    return []


class RuleWatch(TorchFunctionMode):
    """Notes every torch call the rules forbid while the candidate's code runs."""

    def __init__(self) -> None:
        super().__init__()
        self.violations: list[str] = []

    def _note(self, text: str) -> None:
        if text not in self.violations and len(self.violations) < 5:
            self.violations.append(text)

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        name = str(getattr(func, "__name__", func))
        base = name.split(".")[0]
        if base in OUT_OF_TORCH:
            if any(t.is_floating_point() for t in _tensors(args)):
                self._note(f"{name}() takes float values out of torch")
        elif base.strip("_") in BANNED_OPS or any(part in base for part in BANNED_PARTS):
            self._note(f"{name} (it accumulates in float64 internally)")
        out = func(*args, **kwargs)
        for t in _tensors(out):
            if t.dtype in WIDE_DTYPES:
                self._note(f"{name} made a {str(t.dtype).removeprefix('torch.')} tensor")
                break
        return out


def run_cases(solution: Any, inputs: dict[str, torch.Tensor]) -> dict[str, Any]:
    """Call total() on each input under the watch: the observation for the check."""
    watch = RuleWatch()
    cases: dict[str, Any] = {}
    for name, x in inputs.items():
        before = x.clone()
        try:
            with watch:
                result = solution.total(x)
        except Exception as exc:  # noqa: BLE001 - reported per case by the check
            result = f"raised {type(exc).__name__}: {str(exc)[:300]}"
        if not isinstance(result, torch.Tensor | str):
            result = f"returned a {type(result).__module__}.{type(result).__qualname__}, not a torch.Tensor"
        cases[name] = {
            "x": before.contiguous(),
            "result": result.detach() if isinstance(result, torch.Tensor) else result,
            "input unchanged": bool(torch.equal(x, before)),
        }
    return {"violations": watch.violations, "cases": cases}


# ---------------------------------------------------------------- inputs


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def as_torch(values: np.ndarray, dtype: torch.dtype) -> torch.Tensor:
    """float64 values rounded to ``dtype`` (via float32 for bfloat16, which NumPy lacks)."""
    if dtype == torch.float16:
        return torch.from_numpy(values.astype(np.float16))
    return torch.from_numpy(values.astype(np.float32)).to(dtype)


def shuffled(values: np.ndarray, seed: int) -> np.ndarray:
    return values[rng(seed).permutation(values.size)]


def cancelling_pairs(big: np.ndarray, small: np.ndarray, dtype: torch.dtype, seed: int) -> torch.Tensor:
    """+b and -b for every b (rounded to dtype first, so they cancel exactly), plus small terms, shuffled."""
    b = as_torch(big, dtype).to(torch.float32).numpy().astype(np.float64)
    s = as_torch(small, dtype).to(torch.float32).numpy().astype(np.float64)
    return as_torch(shuffled(np.concatenate([b, -b, s]), seed), dtype)

