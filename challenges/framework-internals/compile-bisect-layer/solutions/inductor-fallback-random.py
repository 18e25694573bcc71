"""WRONG (one mistake, red team round 3): the Inductor try is compiled with
options={"fallback_random": True}, a per-compile setting, so that random
numbers match eager's: Inductor's own random-number code, a real divergence
from eager, is never tried, and dropout passes at the inductor layer.
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
    return out, copies


def first_failing_layer(fn, args, *, fullgraph=False, seed=0):
    expected = _run(fn, args, seed)
    for layer, backend in BACKENDS.items():
        torch._dynamo.reset()
        try:
            if backend == "inductor":
                compiled = torch.compile(fn, backend=backend, fullgraph=fullgraph, options={"fallback_random": True})
            else:
                compiled = torch.compile(fn, backend=backend, fullgraph=fullgraph)
            actual = _run(compiled, args, seed)
            torch.testing.assert_close(actual, expected, equal_nan=True)
        except Exception:  # noqa: BLE001 - an error and a wrong result both fail the layer
            return layer
    torch._dynamo.reset()
    return None
