"""Hidden probes for custom-autograd-function: they make the score.

Four categories:

- ``forward``: values, shapes and dtypes for every dim and keepdim, and the
  autograd.Function protocol (the output's grad_fn, the input left intact).
- ``gradients``: float64 gradcheck and gradients against the reference's,
  for reductions over leading dims too, and two calls in one graph.
- ``double-backward``: gradgradcheck, Hessian-vector products, a full
  Hessian, and derivatives with respect to the incoming gradient.
- ``extremes``: inputs where exp() overflows or underflows float64 and
  float32, masked (-inf) entries, and fully masked rows.

Second-order probes catch errors and report the exception's class name, so
that a backward which cannot be differentiated twice shows up as a clear
mismatch rather than a crash.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from probekit import probe

NEG_INF = float("-inf")


def randn(*shape: int, seed: int, scale: float = 1.0, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """Seeded normal samples, independent of the global generator."""
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(*shape, generator=gen, dtype=torch.float64) * scale).to(dtype)


def flag(fn: Callable[[], Any]) -> bool | str:
    """gradcheck-style result: True/False, or the class name of an unexpected exception."""
    try:
        return bool(fn())
    except Exception as exc:  # noqa: BLE001 - the failure is the observation
        return type(exc).__name__


def first_and_second(
    solution: Any, x: torch.Tensor, dim: int, keepdim: bool, outer: Callable[[torch.Tensor], torch.Tensor], v: torch.Tensor
) -> dict[str, Any]:
    """y = LSE(x), loss = outer(y): the gradient of the loss and its product with v (an HVP).

    The same keys either way, "error" first, so a failure reads as the error.
    """
    x = x.detach().requires_grad_()
    y = solution.LogSumExp.apply(x, dim, keepdim)
    (grad,) = torch.autograd.grad(outer(y), x, create_graph=True)
    try:
        (hvp,) = torch.autograd.grad((grad * v).sum(), x)
    except Exception as exc:  # noqa: BLE001 - the failure is the observation
        return {"error": type(exc).__name__, "y": y.detach(), "x.grad": grad.detach(), "hvp": None}
    return {"error": None, "y": y.detach(), "x.grad": grad.detach(), "hvp": hvp}


def truth(x: torch.Tensor, dim: int, keepdim: bool, outer: Callable[[torch.Tensor], torch.Tensor], v: torch.Tensor) -> dict[str, Any]:
    """The float64 truth of ``first_and_second``'s values, and the magnitude each element's rounding scales with.

    Computed here from closed forms, independently of the solution: with
    ``p = exp(x - y)`` (0 at masked entries and on fully masked rows) and the
    element-wise loss's derivatives ``g = L'(y)``, ``h = L''(y)``,
    ``k = L'''(y)``: ``grad = g p`` and ``hvp = g p (v - <p, v>) + h p <p, v>``.

    ``scale`` bounds what the rounding of a correct formula can cost: the
    absolute values of the terms that make each element (they may cancel, so
    the result's own size says nothing), times ``1 + |y|``, because ``y``
    itself is rounded to the input's dtype before ``exp(x - y)`` and ``L'(y)``
    read it, an error of a unit in the last place of ``y`` that no formula
    avoids. The check (probes/checks.py, ``near_truth``) reads both from the
    reference's run and allows a fixed number of rounding units of that.
    """
    x64 = x.detach().to(torch.float64)
    v64 = v.detach().to(torch.float64)
    top = x64.amax(dim=dim, keepdim=True)
    shift = torch.where(torch.isfinite(top), top, torch.zeros_like(top))
    log_total = torch.log(torch.exp(x64 - shift).sum(dim=dim, keepdim=True))
    y = log_total + shift  # -inf on a fully masked row
    finite = torch.isfinite(y)
    zero = torch.zeros_like(y)
    y_safe = torch.where(finite, y, zero)
    p = torch.exp(x64 - y_safe)
    y_out = y if keepdim else y.squeeze(dim)
    leaf = y_out.clone().requires_grad_()
    (g,) = torch.autograd.grad(outer(leaf), leaf, create_graph=True)
    # A linear loss has a constant L': its L'' and L''' are 0 (g, then h, carry no graph).
    h = torch.autograd.grad(g.sum(), leaf, create_graph=True)[0] if g.requires_grad else torch.zeros_like(g)
    k = torch.autograd.grad(h.sum(), leaf, allow_unused=True)[0] if h.requires_grad else None
    k = torch.zeros_like(h) if k is None else k
    derivatives = []
    for d in (g, h, k):
        d = d.detach() if keepdim else d.detach().unsqueeze(dim)
        derivatives.append(torch.where(finite, d, zero))
    g, h, k = derivatives
    pv = (p * v64).sum(dim=dim, keepdim=True)
    p_abs_v = (p * v64.abs()).sum(dim=dim, keepdim=True)
    condition = 1.0 + y_safe.abs()
    y_scale = torch.where(finite, shift.abs() + log_total.abs(), zero)
    return {
        "truth": {"y": y_out, "x.grad": g * p, "hvp": g * p * (v64 - pv) + h * p * pv},
        "scale": {
            "y": y_scale if keepdim else y_scale.squeeze(dim),
            "x.grad": (g.abs() + h.abs()) * p * condition,
            "hvp": (g.abs() + h.abs() + k.abs()) * p * (v64.abs() + p_abs_v) * condition,
        },
    }


def checked_against_truth(
    solution: Any, x: torch.Tensor, dim: int, keepdim: bool, outer: Callable[[torch.Tensor], torch.Tensor], v: torch.Tensor
) -> dict[str, Any]:
    """``first_and_second``'s observation with the float64 truth beside it (``near_truth`` reads the reference's)."""
    observed = first_and_second(solution, x, dim, keepdim, outer, v)
    return {**observed, "dtype": str(x.dtype).removeprefix("torch."), **truth(x, dim, keepdim, outer, v)}


def weighted(seed: int) -> Callable[[torch.Tensor], torch.Tensor]:
    """A loss that weights every output element differently (fixed weights per shape)."""
    return lambda y: (y * randn(*y.shape, seed=seed)).sum()


def curved(seed: int) -> Callable[[torch.Tensor], torch.Tensor]:
    """A non-linear loss, so that second derivatives involve the incoming gradient too."""
    return lambda y: (torch.sin(y) * randn(*y.shape, seed=seed)).sum() + 0.5 * (y**2).sum()


def soft(seed: int) -> Callable[[torch.Tensor], torch.Tensor]:
    """A non-linear loss that stays finite at y = -inf (exp(-inf) = 0), for fully masked rows."""
    return lambda y: (torch.exp(0.5 * y) * randn(*y.shape, seed=seed)).sum()


# Rows where a textbook exp() overflows (above ~709.78) or underflows (below ~-745) in float64.
EXTREME_ROWS = [
    [1000.0, 999.0, -1000.0, 998.5],
    [-1000.0, -1000.5, -999.0, -1003.0],
    [710.0, 709.0, 708.0, -710.0],
    [0.5, -800.0, 800.0, 3.0],
    [-2000.0, -2000.0, -2000.0, -2000.0],
]

# Masked entries are -inf; every row keeps at least one finite entry here.
MASKED_ROWS = [
    [0.3, NEG_INF, -1.2, 2.0, NEG_INF],
    [NEG_INF, NEG_INF, 0.7, NEG_INF, NEG_INF],
    [1.5, -0.5, 0.25, -2.0, 1.0],
    [NEG_INF, 400.0, -400.0, NEG_INF, 399.0],
]

# Rows 1 and 3 are fully masked (all -inf): their output is -inf, every derivative there is 0.
FULLY_MASKED_ROWS = [
    [0.3, NEG_INF, -1.2, 2.0],
    [NEG_INF, NEG_INF, NEG_INF, NEG_INF],
    [1.5, -0.5, 0.25, -2.0],
    [NEG_INF, NEG_INF, NEG_INF, NEG_INF],
]


# ---------------------------------------------------------------- forward


@probe(category="forward", weight=2, rtol=1e-10, atol=1e-12, hints=["stable-forward", "protocol"])
def forward_every_dim_and_keepdim(solution: Any) -> dict[str, Any]:
    """A (3, 4, 5) input reduced over each of dims 0, 1, 2, -1, -2, -3, with and without keepdim."""
    x = randn(3, 4, 5, seed=10, scale=3.0)
    out: dict[str, Any] = {}
    for dim in (0, 1, 2, -1, -2, -3):
        for keepdim in (False, True):
            y = solution.LogSumExp.apply(x, dim, keepdim)
            out[f"dim={dim} keepdim={keepdim}"] = {"y": y, "shape": list(y.shape)}
    return out


@probe(category="forward", rtol=1e-10, atol=1e-12, hints=["stable-forward", "protocol"])
def forward_1d(solution: Any) -> dict[str, Any]:
    """A 1-D input: a 0-d output, or shape [1] with keepdim."""
    v = randn(7, seed=11, scale=2.0)
    return {"1-D": solution.LogSumExp.apply(v, 0, False), "1-D keepdim": solution.LogSumExp.apply(v, 0, True)}


@probe(category="forward", rtol=1e-9, atol=1e-12, hints=["protocol", "backward-shape", "any-layout"])
def size_one_dimensions(solution: Any) -> dict[str, Any]:
    """Inputs with size-1 dimensions beside the reduced one, or reduced, and empty batches: shapes, values and gradients.

    Only the reduced dimension may disappear: a bare ``squeeze()`` also drops
    the other size-1 dimensions, and a gradient built for that shape is wrong.
    A batch dimension of size 0 gives an empty output and an empty gradient.
    """
    cases = (
        ((1, 4), 1, False),
        ((2, 1, 3), 2, False),
        ((2, 1, 3), -3, False),
        ((1, 1, 5), -1, False),
        ((4, 1), 1, False),
        ((3, 1), 0, True),
        ((0, 4), 1, False),  # an empty batch: empty output and gradient
        ((2, 0, 3), -1, True),
    )
    out: dict[str, Any] = {}
    for i, (shape, dim, keepdim) in enumerate(cases):
        x = randn(*shape, seed=160 + i).requires_grad_()
        try:
            y = solution.LogSumExp.apply(x, dim, keepdim)
            (grad,) = torch.autograd.grad(weighted(170 + i)(y), x)
        except Exception as exc:  # noqa: BLE001 - the failure is the observation
            out[f"{shape} dim={dim} keepdim={keepdim}"] = {"error": type(exc).__name__, "shape": None, "y": None, "x.grad": None}
            continue
        out[f"{shape} dim={dim} keepdim={keepdim}"] = {"error": None, "shape": list(y.shape), "y": y.detach(), "x.grad": grad}
    return out


@probe(category="forward", hints=["stable-forward", "protocol"])
def forward_float32(solution: Any) -> dict[str, Any]:
    """A float32 (4, 6) input over dims 1 and 0: float32 outputs, float32 tolerances."""
    x = randn(4, 6, seed=12, scale=3.0, dtype=torch.float32)
    return {"dim=1": solution.LogSumExp.apply(x, 1, False), "dim=0 keepdim": solution.LogSumExp.apply(x, 0, True)}


@probe(category="forward", hints=["protocol"])
def forward_protocol(solution: Any) -> dict[str, Any]:
    """Through your Function: the grad_fn, requires_grad, and the input left unchanged."""
    x = randn(3, 5, seed=13).requires_grad_()
    before = x.detach().clone()
    y = solution.LogSumExp.apply(x, 0, False)
    plain = randn(3, 5, seed=14)
    y_plain = solution.LogSumExp.apply(plain, 1, True)
    with torch.no_grad():
        y_nograd = solution.LogSumExp.apply(x, 1, False)
    # Fully masked rows: the input must not be written, not even undone before returning
    # (an in-place write moves the version counter, which breaks every other node that saved x).
    masked = torch.tensor(FULLY_MASKED_ROWS, dtype=torch.float64).requires_grad_()
    version = masked._version
    solution.LogSumExp.apply(masked, 1, False)
    return {
        "grad_fn": type(y.grad_fn).__name__,
        "requires_grad": y.requires_grad,
        "input unchanged": bool(torch.equal(x.detach(), before)),
        "no input requires grad: requires_grad": y_plain.requires_grad,
        "under no_grad: requires_grad": y_nograd.requires_grad,
        "input with fully masked rows unchanged": bool(torch.equal(masked.detach(), torch.tensor(FULLY_MASKED_ROWS, dtype=torch.float64))),
        "input with fully masked rows never written in place": masked._version == version,
    }


def shares_memory(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether the storages behind a and b overlap anywhere (a view of x, or x itself, shares x's storage)."""
    sa, sb = a.untyped_storage(), b.untyped_storage()
    if sa.nbytes() == 0 or sb.nbytes() == 0:
        return False
    return sa.data_ptr() < sb.data_ptr() + sb.nbytes() and sb.data_ptr() < sa.data_ptr() + sa.nbytes()


def size_one_inputs(shape: tuple[int, ...], dim: int, dtype: torch.dtype, seed: int) -> dict[str, Callable[[], torch.Tensor]]:
    """Ways a caller hands x over: plain, a leaf or a non-leaf that requires grad, and a slice of a larger tensor.

    Each x holds a lone -inf (a fully masked single-entry row) when it has more than one entry.
    """

    def values() -> torch.Tensor:
        x = randn(*shape, seed=seed, dtype=dtype)
        if x.numel() > 1:
            x.view(-1)[0] = NEG_INF
        return x

    def sliced() -> torch.Tensor:
        wide = list(shape)
        wide[dim] += 2
        base = randn(*wide, seed=seed + 1, dtype=dtype).requires_grad_()
        return base.narrow(dim, 1, shape[dim])  # a view into base's storage, at an offset, non-contiguous where dim is not the first

    return {
        "plain": values,
        "leaf requiring grad": lambda: values().requires_grad_(),
        "non-leaf": lambda: values().requires_grad_() * 1.0,
        "sliced": sliced,
    }


@probe(category="forward", hints=["new-output", "protocol"])
def outputs_are_new_tensors(solution: Any) -> dict[str, Any]:
    """A reduced dimension of size 1 at every position: out shares no memory with x, and x changed later leaves out alone.

    log-sum-exp of a single entry is that entry, but ``out`` must still be a
    new tensor, as ``torch.logsumexp``'s is: returning ``x``, or a view of it
    such as ``x.squeeze(dim)``, gives values and derivatives that are right
    until the caller changes ``x`` in place, and then the output it holds
    changes with it. Every position of the size-1 dim in 1-D to 3-D inputs,
    with and without keepdim, float32 and float64, each input plain, a leaf or
    non-leaf requiring grad, called under no_grad, or a slice of a larger
    tensor; a second call's output must not share memory with the first. Two
    (3, 4) reductions over a dim of size 4 come last.
    """
    shapes = ((1,), (1, 4), (4, 1), (1, 3, 4), (3, 1, 4), (3, 4, 1))
    cases = []
    for shape in shapes:
        for dtype in (torch.float64, torch.float32):
            for keepdim in (False, True):
                position = shape.index(1)
                dim = position if (dtype == torch.float64) != keepdim else position - len(shape)
                cases.append((shape, dim, dtype, keepdim))
    cases += [((3, 4), 1, torch.float64, False), ((3, 4), -1, torch.float32, True)]
    out: dict[str, Any] = {}
    for i, (shape, dim, dtype, keepdim) in enumerate(cases):
        for mode, make in size_one_inputs(shape, dim, dtype, seed=700 + 2 * i).items():
            for no_grad in (False, True):
                name = f"{shape} dim={dim} keepdim={keepdim} {str(dtype).removeprefix('torch.')} {mode}{' under no_grad' if no_grad else ''}"
                x = make()
                try:
                    with torch.set_grad_enabled(not no_grad):
                        y = solution.LogSumExp.apply(x, dim, keepdim)
                        again = solution.LogSumExp.apply(x, dim, keepdim)
                    held = y.detach().clone()
                    with torch.no_grad():
                        x.fill_(12.5)  # the caller reuses its buffer after the call
                    out[name] = {
                        "error": None,
                        "shares memory with x": shares_memory(y, x),
                        "shares memory with a second call's output": shares_memory(y, again),
                        # NaN equal to NaN: a wrong value is other probes' business, only a change counts here.
                        "unchanged after x is changed in place": bool(torch.allclose(y.detach(), held, rtol=0.0, atol=0.0, equal_nan=True)),
                    }
                except Exception as exc:  # noqa: BLE001 - the failure is the observation
                    out[name] = {
                        "error": type(exc).__name__,
                        "shares memory with x": None,
                        "shares memory with a second call's output": None,
                        "unchanged after x is changed in place": None,
                    }
    return out


# ---------------------------------------------------------------- gradients


@probe(category="gradients", weight=2, hints=["backward-shape", "protocol"])
def gradcheck_dims(solution: Any) -> dict[str, Any]:
    """float64 gradcheck over several shapes, dims and keepdim values."""
    cases = {
        "(3, 4, 5) dim=0": ((3, 4, 5), 0, False),
        "(3, 4, 5) dim=1 keepdim": ((3, 4, 5), 1, True),
        "(3, 4, 5) dim=-1": ((3, 4, 5), -1, False),
        "(4, 4) dim=0": ((4, 4), 0, False),
        "(6,) dim=0": ((6,), 0, False),
    }
    out: dict[str, Any] = {}
    for i, (name, (shape, dim, keepdim)) in enumerate(cases.items()):
        x = randn(*shape, seed=20 + i).requires_grad_()
        out[name] = flag(
            lambda x=x, dim=dim, keepdim=keepdim: torch.autograd.gradcheck(
                lambda t: solution.LogSumExp.apply(t, dim, keepdim), (x,), raise_exception=False
            )
        )
    return out


@probe(category="gradients", weight=2, rtol=1e-9, atol=1e-12, hints=["backward-shape"])
def gradients_square_leading_dim(solution: Any) -> dict[str, Any]:
    """Square (5, 5) and (4, 4, 4) inputs reduced over a leading dim: gradients of a weighted sum."""
    out: dict[str, Any] = {}
    for name, shape, dim in (("(5, 5) dim=0", (5, 5), 0), ("(4, 4, 4) dim=1", (4, 4, 4), 1), ("(4, 4, 4) dim=-3", (4, 4, 4), -3)):
        x = randn(*shape, seed=30 + len(out)).requires_grad_()
        y = solution.LogSumExp.apply(x, dim, False)
        (grad,) = torch.autograd.grad(weighted(40 + len(out))(y), x)
        out[name] = grad
    return out


@probe(category="gradients", rtol=1e-9, atol=1e-12, hints=["backward-shape", "protocol"])
def gradients_two_calls_one_graph(solution: Any) -> dict[str, Any]:
    """One (5, 5) input reduced twice in one graph, over dim=1 and over dim=0 with keepdim: grads add up.

    Then an input with fully masked rows, reduced twice and also used by
    another op that saves it: a forward that writes x in place, even to undo
    it, breaks the other nodes' backward.
    """
    x = randn(5, 5, seed=50).requires_grad_()
    a = solution.LogSumExp.apply(x, 1, False)  # (5,)
    b = solution.LogSumExp.apply(x, 0, True)  # (1, 5)
    loss = (a * randn(5, seed=51)).sum() + (b * randn(1, 5, seed=52)).sum()
    (grad,) = torch.autograd.grad(loss, x)
    out: dict[str, Any] = {"x.grad": grad}
    # An input with fully masked rows, also saved by another op (clamp) before the calls:
    # every node that saved x must still find it as it was.
    masked = torch.tensor(FULLY_MASKED_ROWS, dtype=torch.float64).requires_grad_()
    try:
        clamped = masked.clamp(min=-5.0)
        rows = solution.LogSumExp.apply(masked, 1, False)  # (4,), two of them -inf
        cols = solution.LogSumExp.apply(masked, 0, True)  # (1, 4)
        loss = (clamped * randn(4, 4, seed=53)).sum() + soft(54)(rows) + (cols * randn(1, 4, seed=55)).sum()
        (grad,) = torch.autograd.grad(loss, masked)
    except Exception as exc:  # noqa: BLE001 - the failure is the observation
        out["fully masked rows, x saved by other nodes too"] = {"error": type(exc).__name__, "x.grad": None}
    else:
        out["fully masked rows, x saved by other nodes too"] = {"error": None, "x.grad": grad}
    return out


@probe(category="gradients", rtol=1e-9, atol=1e-12, hints=["backward-shape"])
def gradients_inside_a_model(solution: Any) -> dict[str, Any]:
    """LSE between other ops (a non-leaf input, a keepdim output broadcast back): parameter gradients."""
    w = randn(5, 7, seed=60, scale=0.5).requires_grad_()
    b = randn(7, seed=61).requires_grad_()
    inputs = randn(3, 5, seed=62)
    logits = torch.tanh(inputs @ w + b) * 4.0
    log_probs = logits - solution.LogSumExp.apply(logits, -1, True)
    loss = -(log_probs * torch.softmax(randn(3, 7, seed=63), -1)).sum()
    gw, gb = torch.autograd.grad(loss, (w, b))
    return {"loss": loss.detach(), "w.grad": gw, "b.grad": gb}


@probe(category="gradients", rtol=1e-9, atol=1e-12, hints=["any-layout"])
def gradients_non_contiguous(solution: Any) -> dict[str, Any]:
    """Non-contiguous tensors: a permuted or sliced x, and an incoming gradient that arrives transposed.

    Values and gradients of weighted losses. A ``.view`` of x or of
    ``grad_out`` raises on such strides; ``reshape`` or broadcasting does not.
    """
    out: dict[str, Any] = {}

    def record(name: str, run: Callable[[], tuple[torch.Tensor, torch.Tensor]]) -> None:
        try:
            y, grad = run()
        except Exception as exc:  # noqa: BLE001 - the failure is the observation
            out[name] = {"error": type(exc).__name__, "y": None, "x.grad": None}
        else:
            out[name] = {"error": None, "y": y.detach(), "x.grad": grad}

    def permuted() -> tuple[torch.Tensor, torch.Tensor]:
        base = randn(2, 3, 4, seed=240).requires_grad_()
        y = solution.LogSumExp.apply(base.transpose(0, 1), -1, False)  # x is (3, 2, 4), not contiguous
        return y, torch.autograd.grad(weighted(241)(y), base)[0]

    def sliced() -> tuple[torch.Tensor, torch.Tensor]:
        base = randn(4, 10, seed=242).requires_grad_()
        y = solution.LogSumExp.apply(base[:, ::2], 1, True)
        return y, torch.autograd.grad(weighted(243)(y), base)[0]

    def transposed_use() -> tuple[torch.Tensor, torch.Tensor]:
        x = randn(2, 3, 4, seed=244).requires_grad_()
        y = solution.LogSumExp.apply(x, 1, False)  # (2, 4), used as its transpose
        return y, torch.autograd.grad((y.t() * randn(4, 2, seed=245)).sum(), x)[0]

    def transposed_grad_outputs() -> tuple[torch.Tensor, torch.Tensor]:
        x = randn(3, 4, 5, seed=246).requires_grad_()
        y = solution.LogSumExp.apply(x, -1, False)  # (3, 4)
        return y, torch.autograd.grad(y, x, grad_outputs=randn(4, 3, seed=247).t())[0]

    record("permuted x (3, 2, 4) dim=-1", permuted)
    record("sliced x[:, ::2] dim=1 keepdim", sliced)
    record("(2, 3, 4) dim=1, output used as y.t()", transposed_use)
    record("(3, 4, 5) dim=-1, grad_outputs transposed", transposed_grad_outputs)
    return out


# ---------------------------------------------------------------- double-backward


@probe(category="double-backward", weight=2, hints=["double-backward", "saved-intermediates"])
def gradgradcheck_dims(solution: Any) -> dict[str, Any]:
    """float64 gradgradcheck over several shapes, dims and keepdim values."""
    cases = {
        "(3, 4) dim=0": ((3, 4), 0, False),
        "(2, 3, 4) dim=-2 keepdim": ((2, 3, 4), -2, True),
        "(5,) dim=0": ((5,), 0, False),
    }
    out: dict[str, Any] = {}
    for i, (name, (shape, dim, keepdim)) in enumerate(cases.items()):
        x = randn(*shape, seed=70 + i).requires_grad_()
        out[name] = flag(
            lambda x=x, dim=dim, keepdim=keepdim: torch.autograd.gradgradcheck(
                lambda t: solution.LogSumExp.apply(t, dim, keepdim), (x,), raise_exception=False
            )
        )
    return out


@probe(category="double-backward", weight=2, check="near_truth", hints=["double-backward", "saved-intermediates"])
def hessian_vector_products(solution: Any) -> dict[str, Any]:
    """Hessian-vector products of a non-linear loss of LSE, over dim=1 and over dim=0 with keepdim."""
    return {
        "(4, 6) dim=1": checked_against_truth(solution, randn(4, 6, seed=80), 1, False, curved(81), randn(4, 6, seed=82)),
        "(5, 3) dim=0 keepdim": checked_against_truth(solution, randn(5, 3, seed=83), 0, True, curved(84), randn(5, 3, seed=85)),
    }


@probe(category="double-backward", rtol=1e-9, atol=1e-12, hints=["double-backward", "saved-intermediates"])
def full_hessian(solution: Any) -> dict[str, Any]:
    """The full Hessian of LSE of a 6-vector (torch.autograd.functional.hessian)."""
    x = randn(6, seed=90, scale=2.0)
    try:
        hess = torch.autograd.functional.hessian(lambda t: solution.LogSumExp.apply(t, 0, False), x)
    except Exception as exc:  # noqa: BLE001 - the failure is the observation
        return {"error": type(exc).__name__, "hessian": None}
    return {"error": None, "hessian": hess}


@probe(category="double-backward", rtol=1e-9, atol=1e-12, hints=["double-backward", "saved-intermediates"])
def derivative_wrt_incoming_gradient(solution: Any) -> dict[str, Any]:
    """Differentiate grad_x = vjp(grad_out) with respect to both grad_out and x."""
    x = randn(3, 5, seed=100).requires_grad_()
    u = randn(1, 5, seed=101).requires_grad_()
    y = solution.LogSumExp.apply(x, 0, True)
    (grad,) = torch.autograd.grad(y, x, grad_outputs=u, create_graph=True)
    try:
        du, dx = torch.autograd.grad((grad * randn(3, 5, seed=102)).sum(), (u, x))
    except Exception as exc:  # noqa: BLE001 - the failure is the observation
        return {"error": type(exc).__name__, "d/d grad_out": None, "d/dx": None}
    return {"error": None, "d/d grad_out": du, "d/dx": dx}


# ---------------------------------------------------------------- extremes


@probe(category="extremes", weight=2, rtol=1e-9, atol=1e-12, hints=["stable-forward", "stable-backward"])
def extremes_values_and_gradients(solution: Any) -> dict[str, Any]:
    """float64 rows in the thousands, where exp() overflows or underflows: values and gradients, dims 1 and 0."""
    x = torch.tensor(EXTREME_ROWS, dtype=torch.float64)
    out: dict[str, Any] = {}
    for dim in (1, 0):
        xg = x.clone().requires_grad_()
        y = solution.LogSumExp.apply(xg, dim, False)
        (grad,) = torch.autograd.grad(weighted(110 + dim)(y), xg)
        out[f"dim={dim}"] = {"y": y.detach(), "x.grad": grad}
    return out


@probe(category="extremes", hints=["stable-forward", "stable-backward"])
def extremes_float32(solution: Any) -> dict[str, Any]:
    """float32 rows around +-100, where exp() overflows float32: values and gradients stay in float32."""
    x = torch.tensor([[100.0, 99.0, -100.0], [-100.0, -105.0, -110.0], [89.0, 88.0, 0.0]], dtype=torch.float32)
    xg = x.clone().requires_grad_()
    y = solution.LogSumExp.apply(xg, 1, False)
    (grad,) = torch.autograd.grad(y.sum(), xg)
    return {"y": y.detach(), "x.grad": grad}


@probe(category="extremes", check="near_truth", hints=["stable-backward", "double-backward"])
def extremes_double_backward(solution: Any) -> dict[str, Any]:
    """Hessian-vector products on the float64 rows in the thousands."""
    x = torch.tensor(EXTREME_ROWS, dtype=torch.float64)
    return checked_against_truth(solution, x, 1, False, curved(120), randn(5, 4, seed=121))


@probe(category="extremes", check="near_truth", hints=["stable-backward", "double-backward"])
def float32_double_backward_large(solution: Any) -> dict[str, Any]:
    """float32 values, gradients and Hessian-vector products where outputs reach the hundreds.

    The loss's quadratic term makes the incoming gradient as large as the
    output (up to about 230), and the Hessian-vector product subtracts terms
    of that size: each element is judged against the float64 truth within a
    few float32 rounding units of those terms, so any correct float32 formula
    passes, whichever way it rounds.
    """
    rows = [[230.0, 229.5, 228.0, -5.0], [-180.0, -181.0, -179.5, -200.0], [95.0, 96.0, 20.0, 94.5], [150.0, -150.0, 149.0, 0.0]]
    out: dict[str, Any] = {}
    for dim, keepdim in ((1, False), (0, True)):
        x = torch.tensor(rows, dtype=torch.float32)
        x = x if dim == 1 else x.T.contiguous()
        v = randn(*x.shape, seed=125 + dim, dtype=torch.float32)
        out[f"dim={dim} keepdim={keepdim}"] = checked_against_truth(solution, x, dim, keepdim, curved(123 + dim), v)
    return out


@probe(category="extremes", weight=2, rtol=1e-9, atol=1e-12, hints=["masked-rows", "stable-backward"])
def masked_values_and_gradients(solution: Any) -> dict[str, Any]:
    """-inf (masked) entries, and fully masked rows: values (-inf there) and gradients (0 there)."""
    out: dict[str, Any] = {}
    cases = (
        ("partly masked, dim=1", MASKED_ROWS, 1),
        ("fully masked rows, dim=1", FULLY_MASKED_ROWS, 1),
        ("fully masked columns, dim=0", FULLY_MASKED_ROWS, 0),
    )
    for name, rows, dim in cases:
        x = torch.tensor(rows, dtype=torch.float64)
        xg = x.T.contiguous().requires_grad_() if dim == 0 else x.clone().requires_grad_()
        y = solution.LogSumExp.apply(xg, dim, False)
        (grad,) = torch.autograd.grad(weighted(130 + len(out))(y), xg)
        out[name] = {"y": y.detach(), "x.grad": grad}
    return out


# Masked entries beside data that lie entirely far below zero: the shift is the largest *finite* entry,
# not 0 (which a max taken with -inf replaced by 0 gives), or every exp() underflows.
MASKED_FAR_NEGATIVE_ROWS = [
    [-20000.0, -20001.0, NEG_INF],
    [NEG_INF, -1e31, -1e31],
    [NEG_INF, NEG_INF, -1e9],
    [-800.0, NEG_INF, -801.5],
]
MASKED_FAR_NEGATIVE_ROWS_F32 = [
    [-230.0, -231.0, NEG_INF],
    [NEG_INF, -1e30, -1e30],
    [NEG_INF, NEG_INF, -3000.0],
    [-120.0, NEG_INF, -121.5],
]


@probe(category="extremes", check="near_truth", hints=["masked-rows", "stable-forward", "double-backward"])
def masked_double_backward(solution: Any) -> dict[str, Any]:
    """Hessian-vector products with -inf (masked) entries in every row but none fully masked.

    Also rows whose finite entries all lie far below zero (float64 and
    float32), where exp() of the data underflows unless the row is shifted by
    its largest finite entry.
    """
    far64 = torch.tensor(MASKED_FAR_NEGATIVE_ROWS, dtype=torch.float64)
    far32 = torch.tensor(MASKED_FAR_NEGATIVE_ROWS_F32, dtype=torch.float32)
    return {
        "dim=1 curved": checked_against_truth(solution, torch.tensor(MASKED_ROWS, dtype=torch.float64), 1, False, curved(140), randn(4, 5, seed=141)),
        "far below zero dim=1 curved": checked_against_truth(solution, far64, 1, False, curved(142), randn(4, 3, seed=143)),
        "far below zero dim=0 keepdim linear": checked_against_truth(solution, far64.T.contiguous(), 0, True, weighted(144), randn(3, 4, seed=145)),
        "float32 far below zero dim=1 linear": checked_against_truth(
            solution, far32, 1, False, weighted(146), randn(4, 3, seed=147, dtype=torch.float32)
        ),
    }


@probe(category="extremes", weight=2, check="near_truth", hints=["masked-rows", "double-where"])
def fully_masked_double_backward(solution: Any) -> dict[str, Any]:
    """Hessian-vector products with fully masked rows: 0 there, never NaN, and the other rows unaffected."""
    x = torch.tensor(FULLY_MASKED_ROWS, dtype=torch.float64)
    return checked_against_truth(solution, x, 1, True, soft(150), randn(4, 4, seed=151))


def linear(weight: float) -> Callable[[torch.Tensor], torch.Tensor]:
    """A linear loss with one weight, defined for a 0-d output too: its gradient stays finite at y = -inf."""
    return lambda y: (y * weight).sum()


def soft_scalar(weight: float) -> Callable[[torch.Tensor], torch.Tensor]:
    """``soft`` with one weight, defined for a 0-d output too."""
    return lambda y: (torch.exp(0.5 * y) * weight).sum()


@probe(category="double-backward", check="near_truth", hints=["double-backward", "masked-rows"])
def size_one_reduced_dim_second_order(solution: Any) -> dict[str, Any]:
    """A reduced dimension of size 1, finite or a lone -inf: values, gradients and Hessian-vector products.

    A row of one entry is its own log-sum-exp, with derivative 1, or 0 when
    that entry is -inf (a fully masked row). The gradient must still be a
    function of x that autograd can differentiate again (the second derivative
    through a linear loss is 0, not an exception).
    """
    column = torch.tensor([[NEG_INF], [0.5], [2.0], [-3000.0], [NEG_INF]], dtype=torch.float64)
    lone = torch.tensor([NEG_INF], dtype=torch.float64)
    out: dict[str, Any] = {}
    for keepdim in (False, True):
        k = int(keepdim)
        out[f"(5, 1) dim=1 keepdim={keepdim} linear"] = checked_against_truth(
            solution, column, 1, keepdim, weighted(180 + k), randn(5, 1, seed=182 + k)
        )
        out[f"(5, 1) dim=-1 keepdim={keepdim} soft"] = checked_against_truth(solution, column, -1, keepdim, soft(184 + k), randn(5, 1, seed=186 + k))
        out[f"(3, 1) dim=1 keepdim={keepdim} curved"] = checked_against_truth(
            solution, randn(3, 1, seed=188 + k), 1, keepdim, curved(190 + k), randn(3, 1, seed=192 + k)
        )
        out[f"[-inf] dim=0 keepdim={keepdim} linear"] = checked_against_truth(solution, lone, 0, keepdim, linear(1.5), randn(1, seed=194 + k))
        out[f"[-inf] dim=0 keepdim={keepdim} soft"] = checked_against_truth(solution, lone, 0, keepdim, soft_scalar(0.75), randn(1, seed=196 + k))
    out["(1, 4) dim=0 curved"] = checked_against_truth(solution, randn(1, 4, seed=198), 0, False, curved(199), randn(1, 4, seed=200))
    return out


# float32 rows beyond float64's exp range (~709.78), up to near float32's own range (~3.4e38).
FLOAT32_HUGE_ROWS = [
    [1000.0, 999.0, -1000.0, 998.5],
    [-1000.0, -1001.0, -1002.0, -1000.5],
    [3000.0, 2999.5, -3000.0, 2998.0],
    [-3000.0, -3001.0, -2999.5, -3004.0],
]
FLOAT32_NEAR_RANGE_ROWS = [
    [1e30, 1e30, -1e30, 9e29],
    [-1e30, -1e30, -2e30, -1e30],
    [3e37, 2e37, 1e37, -3e37],
]


@probe(category="extremes", check="near_truth", hints=["stable-forward", "stable-backward"])
def float32_thousands_and_beyond(solution: Any) -> dict[str, Any]:
    """float32 rows at +-1000, +-3000, near 1e30 and at float32's lowest value: values, gradients and HVPs.

    These entries are beyond what exp() holds even in float64, so computing
    in float64 does not replace the shift by the row maximum, in forward or in
    backward.
    """
    x = torch.tensor(FLOAT32_HUGE_ROWS, dtype=torch.float32)
    huge = torch.tensor(FLOAT32_NEAR_RANGE_ROWS, dtype=torch.float32)
    lowest = torch.tensor(lowest_rows(torch.float32), dtype=torch.float32)
    return {
        "thousands dim=1": checked_against_truth(solution, x, 1, False, curved(210), randn(4, 4, seed=211, dtype=torch.float32)),
        "thousands dim=0 keepdim": checked_against_truth(
            solution, x.T.contiguous(), 0, True, curved(212), randn(4, 4, seed=213, dtype=torch.float32)
        ),
        "near 1e30 dim=1": checked_against_truth(solution, huge, 1, False, weighted(214), randn(3, 4, seed=215, dtype=torch.float32)),
        "the dtype's lowest value dim=1 linear": checked_against_truth(
            solution, lowest, 1, False, weighted(216), randn(3, 3, seed=217, dtype=torch.float32)
        ),
    }


@probe(category="extremes", check="near_truth", hints=["masked-rows", "double-where"])
def float32_fully_masked(solution: Any) -> dict[str, Any]:
    """float32 rows with masked entries and fully masked rows: -inf values, 0 derivatives there, no NaN."""
    x = torch.tensor(FULLY_MASKED_ROWS, dtype=torch.float32)
    return {
        "dim=1": checked_against_truth(solution, x, 1, False, soft(220), randn(4, 4, seed=221, dtype=torch.float32)),
        "dim=0 keepdim": checked_against_truth(solution, x.T.contiguous(), 0, True, weighted(222), randn(4, 4, seed=223, dtype=torch.float32)),
        "partly masked dim=1": checked_against_truth(
            solution, torch.tensor(MASKED_ROWS, dtype=torch.float32), 1, False, curved(224), randn(4, 5, seed=225, dtype=torch.float32)
        ),
    }


def lowest_rows(dtype: torch.dtype) -> list[list[float]]:
    """Rows of data at the dtype's lowest finite value (finfo.min): finite outputs, never -inf.

    A linear loss only: at this magnitude the output rounds to the lowest
    value itself, and a non-linear loss's derivative would overflow.
    """
    low = torch.finfo(dtype).min
    return [[low, low, low], [low, 0.5 * low, low], [low, low, -1.0]]


# Finite float64 rows far below zero, no -inf in them: their output is finite, never -inf.
FAR_NEGATIVE_ROWS = [
    [-20000.0, -20001.0, -20000.5, -20003.0],
    [-1e5, -1e5 - 1.0, -1e5 + 0.5, -1e5 - 30.0],
    [-1e31, -1e31, -2e31, -1e31],
    [-1e9, -1e9 - 2.0, -1e9 + 1.0, -1e9],
    [0.5, -1.0, 2.0, -20000.0],
]


@probe(category="extremes", check="near_truth", hints=["stable-forward", "masked-rows"])
def far_negative_rows(solution: Any) -> dict[str, Any]:
    """float64 rows entirely far below zero (-2e4, -1e5, -1e9, -1e31, the dtype's lowest value): finite values, gradients and HVPs.

    Such a row is not masked: only -inf entries are. A shift clamped to a
    finite "mask value" treats it as masked and returns -inf and 0, even when
    that value is the dtype's own lowest finite number.
    """
    x = torch.tensor(FAR_NEGATIVE_ROWS, dtype=torch.float64)
    lowest = torch.tensor(lowest_rows(torch.float64), dtype=torch.float64)
    return {
        "dim=1 curved": checked_against_truth(solution, x, 1, False, curved(230), randn(5, 4, seed=231)),
        "dim=1 linear": checked_against_truth(solution, x, 1, False, weighted(232), randn(5, 4, seed=233)),
        "dim=0 keepdim linear": checked_against_truth(solution, x.T.contiguous(), 0, True, weighted(234), randn(4, 5, seed=235)),
        "the dtype's lowest value dim=1 linear": checked_against_truth(solution, lowest, 1, False, weighted(236), randn(3, 3, seed=237)),
    }
