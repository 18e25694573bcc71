"""Public probes for compensated-summation: shown on "Run", inputs and all.

Each probe calls your ``total`` on a few inputs while watching the torch
calls it makes (float64 tensors, values pulled out of torch and the ops that
accumulate in float64 inside are against the rules), and returns the inputs
with your results. The check computes the exact sum of each input with
``math.fsum`` and applies the bound from the statement.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from probekit import probe
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


# ---------------------------------------------------------------- probes


@probe(category="accumulation", check="within_sum_bound", hints=["output-dtype", "accumulate-float32"])
def float16_past_its_range(solution: Any) -> dict[str, Any]:
    """100,000 float16 values in [0, 2): their sum, about 1e5, does not fit in float16."""
    x = as_torch(rng(101).random(100_000) * 2.0, torch.float16)
    return run_cases(solution, {"float16 uniform [0, 2), n = 100,000": x})


@probe(category="cancellation", check="within_sum_bound", hints=["cancellation", "compensation", "neumaier"])
def small_cancelling_vectors(solution: Any) -> dict[str, Any]:
    """Short vectors whose large terms cancel: the small ones are the whole answer."""
    inputs = {
        "float32 [1, 1e8, 1, -1e8]": torch.tensor([1.0, 1e8, 1.0, -1e8]),
        "float32 [1e8, 1, -1e8, 1, 3e-5]": torch.tensor([1e8, 1.0, -1e8, 1.0, 3e-5]),
        "float16 [60000, 0.5, -60000, 0.25]": torch.tensor([60000.0, 0.5, -60000.0, 0.25], dtype=torch.float16),
        "bfloat16 [3e38, 1, -3e38, 2]": torch.tensor([3e38, 1.0, -3e38, 2.0], dtype=torch.bfloat16),
    }
    return run_cases(solution, inputs)


@probe(category="dynamic-range", check="within_sum_bound", hints=["compensation", "neumaier"], timeout=20)
def float32_spikes(solution: Any) -> dict[str, Any]:
    """50,000 float32 values in [0, 1) with 8 pairs of values near 1e7 that cancel."""
    r = rng(102)
    x = cancelling_pairs(r.uniform(1e7, 2e7, 8), r.random(50_000 - 16), torch.float32, seed=103)
    return run_cases(solution, {"float32 spikes, n = 50,000": x})
