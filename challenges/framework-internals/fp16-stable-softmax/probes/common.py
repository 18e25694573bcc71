"""What the public and hidden probes of fp16-stable-softmax share, imported by both as ``probe_common``."""

from __future__ import annotations

from typing import Any

import torch
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


# (name, "softmax" | "log_softmax", x, dim); dim None calls the function without one, which must reduce over -1.
Case = tuple[str, str, torch.Tensor, int | None]


def run_cases(solution: Any, cases: list[Case]) -> dict[str, Any]:
    """Call the candidate's functions on each case under the watch: the observation for the check."""
    watch = RuleWatch()
    out: dict[str, Any] = {}
    for name, fn, x, dim in cases:
        before = x.clone()
        try:
            with watch:
                y = getattr(solution, fn)(x) if dim is None else getattr(solution, fn)(x, dim)
        except Exception as exc:  # noqa: BLE001 - reported per case by the check
            y = f"raised {type(exc).__name__}: {str(exc)[:300]}"
        if not isinstance(y, torch.Tensor | str):
            y = f"returned a {type(y).__module__}.{type(y).__qualname__}, not a torch.Tensor"
        out[name] = {
            "fn": fn,
            "dim": -1 if dim is None else dim,
            "x": before.contiguous(),
            "y": y.detach() if isinstance(y, torch.Tensor) else y,
            "input unchanged": bool(torch.equal(x, before)),
        }
    return {"violations": watch.violations, "cases": out}


def both(name: str, x: torch.Tensor, dim: int | None = -1) -> list[Case]:
    return [(f"softmax, {name}", "softmax", x, dim), (f"log_softmax, {name}", "log_softmax", x, dim)]


def randn(*shape: int, scale: float = 1.0, offset: float = 0.0, dtype: torch.dtype, seed: int) -> torch.Tensor:
    """Seeded normal samples times scale plus offset, rounded once to dtype."""
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(*shape, generator=gen, dtype=torch.float64) * scale + offset).to(dtype)


F16, BF16, F32 = torch.float16, torch.bfloat16, torch.float32
