"""WRONG (one mistake, red team round 3): outputs are flattened with pytree and
compared pairwise with zip(), which stops at the shorter list: a layer that
returns fewer or more outputs, other dict keys or another nesting of the same
leaves passes.
"""

from __future__ import annotations

import torch
from torch.utils._pytree import tree_leaves

BACKENDS = {"dynamo": "eager", "aot_autograd": "aot_eager", "inductor": "inductor"}


def _copy(v):
    if isinstance(v, torch.Tensor):
        return v.detach().clone().requires_grad_(v.requires_grad)
    return v


def _run(fn, args, seed):
    copies = [_copy(a) for a in args]
    torch.manual_seed(seed)
    out = fn(*copies)
    return out, copies


def first_failing_layer(fn, args, *, fullgraph=False, seed=0):
    expected = _run(fn, args, seed)
    exp_out, exp_args = expected
    for layer, backend in BACKENDS.items():
        torch._dynamo.reset()
        try:
            compiled = torch.compile(fn, backend=backend, fullgraph=fullgraph)
            act_out, act_args = _run(compiled, args, seed)
            for a, e in zip(tree_leaves(act_out), tree_leaves(exp_out), strict=False):  # stops at the shorter list
                torch.testing.assert_close(a, e, equal_nan=True)
            for a, e in zip(act_args, exp_args, strict=False):
                torch.testing.assert_close(a, e, equal_nan=True)
        except Exception:  # noqa: BLE001 - an error and a wrong result both fail the layer
            return layer
    torch._dynamo.reset()
    return None
