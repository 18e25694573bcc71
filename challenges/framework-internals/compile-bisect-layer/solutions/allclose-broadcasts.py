"""WRONG (one mistake, red team round 3): a hand-written comparison with
torch.allclose, the statement's per-dtype tolerances and a dtype check, but no
shape check: allclose broadcasts, so a layer that returns (1, 3, 4) where eager
returns (3, 4), or (1,) for a 0-dim result, passes.
"""

from __future__ import annotations

import torch

BACKENDS = {"dynamo": "eager", "aot_autograd": "aot_eager", "inductor": "inductor"}
TOL = {
    torch.float32: (1.3e-6, 1e-5),
    torch.bfloat16: (1.6e-2, 1e-5),
    torch.float16: (1e-3, 1e-5),
    torch.float64: (1e-7, 1e-7),
}


def _copy(v):
    if isinstance(v, torch.Tensor):
        return v.detach().clone().requires_grad_(v.requires_grad)
    return v


def _run(fn, args, seed):
    copies = [_copy(a) for a in args]
    torch.manual_seed(seed)
    out = fn(*copies)
    return out, copies


def _same(a, b):
    if isinstance(a, (tuple, list)) or isinstance(b, (tuple, list)):
        if not (isinstance(a, (tuple, list)) and isinstance(b, (tuple, list))) or len(a) != len(b):
            return False
        return all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            return False
        if a.dtype != b.dtype or a.device != b.device:
            return False
        if a.numel() == 0 and b.numel() == 0:
            return True
        rtol, atol = TOL.get(b.dtype, (1.3e-6, 1e-5))
        return torch.allclose(a.detach(), b.detach(), rtol=rtol, atol=atol, equal_nan=True)
    return a == b


def first_failing_layer(fn, args, *, fullgraph=False, seed=0):
    expected = _run(fn, args, seed)
    for layer, backend in BACKENDS.items():
        torch._dynamo.reset()
        try:
            compiled = torch.compile(fn, backend=backend, fullgraph=fullgraph)
            actual = _run(compiled, args, seed)
        except Exception:  # noqa: BLE001 - an error and a wrong result both fail the layer
            return layer
        if not _same(actual, expected):
            return layer
    torch._dynamo.reset()
    return None
