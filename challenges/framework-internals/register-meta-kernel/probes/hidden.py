"""Hidden probes for register-meta-kernel: they make the score.

Four categories: ``eager`` (the given kernel, called through the
dispatcher), ``fake`` (FakeTensorMode, the meta device and opcheck's fake
tests), ``autograd`` (float64 gradcheck and gradients against the
reference's; ``repeated_calls``: many calls in one process, for state kept
from one call to the next) and ``compile`` (``torch.compile(fullgraph=True,
backend="aot_eager")`` and opcheck's AOT test).

Probes whose failure is expected from an unfinished solution (compile
without a fake kernel, opcheck) catch the exception and return its class
name, so the candidate sees a mismatch rather than a crash.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from probekit import probe
from torch._subclasses.fake_tensor import FakeTensorMode

EPS = 1e-5
HALF_DTYPES = (torch.bfloat16, torch.float16)
ALL_DTYPES = (torch.float32, torch.float64, torch.bfloat16, torch.float16)


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = EPS) -> tuple[torch.Tensor, torch.Tensor]:
    """Call the operator through the dispatcher."""
    return torch.ops.interview.rms_norm(x, weight, eps)


def randn(*shape: int, dtype: torch.dtype = torch.float32, seed: int = 0) -> torch.Tensor:
    """Seeded normal samples, independent of the global generator and of dtype."""
    gen = torch.Generator().manual_seed(seed)
    # The shape as one tuple, so that () (the rstd of a 1-D input) works too.
    return torch.randn(shape, generator=gen, dtype=torch.float64).to(dtype)


def describe(t: torch.Tensor) -> dict[str, Any]:
    """A fake or meta tensor's metadata as plain data (such tensors have no values)."""
    return {
        "shape": list(t.shape),
        "dtype": str(t.dtype),
        "stride": list(t.stride()),
        "device": t.device.type,
    }


def fake_call(x: torch.Tensor, weight: torch.Tensor) -> dict[str, Any]:
    """Run the op on fake tensors (already made in the active mode) and describe both outputs."""
    y, rstd = rms_norm(x, weight)
    return {"y": describe(y), "rstd": describe(rstd)}


def error_name(fn: Callable[[], Any]) -> str:
    """Run fn; "ok" if it returned, else the class name of what it raised."""
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the failure is the observation
        return type(exc).__name__
    return "ok"


def opcheck_table(
    samples: dict[str, tuple[torch.Tensor, torch.Tensor]], tests: tuple[str, ...]
) -> dict[str, dict[str, str]]:
    """opcheck every sample with every test, one at a time, so one failure hides no other."""
    op = torch.ops.interview.rms_norm.default
    return {
        name: {
            test: error_name(lambda args=args, test=test: torch.library.opcheck(op, (*args, EPS), test_utils=test))
            for test in tests
        }
        for name, args in samples.items()
    }


def backward_values(
    fn: Callable[..., tuple[torch.Tensor, torch.Tensor]], x: torch.Tensor, weight: torch.Tensor, seed: int
) -> dict[str, torch.Tensor]:
    """Outputs of fn and the gradients of a random weighted sum of both outputs."""
    x = x.detach().requires_grad_()
    weight = weight.detach().requires_grad_()
    y, rstd = fn(x, weight)
    gy = randn(*y.shape, dtype=y.dtype, seed=seed)
    grstd = randn(*rstd.shape, dtype=rstd.dtype, seed=seed + 1)
    ((y * gy).sum() + (rstd * grstd).sum()).backward()
    assert x.grad is not None and weight.grad is not None
    return {"y": y.detach(), "rstd": rstd.detach(), "x.grad": x.grad, "weight.grad": weight.grad}


# ---------------------------------------------------------------- eager


@probe(category="eager", rtol=1e-2, atol=1e-2)
def eager_bfloat16_batch(solution: Any) -> dict[str, Any]:
    """Eager call on a bfloat16 (2, 3, 16) input: y in bfloat16, rstd in float32."""
    y, rstd = rms_norm(randn(2, 3, 16, dtype=torch.bfloat16, seed=10), randn(16, dtype=torch.bfloat16, seed=11))
    return {"y": y, "rstd": rstd}


@probe(category="eager", rtol=1e-12, atol=1e-12)
def eager_transposed_float64(solution: Any) -> dict[str, Any]:
    """Eager call on a transposed float64 input: values, and y comes back contiguous."""
    x = randn(7, 5, dtype=torch.float64, seed=12).t()
    y, rstd = rms_norm(x, randn(7, dtype=torch.float64, seed=13))
    return {"y": y, "rstd": rstd, "y.stride": list(y.stride())}


# ---------------------------------------------------------------- fake


@probe(category="fake", weight=2, hints=["fake-kernel", "fake-dtype"])
def fake_every_dtype(solution: Any) -> dict[str, Any]:
    """FakeTensorMode, a (6, 10) input in float32, float64, bfloat16 and float16."""
    out: dict[str, Any] = {}
    with FakeTensorMode():
        for dtype in ALL_DTYPES:
            out[str(dtype)] = fake_call(torch.empty(6, 10, dtype=dtype), torch.empty(10, dtype=dtype))
    return out


@probe(category="fake", weight=2, hints=["fake-kernel", "fake-dtype"])
def fake_batch_shapes(solution: Any) -> dict[str, Any]:
    """FakeTensorMode, inputs of rank 1 to 4 and an empty batch, in float32 and float16."""
    shapes = ((8,), (2, 3, 8), (1, 5, 2, 4), (0, 8))
    out: dict[str, Any] = {}
    with FakeTensorMode():
        for dtype in (torch.float32, torch.float16):
            for shape in shapes:
                key = f"{dtype} {list(shape)}"
                out[key] = fake_call(torch.empty(shape, dtype=dtype), torch.empty(shape[-1], dtype=dtype))
    return out


@probe(category="fake", weight=2, hints=["fake-strides"])
def fake_noncontiguous_inputs(solution: Any) -> dict[str, Any]:
    """FakeTensorMode, transposed and permuted inputs: y's strides must match the eager kernel's."""
    out: dict[str, Any] = {}
    with FakeTensorMode():
        out["transposed"] = fake_call(torch.empty(12, 6).t(), torch.empty(12))
        out["permuted"] = fake_call(
            torch.empty(4, 3, 2, dtype=torch.bfloat16).permute(2, 0, 1), torch.empty(3, dtype=torch.bfloat16)
        )
        out["sliced"] = fake_call(torch.empty(5, 16)[:, ::2], torch.empty(8))
    return out


@probe(category="fake", hints=["fake-device", "fake-kernel"])
def meta_device(solution: Any) -> dict[str, Any]:
    """Tensors on the meta device: outputs stay on meta, with the right metadata."""
    out: dict[str, Any] = {}
    for dtype in (torch.float64, torch.float16):
        x = torch.empty(3, 4, 8, dtype=dtype, device="meta")
        out[str(dtype)] = fake_call(x, torch.empty(8, dtype=dtype, device="meta"))
    return out


@probe(category="fake", weight=2, hints=["fake-kernel", "fake-dtype", "fake-strides"])
def opcheck_fake_tensor(solution: Any) -> dict[str, Any]:
    """torch.library.opcheck's test_schema and test_faketensor on several inputs."""
    samples = {
        "float32 (4, 8)": (randn(4, 8, seed=20), randn(8, seed=21)),
        "bfloat16 (2, 3, 8)": (randn(2, 3, 8, dtype=torch.bfloat16, seed=22), randn(8, dtype=torch.bfloat16, seed=23)),
        "float16 (8,)": (randn(8, dtype=torch.float16, seed=24), randn(8, dtype=torch.float16, seed=25)),
        "float32 transposed": (randn(8, 4, seed=26).t(), randn(8, seed=27)),
    }
    return opcheck_table(samples, ("test_schema", "test_faketensor"))


# ---------------------------------------------------------------- autograd


@probe(category="autograd", weight=2, rtol=1e-9, atol=1e-12, hints=["autograd-formula", "autograd-rstd"])
def gradcheck_batch_both_outputs(solution: Any) -> dict[str, Any]:
    """float64 (2, 3, 6): gradcheck of both outputs, and the gradients of a weighted sum."""
    x = randn(2, 3, 6, dtype=torch.float64, seed=30).requires_grad_()
    weight = randn(6, dtype=torch.float64, seed=31).requires_grad_()
    passed = torch.autograd.gradcheck(lambda a, b: rms_norm(a, b), (x, weight), raise_exception=False)
    grads = backward_values(rms_norm, x, weight, seed=32)
    return {"gradcheck": passed, "x.grad": grads["x.grad"], "weight.grad": grads["weight.grad"]}


@probe(category="autograd", rtol=1e-9, atol=1e-12, hints=["autograd-formula", "autograd-save"])
def grads_weight_with_zeros(solution: Any) -> dict[str, Any]:
    """float64 (4, 6) with zeros in the weight: gradients must stay finite and right."""
    x = randn(4, 6, dtype=torch.float64, seed=40).requires_grad_()
    weight = torch.tensor([0.0, 1.5, 0.0, -0.5, 2.0, 0.0], dtype=torch.float64).requires_grad_()
    passed = torch.autograd.gradcheck(lambda a, b: rms_norm(a, b), (x, weight), raise_exception=False)
    grads = backward_values(rms_norm, x, weight, seed=41)
    return {"gradcheck": passed, "x.grad": grads["x.grad"], "weight.grad": grads["weight.grad"]}


@probe(category="autograd", rtol=1e-9, atol=1e-12, hints=["autograd-formula"])
def grads_through_y_only(solution: Any) -> dict[str, Any]:
    """float64 (5, 7), a loss that uses only y: the unused rstd output must not break backward."""
    x = randn(5, 7, dtype=torch.float64, seed=50).requires_grad_()
    weight = randn(7, dtype=torch.float64, seed=51).requires_grad_()
    y, _rstd = rms_norm(x, weight)
    (y * randn(5, 7, dtype=torch.float64, seed=52)).sum().backward()
    return {"x.grad": x.grad, "weight.grad": weight.grad}


@probe(category="autograd", weight=2, rtol=1e-9, atol=1e-12, hints=["autograd-formula", "autograd-rank"])
def grads_one_dimensional_input(solution: Any) -> dict[str, Any]:
    """float64, a 1-D x (one row, a 0-d rstd): gradcheck and the gradients of losses through y, rstd and both."""
    x = randn(9, dtype=torch.float64, seed=110).requires_grad_()
    weight = randn(9, dtype=torch.float64, seed=111).requires_grad_()
    passed = torch.autograd.gradcheck(lambda a, b: rms_norm(a, b), (x, weight), raise_exception=False)
    both = backward_values(rms_norm, x, weight, seed=112)
    y_only = backward_values(lambda a, b: (rms_norm(a, b)[0], torch.zeros((), dtype=a.dtype)), x, weight, seed=114)
    return {
        "gradcheck": passed,
        "both: x.grad": both["x.grad"],
        "both: weight.grad": both["weight.grad"],
        "y only: x.grad": y_only["x.grad"],
        "y only: weight.grad": y_only["weight.grad"],
    }


@probe(category="autograd", weight=2, rtol=1e-9, atol=1e-12, hints=["autograd-formula", "autograd-rank"])
def grads_other_ranks(solution: Any) -> dict[str, Any]:
    """float64 inputs of rank 4, a single row, D = 1 and an empty batch: gradcheck and gradients."""
    shapes = {"rank 4": (2, 1, 3, 5), "one row": (1, 7), "D = 1": (4, 1), "empty batch": (0, 6)}
    out: dict[str, Any] = {}
    for i, (name, shape) in enumerate(shapes.items()):
        x = randn(*shape, dtype=torch.float64, seed=120 + 3 * i).requires_grad_()
        weight = randn(shape[-1], dtype=torch.float64, seed=121 + 3 * i).requires_grad_()
        passed = torch.autograd.gradcheck(lambda a, b: rms_norm(a, b), (x, weight), raise_exception=False)
        grads = backward_values(rms_norm, x, weight, seed=122 + 3 * i)
        out[name] = {"gradcheck": passed, "x.grad": grads["x.grad"], "weight.grad": grads["weight.grad"]}
    return out


@probe(category="autograd", rtol=1e-9, atol=1e-12, hints=["autograd-save"])
def grads_with_a_large_eps(solution: Any) -> dict[str, Any]:
    """float64 (3, 5) with eps = 0.5 instead of 1e-5: eps is an argument of the op, and the gradient depends on it."""
    x = randn(3, 5, dtype=torch.float64, seed=130).requires_grad_()
    weight = randn(5, dtype=torch.float64, seed=131).requires_grad_()
    passed = torch.autograd.gradcheck(lambda a, b: rms_norm(a, b, 0.5), (x, weight), raise_exception=False)
    grads = backward_values(lambda a, b: rms_norm(a, b, 0.5), x, weight, seed=132)
    return {"gradcheck": passed, "x.grad": grads["x.grad"], "weight.grad": grads["weight.grad"]}


@probe(category="autograd", rtol=2e-2, atol=2e-2, hints=["autograd-formula", "autograd-rstd"])
def grads_half_precision(solution: Any) -> dict[str, Any]:
    """bfloat16 and float16 (4, 16): gradients in the inputs' dtypes, near the float32 result."""
    out: dict[str, Any] = {}
    for i, dtype in enumerate(HALF_DTYPES):
        x = randn(4, 16, dtype=dtype, seed=60 + i)
        weight = randn(16, dtype=dtype, seed=62 + i)
        grads = backward_values(rms_norm, x, weight, seed=64 + 2 * i)
        out[str(dtype)] = {"x.grad": grads["x.grad"], "weight.grad": grads["weight.grad"]}
    return out


@probe(category="autograd", rtol=2e-2, atol=2e-2, hints=["autograd-formula"])
def grads_half_precision_cancelling(solution: Any) -> dict[str, Any]:
    """bfloat16 and float16 (4, 16), grad_y = 100 * y: grad_x is a small difference of large terms, right only in acc."""
    out: dict[str, Any] = {}
    for i, dtype in enumerate(HALF_DTYPES):
        x = randn(4, 16, dtype=dtype, seed=150 + i).requires_grad_()
        weight = (1.0 + 0.1 * randn(16, dtype=torch.float64, seed=152 + i)).to(dtype).requires_grad_()
        y, _rstd = rms_norm(x, weight)
        y.backward((100.0 * y.detach().double()).to(dtype))
        out[str(dtype)] = {"x.grad": x.grad, "weight.grad": weight.grad}
    return out


@probe(category="autograd", rtol=2e-2, atol=2e-2, hints=["autograd-formula"])
def grads_float16_near_its_limits(solution: Any) -> dict[str, Any]:
    """float16 where x**2 (|x| > 256) or grad_y * weight exceeds 65504 though every result fits: only acc is right."""
    x = (300.0 * randn(3, 8, dtype=torch.float64, seed=160)).to(torch.float16)
    big_x = backward_values(rms_norm, x, randn(8, dtype=torch.float16, seed=161), seed=162)
    x = (100.0 * randn(3, 8, dtype=torch.float64, seed=164)).to(torch.float16).requires_grad_()
    weight = torch.full((8,), 300.0, dtype=torch.float16).requires_grad_()
    y, _rstd = rms_norm(x, weight)
    y.backward((300.0 * randn(3, 8, dtype=torch.float64, seed=165)).to(torch.float16))
    return {
        "|x| > 256: x.grad": big_x["x.grad"],
        "|x| > 256: weight.grad": big_x["weight.grad"],
        "large grad_y * weight: x.grad": x.grad,
        "large grad_y * weight: weight.grad": weight.grad,
    }


@probe(category="autograd", rtol=1e-9, atol=1e-12, hints=["autograd-formula"])
def grads_one_input_frozen(solution: Any) -> dict[str, Any]:
    """float64 (3, 5), a loss through both outputs, with only weight (x frozen) or only x requiring grad."""
    out: dict[str, Any] = {}
    for i, frozen in enumerate(("x", "weight")):
        x = randn(3, 5, dtype=torch.float64, seed=170 + 3 * i).requires_grad_(frozen != "x")
        weight = randn(5, dtype=torch.float64, seed=171 + 3 * i).requires_grad_(frozen != "weight")
        y, rstd = rms_norm(x, weight)
        gy = randn(3, 5, dtype=torch.float64, seed=172 + 3 * i)
        ((y * gy).sum() + (rstd * rstd).sum()).backward()
        out[f"{frozen} frozen"] = {"x.grad": x.grad, "weight.grad": weight.grad}
    return out


@probe(category="autograd", rtol=1e-9, atol=1e-12, hints=["autograd-formula", "autograd-rank"])
def grads_noncontiguous_incoming_gradient(solution: Any) -> dict[str, Any]:
    """float64 ranks 3 and 4, QK-norm style: the loss uses y through a transpose, so grad_y arrives non-contiguous."""
    out: dict[str, Any] = {}
    for i, shape in enumerate(((2, 3, 5), (2, 2, 3, 4))):
        x = randn(*shape, dtype=torch.float64, seed=180 + 4 * i).requires_grad_()
        weight = randn(shape[-1], dtype=torch.float64, seed=181 + 4 * i).requires_grad_()
        k, _rstd = rms_norm(x, weight)
        q = randn(*shape[:-2], 4, shape[-1], dtype=torch.float64, seed=182 + 4 * i)
        scores = q @ k.transpose(-2, -1)
        (scores * randn(*scores.shape, dtype=torch.float64, seed=183 + 4 * i)).sum().backward()
        out[str(list(shape))] = {"x.grad": x.grad, "weight.grad": weight.grad}
    return out


# ---------------------------------------------------------------- blind red team round 2: what the statement allows


def _grads_or_error(
    outputs: tuple[torch.Tensor, ...], inputs: tuple[torch.Tensor, ...], grad_outputs: tuple[torch.Tensor, ...] | None
) -> dict[str, Any]:
    """torch.autograd.grad of outputs for (x, weight), or the error's class name; the same keys either way."""
    try:
        grad_x, grad_weight = torch.autograd.grad(outputs, inputs, grad_outputs)
    except Exception as exc:  # noqa: BLE001 - the failure is the observation
        return {"error": type(exc).__name__, "x.grad": None, "weight.grad": None}
    return {"error": None, "x.grad": grad_x, "weight.grad": grad_weight}


@probe(category="autograd", weight=2, rtol=2e-2, atol=2e-2, hints=["incoming-gradients"])
def grads_incoming_gradient_left_unchanged(solution: Any) -> dict[str, Any]:
    """float64 and float32: the incoming gradients are shared with another branch or held by the caller, and must come out unchanged."""
    out: dict[str, Any] = {}
    for i, dtype in enumerate((torch.float64, torch.float32)):
        seed = 300 + 10 * i
        # A residual: AddBackward hands one gradient tensor to both y and x.
        x = randn(4, 6, dtype=dtype, seed=seed).requires_grad_()
        weight = (1.5 + randn(6, dtype=torch.float64, seed=seed + 1)).to(dtype).requires_grad_()
        y, _rstd = rms_norm(x, weight)
        ((y + x) * randn(4, 6, dtype=dtype, seed=seed + 2)).sum().backward()
        residual = {"x.grad": x.grad, "weight.grad": weight.grad}
        # grad_outputs passed by the caller, through both outputs, also a 3-D x.
        x = randn(2, 3, 5, dtype=dtype, seed=seed + 3).requires_grad_()
        weight = (1.5 + randn(5, dtype=torch.float64, seed=seed + 4)).to(dtype).requires_grad_()
        y, rstd = rms_norm(x, weight)
        gy = randn(2, 3, 5, dtype=dtype, seed=seed + 5)
        grstd = randn(2, 3, dtype=rstd.dtype, seed=seed + 6)
        kept = (gy.clone(), grstd.clone())
        grads = _grads_or_error((y, rstd), (x, weight), (gy, grstd))
        out[str(dtype)] = {
            "residual y + x": residual,
            "grad_outputs": grads,
            "grad_y unchanged": bool(torch.equal(gy, kept[0])),
            "grad_rstd unchanged": bool(torch.equal(grstd, kept[1])),
        }
    return out


@probe(category="autograd", weight=2, rtol=1e-9, atol=1e-12, hints=["state", "autograd-save"])
def grads_several_calls_one_backward(solution: Any) -> dict[str, Any]:
    """float64: several calls of the op wait for one backward (stacked layers; the same x with other weights and eps)."""
    x = randn(3, 6, dtype=torch.float64, seed=320).requires_grad_()
    w1 = randn(6, dtype=torch.float64, seed=321).requires_grad_()
    w2 = randn(6, dtype=torch.float64, seed=322).requires_grad_()
    h, r1 = rms_norm(x, w1)
    y, r2 = rms_norm(torch.tanh(h), w2)
    loss = (y * randn(3, 6, dtype=torch.float64, seed=323)).sum()
    (loss + (r1 * randn(3, dtype=torch.float64, seed=324)).sum() + (r2 * r2).sum()).backward()
    stacked = {"x.grad": x.grad, "weight 1 grad": w1.grad, "weight 2 grad": w2.grad}

    x = randn(4, 5, dtype=torch.float64, seed=330).requires_grad_()
    w1 = randn(5, dtype=torch.float64, seed=331).requires_grad_()
    w2 = randn(5, dtype=torch.float64, seed=332).requires_grad_()
    calls = [rms_norm(x, w1, 1e-5), rms_norm(x, w2, 1e-3), rms_norm(x, w1, 0.5)]
    loss = sum(
        (y * randn(4, 5, dtype=torch.float64, seed=333 + 2 * k)).sum()
        + (rstd * randn(4, dtype=torch.float64, seed=334 + 2 * k)).sum()
        for k, (y, rstd) in enumerate(calls)
    )
    loss.backward()
    same_x = {"x.grad": x.grad, "weight 1 grad": w1.grad, "weight 2 grad": w2.grad}
    return {"stacked layers": stacked, "the same x three times": same_x}


@probe(category="autograd", rtol=1e-9, atol=1e-12, hints=["autograd-rstd"])
def grads_rstd_through_a_transpose(solution: Any) -> dict[str, Any]:
    """float64 ranks 3 and 4: the loss uses rstd through a transpose, so grad_rstd arrives non-contiguous."""
    out: dict[str, Any] = {}
    for i, shape in enumerate(((2, 3, 5), (2, 2, 3, 4))):
        x = randn(*shape, dtype=torch.float64, seed=340 + 4 * i).requires_grad_()
        weight = randn(shape[-1], dtype=torch.float64, seed=341 + 4 * i).requires_grad_()
        y, rstd = rms_norm(x, weight)
        rstd_t = rstd.transpose(-2, -1)
        loss = (y * randn(*shape, dtype=torch.float64, seed=342 + 4 * i)).sum()
        (loss + (rstd_t * randn(*rstd_t.shape, dtype=torch.float64, seed=343 + 4 * i)).sum()).backward()
        out[str(list(shape))] = {"x.grad": x.grad, "weight.grad": weight.grad}
    return out


@probe(category="autograd", rtol=1e-9, atol=1e-12, hints=["zero-gradient"])
def grads_loss_through_rstd_alone(solution: Any) -> dict[str, Any]:
    """float64, a loss through rstd alone: the weight's gradient is zero, and it is asked for."""
    x = randn(3, 5, dtype=torch.float64, seed=350).requires_grad_()
    weight = randn(5, dtype=torch.float64, seed=351).requires_grad_()
    _y, rstd = rms_norm(x, weight)
    (rstd * randn(3, dtype=torch.float64, seed=352)).sum().backward()
    backward = {"x.grad": x.grad, "weight.grad": weight.grad}
    x = randn(4, 6, dtype=torch.float64, seed=353).requires_grad_()
    weight = randn(6, dtype=torch.float64, seed=354).requires_grad_()
    _y, rstd = rms_norm(x, weight)
    grads = _grads_or_error(((rstd * rstd).sum(),), (x, weight), None)
    frozen_x = randn(2, 4, dtype=torch.float64, seed=355)
    weight = randn(4, dtype=torch.float64, seed=356).requires_grad_()
    _y, rstd = rms_norm(frozen_x, weight)
    rstd.sum().backward()
    return {".backward()": backward, "torch.autograd.grad": grads, "x frozen: weight.grad": weight.grad}


def _half_branches_cancel(dtype: torch.dtype, seed: int) -> dict[str, Any]:
    """grad_rstd chosen so that the paths through y and through rstd nearly cancel in one element of each row."""
    rows, dim = 16, 8
    x = (3.0 * randn(rows, dim, dtype=torch.float64, seed=seed)).to(dtype)
    weight = randn(dim, dtype=torch.float64, seed=seed + 1).to(dtype)
    gy = (3000.0 * randn(rows, dim, dtype=torch.float64, seed=seed + 2)).to(dtype)
    # The path through y, in float64 from the values as rounded, and the rstd gradient that brings grad_x[:, k] near 0.5.
    xd, gd = x.double(), gy.double() * weight.double()
    r = torch.rsqrt(xd.pow(2).mean(-1) + EPS)
    x_hat = xd * r[:, None]
    through_y = r[:, None] * (gd - x_hat * (gd * x_hat).mean(-1, keepdim=True))
    k = torch.arange(rows) % dim
    target = through_y[torch.arange(rows), k] - 0.5
    grstd = (target * dim / (r.pow(3) * xd[torch.arange(rows), k])).float()
    x.requires_grad_()
    weight.requires_grad_()
    y, rstd = rms_norm(x, weight)
    return _grads_or_error((y, rstd), (x, weight), (gy, grstd))


@probe(category="autograd", rtol=2e-2, atol=2e-2, hints=["autograd-formula", "half-rounded-once"])
def grads_half_precision_paths_cancel(solution: Any) -> dict[str, Any]:
    """bfloat16 and float16: the paths into grad_x through y and through rstd are large and nearly cancel; right only if added in acc."""
    return {str(dtype): _half_branches_cancel(dtype, seed=360 + 10 * i) for i, dtype in enumerate(HALF_DTYPES)}


@probe(category="autograd", rtol=2e-2, atol=2e-2, hints=["autograd-formula", "half-rounded-once"])
def grads_half_precision_weight_rows_cancel(solution: Any) -> dict[str, Any]:
    """bfloat16 and float16, many rows: the rows' terms of the weight gradient are large and nearly cancel; right only if summed in acc."""
    out: dict[str, Any] = {}
    for i, dtype in enumerate(HALF_DTYPES):
        seed = 380 + 10 * i
        half_rows = randn(32, 8, dtype=torch.float64, seed=seed)
        x = torch.cat([half_rows, half_rows]).to(dtype).requires_grad_()
        weight = randn(8, dtype=torch.float64, seed=seed + 1).to(dtype).requires_grad_()
        g0 = 3000.0 * randn(32, 8, dtype=torch.float64, seed=seed + 2)
        gy = torch.cat([g0, -g0 + 40.0 * randn(32, 8, dtype=torch.float64, seed=seed + 3)]).to(dtype)
        y, rstd = rms_norm(x, weight)
        grstd = randn(64, dtype=torch.float32, seed=seed + 4)
        out[str(dtype)] = _grads_or_error((y, rstd), (x, weight), (gy, grstd))
    return out


# ---------------------------------------------------------------- compile


def compiled_or_error(
    fn: Callable[..., tuple[torch.Tensor, torch.Tensor]], x: torch.Tensor, weight: torch.Tensor, seed: int, **opts: Any
) -> dict[str, Any]:
    """backward_values through torch.compile(fullgraph, aot_eager), or the error's class name."""
    compiled = torch.compile(fn, fullgraph=True, backend="aot_eager", **opts)
    # The same keys either way, "error" first, so a failure is reported as
    # the error rather than as missing keys.
    try:
        return {"error": None, **backward_values(compiled, x, weight, seed)}
    except Exception as exc:  # noqa: BLE001 - the failure is the observation
        return {"error": type(exc).__name__, "y": None, "rstd": None, "x.grad": None, "weight.grad": None}


def rms_norm_then_mix(x: torch.Tensor, weight: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The op inside a larger graph: later ops consume both outputs."""
    y, rstd = rms_norm(torch.tanh(x), weight)
    return y * rstd.unsqueeze(-1).to(y.dtype) + 1.0, rstd * rstd


@probe(category="compile", weight=2, rtol=2e-2, atol=2e-2, hints=["fake-kernel", "fake-dtype", "autograd-formula"])
def compile_bfloat16_batch(solution: Any) -> dict[str, Any]:
    """Compiled graph around the op, bfloat16 (2, 3, 16): outputs and gradients."""
    x = randn(2, 3, 16, dtype=torch.bfloat16, seed=70)
    return compiled_or_error(rms_norm_then_mix, x, randn(16, dtype=torch.bfloat16, seed=71), seed=72)


@probe(category="compile", weight=2, rtol=1e-4, atol=1e-5, hints=["fake-kernel", "autograd-formula"])
def compile_dynamic_shapes(solution: Any) -> dict[str, Any]:
    """Compiled with dynamic=True, float32, called with three shapes: outputs and gradients (how many graphs is not graded)."""
    # Rows and D both change, so the fake kernel and the backward run on
    # symbolic sizes. All of rank 2 and above 1, so one compile serves all
    # three calls: each extra compile costs seconds on a busy machine.
    inputs = {
        "(6, 8)": randn(6, 8, seed=80),
        "(3, 12)": randn(3, 12, seed=81),
        "(10, 5)": randn(10, 5, seed=82),
    }
    out: dict[str, Any] = {}
    for i, (name, x) in enumerate(inputs.items()):
        weight = randn(x.shape[-1], seed=83 + i)
        out[name] = compiled_or_error(rms_norm_then_mix, x, weight, seed=90 + 2 * i, dynamic=True)
    return out


@probe(category="compile", weight=2, hints=["fake-kernel", "autograd-formula"])
def opcheck_aot_dispatch(solution: Any) -> dict[str, Any]:
    """torch.library.opcheck's test_autograd_registration and test_aot_dispatch_dynamic."""
    samples = {
        "float64 (3, 6) requires_grad": (
            randn(3, 6, dtype=torch.float64, seed=100).requires_grad_(),
            randn(6, dtype=torch.float64, seed=101).requires_grad_(),
        ),
        "bfloat16 (4, 8) no grad": (
            randn(4, 8, dtype=torch.bfloat16, seed=104),
            randn(8, dtype=torch.bfloat16, seed=105),
        ),
    }
    return opcheck_table(samples, ("test_autograd_registration", "test_aot_dispatch_dynamic"))


@probe(category="compile", hints=["autograd-rank", "fake-kernel"])
def opcheck_aot_dispatch_one_dimensional(solution: Any) -> dict[str, Any]:
    """torch.library.opcheck's test_autograd_registration and test_aot_dispatch_dynamic on a 1-D input."""
    samples = {
        "float64 (7,) requires_grad": (
            randn(7, dtype=torch.float64, seed=102).requires_grad_(),
            randn(7, dtype=torch.float64, seed=103).requires_grad_(),
        ),
    }
    return opcheck_table(samples, ("test_autograd_registration", "test_aot_dispatch_dynamic"))


@probe(category="compile", weight=2, hints=["opaque-op"])
def op_stays_one_operator(solution: Any) -> dict[str, Any]:
    """A make_fx trace, of real and of fake tensors, holds interview::rms_norm itself, not a decomposition."""
    from torch.fx.experimental.proxy_tensor import make_fx

    out: dict[str, Any] = {}
    for mode in ("real", "fake"):
        graph = make_fx(lambda a, b: rms_norm(a, b), tracing_mode=mode)(randn(3, 5, seed=140), randn(5, seed=141)).graph
        calls = [n for n in graph.nodes if n.op == "call_function"]
        ours = sum(1 for n in calls if n.target is torch.ops.interview.rms_norm.default)
        out[mode] = {"rms_norm calls": ours, "other calls": len(calls) - ours}
    return out


# ---------------------------------------------------------------- state kept across calls


def _call_and_grad(x: torch.Tensor, weight: torch.Tensor, eps: float, seed: int) -> dict[str, Any]:
    """One call and its backward through torch.autograd.grad, for a loss through both outputs.

    The outputs and the gradients are kept as the op and backward returned
    them, not copied, and checked only once every call has run: a buffer that
    a later call reuses changes a result already returned.
    """
    y, rstd = rms_norm(x, weight, eps)
    gy = randn(*y.shape, dtype=y.dtype, seed=seed)
    grstd = randn(*rstd.shape, dtype=rstd.dtype, seed=seed + 1)
    grad_x, grad_weight = torch.autograd.grad((y, rstd), (x, weight), (gy, grstd))
    return {"y": y.detach(), "rstd": rstd.detach(), "x.grad": grad_x, "weight.grad": grad_weight}


def _clone_into_freed_id(source: torch.Tensor, freed_id: int) -> torch.Tensor:
    """A clone of ``source`` that is, as a rule, a new object at the id of a freed tensor.

    Clones that land elsewhere are kept alive until the one wanted comes up,
    so each try takes the next free slot of the allocator; after 4096 tries
    the last one is used.
    """
    spare: list[torch.Tensor] = []
    for _ in range(4096):
        fresh = source.clone()
        if id(fresh) == freed_id:
            return fresh
        spare.append(fresh)
    return spare.pop()


class _DtypeSteps:
    """``steps[name] = result`` files the result under ``out[name][dtype]``."""

    def __init__(self, out: dict[str, Any], dtype: str) -> None:
        self.out, self.dtype = out, dtype

    def __setitem__(self, name: str, result: dict[str, Any]) -> None:
        self.out.setdefault(name, {})[self.dtype] = result


def _over_memory(memory: Any, dtype: torch.dtype) -> torch.Tensor:
    """A new tensor object over a NumPy array's memory: the same address every time, a version counter at 0."""
    return torch.from_numpy(memory).view(dtype)


@probe(category="autograd", weight=2, rtol=2e-2, atol=2e-2, hints=["state"])
def repeated_calls(solution: Any) -> dict[str, Any]:
    """Many calls and backwards in one process, on inputs changed in place, look-alike or rebuilt: every result right, also after later calls.

    In float64, bfloat16 and float16, the steps: the same tensors changed in
    place between calls (an optimizer step on the weight, new values in x)
    and called with another eps, new tensors of the same shape and
    dtype, tensors freed and rebuilt at the same ids, and new tensors over
    the memory of earlier ones (same address, a fresh version counter).

    Each backward goes through torch.autograd.grad, so the observation holds
    the gradients exactly as backward returned them. A memo of converted
    weights, of x in the accumulation dtype or of statistics keyed on a
    tensor's id, its data_ptr() (with or without its version counter), its
    shape and dtype, or the tensor object itself returns an earlier call's
    values at one of the steps; a gradient buffer reused by the next backward
    changes a gradient already returned. The tolerance is the half-precision
    one: every step changes the values far beyond it.
    """
    rows, dim = 3, 8
    # Keyed by step first, then dtype: a failure is reported at the first step that goes wrong.
    out: dict[str, Any] = {}
    ids_taken: list[bool] = []
    for n, dtype in enumerate((torch.float64, torch.bfloat16, torch.float16)):
        seed = 200 + 40 * n
        steps = _DtypeSteps(out, str(dtype))
        x = randn(rows, dim, dtype=dtype, seed=seed).requires_grad_()
        weight = randn(dim, dtype=dtype, seed=seed + 1).requires_grad_()
        steps["first call"] = _call_and_grad(x, weight, EPS, seed=seed + 2)
        with torch.no_grad():
            weight.mul_(-2.0).add_(randn(dim, dtype=dtype, seed=seed + 3))  # an optimizer step
        steps["weight changed in place"] = _call_and_grad(x, weight, EPS, seed=seed + 4)
        steps["same tensors, another eps"] = _call_and_grad(x, weight, 0.5, seed=seed + 5)
        with torch.no_grad():
            x.copy_(3.0 * randn(rows, dim, dtype=torch.float64, seed=seed + 6) + 1.0)  # the next batch, same tensor
        steps["x changed in place"] = _call_and_grad(x, weight, EPS, seed=seed + 7)

        # New tensors of the same shape and dtype while the old ones are still alive (other ids, other memory).
        x_new = (0.5 * randn(rows, dim, dtype=torch.float64, seed=seed + 8) - 1.0).to(dtype).requires_grad_()
        weight_new = (2.0 + randn(dim, dtype=torch.float64, seed=seed + 9)).to(dtype).requires_grad_()
        steps["new tensors of the same shape"] = _call_and_grad(x_new, weight_new, EPS, seed=seed + 10)
        del x_new, weight_new

        # The tensors freed, then new ones built at their ids.
        for k in range(2):
            values = (
                (randn(rows, dim, dtype=torch.float64, seed=seed + 11 + 3 * k) * (1 + k) - k).to(dtype),
                (randn(dim, dtype=torch.float64, seed=seed + 12 + 3 * k) - 1.5 * k).to(dtype),
            )
            freed = (id(x), id(weight))
            refs = (weakref.ref(x), weakref.ref(weight))
            del x, weight
            gc.collect()
            x, weight = (_clone_into_freed_id(v, i) for v, i in zip(values, freed, strict=True))
            x.requires_grad_()
            weight.requires_grad_()
            # A freed id taken again, or the old tensor still alive (held by the solution: then no new one can
            # take its id).
            ids_taken += [id(t) == i or r() is not None for t, i, r in zip((x, weight), freed, refs, strict=True)]
            steps[f"tensors freed and rebuilt, call {k + 1}"] = _call_and_grad(x, weight, EPS, seed=seed + 13 + 3 * k)

        # New tensor objects over the memory of earlier ones, new values written into that memory in between.
        np_dtype = np.float64 if dtype == torch.float64 else np.int16
        memory = (np.empty((rows, dim), dtype=np_dtype), np.empty(dim, dtype=np_dtype))
        for k in range(3):
            _over_memory(memory[0], dtype).copy_(randn(rows, dim, dtype=torch.float64, seed=seed + 20 + 2 * k) * (1 + k) - k)
            _over_memory(memory[1], dtype).copy_(randn(dim, dtype=torch.float64, seed=seed + 21 + 2 * k) + 2.0 * k - 1.0)
            x = _over_memory(memory[0], dtype).requires_grad_()
            weight = _over_memory(memory[1], dtype).requires_grad_()
            steps[f"new tensors over earlier memory, call {k + 1}"] = _call_and_grad(x, weight, EPS, seed=seed + 27 + 2 * k)
    return {**out, "freed ids taken again": all(ids_taken)}


# ---------------------------------------------------------------- blind red team round 3


def _described_both_ways(x: torch.Tensor, weight: torch.Tensor) -> dict[str, Any]:
    """The op's outputs described under FakeTensorMode and on the meta device, for inputs with x's metadata."""
    with FakeTensorMode() as mode:
        fake = fake_call(mode.from_tensor(x), mode.from_tensor(weight))
    on_meta = fake_call(torch.empty_strided(x.shape, x.stride(), dtype=x.dtype, device="meta"), weight.to("meta"))
    return {"fake": fake, "meta": on_meta}


@probe(category="fake", weight=2, hints=["fake-strides"])
def fake_size_one_dims_and_empty_inputs(solution: Any) -> dict[str, Any]:
    """FakeTensorMode and meta: size-1 dimensions with odd strides and empty inputs: every stride is the eager kernel's (size-1 dims count)."""
    # Layouts in which is_contiguous() is True although the strides are not the standard ones (a size-1
    # dimension's stride is free), a batch of one in seq-first or heads-first order; and empty inputs, where
    # is_contiguous() is always True. The standard strides of the shape are what the eager kernel returns.
    layouts = {
        "(3, 1, 4) transposed to (1, 3, 4)": lambda dtype: torch.empty(3, 1, 4, dtype=dtype).transpose(0, 1),
        "(1, 3, 4) transposed to (3, 1, 4)": lambda dtype: torch.empty(1, 3, 4, dtype=dtype).transpose(0, 1),
        "heads first, batch 1, one head": lambda dtype: torch.empty(1, 3, 1, 4, dtype=dtype).transpose(1, 2),
        "heads first, one head": lambda dtype: torch.empty(2, 3, 1, 4, dtype=dtype).permute(0, 2, 1, 3),
        "empty, transposed": lambda dtype: torch.empty(8, 0, dtype=dtype).t(),
        "empty, permuted": lambda dtype: torch.empty(0, 2, 4, dtype=dtype).transpose(0, 1),
    }
    out: dict[str, Any] = {}
    for name, make in layouts.items():
        for dtype in (torch.float32, torch.bfloat16):
            x = make(dtype)
            weight = torch.empty(x.shape[-1], dtype=dtype)
            case = _described_both_ways(x, weight)
            if x.numel():
                # The eager kernel on real values with the same layout: what the fake must describe.
                real = randn(*x.shape, dtype=torch.float64, seed=400)
                x = torch.empty_strided(x.shape, x.stride(), dtype=dtype).copy_(real)
                y, rstd = rms_norm(x, randn(x.shape[-1], dtype=dtype, seed=401))
                case["eager"] = {"y": describe(y), "rstd": describe(rstd)}
            out[f"{name}, {dtype}"] = case
    return out


def _unmergeable_layouts(dtype: torch.dtype, seed: int) -> dict[str, torch.Tensor]:
    """Inputs whose batch dimensions x.view(-1, D) cannot merge: rank 3 and 4, permuted or narrowed."""
    return {
        "permuted (3, 2, 5) to (2, 3, 5)": randn(3, 2, 5, dtype=dtype, seed=seed).permute(1, 0, 2),
        "heads first (2, 3, 2, 4) to (2, 2, 3, 4)": randn(2, 3, 2, 4, dtype=dtype, seed=seed + 1).transpose(1, 2),
        "narrowed middle dim": randn(2, 5, 6, dtype=dtype, seed=seed + 2)[:, 1:, :],
    }


def _gradcheck_and_grads(x: torch.Tensor, weight: torch.Tensor, seed: int) -> dict[str, Any]:
    """gradcheck and backward_values on (x, weight), or the error's class name; the same keys either way."""
    try:
        passed = torch.autograd.gradcheck(lambda a, b: rms_norm(a, b), (x, weight), raise_exception=False)
        grads = backward_values(rms_norm, x, weight, seed)
    except Exception as exc:  # noqa: BLE001 - the failure is the observation
        return {"error": type(exc).__name__, "gradcheck": None, "x.grad": None, "weight.grad": None}
    return {"error": None, "gradcheck": passed, "x.grad": grads["x.grad"], "weight.grad": grads["weight.grad"]}


@probe(category="autograd", weight=2, rtol=1e-9, atol=1e-12, hints=["autograd-rank", "x-any-strides"])
def grads_unmergeable_batch_dims(solution: Any) -> dict[str, Any]:
    """float64 ranks 3 and 4: x permuted, narrowed or expanded, so its batch dims cannot be flattened by view: gradcheck and gradients."""
    out: dict[str, Any] = {}
    for i, (name, x) in enumerate(_unmergeable_layouts(torch.float64, seed=410).items()):
        weight = randn(x.shape[-1], dtype=torch.float64, seed=420 + i).requires_grad_()
        out[name] = _gradcheck_and_grads(x.requires_grad_(), weight, seed=430 + 2 * i)
    # Expanded: one (3, 5) input broadcast over a batch of 2 (stride 0), its gradient summed back by autograd.
    base = randn(1, 3, 5, dtype=torch.float64, seed=440).requires_grad_()
    weight = randn(5, dtype=torch.float64, seed=441).requires_grad_()
    try:
        y, rstd = rms_norm(base.expand(2, 3, 5), weight)
    except Exception as exc:  # noqa: BLE001 - the failure is the observation
        out["expanded batch"] = {"error": type(exc).__name__, "x.grad": None, "weight.grad": None}
        return out
    grads = (randn(2, 3, 5, dtype=torch.float64, seed=442), randn(2, 3, dtype=torch.float64, seed=443))
    out["expanded batch"] = _grads_or_error((y, rstd), (base, weight), grads)
    return out


@probe(category="compile", rtol=1e-4, atol=1e-5, hints=["x-any-strides", "autograd-formula"])
def compile_unmergeable_batch_dims(solution: Any) -> dict[str, Any]:
    """Compiled graph around the op, float32, a heads-first x whose batch dims cannot be flattened by view: outputs and gradients."""
    x = randn(2, 3, 2, 4, seed=450).transpose(1, 2)
    return compiled_or_error(rms_norm_then_mix, x, randn(4, seed=451), seed=452)


def _bfloat16_case(x: torch.Tensor, weight: torch.Tensor, gy_scale: float, grstd_scale: float, seed: int) -> dict[str, Any]:
    """Gradients of a bfloat16 call for incoming gradients of the given scales (grad_rstd is float32, rstd's dtype)."""
    x, weight = x.requires_grad_(), weight.requires_grad_()
    try:
        y, rstd = rms_norm(x, weight)
    except Exception as exc:  # noqa: BLE001 - the failure is the observation
        return {"error": type(exc).__name__, "x.grad": None, "weight.grad": None}
    gy = (gy_scale * randn(*y.shape, dtype=torch.float64, seed=seed)).to(torch.bfloat16)
    grstd = (grstd_scale * randn(*rstd.shape, dtype=torch.float64, seed=seed + 1)).to(rstd.dtype)
    return _grads_or_error((y, rstd), (x, weight), (gy, grstd))


@probe(category="autograd", weight=2, rtol=2e-2, atol=2e-2, hints=["autograd-formula", "bfloat16-range"])
def grads_bfloat16_beyond_float16_range(solution: Any) -> dict[str, Any]:
    """bfloat16 with inputs, incoming gradients or gradients far above float16's 65504: every result fits bfloat16 and must be finite and right."""
    bf16 = torch.bfloat16
    weight = (1.0 + 0.5 * randn(16, dtype=torch.float64, seed=460)).to(bf16)
    return {
        "large grad_y": _bfloat16_case(randn(4, 16, dtype=bf16, seed=461), weight.clone(), 2e5, 1.0, seed=462),
        "large x": _bfloat16_case((3e5 * randn(4, 16, dtype=torch.float64, seed=464)).to(bf16), weight.clone(), 1.0, 1.0, seed=465),
        "large grad_rstd": _bfloat16_case(randn(4, 16, dtype=bf16, seed=467), weight.clone(), 1.0, 1e6, seed=468),
        "large weight": _bfloat16_case(randn(4, 16, dtype=bf16, seed=473), (2e5 * weight).to(bf16), 1.0, 1.0, seed=474),
    }


# ---------------------------------------------------------------- blind red team round 4

@probe(category="eager", weight=2, hints=["opaque-op"])
def eager_kernel_is_the_given_one(solution: Any) -> dict[str, Any]:
    """The op's CPU kernel is still the given one: every eager call moves the data to NumPy, and the kernel refuses fake and meta tensors."""
    # A kernel rewritten in torch ops never calls Tensor.numpy (np.asarray goes through it too), and it runs
    # on fake and meta tensors, so a fake kernel could simply call it. The kernel is reached through the
    # dispatcher at its CPU key, however it was registered.
    numpy_calls: list[int] = []
    to_numpy = torch.Tensor.numpy

    def counted(self: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
        numpy_calls.append(1)
        return to_numpy(self, *args, **kwargs)

    out: dict[str, Any] = {}
    torch.Tensor.numpy = counted  # type: ignore[method-assign]
    try:
        for i, dtype in enumerate(ALL_DTYPES):
            numpy_calls.clear()
            rms_norm(randn(3, 8, dtype=dtype, seed=500 + 2 * i), randn(8, dtype=dtype, seed=501 + 2 * i))
            out[f"eager {dtype} call leaves torch through Tensor.numpy"] = len(numpy_calls) > 0
    finally:
        torch.Tensor.numpy = to_numpy  # type: ignore[method-assign]
    op = torch.ops.interview.rms_norm.default
    cpu_only = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)
    for dtype in (torch.float32, torch.bfloat16):
        meta = (torch.empty(3, 8, dtype=dtype, device="meta"), torch.empty(8, dtype=dtype, device="meta"))
        out[f"CPU kernel refuses meta {dtype} tensors"] = error_name(lambda m=meta: op.redispatch(cpu_only, *m, EPS)) != "ok"
        with FakeTensorMode():
            fake = (torch.empty(3, 8, dtype=dtype), torch.empty(8, dtype=dtype))
            out[f"CPU kernel refuses fake {dtype} tensors"] = error_name(lambda f=fake: op.redispatch(cpu_only, *f, EPS)) != "ok"
    return out


@probe(category="fake", weight=2, hints=["fake-kernel", "fake-strides"])
def fake_kernel_never_runs_the_eager_kernel(solution: Any) -> dict[str, Any]:
    """FakeTensorMode and meta with the eager kernel replaced by one that raises: the fake kernel alone describes the outputs."""
    from torch._library.custom_ops import OPDEFS

    real_kernel_calls: list[int] = []

    def refuse(*args: Any, **kwargs: Any) -> Any:
        real_kernel_calls.append(1)
        raise RuntimeError("the eager kernel ran on tensors without data")

    opdef = OPDEFS.get("interview::rms_norm")
    kept = None if opdef is None else (opdef._init_fn, dict(opdef._backend_fns))
    if opdef is not None:
        opdef._init_fn = refuse
        for device in list(opdef._backend_fns):
            opdef._backend_fns[device] = refuse

    def described(make: Callable[[], dict[str, Any]]) -> Any:
        try:
            return make()
        except Exception:  # noqa: BLE001 - the failure is the observation
            return "raised"

    out: dict[str, Any] = {}
    try:
        with FakeTensorMode():
            out["fake float32 (4, 8)"] = described(lambda: fake_call(torch.empty(4, 8), torch.empty(8)))
            out["fake bfloat16 transposed"] = described(
                lambda: fake_call(torch.empty(8, 3, dtype=torch.bfloat16).t(), torch.empty(8, dtype=torch.bfloat16))
            )
        out["meta float64 (2, 3, 5)"] = described(
            lambda: fake_call(
                torch.empty(2, 3, 5, dtype=torch.float64, device="meta"), torch.empty(5, dtype=torch.float64, device="meta")
            )
        )
    finally:
        if opdef is not None and kept is not None:
            opdef._init_fn = kept[0]
            opdef._backend_fns.clear()
            opdef._backend_fns.update(kept[1])
    out["eager kernel calls"] = len(real_kernel_calls)
    return out


def _numpy_bits(values: torch.Tensor, dtype: torch.dtype) -> Any:
    """values rounded to dtype, as the NumPy array whose bytes are those of the dtype (int16 for half dtypes)."""
    t = values.to(dtype)
    return t.numpy() if dtype == torch.float64 else t.view(torch.int16).numpy()


@probe(category="autograd", weight=2, rtol=2e-2, atol=2e-2, hints=["state"])
def values_changed_behind_the_version_counter(solution: Any) -> dict[str, Any]:
    """Calls and backwards on the same tensors, changed through .data and through shared NumPy memory in between: every gradient right."""
    # Writes through .data (old-style optimizers, p.data.copy_ when loading a checkpoint) and through a NumPy
    # array that shares the tensor's memory leave the tensor's _version alone: a memo of the weight (or of x)
    # in acc that is checked against the same live tensor at the same version returns the old values.
    rows, dim = 3, 8
    out: dict[str, Any] = {}
    for n, dtype in enumerate((torch.float64, torch.bfloat16, torch.float16)):
        seed = 600 + 40 * n
        steps = _DtypeSteps(out, str(dtype))
        np_dtype = np.float64 if dtype == torch.float64 else np.int16
        memory = (np.zeros((rows, dim), dtype=np_dtype), np.zeros(dim, dtype=np_dtype))
        memory[0][...] = _numpy_bits(randn(rows, dim, dtype=torch.float64, seed=seed), dtype)
        memory[1][...] = _numpy_bits(randn(dim, dtype=torch.float64, seed=seed + 1), dtype)
        x = _over_memory(memory[0], dtype).requires_grad_()
        weight = _over_memory(memory[1], dtype).requires_grad_()
        steps["first call"] = _call_and_grad(x, weight, EPS, seed=seed + 2)
        weight.data.mul_(-2.0).add_(randn(dim, dtype=dtype, seed=seed + 3))  # an optimizer step through .data
        steps["weight changed through .data"] = _call_and_grad(x, weight, EPS, seed=seed + 4)
        x.data.copy_(3.0 * randn(rows, dim, dtype=torch.float64, seed=seed + 5) + 1.0)
        steps["x changed through .data"] = _call_and_grad(x, weight, EPS, seed=seed + 6)
        weight.data.copy_(2.0 + randn(dim, dtype=torch.float64, seed=seed + 7))  # a checkpoint loaded
        x.data.copy_(randn(rows, dim, dtype=torch.float64, seed=seed + 8) - 1.0)
        steps["both loaded through .data.copy_"] = _call_and_grad(x, weight, 0.5, seed=seed + 9)
        memory[1][...] = _numpy_bits(randn(dim, dtype=torch.float64, seed=seed + 10) - 2.0, dtype)
        steps["weight written through shared NumPy memory"] = _call_and_grad(x, weight, EPS, seed=seed + 11)
        memory[0][...] = _numpy_bits(2.0 * randn(rows, dim, dtype=torch.float64, seed=seed + 12), dtype)
        steps["x written through shared NumPy memory"] = _call_and_grad(x, weight, EPS, seed=seed + 13)
        versions_unchanged = x._version == 0 and weight._version == 0
        out.setdefault("version counters never moved", {})[str(dtype)] = versions_unchanged
    return out


def _float64_truth(
    x: torch.Tensor, weight: torch.Tensor, eps: float, gy: torch.Tensor, grstd: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Gradients of the op at (x, weight, eps) for incoming (gy, grstd), by autograd through a float64 formula."""
    xd = x.detach().to(torch.float64).requires_grad_()
    wd = weight.detach().to(torch.float64).requires_grad_()
    rstd = torch.rsqrt(xd.pow(2).mean(dim=-1) + eps)
    y = xd * rstd.unsqueeze(-1) * wd
    grads = torch.autograd.grad((y, rstd), (xd, wd), (gy.to(torch.float64), grstd.to(torch.float64)))
    return grads[0], grads[1]


def _raises_or_grads_of_the_call(
    dtype: torch.dtype, change: Callable[..., Any] | None, tol: float, seed: int
) -> bool:
    """Call the op, change a tensor in place (a torch in-place op), then run its backward.

    True when that backward raises, or returns the gradients of the call as it
    ran (from the values before the change, float64 truth, within tol). With
    no change (change None), raising is not an answer: only the gradients are.
    """
    x = randn(3, 8, dtype=dtype, seed=seed).requires_grad_()
    weight = (1.0 + randn(8, dtype=torch.float64, seed=seed + 1)).to(dtype).requires_grad_()
    y, rstd = rms_norm(x, weight)
    gy = randn(*y.shape, dtype=y.dtype, seed=seed + 2)
    grstd = randn(*rstd.shape, dtype=rstd.dtype, seed=seed + 3)
    truth = _float64_truth(x, weight, EPS, gy, grstd)
    if change is not None:
        with torch.no_grad():
            change(x=x, weight=weight, y=y, rstd=rstd)
    try:
        grads = torch.autograd.grad((y, rstd), (x, weight), (gy, grstd))
    except Exception:  # noqa: BLE001 - raising is one of the two right answers, after a change
        return change is not None
    rtol, atol = (1e-9, 1e-12) if dtype == torch.float64 else (tol, tol)
    return all(
        isinstance(g, torch.Tensor)
        and g.shape == t.shape
        and bool(torch.allclose(g.detach().to(torch.float64), t, rtol=rtol, atol=atol))
        for g, t in zip(grads, truth, strict=True)
    )


@probe(category="autograd", weight=2, hints=["autograd-save"])
def changed_in_place_before_backward(solution: Any) -> dict[str, Any]:
    """x, weight or an output changed in place between a call and its backward: the backward raises, or returns the gradients of the call that ran."""
    changes: dict[str, Callable[..., Any] | None] = {
        "nothing changed": None,
        "x changed in place": lambda x, **_: x.mul_(3.0).add_(1.0),
        "weight changed in place": lambda weight, **_: weight.mul_(-2.0).add_(0.5),
        "rstd changed in place": lambda rstd, **_: rstd.mul_(2.0),
        "y changed in place": lambda y, **_: y.mul_(-1.5),
        "x and weight changed in place": lambda x, weight, **_: (x.add_(2.0), weight.mul_(3.0)),
    }
    out: dict[str, Any] = {}
    for n, dtype in enumerate((torch.float64, torch.bfloat16, torch.float16)):
        out[str(dtype)] = {
            name: _raises_or_grads_of_the_call(dtype, change, 2e-2, seed=700 + 40 * n + 4 * k)
            for k, (name, change) in enumerate(changes.items())
        }
    return out
