"""What the public and hidden probes of layernorm-cancellation share, imported by both as ``probe_common``."""

from __future__ import annotations

from typing import Any, NamedTuple

import torch
from torch.overrides import TorchFunctionMode

# ---------------------------------------------------------------- the rules, watched

# The statistics you are asked to write, and the layers that compute them.
BANNED_OPS = {"var", "std", "var_mean", "std_mean"}
BANNED_PARTS = ("layer_norm", "batch_norm", "group_norm", "instance_norm", "rms_norm")
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
            self._note(f"{name} (the mean and variance are yours to write)")
        # A float64 tensor made where the mode does not look (torch.from_numpy, from_dlpack, frombuffer) has to
        # reach some torch call to be used, if only a cast: its arguments are watched as well as its results.
        for t in _tensors(args) + _tensors(kwargs):
            if t.dtype in WIDE_DTYPES:
                self._note(f"{name} was given a {str(t.dtype).removeprefix('torch.')} tensor")
                break
        out = func(*args, **kwargs)
        for t in _tensors(out):
            if t.dtype in WIDE_DTYPES:
                self._note(f"{name} made a {str(t.dtype).removeprefix('torch.')} tensor")
                break
        return out


# The default of layer_norm's eps in the statement's signature.
DEFAULT_EPS = 1e-5

# How a case calls layer_norm: every argument by position, or some or all of them by the statement's names
# (x, weight, bias, eps), so that a parameter renamed or made keyword-only fails.
CALLS = ("positional", "eps by keyword", "weight and bias by keyword", "all by keyword")


class Case(NamedTuple):
    """One call of layer_norm. eps None: it is left out, so its default (DEFAULT_EPS) applies.

    ``rows``: for an input too large to send back whole (the observation is size-limited), the rows of
    ``x.reshape(-1, D)`` the observation keeps, with the outputs at those rows; None keeps everything.
    The call itself always gets the whole input.
    """

    name: str
    x: torch.Tensor
    weight: torch.Tensor
    bias: torch.Tensor
    eps: float | None
    call: str = "positional"
    rows: torch.Tensor | None = None


def _call(solution: Any, c: Case) -> Any:
    fn = solution.layer_norm
    given = {} if c.eps is None else {"eps": c.eps}
    if c.call == "positional":
        return fn(c.x, c.weight, c.bias) if c.eps is None else fn(c.x, c.weight, c.bias, c.eps)
    if c.call == "eps by keyword":
        return fn(c.x, c.weight, c.bias, **given)
    if c.call == "weight and bias by keyword":
        return fn(c.x, bias=c.bias, weight=c.weight, **given)
    if c.call == "all by keyword":
        return fn(**given, bias=c.bias, weight=c.weight, x=c.x)
    raise ValueError(f"unknown call style {c.call!r}")


def _kept_rows(outputs: dict[str, torch.Tensor], shape: tuple[int, ...], rows: torch.Tensor) -> dict[str, torch.Tensor]:
    """The outputs at the kept rows, when their shapes are right; otherwise as they are (the check reports the shape)."""
    d = shape[-1]
    if tuple(outputs["y"].shape) != shape or any(tuple(outputs[k].shape) != shape[:-1] for k in ("mean", "rstd")):
        return outputs
    return {"y": outputs["y"].reshape(-1, d)[rows], "mean": outputs["mean"].reshape(-1)[rows], "rstd": outputs["rstd"].reshape(-1)[rows]}


def run_cases(solution: Any, cases: list[Case]) -> dict[str, Any]:
    """Call layer_norm on each case under the watch: the observation for the check."""
    watch = RuleWatch()
    out: dict[str, Any] = {}
    for c in cases:
        name, x, weight, bias, eps = c.name, c.x, c.weight, c.bias, c.eps
        before = (x.clone(), weight.clone(), bias.clone())
        outputs: Any
        try:
            with watch:
                result = _call(solution, c)
            if not (isinstance(result, tuple | list) and len(result) == 3 and all(isinstance(r, torch.Tensor) for r in result)):
                outputs = f"returned {type(result).__name__}, not a tuple of three tensors (y, mean, rstd)"
            else:
                outputs = {"y": result[0].detach(), "mean": result[1].detach(), "rstd": result[2].detach()}
                if c.rows is not None:
                    outputs = _kept_rows(outputs, tuple(x.shape), c.rows)
        except Exception as exc:  # noqa: BLE001 - reported per case by the check
            outputs = f"raised {type(exc).__name__}: {str(exc)[:300]}"
        unchanged = all(torch.equal(a, b) for a, b in zip((x, weight, bias), before, strict=True))
        kept_x = before[0] if c.rows is None else before[0].reshape(-1, x.shape[-1])[c.rows]
        out[name] = {
            "x": kept_x.contiguous(),
            "weight": before[1],
            "bias": before[2],
            "eps": DEFAULT_EPS if eps is None else eps,
            "outputs": outputs,
            "inputs unchanged": unchanged,
        }
    return {"violations": watch.violations, "cases": out}


def randn(*shape: int, scale: float = 1.0, offset: float = 0.0, dtype: torch.dtype, seed: int) -> torch.Tensor:
    """Seeded normal samples times scale plus offset, rounded once to dtype."""
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(*shape, generator=gen, dtype=torch.float64) * scale + offset).to(dtype)


def affine(d: int, dtype: torch.dtype, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """A weight near 1 and a bias near 0, as a trained LayerNorm has."""
    return randn(d, scale=0.2, offset=1.0, dtype=dtype, seed=seed), randn(d, scale=0.1, dtype=dtype, seed=seed + 1)


def case(
    name: str, x: torch.Tensor, seed: int, eps: float | None = DEFAULT_EPS, call: str = "positional", rows: torch.Tensor | None = None
) -> Case:
    """One call of layer_norm, with a trained-looking weight and bias; eps=None leaves eps at its default."""
    weight, bias = affine(x.shape[-1], x.dtype, seed)
    return Case(name, x, weight, bias, eps, call, rows)


F16, BF16, F32 = torch.float16, torch.bfloat16, torch.float32
