"""Hidden probes for dispatch-mode-op-counter: they make the score.

Categories:

- ``ops-forward`` / ``ops-backward``: the counts of small models' forward
  and backward passes, compared exactly with the reference's counts (the
  reference counts every call its mode receives, so any counter that does the
  same agrees with it).
- ``flops``: FLOP totals and per-op FLOPs, checked in ``checks.py`` against
  a count computed from the layer sizes alone, not against the reference.
- ``nesting``: reuse, nesting with other modes, exits on exceptions.
- ``passthrough``: the mode must not change what the ops compute.

Models and inputs are built before the counter is entered, so that
parameter initialisation is not counted.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import torch
from probekit import probe
from torch import nn
from torch.nn import functional as F
from torch.utils._python_dispatch import TorchDispatchMode, _get_current_dispatch_mode, _get_current_dispatch_mode_stack
from torch.utils._pytree import tree_map


def randn(*shape: int, seed: int = 0, requires_grad: bool = False) -> torch.Tensor:
    """Seeded normal samples, independent of the global generator."""
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=gen).requires_grad_(requires_grad)


def mlp(sizes: list[int], seed: int) -> nn.Sequential:
    """Linear layers of the given sizes with ReLUs between them."""
    torch.manual_seed(seed)
    layers: list[nn.Module] = []
    for i, (fan_in, fan_out) in enumerate(pairwise(sizes)):
        if i:
            layers.append(nn.ReLU())
        layers.append(nn.Linear(fan_in, fan_out))
    return nn.Sequential(*layers)


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Scaled dot-product attention written out: matmul, softmax, matmul."""
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    return scores.softmax(dim=-1) @ v


def counted(counter: Any) -> dict[str, Any]:
    """A counter's results as plain data."""
    return {"counts": dict(counter.counts), "flops": counter.flops, "flops_by_op": dict(counter.flops_by_op)}


class Recorder(TorchDispatchMode):
    """A minimal mode of the probe's own: the op names it receives, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None) -> Any:
        self.names.append(str(func.overloadpacket))
        return func(*args, **(kwargs or {}))


class Boxed(torch.Tensor):
    """A tensor subclass handled by a mode of its own, as FakeTensor is by FakeTensorMode: it holds a plain tensor."""

    inner: torch.Tensor

    @staticmethod
    def __new__(cls, inner: torch.Tensor) -> Boxed:
        return torch.Tensor._make_wrapper_subclass(cls, inner.shape, dtype=inner.dtype, strides=inner.stride())  # type: ignore[attr-defined]

    def __init__(self, inner: torch.Tensor) -> None:
        self.inner = inner

    @classmethod
    def __torch_dispatch__(cls, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None) -> Any:
        # As FakeTensor does: while its own mode is active, leave the call to that mode.
        if any(isinstance(mode, BoxMode) for mode in _get_current_dispatch_mode_stack()):
            return NotImplemented
        with BoxMode():
            return func(*args, **(kwargs or {}))


class BoxMode(TorchDispatchMode):
    """Runs every call on the plain tensors inside Boxed ones, and boxes the results."""

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None) -> Any:
        def unbox(t: Any) -> Any:
            return t.inner if isinstance(t, Boxed) else t

        def box(t: Any) -> Any:
            return Boxed(t) if isinstance(t, torch.Tensor) and not isinstance(t, Boxed) else t

        return tree_map(box, func(*tree_map(unbox, args), **tree_map(unbox, kwargs or {})))


def conv_stack(layers: list[dict[str, Any]], seed: int) -> nn.Sequential:
    """Conv2d layers of the given specs. ``trainable``: True (weight and bias), False (frozen), "bias" (frozen weight)."""
    torch.manual_seed(seed)
    model = nn.Sequential(
        *(
            nn.Conv2d(
                spec["cin"],
                spec["cout"],
                tuple(spec["kernel"]),
                stride=tuple(spec["stride"]),
                padding=tuple(spec["padding"]),
                dilation=tuple(spec["dilation"]),
            )
            for spec in layers
        )
    )
    for spec, conv in zip(layers, model, strict=True):
        conv.requires_grad_(bool(spec["trainable"]))
        if spec["trainable"] == "bias":
            conv.weight.requires_grad_(False)
    return model


# ---------------------------------------------------------------- ops-forward


@probe(category="ops-forward", hints=["op-names"])
def mlp_forward_counts(solution: Any) -> dict[str, Any]:
    """Forward of an MLP 8 -> 16 -> 16 -> 4 on a (5, 8) batch: the op counts."""
    model, x = mlp([8, 16, 16, 4], seed=1), randn(5, 8, seed=2)
    with solution.OpCounter() as counter:
        model(x)
    return {"counts": dict(counter.counts)}


@probe(category="ops-forward", hints=["op-names"])
def linear_3d_input_counts(solution: Any) -> dict[str, Any]:
    """Forward of a Linear on a (2, 3, 8) input, under no_grad: the op counts."""
    model, x = mlp([8, 6], seed=3), randn(2, 3, 8, seed=4)
    with torch.no_grad(), solution.OpCounter() as counter:
        model(x)
    return {"counts": dict(counter.counts)}


@probe(category="ops-forward", hints=["op-names"])
def attention_forward_counts(solution: Any) -> dict[str, Any]:
    """Forward of written-out attention on (2, 3, 5, 8) q, k, v: the op counts."""
    q, k, v = (randn(2, 3, 5, 8, seed=s) for s in (5, 6, 7))
    with solution.OpCounter() as counter:
        attention(q, k, v)
    return {"counts": dict(counter.counts)}


@probe(category="ops-forward", hints=["op-names"])
def conv_forward_counts(solution: Any) -> dict[str, Any]:
    """Forward of Conv2d -> ReLU -> Flatten -> Linear on a (2, 3, 8, 8) batch: the op counts."""
    torch.manual_seed(8)
    model = nn.Sequential(nn.Conv2d(3, 4, 3, stride=2, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(64, 5))
    x = randn(2, 3, 8, 8, seed=9)
    with solution.OpCounter() as counter:
        model(x)
    return {"counts": dict(counter.counts)}


@probe(category="ops-forward", hints=["op-names"])
def custom_op_counts(solution: Any) -> dict[str, Any]:
    """A custom operator of another namespace, between aten ops: counted under its own namespace."""

    @torch.library.custom_op("opcount::scale", mutates_args=())
    def scale(x: torch.Tensor, factor: float) -> torch.Tensor:
        return x * factor

    x = randn(3, 4, seed=60)
    with solution.OpCounter() as counter:
        y = scale(torch.relu(x), 2.0)
        torch.ops.opcount.scale(y, 0.5).sum()
    return {"counts": dict(counter.counts)}


# ---------------------------------------------------------------- ops-backward


@probe(category="ops-backward", weight=2, hints=["op-names", "backward"])
def mlp_backward_counts(solution: Any) -> dict[str, Any]:
    """Backward of an MLP, twice: first into empty .grad, then accumulating into it."""
    model, x = mlp([8, 16, 4], seed=10), randn(5, 8, seed=11)
    out: dict[str, Any] = {}
    for step in ("first backward", "second backward"):
        loss = model(x).square().mean()
        with solution.OpCounter() as counter:
            loss.backward()
        out[step] = dict(counter.counts)
    return out


@probe(category="ops-backward", weight=2, hints=["op-names", "backward"])
def conv_backward_counts(solution: Any) -> dict[str, Any]:
    """Forward and backward of two stacked Conv2d layers inside one counter: the op counts."""
    torch.manual_seed(12)
    model = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 3, 3, stride=2))
    x = randn(2, 2, 9, 9, seed=13)
    with solution.OpCounter() as counter:
        model(x).sum().backward()
    return {"counts": dict(counter.counts)}


@probe(category="ops-backward", weight=2, hints=["op-names", "backward"])
def attention_backward_counts(solution: Any) -> dict[str, Any]:
    """Backward of written-out attention with q, k, v all requiring grad: the op counts."""
    q, k, v = (randn(2, 4, 6, seed=s, requires_grad=True) for s in (14, 15, 16))
    loss = attention(q, k, v).sum()
    with solution.OpCounter() as counter:
        loss.backward()
    return {"counts": dict(counter.counts)}


# ---------------------------------------------------------------- flops


@probe(category="flops", weight=2, check="mlp_flops", hints=["flop-table", "addmm-args"])
def mlp_flops(solution: Any) -> dict[str, Any]:
    """MLP 12 -> 20 -> 7 on a (9, 12) batch, forward and backward counted separately."""
    sizes, batch = [12, 20, 7], 9
    model, x = mlp(sizes, seed=20), randn(batch, sizes[0], seed=21)
    with solution.OpCounter() as forward:
        loss = model(x).sum()
    with solution.OpCounter() as backward:
        loss.backward()
    return {"sizes": sizes, "batch": batch, "forward": counted(forward), "backward": counted(backward)}


@probe(category="flops", weight=2, check="attention_flops", hints=["flop-table"])
def attention_flops(solution: Any) -> dict[str, Any]:
    """Written-out attention, batch 3, 7 queries and keys, head size 10, forward and backward."""
    batch, seq, dim = 3, 7, 10
    q, k, v = (randn(batch, seq, dim, seed=s, requires_grad=True) for s in (22, 23, 24))
    with solution.OpCounter() as forward:
        loss = attention(q, k, v).sum()
    with solution.OpCounter() as backward:
        loss.backward()
    return {"batch": batch, "seq": seq, "dim": dim, "forward": counted(forward), "backward": counted(backward)}


@probe(category="flops", weight=2, check="conv_flops", hints=["flop-table", "conv-backward"])
def conv_flops(solution: Any) -> dict[str, Any]:
    """Three Conv2d layers, the middle one frozen, on a non-square input; the input needs no grad; forward, backward, one weight's gradient.
    Then two layers whose weights are frozen and whose biases train, on a batch of 3."""
    # [height, width] for every size: a formula that reads one side and squares it is wrong here.
    layers = [
        {"cin": 3, "cout": 6, "kernel": [3, 3], "stride": [2, 2], "padding": [1, 1], "dilation": [1, 1], "trainable": True},
        {"cin": 6, "cout": 5, "kernel": [3, 3], "stride": [1, 1], "padding": [1, 1], "dilation": [1, 1], "trainable": False},
        {"cin": 5, "cout": 4, "kernel": [3, 2], "stride": [1, 1], "padding": [0, 1], "dilation": [2, 1], "trainable": True},
    ]
    batch, size = 2, [13, 10]
    # A frozen layer: its input still needs a gradient, its weight none.
    model = conv_stack(layers, seed=25)
    x = randn(batch, 3, *size, seed=26)
    with solution.OpCounter() as forward:
        loss = model(x).sum()
    with solution.OpCounter() as backward:
        loss.backward(retain_graph=True)
    # Only the last weight's gradient: output_mask asks for no input gradient there, though the input requires grad.
    with solution.OpCounter() as last_weight:
        torch.autograd.grad(loss, [model[-1].weight])
    # Frozen weights, trainable biases: output_mask asks for the bias gradient alone ([False, False, True]) in
    # the first layer and for the input and bias gradients in the second; on CPU with a batch above 1 the
    # kernel returns a weight gradient anyway, which nothing asked for and which costs nothing here.
    bias_layers = [
        {"cin": 2, "cout": 5, "kernel": [3, 2], "stride": [1, 1], "padding": [1, 0], "dilation": [1, 1], "trainable": "bias"},
        {"cin": 5, "cout": 3, "kernel": [2, 3], "stride": [2, 1], "padding": [0, 1], "dilation": [1, 1], "trainable": "bias"},
    ]
    bias_batch, bias_size = 3, [8, 7]
    bias_model, image = conv_stack(bias_layers, seed=27), randn(bias_batch, 2, *bias_size, seed=28)
    with solution.OpCounter() as bias_only:
        bias_model(image).sum().backward()
    return {
        "layers": layers,
        "batch": batch,
        "size": size,
        "forward": counted(forward),
        "backward": counted(backward),
        "last weight only": counted(last_weight),
        "bias layers": bias_layers,
        "bias batch": bias_batch,
        "bias size": bias_size,
        "biases only, forward and backward": counted(bias_only),
    }


@probe(category="flops", weight=2, check="explicit_calls_flops", hints=["flop-table", "addmm-args", "overloads"])
def explicit_calls_flops(solution: Any) -> dict[str, Any]:
    """mm, addmm, bmm and baddbmm called directly, each also with out=; then an empty batch: counts and FLOPs."""
    a, b = randn(4, 6, seed=30), randn(6, 3, seed=31)
    bias = randn(3, seed=32)
    p, r = randn(2, 5, 4, seed=33), randn(2, 4, 7, seed=34)
    base = randn(2, 5, 7, seed=35)
    mm_out, addmm_out = torch.empty(4, 3), torch.empty(4, 3)
    bmm_out, baddbmm_out = torch.empty(2, 5, 7), torch.empty(2, 5, 7)
    with solution.OpCounter() as counter:
        torch.mm(a, b, out=mm_out)
        torch.addmm(bias, a, b)
        torch.addmm(bias, a, b, beta=0.5, alpha=2.0, out=addmm_out)
        torch.bmm(p, r, out=bmm_out)
        torch.baddbmm(base, p, r)
        torch.baddbmm(base, p, r, out=baddbmm_out)
    # An empty batch (a mixture-of-experts expert that got no tokens): the ops ran, for 0 FLOPs.
    no_rows, no_tokens = randn(0, 6, seed=36), randn(2, 0, 4, seed=37)
    with solution.OpCounter() as empty:
        torch.mm(no_rows, b)
        torch.bmm(no_tokens, r)
    shapes = {"mm": [[4, 6], [6, 3]], "bmm": [[2, 5, 4], [2, 4, 7]]}
    return {"shapes": shapes, **counted(counter), "empty batch": counted(empty)}


@probe(category="flops", weight=2, check="more_explicit_calls_flops", hints=["flop-table", "addmm-args", "overloads"])
def more_explicit_calls_flops(solution: Any) -> dict[str, Any]:
    """baddbmm and addmm whose added tensor broadcasts; convolution.out and convolution_backward.out, and
    convolution_backward with masks that ask for the bias gradient; convolutions whose stride, padding and
    dilation are one-element lists; meta-tensor mm, bmm and convolution whose FLOPs pass 2**53."""
    # The added tensor broadcasts: [M, N], [1, 1, N] and [N] for baddbmm, [1, N] and [M, N] for addmm.
    # B, M, K and N all differ, so no size can be read off the added tensor.
    batch, m, k, n = 4, 3, 5, 6
    p, r = randn(batch, m, k, seed=70), randn(batch, k, n, seed=71)
    a, b = randn(m, k, seed=72), randn(k, n, seed=73)
    added = {"baddbmm": [[m, n], [1, 1, n], [n], [1, m, n]], "addmm": [[1, n], [m, n]]}
    bmm_buf, mm_buf = torch.empty(batch, m, n), torch.empty(m, n)
    with solution.OpCounter() as broadcast:
        for i, shape in enumerate(added["baddbmm"]):
            torch.baddbmm(randn(*shape, seed=74 + i), p, r)
        torch.baddbmm(randn(m, n, seed=78), p, r, beta=0.5, out=bmm_buf)
        torch.addmm(randn(1, n, seed=79), a, b)
        torch.addmm(randn(m, n, seed=80), a, b, alpha=2.0, out=mm_buf)
    # The .out overloads of the convolutions, with empty buffers they resize.
    x, weight, grad_output = randn(2, 3, 7, 5, seed=81), randn(4, 3, 3, 2, seed=82), randn(2, 4, 5, 4, seed=83)
    conv_buf, grad_input, grad_weight, grad_bias = (torch.empty(0) for _ in range(4))
    with solution.OpCounter() as overloads:
        torch.ops.aten.convolution.out(x, weight, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1, out=conv_buf)
        torch.ops.aten.convolution_backward.out(
            grad_output, x, weight, [4], [1, 1], [0, 0], [1, 1], False, [0, 0], 1, [True, True, True],
            out0=grad_input, out1=grad_weight, out2=grad_bias,
        )
        # The bias gradient alone, then with the input gradient: the CPU kernel also returns a weight gradient.
        for mask in ([False, False, True], [True, False, True]):
            torch.ops.aten.convolution_backward.default(grad_output, x, weight, [4], [1, 1], [0, 0], [1, 1], False, [0, 0], 1, mask)
    # One-element stride, padding and dilation lists: F.conv2d passes them to aten.convolution as they are
    # ([2], [1]), and so does its backward; aten.convolution accepts them for both spatial dimensions.
    short = {"input": [2, 3, 9, 8], "weight": [4, 3, 3, 2], "stride": 2, "padding": 1, "dilation": 2}
    image_s = randn(*short["input"], seed=84)
    kernel_s = randn(*short["weight"], seed=85, requires_grad=True)
    with solution.OpCounter() as short_lists:
        F.conv2d(image_s, kernel_s, stride=(2,), padding=(1,), dilation=(2,)).sum().backward()
        torch.ops.aten.convolution.default(image_s, kernel_s.detach(), None, [2], [1], [2], False, [0], 1)
    # Meta tensors (sizes, no memory): FLOP counts past 2**53 that are not powers of two, which a
    # value that went through a float gets wrong, even when it is turned back into an int.
    big = {
        "mm": [[2**18 + 1, 2**18 + 3], [2**18 + 3, 2**18 + 7]],
        "bmm": [[5, 2**18 + 1, 2**18 + 3], [5, 2**18 + 3, 2**17 + 5]],
        "convolution": {"input": [1, 1001, 2**20 + 3, 2**20 + 3], "weight": [7, 1001, 3, 3]},
    }
    meta = {name: [torch.empty(*shape, device="meta") for shape in shapes] for name, shapes in big.items() if name != "convolution"}
    image = torch.empty(*big["convolution"]["input"], device="meta")
    kernel = torch.empty(*big["convolution"]["weight"], device="meta")
    with solution.OpCounter() as past:
        torch.mm(*meta["mm"])
        torch.bmm(*meta["bmm"])
        torch.ops.aten.convolution.default(image, kernel, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1)
    return {
        "sizes": [batch, m, k, n],
        "added": added,
        "convolution": {"input": list(x.shape), "weight": list(weight.shape)},
        "big": big,
        "added tensor broadcasts": counted(broadcast),
        "convolution overloads": counted(overloads),
        "short": short,
        "short lists": counted(short_lists),
        "past 2**53": counted(past),
    }


@probe(category="flops", weight=2, check="ops_outside_table_flops", hints=["flop-table"])
def ops_outside_table_flops(solution: Any) -> dict[str, Any]:
    """mv, dot, vdot, addmv, addbmm, the in-place addmm_ and baddbmm_, custom operators opcount::mm and
    opcount::bmm, and F.scaled_dot_product_attention (forward and backward) are not in the table: no FLOPs,
    no flops_by_op entry. One mm among them is."""

    # Custom operators of another namespace that share a table operator's name; they multiply without mm or bmm.
    @torch.library.custom_op("opcount::mm", mutates_args=())
    def custom_mm(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return (x.unsqueeze(-1) * y.unsqueeze(-3)).sum(-2)

    @torch.library.custom_op("opcount::bmm", mutates_args=())
    def custom_bmm(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return (x.unsqueeze(-1) * y.unsqueeze(-3)).sum(-2)

    a, v, w = randn(3, 4, seed=90), randn(4, seed=91), randn(3, seed=92)
    base, p, r = randn(3, 5, seed=93), randn(2, 3, 4, seed=94), randn(2, 4, 5, seed=95)
    q, k, values = (randn(2, 3, 5, 8, seed=s, requires_grad=True) for s in (96, 97, 98))
    b = randn(4, 6, seed=99)
    into, into_batched = randn(3, 5, seed=100), randn(2, 3, 5, seed=101)
    with solution.OpCounter() as counter:
        into.addmm_(a, b[:, :5])
        into_batched.baddbmm_(p, r)
        custom_mm(a, b)
        torch.ops.opcount.bmm(p, r)
        torch.mv(a, v)
        torch.dot(v, v)
        torch.vdot(w, w)
        torch.addmv(w, a, v)
        torch.addbmm(base, p, r)
        torch.mm(a, b)
        torch.nn.functional.scaled_dot_product_attention(q, k, values).sum().backward()
    return {"mm": [[3, 4], [4, 6]], **counted(counter)}


# ---------------------------------------------------------------- nesting


@probe(category="nesting", weight=2, hints=["reset-on-enter"])
def reuse_resets(solution: Any) -> dict[str, Any]:
    """One counter entered four times: each use counts only its own block, an empty one nothing; the
    results read during a block hold the calls made so far."""
    a, b = randn(3, 4, seed=40), randn(4, 2, seed=41)
    counter = solution.OpCounter()
    with counter:
        torch.mm(a, b)
        torch.relu(a)
    first = counted(counter)
    with counter:
        torch.mm(a, b)
    second = counted(counter)
    with counter:
        pass
    empty = counted(counter)
    with counter:
        torch.bmm(a[None], b[None])
        during = counted(counter)
        torch.mm(a, b)
    return {
        "first": first,
        "second": second,
        "empty block": empty,
        "read during the block": during,
        "after it": counted(counter),
        "mode after": _get_current_dispatch_mode() is None,
    }


@probe(category="nesting", weight=2, hints=["independent-state", "no-tensor-ops"])
def nested_counters(solution: Any) -> dict[str, Any]:
    """Two counters nested: the inner counts its block (every op of the FLOP table), the outer counts everything."""
    a, b = randn(3, 4, seed=42), randn(4, 5, seed=43)
    p, r, base = randn(2, 3, 4, seed=48), randn(2, 4, 5, seed=49), randn(2, 3, 5, seed=52)
    torch.manual_seed(50)
    conv, image = nn.Conv2d(2, 3, 3), randn(1, 2, 5, 6, seed=51, requires_grad=True)
    with solution.OpCounter() as outer:
        torch.relu(a)
        with solution.OpCounter() as inner:
            torch.mm(a, b)
            torch.addmm(b[0], a, b)
            torch.bmm(p, r)
            torch.baddbmm(base, p, r)
            conv(image).sum().backward()
        outer_so_far = counted(outer)
        torch.mm(a, b).sum()
    return {"outer": counted(outer), "inner": counted(inner), "outer, read once the inner exits": outer_so_far}


@probe(category="nesting", weight=2, hints=["no-tensor-ops", "kwargs"])
def under_other_modes(solution: Any) -> dict[str, Any]:
    """Under a recording mode and under FlopCounterMode: they see what they see without the counter.
    Under a mode that handles a tensor subclass of its own, as FakeTensorMode does: the calls are counted."""
    from torch.utils.flop_counter import FlopCounterMode

    model, x = mlp([6, 8, 3], seed=44), randn(4, 6, seed=45)

    def step() -> None:
        model.zero_grad(set_to_none=True)
        model(x).sum().backward()

    with Recorder() as alone:
        step()
    with Recorder() as recorder, solution.OpCounter() as counter:
        step()
    with FlopCounterMode(display=False) as flops_alone:
        step()
    with FlopCounterMode(display=False) as flop_counter, solution.OpCounter() as second:
        step()
    boxed_a, boxed_b = Boxed(randn(3, 4, seed=56)), Boxed(randn(4, 5, seed=57))
    with BoxMode(), solution.OpCounter() as boxed:
        boxed_out = torch.relu(torch.mm(boxed_a, boxed_b)).sum(dim=0)
    return {
        "counter under a subclass mode": counted(boxed),
        "its result": boxed_out.inner if isinstance(boxed_out, Boxed) else None,
        "recorder sees the same ops": recorder.names == alone.names,
        "FlopCounterMode sees the same FLOPs": flop_counter.get_total_flops() == flops_alone.get_total_flops(),
        "counter": counted(counter),
        "counter under FlopCounterMode": counted(second),
    }


@probe(category="nesting", weight=2, hints=["exit-cleanly"])
def exception_exits_cleanly(solution: Any) -> dict[str, Any]:
    """An exception inside the block: the mode is popped, counts so far kept, later ops not counted."""
    a, b = randn(3, 4, seed=46), randn(4, 2, seed=47)
    counter = solution.OpCounter()
    raised = None
    try:
        with counter:
            torch.mm(a, b)
            raise KeyError("boom")
    except KeyError as exc:
        raised = type(exc).__name__
    popped = _get_current_dispatch_mode() is None
    torch.mm(a, b)  # must not be counted
    return {"raised": raised, "mode popped": popped, **counted(counter)}


# ---------------------------------------------------------------- passthrough


@probe(category="passthrough", weight=2, hints=["kwargs"])
def results_unchanged(solution: Any) -> dict[str, Any]:
    """Under the counter, ops compute what they compute without it: dtypes, keepdim, factories, grads."""
    a = randn(3, 4, seed=50)
    model, x = mlp([4, 5, 2], seed=52), randn(3, 4, seed=53)
    with solution.OpCounter():
        doubled = a.to(torch.float64) * 2
        half = a.to(dtype=torch.bfloat16)
        summed = torch.sum(a, dim=1, keepdim=True)
        ones = torch.ones(2, 3, dtype=torch.float64)
        model(x).sum().backward()
    return {
        "doubled": doubled,
        "half": half,
        "summed": summed,
        "ones": ones,
        "weight grad": model[0].weight.grad,
    }


@probe(category="passthrough", weight=2, hints=["kwargs", "overloads"])
def out_variants_write_buffers(solution: Any) -> dict[str, Any]:
    """Under the counter, out= calls (mm, add, sum) write their buffers as without it."""
    a, b = randn(3, 4, seed=54), randn(4, 2, seed=55)
    mm_buf, add_buf, sum_buf = torch.zeros(3, 2), torch.zeros(3, 4), torch.zeros(4)
    try:
        with solution.OpCounter():
            torch.mm(a, b, out=mm_buf)
            torch.add(a, 1.5, out=add_buf)
            torch.sum(a, dim=0, out=sum_buf)
    except Exception as exc:  # noqa: BLE001 - the failure is the observation
        return {"error": type(exc).__name__, "mm": None, "add": None, "sum": None}
    return {"error": None, "mm": mm_buf, "add": add_buf, "sum": sum_buf}


# ---------------------------------------------------------------- flops: sizes of 0, calls that cost 0, groups


def empty_size_calls() -> dict[str, tuple[list[str], Any]]:
    """Every operator of the table on each size of it that may be 0, and models on an empty batch: for each case,
    the table operators it runs (each must get an entry of 0 FLOPs) and a function making the calls. Every
    tensor is built here, before any counter is entered."""
    m, k, n, batch = 3, 4, 5, 2
    sizes = {"M": (0, k, n), "K": (m, 0, n), "N": (m, k, 0)}
    cases: dict[str, tuple[list[str], Any]] = {}
    for dim, (rows, inner, cols) in sizes.items():
        a, b = randn(rows, inner, seed=110), randn(inner, cols, seed=111)
        cases[f"mm, {dim} = 0"] = (["aten.mm"], lambda a=a, b=b: torch.mm(a, b))
        # The added tensor broadcasts over the rows: [N].
        bias = randn(cols, seed=112)
        cases[f"addmm, {dim} = 0"] = (["aten.addmm"], lambda bias=bias, a=a, b=b: torch.addmm(bias, a, b))
    batched = {"B": (0, m, k, n), **{dim: (batch, *shape) for dim, shape in sizes.items()}}
    for dim, (size, rows, inner, cols) in batched.items():
        p, r = randn(size, rows, inner, seed=113), randn(size, inner, cols, seed=114)
        cases[f"bmm, {dim} = 0"] = (["aten.bmm"], lambda p=p, r=r: torch.bmm(p, r))
        # The added tensor broadcasts over the batch: [M, N].
        added = randn(rows, cols, seed=115)
        cases[f"baddbmm, {dim} = 0"] = (["aten.baddbmm"], lambda added=added, p=p, r=r: torch.baddbmm(added, p, r))
    # Convolutions: the batch N or the input channels C_in may be 0 (a kernel [C_out, 0, kh, kw]).
    convs = {"N": ([0, 3, 7, 5], [4, 3, 3, 2]), "C_in": ([2, 0, 7, 5], [4, 0, 3, 2])}
    for dim, (image_shape, kernel_shape) in convs.items():
        image, kernel, conv_bias = randn(*image_shape, seed=116), randn(*kernel_shape, seed=117), randn(4, seed=118)
        grad_output = randn(image_shape[0], 4, 3, 2, seed=119)  # the forward output's shape: stride 2, padding 1
        cases[f"convolution, {dim} = 0"] = (
            ["aten.convolution"],
            lambda image=image, kernel=kernel, conv_bias=conv_bias: F.conv2d(image, kernel, conv_bias, stride=2, padding=1),
        )
        cases[f"convolution_backward, {dim} = 0"] = (
            ["aten.convolution_backward"],
            lambda grad_output=grad_output, image=image, kernel=kernel: torch.ops.aten.convolution_backward.default(
                grad_output, image, kernel, [4], [2, 2], [1, 1], [1, 1], False, [0, 0], 1, [True, True, True]
            ),
        )
    # Models on an empty batch, forward and backward: every input needs a gradient.
    linear = mlp([6, 4], seed=120)
    rows_in = randn(0, 6, seed=121, requires_grad=True)
    cases["Linear on an empty batch, forward and backward"] = (
        ["aten.addmm", "aten.mm"],
        lambda: linear(rows_in).sum().backward(),
    )
    q, key, v = (randn(0, 5, 8, seed=s, requires_grad=True) for s in (122, 123, 124))
    cases["written-out attention on an empty batch, forward and backward"] = (
        ["aten.bmm"],
        lambda: attention(q, key, v).sum().backward(),
    )
    torch.manual_seed(125)
    conv = nn.Conv2d(3, 4, (3, 2), stride=(2, 1), padding=(1, 0))
    images = randn(0, 3, 7, 6, seed=126, requires_grad=True)
    cases["Conv2d on an empty batch, forward and backward"] = (
        ["aten.convolution", "aten.convolution_backward"],
        lambda: conv(images).sum().backward(),
    )
    return cases


@probe(category="flops", weight=2, check="empty_sizes_flops", hints=["flop-table"])
def empty_sizes_flops(solution: Any) -> dict[str, Any]:
    """mm, addmm, bmm and baddbmm with each of B, M, K and N of 0, convolution and convolution_backward with a batch
    or input channels of 0, and a Linear, attention and a Conv2d on an empty batch, forward and backward: each case
    alone in its own counter. Every table operator that ran has an entry of 0 FLOPs; nothing raises."""
    cases: dict[str, Any] = {}
    for name, (ops, call) in empty_size_calls().items():
        try:
            with solution.OpCounter() as counter:
                call()
        except Exception as exc:  # noqa: BLE001 - the failure is the observation
            cases[name] = {"ops": ops, "error": type(exc).__name__}
            continue
        cases[name] = {"ops": ops, "error": None, "results": counted(counter)}
    return {"cases": cases}


@probe(category="flops", weight=2, check="zero_cost_backward_flops", hints=["flop-table", "conv-backward"])
def zero_cost_backward_flops(solution: Any) -> dict[str, Any]:
    """convolution_backward calls that cost 0 through their mask, each alone in its own counter: the backward of a
    Conv2d whose weight is frozen and whose bias trains, on data that needs no gradient (the mask asks for the bias
    gradient alone), and direct calls with the masks [False, False, True] and [False, False, False]. Each gets an
    entry of 0 FLOPs."""
    torch.manual_seed(130)
    conv = nn.Conv2d(3, 4, (3, 2), stride=(1, 2), padding=(1, 0))
    conv.weight.requires_grad_(False)
    image = randn(2, 3, 7, 6, seed=131)
    loss = conv(image).sum()
    x, weight, grad_output = randn(2, 3, 7, 5, seed=132), randn(4, 3, 3, 2, seed=133), randn(2, 4, 5, 4, seed=134)
    cases: dict[str, Any] = {}
    with solution.OpCounter() as bias_only:
        loss.backward()
    cases["a Conv2d's backward, the bias gradient alone"] = counted(bias_only)
    for mask in ([False, False, True], [False, False, False]):
        with solution.OpCounter() as direct:
            torch.ops.aten.convolution_backward.default(grad_output, x, weight, [4], [1, 1], [0, 0], [1, 1], False, [0, 0], 1, mask)
        cases[f"convolution_backward, mask {mask}"] = counted(direct)
    return {"cases": cases}


def grouped_stack(layers: list[dict[str, Any]], seed: int) -> nn.Sequential:
    """Grouped Conv2d layers of the given specs, with ReLUs between them."""
    torch.manual_seed(seed)
    modules: list[nn.Module] = []
    for i, spec in enumerate(layers):
        if i:
            modules.append(nn.ReLU())
        modules.append(
            nn.Conv2d(
                spec["cin"],
                spec["cout"],
                tuple(spec["kernel"]),
                stride=tuple(spec["stride"]),
                padding=tuple(spec["padding"]),
                dilation=tuple(spec["dilation"]),
                groups=spec["groups"],
            )
        )
    return nn.Sequential(*modules)


@probe(category="flops", weight=2, check="grouped_conv_flops", hints=["flop-table", "conv-backward"])
def grouped_conv_flops(solution: Any) -> dict[str, Any]:
    """Grouped Conv2d layers (groups 2, then depthwise, then 3) on a non-square input that needs a gradient,
    forward and backward; then a grouped aten.convolution called directly with one-element lists. Each output
    element of a grouped convolution costs C_in/groups * kh * kw multiply-adds."""
    layers = [
        {"cin": 4, "cout": 6, "kernel": [3, 2], "stride": [2, 1], "padding": [1, 0], "dilation": [1, 1], "groups": 2},
        {"cin": 6, "cout": 6, "kernel": [3, 3], "stride": [1, 1], "padding": [1, 1], "dilation": [1, 2], "groups": 6},
        {"cin": 6, "cout": 9, "kernel": [1, 2], "stride": [1, 1], "padding": [0, 0], "dilation": [1, 1], "groups": 3},
    ]
    batch, size = 2, [9, 8]
    model = grouped_stack(layers, seed=140)
    x = randn(batch, 4, *size, seed=141, requires_grad=True)
    with solution.OpCounter() as forward:
        loss = model(x).sum()
    with solution.OpCounter() as backward:
        loss.backward()
    direct = {"input": [3, 8, 6, 7], "weight": [8, 2, 2, 3], "stride": 1, "padding": 1, "dilation": 1, "groups": 4}
    image, kernel = randn(*direct["input"], seed=142), randn(*direct["weight"], seed=143)
    with solution.OpCounter() as called:
        torch.ops.aten.convolution.default(image, kernel, None, [1], [1], [1], False, [0], 4)
    return {
        "layers": layers,
        "batch": batch,
        "size": size,
        "direct": direct,
        "forward": counted(forward),
        "backward": counted(backward),
        "called directly": counted(called),
    }
