"""What the public and hidden probes of fp16-stable-softmax share, imported by both as ``probe_common``."""

from __future__ import annotations

from typing import Any, NamedTuple

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


class Case(NamedTuple):
    """One call of softmax or log_softmax.

    ``x`` is always passed first, by position. ``dim`` None leaves dim out, so its default (-1) applies;
    otherwise it is passed by position, or by keyword (``dim=...``) when ``keyword`` is set, so that a
    parameter renamed (``axis``) or made positional-only fails. A plain 4-tuple is a positional call.
    """

    name: str
    fn: str  # "softmax" | "log_softmax"
    x: torch.Tensor
    dim: int | None
    keyword: bool = False


def _call(solution: Any, c: Case) -> Any:
    fn = getattr(solution, c.fn)
    if c.dim is None:
        return fn(c.x)
    return fn(c.x, dim=c.dim) if c.keyword else fn(c.x, c.dim)


def run_cases(solution: Any, cases: list[Case] | list[tuple[Any, ...]]) -> dict[str, Any]:
    """Call the candidate's functions on each case under the watch: the observation for the check."""
    watch = RuleWatch()
    out: dict[str, Any] = {}
    for raw in cases:
        c = Case(*raw)
        before = c.x.clone()
        try:
            with watch:
                y = _call(solution, c)
        except Exception as exc:  # noqa: BLE001 - reported per case by the check
            y = f"raised {type(exc).__name__}: {str(exc)[:300]}"
        if not isinstance(y, torch.Tensor | str):
            y = f"returned a {type(y).__module__}.{type(y).__qualname__}, not a torch.Tensor"
        out[c.name] = {
            "fn": c.fn,
            "dim": -1 if c.dim is None else c.dim,
            "x": before.contiguous(),
            "y": y.detach() if isinstance(y, torch.Tensor) else y,
            "input unchanged": bool(torch.equal(c.x, before)),
        }
    return {"violations": watch.violations, "cases": out}


def both(name: str, x: torch.Tensor, dim: int | None = -1, keyword: bool = False) -> list[Case]:
    """The same call of softmax and of log_softmax; dim None leaves dim out, keyword passes it as dim=..."""
    return [Case(f"softmax, {name}", "softmax", x, dim, keyword), Case(f"log_softmax, {name}", "log_softmax", x, dim, keyword)]


def randn(*shape: int, scale: float = 1.0, offset: float = 0.0, dtype: torch.dtype, seed: int) -> torch.Tensor:
    """Seeded normal samples times scale plus offset, rounded once to dtype."""
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(*shape, generator=gen, dtype=torch.float64) * scale + offset).to(dtype)


F16, BF16, F32 = torch.float16, torch.bfloat16, torch.float32
