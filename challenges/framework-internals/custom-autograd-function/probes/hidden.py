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


@probe(category="forward", rtol=1e-9, atol=1e-12, hints=["protocol", "backward-shape"])
def size_one_dimensions(solution: Any) -> dict[str, Any]:
    """Inputs with size-1 dimensions beside the reduced one, or reduced: shapes, values and gradients.

    Only the reduced dimension may disappear: a bare ``squeeze()`` also drops
    the other size-1 dimensions, and a gradient built for that shape is wrong.
    """
    cases = (((1, 4), 1, False), ((2, 1, 3), 2, False), ((2, 1, 3), -3, False), ((1, 1, 5), -1, False), ((4, 1), 1, False), ((3, 1), 0, True))
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
    return {
        "grad_fn": type(y.grad_fn).__name__,
        "requires_grad": y.requires_grad,
        "input unchanged": bool(torch.equal(x.detach(), before)),
        "no input requires grad: requires_grad": y_plain.requires_grad,
        "under no_grad: requires_grad": y_nograd.requires_grad,
    }


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
    """One (5, 5) input reduced twice in one graph, over dim=1 and over dim=0 with keepdim: grads add up."""
    x = randn(5, 5, seed=50).requires_grad_()
    a = solution.LogSumExp.apply(x, 1, False)  # (5,)
    b = solution.LogSumExp.apply(x, 0, True)  # (1, 5)
    loss = (a * randn(5, seed=51)).sum() + (b * randn(1, 5, seed=52)).sum()
    (grad,) = torch.autograd.grad(loss, x)
    return {"x.grad": grad}


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


@probe(category="double-backward", weight=2, rtol=1e-9, atol=1e-12, hints=["double-backward", "saved-intermediates"])
def hessian_vector_products(solution: Any) -> dict[str, Any]:
    """Hessian-vector products of a non-linear loss of LSE, over dim=1 and over dim=0 with keepdim."""
    return {
        "(4, 6) dim=1": first_and_second(solution, randn(4, 6, seed=80), 1, False, curved(81), randn(4, 6, seed=82)),
        "(5, 3) dim=0 keepdim": first_and_second(solution, randn(5, 3, seed=83), 0, True, curved(84), randn(5, 3, seed=85)),
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


@probe(category="extremes", rtol=1e-9, atol=1e-12, hints=["stable-backward", "double-backward"])
def extremes_double_backward(solution: Any) -> dict[str, Any]:
    """Hessian-vector products on the float64 rows in the thousands."""
    x = torch.tensor(EXTREME_ROWS, dtype=torch.float64)
    return first_and_second(solution, x, 1, False, curved(120), randn(5, 4, seed=121))


@probe(category="extremes", weight=2, rtol=1e-9, atol=1e-12, hints=["masked-rows", "stable-backward"])
def masked_values_and_gradients(solution: Any) -> dict[str, Any]:
    """-inf (masked) entries, and fully masked rows: values (-inf there) and gradients (0 there)."""
    out: dict[str, Any] = {}
    for name, rows, dim in (("partly masked, dim=1", MASKED_ROWS, 1), ("fully masked rows, dim=1", FULLY_MASKED_ROWS, 1), ("fully masked columns, dim=0", FULLY_MASKED_ROWS, 0)):
        x = torch.tensor(rows, dtype=torch.float64)
        xg = x.T.contiguous().requires_grad_() if dim == 0 else x.clone().requires_grad_()
        y = solution.LogSumExp.apply(xg, dim, False)
        (grad,) = torch.autograd.grad(weighted(130 + len(out))(y), xg)
        out[name] = {"y": y.detach(), "x.grad": grad}
    return out


@probe(category="extremes", rtol=1e-9, atol=1e-12, hints=["masked-rows", "double-backward"])
def masked_double_backward(solution: Any) -> dict[str, Any]:
    """Hessian-vector products with -inf (masked) entries in every row but none fully masked."""
    x = torch.tensor(MASKED_ROWS, dtype=torch.float64)
    return first_and_second(solution, x, 1, False, curved(140), randn(4, 5, seed=141))


@probe(category="extremes", weight=2, rtol=1e-9, atol=1e-12, hints=["masked-rows", "double-where"])
def fully_masked_double_backward(solution: Any) -> dict[str, Any]:
    """Hessian-vector products with fully masked rows: 0 there, never NaN, and the other rows unaffected."""
    x = torch.tensor(FULLY_MASKED_ROWS, dtype=torch.float64)
    return first_and_second(solution, x, 1, True, soft(150), randn(4, 4, seed=151))
