"""WRONG (one mistake, red team round 3): answers memoised on the function, fullgraph,
seed and the exact metadata and bytes of every argument and closure cell, but
not on what fn reads elsewhere: a module global changed in place or rebound,
a captured dict's entry, a module's buffer or a default argument changed
between two calls gets the earlier answer.
"""

from __future__ import annotations

import torch

BACKENDS = {"dynamo": "eager", "aot_autograd": "aot_eager", "inductor": "inductor"}
_MEMO: dict = {}


def _fingerprint(v):
    if isinstance(v, torch.Tensor):
        d = v.detach()
        return ("T", d.dtype, tuple(d.shape), tuple(d.stride()), v.requires_grad, v.is_leaf,
                tuple(d.contiguous().view(-1).view(torch.uint8).tolist()) if d.numel() else ())
    if isinstance(v, (int, float, bool, str, type(None))):
        return ("V", type(v), v)
    return ("O", id(v))


def _key(fn, args, fullgraph, seed):
    cells = tuple(_fingerprint(c.cell_contents) for c in (fn.__closure__ or ()))
    return (fn, fullgraph, seed, tuple(_fingerprint(a) for a in args), cells)


def _copy(v):
    if isinstance(v, torch.Tensor):
        return v.detach().clone().requires_grad_(v.requires_grad)
    return v


def _run(fn, args, seed):
    copies = [_copy(a) for a in args]
    torch.manual_seed(seed)
    out = fn(*copies)
    return out, copies


def _bisect(fn, args, fullgraph, seed):
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


def first_failing_layer(fn, args, *, fullgraph=False, seed=0):
    try:
        key = _key(fn, args, fullgraph, seed)
        hash(key)
    except Exception:  # noqa: BLE001 - a key that cannot be hashed: no memo
        return _bisect(fn, args, fullgraph, seed)
    if key not in _MEMO:
        _MEMO[key] = _bisect(fn, args, fullgraph, seed)
    return _MEMO[key]
