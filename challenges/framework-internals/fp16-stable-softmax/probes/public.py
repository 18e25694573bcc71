"""Public probes for fp16-stable-softmax: shown on "Run", inputs and all.

Each probe calls your ``softmax`` / ``log_softmax`` on a few small inputs
while watching the torch calls they make (softmax, log_softmax and logsumexp
in any form, float64 tensors and values pulled out of torch are against the
rules), and returns the inputs with your outputs. The check computes the
float64 truth and applies the per-element bound from the statement.
"""

from __future__ import annotations

from typing import Any

import torch
from probekit import probe
from torch.overrides import TorchFunctionMode

# ---------------------------------------------------------------- the rules, watched

BANNED_PARTS = ("softmax", "logsumexp", "scaled_dot_product")
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
        elif any(part in base.lower() for part in BANNED_PARTS):
            self._note(f"{name} (softmax, log_softmax and logsumexp are yours to write)")
        out = func(*args, **kwargs)
        for t in _tensors(out):
            if t.dtype in WIDE_DTYPES:
                self._note(f"{name} made a {str(t.dtype).removeprefix('torch.')} tensor")
                break
        return out


Case = tuple[str, str, torch.Tensor, int]  # (name, "softmax" | "log_softmax", x, dim)


def run_cases(solution: Any, cases: list[Case]) -> dict[str, Any]:
    """Call the candidate's functions on each case under the watch: the observation for the check."""
    watch = RuleWatch()
    out: dict[str, Any] = {}
    for name, fn, x, dim in cases:
        before = x.clone()
        try:
            with watch:
                y = getattr(solution, fn)(x, dim)
        except Exception as exc:  # noqa: BLE001 - reported per case by the check
            y = f"raised {type(exc).__name__}: {str(exc)[:300]}"
        if not isinstance(y, torch.Tensor | str):
            y = f"returned a {type(y).__module__}.{type(y).__qualname__}, not a torch.Tensor"
        out[name] = {
            "fn": fn,
            "dim": dim,
            "x": before.contiguous(),
            "y": y.detach() if isinstance(y, torch.Tensor) else y,
            "input unchanged": bool(torch.equal(x, before)),
        }
    return {"violations": watch.violations, "cases": out}


def both(name: str, x: torch.Tensor, dim: int = -1) -> list[Case]:
    return [(f"softmax, {name}", "softmax", x, dim), (f"log_softmax, {name}", "log_softmax", x, dim)]


def randn(*shape: int, scale: float = 1.0, offset: float = 0.0, dtype: torch.dtype, seed: int) -> torch.Tensor:
    """Seeded normal samples times scale plus offset, rounded once to dtype."""
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(*shape, generator=gen, dtype=torch.float64) * scale + offset).to(dtype)


F16, BF16, F32 = torch.float16, torch.bfloat16, torch.float32

# ---------------------------------------------------------------- probes


@probe(category="softmax", check="within_softmax_bound", hints=["float32-math", "max-subtraction"])
def softmax_float16_small(solution: Any) -> dict[str, Any]:
    """softmax of float16 (4, 16) logits with a spread of about +-9."""
    x = randn(4, 16, scale=3.0, dtype=F16, seed=101)
    return run_cases(solution, [("float16 (4, 16), randn*3, dim=-1", "softmax", x, -1)])


@probe(category="log-softmax", check="within_softmax_bound", hints=["log-softmax-direct", "float32-math"])
def log_softmax_bfloat16_spread(solution: Any) -> dict[str, Any]:
    """log_softmax of bfloat16 (4, 32) logits spanning about 80: some probabilities are below 1e-30."""
    x = randn(4, 32, scale=12.0, dtype=BF16, seed=102)
    return run_cases(solution, [("bfloat16 (4, 32), randn*12, dim=-1", "log_softmax", x, -1)])


@probe(category="large-logits", check="within_softmax_bound", hints=["max-subtraction"])
def float16_large_logits(solution: Any) -> dict[str, Any]:
    """float16 logits in the thousands: [[1000, 999, 990, -1000], [20000, 20008, 19992, 20000]]."""
    x = torch.tensor([[1000.0, 999.0, 990.0, -1000.0], [20000.0, 20008.0, 19992.0, 20000.0]], dtype=F16)
    return run_cases(solution, both("float16 (2, 4), dim=-1", x))


@probe(category="layout", check="within_softmax_bound", hints=["masked-entries", "dims-and-layout"])
def masked_and_dim0(solution: Any) -> dict[str, Any]:
    """A float16 row with -inf (masked) entries, and a float32 softmax over dim 0."""
    masked = torch.tensor([[2.0, float("-inf"), 0.5, float("-inf")], [float("-inf"), 3.0, 3.0, -1.0]], dtype=F16)
    cols = randn(5, 3, scale=2.0, dtype=F32, seed=103)
    return run_cases(solution, both("float16 (2, 4) with -inf, dim=-1", masked) + both("float32 (5, 3), dim=0", cols, 0))
