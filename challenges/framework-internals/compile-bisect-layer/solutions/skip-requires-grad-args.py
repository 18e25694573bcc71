"""WRONG (one mistake, red team round 3): argument copies that require grad are
never compared ("autograd forbids in-place updates of such leaves"); fn may
update them under torch.no_grad(), as an optimizer step does, and a layer
that loses that update passes.
"""

from __future__ import annotations

import torch

BACKENDS = {"dynamo": "eager", "aot_autograd": "aot_eager", "inductor": "inductor"}


def _copy(v):
    if isinstance(v, torch.Tensor):
        return v.detach().clone().requires_grad_(v.requires_grad)
    return v


def _run(fn, args, seed):
    copies = [_copy(a) for a in args]
    torch.manual_seed(seed)
    out = fn(*copies)
    watched = [c for c in copies if not (isinstance(c, torch.Tensor) and c.requires_grad)]
    return out, watched


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
