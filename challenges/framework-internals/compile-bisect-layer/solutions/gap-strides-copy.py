"""WRONG (one mistake, red team round 3): copies keep the given strides literally
(empty_strided + copy_), and only expanded views (a stride of 0) become
contiguous: a slice with gaps keeps its gaps, where clone() closes them, so a
function that views its argument flat raises in the eager run.
"""

from __future__ import annotations

import torch

BACKENDS = {"dynamo": "eager", "aot_autograd": "aot_eager", "inductor": "inductor"}


def _copy(v):
    if not isinstance(v, torch.Tensor):
        return v
    src = v.detach()
    if 0 in src.stride():
        out = src.contiguous().clone()
    else:
        out = torch.empty_strided(src.size(), src.stride(), dtype=src.dtype, device=src.device)
        out.copy_(src)
    return out.requires_grad_(v.requires_grad)


def _run(fn, args, seed):
    copies = [_copy(a) for a in args]
    torch.manual_seed(seed)
    out = fn(*copies)
    return out, copies


def first_failing_layer(fn, args, *, fullgraph=False, seed=0):
    expected = _run(fn, args, seed)
    for layer, backend in BACKENDS.items():
        torch._dynamo.reset()
        try:
            compiled = torch.compile(fn, backend=backend, fullgraph=fullgraph)
            actual = _run(compiled, args, seed)
            torch.testing.assert_close(actual, expected, equal_nan=True)
        except Exception:  # noqa: BLE001 - an error and a wrong result both fail the layer
            return layer
    torch._dynamo.reset()
    return None
