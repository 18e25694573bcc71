"""Hidden probes for register-autograd-for-custom-op: they make the score.

Four categories:

- ``gradients``: float64 gradcheck and gradients against the reference's,
  with repeated and unused rows, empty index tensors, the op inside a small
  model (one whose other branch shares the op's incoming gradient buffer),
  inf and NaN in gates, unused table rows and the incoming gradient, and
  tensors changed in place between forward and backward (ones the backward
  needs, and ones only a skipped gradient would read), and many calls in one
  process (``repeated_calls``: state kept from one call to the next).
- ``none-grads``: what ``backward`` returns slot by slot, recorded by
  re-registering the candidate's own ``setup_context`` and ``backward``
  behind a thin wrapper; whether a frozen table gets a (V, D) gradient
  built for it anyway; and whether backward reads the table's values for
  constant gates, or the gates' for a frozen table.
- ``opcheck``: ``torch.library.opcheck`` on several samples, one test at a
  time.
- ``compile``: ``torch.compile(fullgraph=True, backend="aot_eager")``
  forward and backward, with static and dynamic shapes.

Probes whose failure is expected from an unfinished solution (compile,
opcheck) catch the exception and return its class name.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from probekit import probe
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

OP_NAME = "interview::weighted_embedding"


def embed(table: torch.Tensor, indices: torch.Tensor, weights: torch.Tensor, scale: float) -> torch.Tensor:
    """Call the operator through the dispatcher."""
    return torch.ops.interview.weighted_embedding(table, indices, weights, scale)


def randn(*shape: int, seed: int, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """Seeded normal samples, independent of the global generator and of dtype."""
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=gen, dtype=torch.float64).to(dtype)


def randint(high: int, *shape: int, seed: int) -> torch.Tensor:
    """Seeded int64 indices in [0, high)."""
    gen = torch.Generator().manual_seed(seed)
    return torch.randint(0, high, shape, generator=gen, dtype=torch.int64)


def describe(value: Any) -> Any:
    """One entry of what backward returned: None, or a tensor's shape and dtype."""
    if value is None:
        return None
    if isinstance(value, torch.Tensor):
        return {"shape": list(value.shape), "dtype": str(value.dtype)}
    return type(value).__name__


def record_backward(solution: Any) -> list[Any]:
    """Re-register the candidate's own setup_context/backward, wrapped to record what backward returns."""
    calls: list[Any] = []

    def recording_backward(ctx: Any, *grads: torch.Tensor) -> Any:
        result = solution.backward(ctx, *grads)
        calls.append([describe(g) for g in result] if isinstance(result, tuple | list) else describe(result))
        return result

    torch.library.register_autograd(OP_NAME, recording_backward, setup_context=solution.setup_context)
    return calls


class ShapeLog(TorchDispatchMode):
    """Records the shape of every tensor an aten op produces while the mode is active."""

    def __init__(self) -> None:
        super().__init__()
        self.shapes: list[tuple[int, ...]] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        out = func(*args, **(kwargs or {}))
        self.shapes.extend(tuple(t.shape) for t in tree_leaves(out) if isinstance(t, torch.Tensor))
        return out


def gradients(
    table: torch.Tensor, indices: torch.Tensor, weights: torch.Tensor, scale: float, seed: int
) -> dict[str, Any]:
    """Output and the .grad of table and weights for a random weighting of the output."""
    out = embed(table, indices, weights, scale)
    (out * randn(*out.shape, seed=seed, dtype=out.dtype)).sum().backward()
    return {"out": out.detach(), "table.grad": table.grad, "weights.grad": weights.grad}


def error_name(fn: Callable[[], Any]) -> str:
    """Run fn; "ok" if it returned, else the class name of what it raised."""
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the failure is the observation
        return type(exc).__name__
    return "ok"


# ---------------------------------------------------------------- gradients


@probe(category="gradients", weight=2, hints=["formulas", "repeated-indices"])
def gradcheck_index_shapes(solution: Any) -> dict[str, Any]:
    """float64 gradcheck for indices of shape (7,), (3, 4) and (2, 3, 2), with repeats, several scales."""
    cases = {"(7,) scale 0.3": ((7,), 0.3), "(3, 4) scale -1.5": ((3, 4), -1.5), "(2, 3, 2) scale 2.0": ((2, 3, 2), 2.0)}
    out: dict[str, Any] = {}
    for i, (name, (shape, scale)) in enumerate(cases.items()):
        table = randn(5, 3, seed=10 + i).requires_grad_()
        indices = randint(5, *shape, seed=20 + i)
        weights = randn(*shape, seed=30 + i).requires_grad_()
        out[name] = error_name(
            lambda table=table, indices=indices, weights=weights, scale=scale: torch.autograd.gradcheck(
                lambda t, w: embed(t, indices, w, scale), (table, weights), raise_exception=True
            )
        )
    return out


@probe(category="gradients", weight=2, rtol=1e-9, atol=1e-12, hints=["repeated-indices"])
def gradients_heavy_repeats(solution: Any) -> dict[str, Any]:
    """60 lookups into rows 0..3 of an 8-row table: repeated rows add up, unused rows get 0."""
    table = randn(8, 5, seed=40).requires_grad_()
    indices = randint(4, 60, seed=41)
    weights = randn(60, seed=42).requires_grad_()
    return gradients(table, indices, weights, 0.75, seed=43)


@probe(category="gradients", rtol=1e-9, atol=1e-12, hints=["formulas", "repeated-indices"])
def gradients_inside_a_model(solution: Any) -> dict[str, Any]:
    """The op between other ops (non-leaf table and weights, a non-linear loss): parameter gradients."""
    base = randn(10, 4, seed=50).requires_grad_()
    proj = randn(4, 4, seed=51).requires_grad_()
    gate_logits = randn(3, 6, seed=52).requires_grad_()
    indices = randint(10, 3, 6, seed=53)
    table = torch.tanh(base @ proj)
    weights = torch.softmax(gate_logits, dim=-1)
    pooled = embed(table, indices, weights, 0.5).sum(dim=1)
    loss = torch.log1p(pooled**2).sum()
    g_base, g_proj, g_gate = torch.autograd.grad(loss, (base, proj, gate_logits))
    return {"loss": loss.detach(), "base.grad": g_base, "proj.grad": g_proj, "gate_logits.grad": g_gate}


@probe(category="gradients", hints=["formulas", "repeated-indices"])
def gradients_float32_and_empty(solution: Any) -> dict[str, Any]:
    """float32 gradients keep float32; empty index tensors (0,) and (3, 0) give zero and empty gradients."""
    out: dict[str, Any] = {}
    table = randn(6, 4, seed=60, dtype=torch.float32).requires_grad_()
    weights = randn(2, 5, seed=61, dtype=torch.float32).requires_grad_()
    out["float32"] = gradients(table, randint(6, 2, 5, seed=62), weights, 1.25, seed=63)
    for name, shape in (("(0,)", (0,)), ("(3, 0)", (3, 0))):
        table = randn(6, 4, seed=64).requires_grad_()
        weights = torch.zeros(shape, dtype=torch.float64).requires_grad_()
        out[name] = gradients(table, torch.zeros(shape, dtype=torch.int64), weights, 0.5, seed=65)
    return out


@probe(category="gradients", check="inplace_guarded", hints=["save-for-backward"])
def table_updated_before_backward(solution: Any) -> dict[str, Any]:
    """The table is updated in place (an optimizer step) between forward and backward: raise, or use the old values."""
    table = randn(7, 3, seed=70).requires_grad_()
    indices = randint(7, 4, 2, seed=71)
    weights = randn(4, 2, seed=72).requires_grad_()
    upstream = randn(4, 2, 3, seed=73)
    scale = 0.8
    inputs = {"table": table.detach().clone(), "indices": indices, "weights": weights.detach().clone(),
              "upstream": upstream, "scale": scale}
    out = embed(table, indices, weights, scale)
    with torch.no_grad():
        table.sub_(0.5 * randn(7, 3, seed=74))  # what an optimizer.step() does
    try:
        (out * upstream).sum().backward()
    except Exception as exc:  # noqa: BLE001 - the failure is the observation
        return {"error": type(exc).__name__, "mentions in-place": "inplace" in str(exc),
                "table.grad": None, "weights.grad": None, "inputs": inputs}
    return {"error": None, "mentions in-place": False, "table.grad": table.grad, "weights.grad": weights.grad,
            "inputs": inputs}


@probe(category="gradients", weight=2, rtol=1e-9, atol=1e-12, hints=["formulas", "index-shapes"])
def gradients_scalar_and_strided_indices(solution: Any) -> dict[str, Any]:
    """A 0-d index tensor (a single lookup), and index and weight tensors that are non-contiguous views."""
    out: dict[str, Any] = {}
    table = randn(5, 3, seed=200).requires_grad_()
    weights = randn(1, seed=201).reshape(()).requires_grad_()
    index = torch.tensor(3)
    out["0-d gradcheck"] = error_name(
        lambda: torch.autograd.gradcheck(lambda t, w: embed(t, index, w, 0.7), (table, weights), raise_exception=True)
    )
    out["0-d"] = gradients(table, index, weights, 0.7, seed=202)
    table = randn(8, 4, seed=203).requires_grad_()
    indices = randint(8, 5, 3, seed=204).t()  # (3, 5), not contiguous
    weights = randn(5, 3, seed=205).t().detach().requires_grad_()  # (3, 5), not contiguous
    out["transposed gradcheck"] = error_name(
        lambda: torch.autograd.gradcheck(lambda t, w: embed(t, indices, w, -1.1), (table, weights), raise_exception=True)
    )
    out["transposed"] = gradients(table, indices, weights, -1.1, seed=206)
    table = randn(8, 4, seed=207).requires_grad_()
    weights = randn(3, 10, seed=208).requires_grad_()
    every_other = randint(8, 3, 10, seed=209)[:, ::2]  # (3, 5), strided
    out["strided"] = gradients(table, every_other, weights[:, ::2], 0.4, seed=210)
    return out


@probe(category="gradients", weight=2, rtol=1e-9, atol=1e-12, hints=["formulas", "zero-gates"])
def gradients_zero_gates_and_zero_scale(solution: Any) -> dict[str, Any]:
    """Gates that are exactly zero (masked positions) and a zero scale: every gradient finite and right."""
    out: dict[str, Any] = {}
    table = randn(7, 4, seed=220).requires_grad_()
    mask = torch.tensor([[1.0, 1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 1.0, 0.0, 0.0]], dtype=torch.float64)
    weights = (randn(2, 5, seed=221) * mask).requires_grad_()
    out["masked gates"] = gradients(table, randint(7, 2, 5, seed=222), weights, 1.5, seed=223)
    table = randn(7, 4, seed=224).requires_grad_()
    weights = randn(6, seed=225).requires_grad_()
    out["scale 0"] = gradients(table, randint(7, 6, seed=226), weights, 0.0, seed=227)
    return out


def _updated_in_place(
    table: torch.Tensor, indices: torch.Tensor, weights: torch.Tensor, scale: float, update: Callable[[], Any], seed: int
) -> dict[str, Any]:
    """Forward, then ``update()`` changes a saved input in place, then backward: the observation inplace_guarded reads."""
    out = embed(table, indices, weights, scale)
    upstream = randn(*out.shape, seed=seed)
    inputs = {"table": table.detach().clone(), "indices": indices.clone(), "weights": weights.detach().clone(),
              "upstream": upstream, "scale": scale}
    update()
    try:
        (out * upstream).sum().backward()
    except Exception as exc:  # noqa: BLE001 - the failure is the observation
        return {"error": type(exc).__name__, "mentions in-place": "inplace" in str(exc),
                "table.grad": None, "weights.grad": None, "inputs": inputs}
    return {"error": None, "mentions in-place": False, "table.grad": table.grad, "weights.grad": weights.grad,
            "inputs": inputs}


@probe(category="gradients", weight=2, check="inplace_guarded_cases", hints=["save-for-backward"])
def gates_or_indices_updated_before_backward(solution: Any) -> dict[str, Any]:
    """The gates, or the index buffer, are changed in place between forward and backward: raise, or use the old values."""
    table = randn(7, 3, seed=230).requires_grad_()
    weights = randn(4, 2, seed=231).requires_grad_()

    def step_gates() -> None:
        with torch.no_grad():
            weights.mul_(0.5).add_(randn(4, 2, seed=232))  # an optimizer step on the gates

    gates = _updated_in_place(table, randint(7, 4, 2, seed=233), weights, 0.8, step_gates, seed=234)

    table = randn(7, 3, seed=235).requires_grad_()
    weights = randn(4, 2, seed=236).requires_grad_()
    batch = randint(7, 4, 2, seed=237)
    refill = randint(7, 4, 2, seed=238)  # the next batch, loaded into the same buffer
    buffer = _updated_in_place(table, batch, weights, -1.3, lambda: batch.copy_(refill), seed=239)
    return {"gates updated": gates, "index buffer refilled": buffer}


# ---------------------------------------------------------------- none-grads


@probe(category="none-grads", hints=["none-grads"])
def none_grads_everything_requires_grad(solution: Any) -> dict[str, Any]:
    """table and weights both require grad, float64 then float32: two tensors of the inputs' shapes and dtypes, None for indices and scale."""
    calls = record_backward(solution)
    for i, dtype in enumerate((torch.float64, torch.float32)):
        table = randn(9, 2, seed=80 + 3 * i, dtype=dtype).requires_grad_()
        weights = randn(3, 4, seed=81 + 3 * i, dtype=dtype).requires_grad_()
        embed(table, randint(9, 3, 4, seed=82 + 3 * i), weights, 1.5).sum().backward()
    return {"backward returned": calls}


@probe(category="none-grads", weight=2, rtol=1e-9, atol=1e-12, hints=["needs-input-grad", "none-grads"])
def none_grads_frozen_table(solution: Any) -> dict[str, Any]:
    """A frozen table (requires_grad=False): None in its slot, no (V, D) tensor built in backward, right weights.grad."""
    calls = record_backward(solution)
    table = randn(41, 3, seed=90)
    weights = randn(4, 5, seed=91).requires_grad_()
    out = embed(table, randint(41, 4, 5, seed=92), weights, -0.6)
    loss = (out * randn(4, 5, 3, seed=93)).sum()
    log = ShapeLog()
    with log:
        loss.backward()
    return {
        "backward returned": calls,
        "a (41, 3) tensor was made during backward": (41, 3) in log.shapes,
        "weights.grad": weights.grad,
    }


@probe(category="none-grads", rtol=1e-9, atol=1e-12, hints=["needs-input-grad", "none-grads"])
def none_grads_constant_weights(solution: Any) -> dict[str, Any]:
    """Constant weights (requires_grad=False): None in their slot, and the right table.grad."""
    calls = record_backward(solution)
    table = randn(6, 4, seed=100).requires_grad_()
    weights = randn(2, 3, 2, seed=101)
    indices = randint(6, 2, 3, 2, seed=102)
    out = embed(table, indices, weights, 2.0)
    (out * randn(2, 3, 2, 4, seed=103)).sum().backward()
    return {"backward returned": calls, "table.grad": table.grad, "weights.grad": weights.grad}


# ---------------------------------------------------------------- opcheck


def opcheck_samples() -> dict[str, tuple[torch.Tensor, torch.Tensor, torch.Tensor, float]]:
    """Samples covering which inputs require grad, index ranks and dtypes."""
    return {
        "float64 (2, 3) indices, both require grad": (
            randn(6, 4, seed=110).requires_grad_(), randint(6, 2, 3, seed=111), randn(2, 3, seed=112).requires_grad_(), 0.5,
        ),
        "float32 (5,) indices, frozen table": (
            randn(4, 3, seed=113, dtype=torch.float32), randint(4, 5, seed=114),
            randn(5, seed=115, dtype=torch.float32).requires_grad_(), -1.0,
        ),
        "float64 (2, 2, 3) indices, constant weights": (
            randn(5, 2, seed=116).requires_grad_(), randint(5, 2, 2, 3, seed=117), randn(2, 2, 3, seed=118), 3.0,
        ),
        "float32 nothing requires grad": (
            randn(3, 3, seed=119, dtype=torch.float32), randint(3, 4, seed=120), randn(4, seed=121, dtype=torch.float32), 1.0,
        ),
    }


def opcheck_table(tests: tuple[str, ...], skip: tuple[str, ...] = ()) -> dict[str, dict[str, str]]:
    """opcheck every sample (but those in skip) with every test, one at a time, so one failure hides no other."""
    op = torch.ops.interview.weighted_embedding.default
    return {
        name: {test: error_name(lambda args=args, test=test: torch.library.opcheck(op, args, test_utils=test)) for test in tests}
        for name, args in opcheck_samples().items()
        if name not in skip
    }


@probe(category="opcheck", hints=["none-grads", "needs-input-grad"])
def opcheck_registration(solution: Any) -> dict[str, Any]:
    """opcheck's test_schema, test_autograd_registration and test_faketensor on four samples."""
    return opcheck_table(("test_schema", "test_autograd_registration", "test_faketensor"))


@probe(category="opcheck", weight=2, hints=["traceable"])
def opcheck_aot_dispatch(solution: Any) -> dict[str, Any]:
    """opcheck's test_aot_dispatch_dynamic on three samples: the formula traced with symbolic shapes."""
    # The sample where nothing requires grad never reaches the formula: skipped to save time.
    return opcheck_table(("test_aot_dispatch_dynamic",), skip=("float32 nothing requires grad",))


# ---------------------------------------------------------------- compile


def compiled_gradients(
    fn: Callable[..., torch.Tensor], params: dict[str, torch.Tensor], args: tuple, **opts: Any
) -> dict[str, Any]:
    """Compile fn (fullgraph, aot_eager), run forward and backward: the loss and each parameter's grad."""
    compiled = torch.compile(fn, fullgraph=True, backend="aot_eager", **opts)
    try:
        loss = compiled(*params.values(), *args)
        loss.backward()
    except Exception as exc:  # noqa: BLE001 - the failure is the observation
        return {"error": type(exc).__name__, "loss": None, **{f"{k}.grad": None for k in params}}
    return {"error": None, "loss": loss.detach(), **{f"{k}.grad": p.grad for k, p in params.items()}}


def gated_bag(table: torch.Tensor, gate_logits: torch.Tensor, proj: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    """A gated bag of embeddings: sigmoid gates, the op, a sum over the bag, a projection, a loss."""
    pooled = embed(table, indices, torch.sigmoid(gate_logits), 0.5).sum(dim=-2)
    return torch.tanh(pooled @ proj).pow(2).sum()


@probe(category="compile", weight=2, rtol=1e-4, atol=1e-5, hints=["traceable", "repeated-indices"])
def compile_gated_bag_float32(solution: Any) -> dict[str, Any]:
    """The op inside a compiled float32 model: loss and the gradients of table, gates and projection."""
    params = {
        "table": randn(12, 6, seed=130, dtype=torch.float32).requires_grad_(),
        "gate_logits": randn(4, 7, seed=131, dtype=torch.float32).requires_grad_(),
        "proj": randn(6, 3, seed=132, dtype=torch.float32).requires_grad_(),
    }
    return compiled_gradients(gated_bag, params, (randint(12, 4, 7, seed=133),))


@probe(category="compile", weight=2, rtol=1e-9, atol=1e-12, hints=["traceable", "repeated-indices"])
def compile_dynamic_shapes(solution: Any) -> dict[str, Any]:
    """dynamic=True, float64, three index shapes through one compiled function: losses and gradients."""
    out: dict[str, Any] = {}
    failed = None
    for i, shape in enumerate(((3, 5), (6, 2), (2, 9))):
        params = {
            "table": randn(10, 4, seed=140 + i).requires_grad_(),
            "gate_logits": randn(*shape, seed=150 + i).requires_grad_(),
            "proj": randn(4, 2, seed=160 + i).requires_grad_(),
        }
        if failed is not None:  # a failed compile is slow: do not retry it for every shape
            out[str(shape)] = {**failed, "error": f"not run: {failed['error']} on an earlier shape"}
            continue
        out[str(shape)] = compiled_gradients(gated_bag, params, (randint(10, *shape, seed=170 + i),), dynamic=True)
        if out[str(shape)]["error"] is not None:
            failed = out[str(shape)]
    return out


@probe(category="compile", rtol=1e-9, atol=1e-12, hints=["traceable", "needs-input-grad"])
def compile_frozen_table(solution: Any) -> dict[str, Any]:
    """Compiled, float64, with a frozen table: gradients for the gates and the projection only."""
    table = randn(9, 4, seed=180)
    params = {
        "gate_logits": randn(3, 5, seed=181).requires_grad_(),
        "proj": randn(4, 4, seed=182).requires_grad_(),
    }
    result = compiled_gradients(
        lambda g, p, t, i: gated_bag(t, g, p, i), params, (table, randint(9, 3, 5, seed=183))
    )
    result["table.grad is None"] = table.grad is None
    return result


# ---------------------------------------------------------------- red team round 1


# Ops that read only a tensor's metadata (shape, dtype, device), never its values.
METADATA_ONLY = frozenset({"zeros_like", "empty_like", "ones_like", "full_like", "new_zeros", "new_empty", "new_ones", "new_full"})


def _storage(t: torch.Tensor) -> int:
    return t.untyped_storage().data_ptr()


class ReadLog(TorchDispatchMode):
    """Follows which tensors hold values derived from a watched tensor, and records the ops that read them in backward.

    A tensor is derived from the watched one when an op that read a derived
    tensor made it (or wrote it in place); views share their base's storage.
    Every derived tensor is kept alive, so a freed one's memory cannot be taken
    for an unrelated tensor. Ops that read only metadata (``zeros_like``,
    ``new_zeros``) read no values.
    """

    def __init__(self, watched: torch.Tensor) -> None:
        super().__init__()
        self.derived = {_storage(watched)}
        self.keep = [watched]
        self.in_backward = False
        self.reads: list[str] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        out = func(*args, **(kwargs or {}))
        name = func.overloadpacket.__name__
        if name in METADATA_ONLY or getattr(func, "is_view", False):
            return out
        inputs = [t for t in tree_leaves((args, kwargs or {})) if isinstance(t, torch.Tensor)]
        if any(t.numel() and _storage(t) in self.derived for t in inputs):
            if self.in_backward:
                self.reads.append(name)
            for t in tree_leaves(out):
                if isinstance(t, torch.Tensor) and t.numel():
                    self.derived.add(_storage(t))
                    self.keep.append(t)
        return out


def reads_in_backward(
    solution: Any, watched: torch.Tensor, table: torch.Tensor, indices: torch.Tensor, weights: torch.Tensor, scale: float, seed: int
) -> bool:
    """Forward, setup_context and backward under a ReadLog of ``watched``: did the candidate's backward read its values?"""
    log = ReadLog(watched)

    def watched_backward(ctx: Any, *grads: torch.Tensor) -> Any:
        log.in_backward = True
        try:
            return solution.backward(ctx, *grads)
        finally:
            log.in_backward = False

    torch.library.register_autograd(OP_NAME, watched_backward, setup_context=solution.setup_context)
    upstream = randn(*indices.shape, table.shape[1], seed=seed)
    with log:
        (embed(table, indices, weights, scale) * upstream).sum().backward()
    return bool(log.reads)


@probe(category="none-grads", weight=2, rtol=1e-9, atol=1e-12, hints=["needs-input-grad"])
def unneeded_gradient_not_computed(solution: Any) -> dict[str, Any]:
    """Constant gates: backward never reads the table's values; frozen table: it never reads the gates' (and the needed gradient is right)."""
    table = randn(9, 4, seed=300).requires_grad_()
    weights = randn(3, 5, seed=301)
    constant_gates = reads_in_backward(solution, table, table, randint(9, 3, 5, seed=302), weights, 0.7, seed=303)
    frozen_table = randn(9, 4, seed=304)
    gates = randn(3, 5, seed=305).requires_grad_()
    frozen = reads_in_backward(solution, gates, frozen_table, randint(9, 3, 5, seed=306), gates, -1.2, seed=307)
    return {
        "constant gates": {"backward read the table": constant_gates, "table.grad": table.grad},
        "frozen table": {"backward read the gates": frozen, "weights.grad": gates.grad},
    }


def _update_then_backward(
    table: torch.Tensor, indices: torch.Tensor, weights: torch.Tensor, scale: float, update: Callable[[], Any], seed: int
) -> dict[str, Any]:
    """Forward, ``update()`` in place, backward: the error's class (or None) and both .grad."""
    out = embed(table, indices, weights, scale)
    update()
    error = error_name(lambda: (out * randn(*out.shape, seed=seed)).sum().backward())
    return {"error": None if error == "ok" else error, "table.grad": table.grad, "weights.grad": weights.grad}


@probe(category="gradients", weight=2, rtol=1e-9, atol=1e-12, hints=["needs-input-grad", "save-for-backward"])
def unneeded_input_updated_before_backward(solution: Any) -> dict[str, Any]:
    """A tensor only the unneeded gradient depends on is changed in place before backward: no error, the right gradient."""
    table = randn(7, 3, seed=310).requires_grad_()
    weights = randn(4, 2, seed=311)  # constant: grad_table does not depend on the table

    def step_table() -> None:
        with torch.no_grad():
            table.sub_(0.5 * randn(7, 3, seed=312))

    constant_gates = _update_then_backward(table, randint(7, 4, 2, seed=313), weights, 0.8, step_table, seed=314)
    frozen = randn(7, 3, seed=315)  # frozen: grad_weights does not depend on the gates
    gates = randn(4, 2, seed=316).requires_grad_()

    def step_gates() -> None:
        with torch.no_grad():
            gates.mul_(0.5).add_(randn(4, 2, seed=317))

    frozen_table = _update_then_backward(frozen, randint(7, 4, 2, seed=318), gates, -1.3, step_gates, seed=319)
    return {"constant gates, table updated": constant_gates, "frozen table, gates updated": frozen_table}


def finite_split(value: torch.Tensor | None) -> Any:
    """A gradient as (where it is finite, its finite values with 0 elsewhere): inf and NaN compared by place only."""
    if value is None:
        return None
    finite = torch.isfinite(value)
    return {"finite": finite, "values": torch.where(finite, value, torch.zeros_like(value))}


@probe(category="gradients", weight=2, rtol=1e-9, atol=1e-12, hints=["non-finite"])
def nonfinite_values_stay_where_they_belong(solution: Any) -> dict[str, Any]:
    """inf and NaN in a gate, in the upstream gradient, or in a table row never looked up: only the entries that depend on them are non-finite."""
    indices = torch.tensor([[0, 0, 2, 5], [2, 6, 0, 5]])  # rows 1, 3 and 4 never looked up
    out: dict[str, Any] = {}

    table = randn(7, 3, seed=320).requires_grad_()
    gates = randn(2, 4, seed=321)
    gates[0, 1] = float("nan")
    gates[1, 3] = float("inf")
    out["NaN and inf gates"] = finite_split(gradients(table, indices, gates, 0.5, seed=322)["table.grad"])

    table = randn(7, 3, seed=323)
    table[1] = float("inf")
    table[3, 0] = float("nan")
    table[4, 2] = -float("inf")
    table.requires_grad_()
    gates = randn(2, 4, seed=324).requires_grad_()
    result = gradients(table, indices, gates, -0.9, seed=325)
    out["inf and NaN in unused rows"] = {"table.grad": finite_split(result["table.grad"]),
                                          "weights.grad": finite_split(result["weights.grad"])}

    table = randn(7, 3, seed=326).requires_grad_()
    gates = randn(2, 4, seed=327).requires_grad_()
    upstream = randn(2, 4, 3, seed=328)
    upstream[0, 2, 1] = float("inf")
    upstream[1, 1, 0] = float("nan")
    (embed(table, indices, gates, 1.1) * 1.0).backward(upstream)
    out["inf and NaN upstream"] = {"table.grad": finite_split(table.grad), "weights.grad": finite_split(gates.grad)}
    out.update(nonfinite_with_special_scales(indices))
    return out


def nonfinite_with_special_scales(indices: torch.Tensor) -> dict[str, Any]:
    """A zero scale next to inf and NaN (0 * inf and 0 * NaN are NaN), then an infinite and a NaN scale.

    With an infinite or NaN scale every entry that depends on it is non-finite,
    and rows never looked up still get exactly 0.
    """
    out: dict[str, Any] = {}
    table = randn(7, 3, seed=500)
    table[2, 1] = float("inf")  # a row looked up
    table[4, 0] = float("nan")  # a row never looked up
    table.requires_grad_()
    gates = randn(2, 4, seed=501)
    gates[0, 1] = float("nan")
    gates[1, 3] = float("inf")
    gates.requires_grad_()
    upstream = randn(2, 4, 3, seed=502)
    upstream[0, 0, 2] = float("nan")
    upstream[1, 0, 1] = -float("inf")
    embed(table, indices, gates, 0.0).backward(upstream)
    out["zero scale, inf and NaN around it"] = {"table.grad": finite_split(table.grad),
                                                 "weights.grad": finite_split(gates.grad)}
    for name, scale, seed in (("infinite scale", float("inf"), 503), ("NaN scale", float("nan"), 506)):
        table = randn(7, 3, seed=seed).requires_grad_()
        gates = randn(2, 4, seed=seed + 1).requires_grad_()
        embed(table, indices, gates, scale).backward(randn(2, 4, 3, seed=seed + 2))
        out[name] = {"table.grad": finite_split(table.grad), "weights.grad": finite_split(gates.grad)}
    return out


@probe(category="gradients", weight=2, rtol=1e-9, atol=1e-12, hints=["grad-out-read-only"])
def upstream_gradient_shared_with_another_branch(solution: Any) -> dict[str, Any]:
    """(u + op(...)).sin().sum(): the op and u get one gradient buffer; the other branch's gradient, and the inputs, stay right."""
    out: dict[str, Any] = {}
    for name, table_grad, gate_grad, seed in (("both require grad", True, True, 330), ("frozen table", False, True, 340),
                                              ("constant gates", True, False, 350)):
        x = randn(2, 4, 3, seed=seed).requires_grad_()
        table = randn(6, 3, seed=seed + 1).requires_grad_(table_grad)
        gates = randn(2, 4, seed=seed + 2).requires_grad_(gate_grad)
        before = {"table": table.detach().clone(), "weights": gates.detach().clone()}
        u = 3.0 * x  # made before the op: the op's backward runs first and sees the shared buffer
        y = embed(table, randint(6, 2, 4, seed=seed + 3), gates, 0.5)
        (u + y).sin().sum().backward()
        out[name] = {
            "x.grad": x.grad, "table.grad": table.grad, "weights.grad": gates.grad,
            "table unchanged": torch.equal(table.detach(), before["table"]),
            "weights unchanged": torch.equal(gates.detach(), before["weights"]),
        }
    return out


# ---------------------------------------------------------------- state kept across calls


def _call_and_grad(
    table: torch.Tensor, indices: torch.Tensor, weights: torch.Tensor, scale: float, seed: int
) -> dict[str, Any]:
    """One forward and backward through torch.autograd.grad: the gradients as backward returned them, not copied."""
    out = embed(table, indices, weights, scale)
    wanted = [t for t in (table, weights) if t.requires_grad]
    grads = iter(torch.autograd.grad(out, wanted, randn(*out.shape, seed=seed)))
    return {
        "table.grad": next(grads) if table.requires_grad else None,
        "weights.grad": next(grads) if weights.requires_grad else None,
    }


def _snapshot(grads: dict[str, Any]) -> dict[str, Any]:
    """Copies of one call's gradients, taken before the next call runs."""
    return {name: None if g is None else g.clone() for name, g in grads.items()}


def _clone_into_freed_id(source: torch.Tensor, freed_id: int) -> torch.Tensor:
    """A clone of ``source`` that is, as a rule, a new object at the id of a freed tensor.

    Clones that land elsewhere are kept alive until the one wanted comes up,
    so each try takes the next free slot of the allocator (gc.collect() frees
    a few hundred objects of a tensor's size on top of the ones wanted);
    after 4096 tries the last one is used.
    """
    spare: list[torch.Tensor] = []
    for _ in range(4096):
        fresh = source.clone()
        if id(fresh) == freed_id:
            return fresh
        spare.append(fresh)
    return spare.pop()


@probe(category="gradients", weight=2, rtol=1e-9, atol=1e-12, hints=["state"])
def repeated_calls(solution: Any) -> dict[str, Any]:
    """Many forward and backward calls in one process, on inputs changed, look-alike or rebuilt: every gradient right, also after later calls.

    The steps: the same tensors changed in place between calls (table, gates,
    index buffer), another scale, a frozen table, constant gates; new tensors
    of the same shapes; tensors freed and rebuilt at the same ids; new tensors
    over the memory of earlier ones; two calls with different scales whose
    forwards both run before one backward; one graph whose backward runs
    twice (retain_graph=True).

    Each call goes through torch.autograd.grad, which hands over the tensors
    backward returned. The observation holds a copy of each call's gradients
    taken right after it ("at each call": a memo of gathered rows, scaled
    gates or a whole gradient keyed on a tensor's id, its data_ptr(), its
    shapes and dtype, or the tensor object itself returns an earlier call's
    values at one of the steps), and the tensors themselves, read once every
    call has run ("after all calls": a buffer that a later backward reuses
    changes an earlier result).
    """
    num_rows, dim, shape = 9, 4, (3, 5)
    returned: dict[str, Any] = {}
    at_call: dict[str, Any] = {}

    def record(step: str, grads: dict[str, Any]) -> None:
        returned[step] = grads
        at_call[step] = _snapshot(grads)

    table = randn(num_rows, dim, seed=400).requires_grad_()
    indices = randint(num_rows, *shape, seed=401)
    weights = randn(*shape, seed=402).requires_grad_()
    record("first call", _call_and_grad(table, indices, weights, 0.7, seed=403))
    with torch.no_grad():
        table.sub_(0.5 * randn(num_rows, dim, seed=404))  # an optimizer step on the table
    record("table changed in place", _call_and_grad(table, indices, weights, 0.7, seed=405))
    with torch.no_grad():
        weights.mul_(-0.5).add_(randn(*shape, seed=406))  # an optimizer step on the gates
    record("gates changed in place", _call_and_grad(table, indices, weights, 0.7, seed=407))
    indices.copy_(randint(num_rows, *shape, seed=408))  # the next batch, in the same buffer
    record("index buffer refilled", _call_and_grad(table, indices, weights, 0.7, seed=409))
    record("same tensors, another scale", _call_and_grad(table, indices, weights, -1.9, seed=410))
    table.requires_grad_(False)
    record("same tensors, table frozen", _call_and_grad(table, indices, weights, 0.7, seed=411))
    table.requires_grad_(True)
    weights.requires_grad_(False)
    record("same tensors, gates constant", _call_and_grad(table, indices, weights, 0.7, seed=412))
    weights.requires_grad_(True)

    # New tensors of the same shapes and dtypes (fresh version counters), then freed and rebuilt as new
    # tensors at the ids of the freed ones.
    table = randn(num_rows, dim, seed=413).requires_grad_()
    indices = randint(num_rows, *shape, seed=414)
    weights = randn(*shape, seed=415).requires_grad_()
    record("new tensors of the same shapes", _call_and_grad(table, indices, weights, 0.7, seed=416))
    ids_taken = []
    for k in range(2):
        values = (randn(num_rows, dim, seed=420 + 4 * k), randint(num_rows, *shape, seed=421 + 4 * k), randn(*shape, seed=422 + 4 * k))
        freed = (id(table), id(indices), id(weights))
        del table, indices, weights
        gc.collect()
        table, indices, weights = (_clone_into_freed_id(v, i) for v, i in zip(values, freed, strict=True))
        table.requires_grad_()
        weights.requires_grad_()
        ids_taken.append((id(table), id(indices), id(weights)) == freed)
        record(f"tensors freed and rebuilt, call {k + 1}", _call_and_grad(table, indices, weights, 0.7, seed=423 + 4 * k))

    # New tensors over the memory of earlier ones (same data_ptr, shape and dtype, a fresh version counter):
    # a loader that writes each batch into one buffer. The values are written through NumPy between calls.
    memory = {"table": np.empty((num_rows, dim)), "indices": np.empty(shape, dtype=np.int64), "weights": np.empty(shape)}
    for k in range(3):
        memory["table"][...] = randn(num_rows, dim, seed=440 + 4 * k).numpy()
        memory["indices"][...] = randint(num_rows, *shape, seed=441 + 4 * k).numpy()
        memory["weights"][...] = randn(*shape, seed=442 + 4 * k).numpy()
        table = torch.from_numpy(memory["table"]).requires_grad_()
        indices = torch.from_numpy(memory["indices"])
        weights = torch.from_numpy(memory["weights"]).requires_grad_()
        record(f"new tensors over earlier memory, call {k + 1}", _call_and_grad(table, indices, weights, 0.7, seed=443 + 4 * k))

    # Two lookups into one table, with different scales, whose forwards both run before one backward.
    table = randn(num_rows, dim, seed=460).requires_grad_()
    weights = randn(*shape, seed=461).requires_grad_()
    first = embed(table, randint(num_rows, *shape, seed=462), weights, 0.5)
    second = embed(table, randint(num_rows, *shape, seed=463), weights, -3.0)
    upstreams = (randn(*first.shape, seed=464), randn(*second.shape, seed=465))
    grads = torch.autograd.grad((first, second), (table, weights), upstreams)
    record("two forwards, then one backward", {"table.grad": grads[0], "weights.grad": grads[1]})
    # One graph, its backward run twice (retain_graph=True) with different incoming gradients.
    retained = embed(table, randint(num_rows, *shape, seed=466), weights, 0.7)
    for k in range(2):
        grads = torch.autograd.grad(retained, (table, weights), randn(*retained.shape, seed=467 + k), retain_graph=k == 0)
        record(f"retained graph, backward {k + 1}", {"table.grad": grads[0], "weights.grad": grads[1]})

    return {
        "at each call": at_call,
        "after all calls": returned,
        "a rebuilt set of tensors took the freed ids": any(ids_taken),
    }


# ---------------------------------------------------------------- red team round 2 (blind)


def _gradients_or_error(
    table: torch.Tensor, indices: torch.Tensor, weights: torch.Tensor, scale: float, seed: int,
    change: Callable[[torch.Tensor], Any] | None = None,
) -> dict[str, Any]:
    """Forward, ``change(out)`` if given, backward of a random weighting: the error's class (or None) and both .grad."""
    def run() -> None:
        out = embed(table, indices, weights, scale)
        if change is not None:
            change(out)
        (out * randn(*out.shape, seed=seed)).sum().backward()

    error = error_name(run)
    return {"error": None if error == "ok" else error, "table.grad": table.grad, "weights.grad": weights.grad}


@probe(category="gradients", rtol=1e-9, atol=1e-12, hints=["index-shapes"])
def gradients_size_one_index_dims(solution: Any) -> dict[str, Any]:
    """Index shapes with dimensions of size 1, (1,), (3, 1), (1, 4) and (2, 1, 3): gradients of the right shape and value."""
    out: dict[str, Any] = {}
    for i, shape in enumerate(((1,), (3, 1), (1, 4), (2, 1, 3))):
        table = randn(6, 3, seed=510 + i).requires_grad_()
        weights = randn(*shape, seed=520 + i).requires_grad_()
        out[str(shape)] = _gradients_or_error(table, randint(6, *shape, seed=530 + i), weights, -0.8, seed=540 + i)
    return out


@probe(category="gradients", rtol=1e-9, atol=1e-12, hints=["output-in-place"])
def output_changed_in_place_by_the_model(solution: Any) -> dict[str, Any]:
    """The model changes the op's output in place after the forward (relu_, mul_): no error, the right gradients."""
    out: dict[str, Any] = {}
    for name, change, table_grad, seed in (("relu_", torch.Tensor.relu_, True, 550),
                                           ("mul_, frozen table", lambda y: y.mul_(2.5), False, 560)):
        table = randn(6, 3, seed=seed).requires_grad_(table_grad)
        weights = randn(2, 4, seed=seed + 1).requires_grad_()
        out[name] = _gradients_or_error(table, randint(6, 2, 4, seed=seed + 2), weights, 0.6, seed=seed + 3,
                                        change=change)
    return out


# ---------------------------------------------------------------- red team round 3 (blind)


def nonfinite_kinds(value: torch.Tensor | None) -> Any:
    """A gradient as (the kind of each entry: 0 finite, 1 +inf, -1 -inf, 2 NaN; its finite values, 0 elsewhere).

    Unlike :func:`finite_split`, inf and NaN are told apart, and so are the
    signs of inf.
    """
    if value is None:
        return None
    kind = torch.zeros(value.shape, dtype=torch.int64)
    kind[value == float("inf")] = 1
    kind[value == -float("inf")] = -1
    kind[torch.isnan(value)] = 2
    finite = torch.isfinite(value)
    return {"kind": kind, "values": torch.where(finite, value, torch.zeros_like(value))}


@probe(category="gradients", rtol=1e-9, atol=1e-12, hints=["formulas", "non-finite"])
def gate_gradient_scale_times_row_sum(solution: Any) -> dict[str, Any]:
    """An infinite scale with zeros in looked-up rows and in the incoming gradient: a gate's gradient is scale * (row sum), so +-inf, not NaN."""
    indices = torch.tensor([[0, 0, 2, 5], [2, 6, 0, 5]])  # rows 1, 3 and 4 never looked up
    out: dict[str, Any] = {}
    for name, scale, seed in (("scale +inf", float("inf"), 600), ("scale -inf", -float("inf"), 610)):
        table = randn(7, 3, seed=seed)
        table[0, 1] = 0.0  # a zero in rows looked up: one product of the row sum is 0
        table[2, 0] = 0.0
        table[5, 2] = -0.0
        table.requires_grad_()
        gates = randn(2, 4, seed=seed + 1).requires_grad_()
        upstream = randn(2, 4, 3, seed=seed + 2)
        upstream[1, 1, 0] = 0.0  # a zero in the incoming gradient (row 6 has none)
        upstream[0, 3, 1] = 0.0
        embed(table, indices, gates, scale).backward(upstream)
        out[name] = {"weights.grad": nonfinite_kinds(gates.grad), "table.grad": nonfinite_kinds(table.grad)}
    return out


@probe(category="gradients", rtol=1e-9, atol=1e-12, hints=["zero-gates", "non-finite"])
def zero_gates_next_to_nonfinite_values(solution: Any) -> dict[str, Any]:
    """Gates of 0.0 and -0.0 next to inf and NaN in the incoming gradient and the table: 0 * inf is NaN in table.grad, not a skipped lookup."""
    indices = torch.tensor([[0, 0, 2, 5], [2, 6, 0, 5]])
    out: dict[str, Any] = {}
    for name, scale, seed in (("scale 1.3", 1.3, 620), ("scale -0.4", -0.4, 630)):
        table = randn(7, 3, seed=seed)
        table[2, 1] = float("inf")  # row 2, looked up at a zero gate and at a nonzero one
        table.requires_grad_()
        gates = randn(2, 4, seed=seed + 1)
        gates[0, 1] = 0.0  # row 0
        gates[0, 2] = 0.0  # row 2
        gates[1, 1] = -0.0  # row 6
        gates.requires_grad_()
        upstream = randn(2, 4, 3, seed=seed + 2)
        upstream[0, 1, 2] = float("inf")  # at the zero gate of row 0
        upstream[1, 1, 0] = float("nan")  # at the -0.0 gate of row 6
        upstream[0, 2, 0] = -float("inf")  # at the zero gate of row 2
        embed(table, indices, gates, scale).backward(upstream)
        out[name] = {"table.grad": nonfinite_kinds(table.grad), "weights.grad": nonfinite_kinds(gates.grad)}
    return out


class AllocationLog(TorchDispatchMode):
    """Records every new tensor of at least ``limit`` elements an aten op makes while the mode is active.

    A tensor that shares its storage with one of the op's inputs (a view, an
    in-place result) is not new.
    """

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit
        self.made: list[str] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        out = func(*args, **(kwargs or {}))
        inputs = {_storage(t) for t in tree_leaves((args, kwargs or {})) if isinstance(t, torch.Tensor) and t.numel()}
        for t in tree_leaves(out):
            if isinstance(t, torch.Tensor) and t.numel() >= self.limit and _storage(t) not in inputs:
                self.made.append(f"{func.overloadpacket.__name__} -> {tuple(t.shape)}")
        return out


def _large_tensors_kept(ctx: Any, table: torch.Tensor) -> list[str]:
    """Tensors of the table's size or larger that ``ctx`` holds (saved or as attributes), the table and its views aside."""
    found: list[str] = []
    for name, value in vars(ctx).items():
        for t in tree_leaves(value) if isinstance(value, list | tuple | dict) else [value]:
            if (isinstance(t, torch.Tensor) and t.numel() >= table.numel()
                    and _storage(t) != _storage(table)):
                found.append(f"ctx.{name}: {tuple(t.shape)}")
    return found


@probe(category="none-grads", rtol=1e-9, atol=1e-12, hints=["needs-input-grad"])
def frozen_table_costs_no_table_sized_memory(solution: Any) -> dict[str, Any]:
    """A frozen 50 x 4 table, six lookups: from forward to backward, setup_context included, no tensor of the table's size is built or kept."""
    kept: list[str] = []

    def watched_setup_context(ctx: Any, inputs: tuple, output: torch.Tensor) -> None:
        solution.setup_context(ctx, inputs, output)
        kept.extend(_large_tensors_kept(ctx, inputs[0]))

    torch.library.register_autograd(OP_NAME, solution.backward, setup_context=watched_setup_context)
    out: dict[str, Any] = {}
    for name, shape, seed in (("(2, 3) lookups", (2, 3), 640), ("(6,) lookups", (6,), 650)):
        table = randn(50, 4, seed=seed)  # frozen
        gates = randn(*shape, seed=seed + 1).requires_grad_()
        indices = randint(50, *shape, seed=seed + 2)
        upstream = randn(*shape, 4, seed=seed + 3)
        log = AllocationLog(table.numel())
        kept.clear()
        with log:
            (embed(table, indices, gates, 0.9) * upstream).sum().backward()
        out[name] = {"tensors of the table's size built": list(log.made), "kept on ctx": list(kept),
                     "weights.grad": gates.grad}
    return out
