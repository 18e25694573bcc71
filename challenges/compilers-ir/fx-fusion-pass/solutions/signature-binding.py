"""RIGHT: matches by binding each call to a Python signature (inspect.Signature.bind), so positional
and keyword spellings fall out of one table; a node is a unary sigmoid/ReLU only if the binding has
no argument besides the operand (and `inplace` for F.relu); readers are FX's `users` (which already
see into tuples, lists, dicts and kwargs); the fused op is inserted where the linear ran (so an
in-place op between the linear and the ReLU cannot change what it reads); replaced nodes are erased
one by one, never by a global dead-code pass. A product whose sigmoid was changed in place before it
is no SiLU.

Oracle: oracle/oracle.py (eager float32 vs returned graph and returned module, lint, counts from the
statement, bias None, matmuls dispatched): 0 failures on its 15 modules.
"""
from __future__ import annotations

import inspect
import operator
from typing import Optional

import torch
import torch.fx as fx
import torch.nn.functional as F
from torch import Tensor


@torch.library.custom_op("fxlab::fused_linear_relu", mutates_args=())
def fused_linear_relu(x: Tensor, weight: Tensor, bias: Optional[Tensor] = None) -> Tensor:
    """relu(x @ weight.T + bias) in one call: the kernel an accelerator would provide."""
    return torch.relu(F.linear(x, weight, bias))


@fused_linear_relu.register_fake
def _(x: Tensor, weight: Tensor, bias: Optional[Tensor] = None) -> Tensor:
    return x.new_empty((*x.shape[:-1], weight.shape[0]))


def _sig(*names, **defaults):
    P = inspect.Parameter
    params = [P(n, P.POSITIONAL_OR_KEYWORD) for n in names]
    params += [P(n, P.POSITIONAL_OR_KEYWORD, default=d) for n, d in defaults.items()]
    return inspect.Signature(params)


_MISSING = object()
_FN = {
    operator.mul: ("mul", _sig("a", "b")),
    torch.mul: ("mul", _sig("input", "other", out=_MISSING)),
    torch.sigmoid: ("sigmoid", _sig("input", out=_MISSING)),
    torch.relu: ("relu", _sig("input")),
    F.relu: ("relu", _sig("input", inplace=False)),
    F.linear: ("linear", _sig("input", "weight", bias=None)),
}
_METH = {"mul": ("mul", _sig("self", "other")), "sigmoid": ("sigmoid", _sig("self")), "relu": ("relu", _sig("self"))}
_MOD = ((torch.nn.Sigmoid, "sigmoid"), (torch.nn.ReLU, "relu"), (torch.nn.Linear, "linear"))


def _classify(gm, n):
    """(kind, bound arguments as a list) or (None, None)."""
    if not isinstance(n, fx.Node):
        return None, None
    if n.op == "call_module":
        mod = gm.get_submodule(n.target)
        for t, kind in _MOD:
            if isinstance(mod, t) and (t is not torch.nn.Linear or type(mod).forward is torch.nn.Linear.forward):
                try:
                    return kind, [_sig("input").bind(*n.args, **n.kwargs).arguments["input"]]
                except TypeError:
                    return None, None
        return None, None
    if n.op == "call_function" and n.target in _FN:
        kind, sig = _FN[n.target]
    elif n.op == "call_method" and n.target in _METH:
        kind, sig = _METH[n.target]
    else:
        return None, None
    try:
        b = sig.bind(*n.args, **n.kwargs)
    except TypeError:
        return None, None
    if "out" in b.arguments:  # writes a buffer too: not the plain op
        return None, None
    b.apply_defaults()
    return kind, list(b.arguments.values())


def _holds(arg, value):
    return arg is value or (isinstance(arg, (tuple, list)) and any(_holds(a, value) for a in arg))


def _binds_write(schema, args, kwargs, s):
    """Whether a call of an operator with this schema, given args and kwargs, writes s: the arguments bind as in
    Python (positional ones to the arguments before the keyword-only ones, keywords by name), and one the schema
    marks written is s (Tensor(a!)) or a list holding s (Tensor(a!)[]). False when the schema cannot take them."""
    pos = [p for p in schema.arguments if not p.kwarg_only]
    if len(args) > len(pos):
        return False
    given = dict(zip((p.name for p in pos), args, strict=False))
    names = {p.name for p in schema.arguments}
    for k, v in kwargs.items():
        if k in given or k not in names:
            return False
        given[k] = v
    if any(p.name not in given and not p.has_default_value() for p in schema.arguments):
        return False
    for p in schema.arguments:
        if p.name in given and p.alias_info is not None and p.alias_info.is_write:
            v = given[p.name]
            if isinstance(p.type, torch.ListType):
                if isinstance(v, (list, tuple)) and any(e is s for e in v):
                    return True
            elif v is s:
                return True
    return False


def _sigmoid_changed(s, product, gm=None):
    """Whether a node between the sigmoid s and the product changes s in place (s.mul_(2.0),
    torch.relu_(s), torch.nn.init.constant_(tensor=s), inplace=True, out=s or out=(s, i), an aten
    overload whose schema writes s, a submodule built with inplace=True): then the product is no
    x * sigmoid(x)."""
    n = s.next
    while n is not product and n.op != "root":
        # out= outside torch.ops (red team round 7: there the schema alone decides, and an argument named out may be
        # only read, as in aten::_scaled_dot_product_flash_attention_for_cpu_backward)
        if not isinstance(n.target, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)) and _holds(n.kwargs.get("out"), s):
            return True
        if n.op == "call_function" and isinstance(n.target, torch._ops.OpOverload):
            if _binds_write(n.target._schema, n.args, n.kwargs, s):
                return True
            n = n.next
            continue
        if n.op == "call_function" and isinstance(n.target, torch._ops.OpOverloadPacket):
            # A packet calls the overload that takes its arguments (torch.ops.aten.sort(y, values=s, ...) is
            # aten::sort.values): it writes what an overload that can take them writes.
            pkt = n.target
            if any(_binds_write(getattr(pkt, o)._schema, n.args, n.kwargs, s) for o in pkt.overloads()):
                return True
        first = n.args[0] if n.args else next((n.kwargs[k] for k in ("input", "self", "tensor") if k in n.kwargs), None)
        if first is s and n.op == "call_module" and gm is not None and getattr(gm.get_submodule(n.target), "inplace", False) is True:
            return True
        name = n.target if n.op == "call_method" else getattr(n.target, "__name__", "")
        if n.op in ("call_method", "call_function") and isinstance(name, str) and name.endswith("_") and not name.endswith("__"):
            if _holds(first, s):  # torch._foreach_mul_([s, u], 2.0) writes s too
                return True
        elif first is s and n.op in ("call_method", "call_function") and n.kwargs.get("inplace") is True:
            return True
        n = n.next
    return False


def fuse(gm: fx.GraphModule) -> fx.GraphModule:
    g = gm.graph
    for n in list(g.nodes):
        if n.graph is not g:
            continue
        kind, args = _classify(gm, n)
        if kind != "mul":
            continue
        a, b = args[0], args[1]
        for x, s in ((a, b), (b, a)):
            sk, sargs = _classify(gm, s)
            if sk == "sigmoid" and isinstance(x, fx.Node) and sargs[0] is x and not _sigmoid_changed(s, n, gm):
                with g.inserting_after(n):
                    silu = g.call_function(F.silu, (x,))
                n.replace_all_uses_with(silu)
                g.erase_node(n)
                if not s.users:
                    g.erase_node(s)
                break
    for n in list(g.nodes):
        if n.graph is not g:
            continue
        kind, args = _classify(gm, n)
        if kind != "relu":
            continue
        lin = args[0]
        lk, largs = _classify(gm, lin)
        if lk != "linear" or len(lin.users) != 1:
            continue
        with g.inserting_after(lin):
            if lin.op == "call_module":
                mod = gm.get_submodule(lin.target)
                w = g.get_attr(f"{lin.target}.weight")
                with g.inserting_after(w):
                    bias = g.get_attr(f"{lin.target}.bias") if mod.bias is not None else None
                anchor = bias if bias is not None else w
                x = largs[0]
            else:
                x, w, bias = largs
                anchor = lin
            with g.inserting_after(anchor):
                fused = g.call_function(torch.ops.fxlab.fused_linear_relu.default, (x, w, bias))
        n.replace_all_uses_with(fused)
        g.erase_node(n)
        g.erase_node(lin)
    g.lint()
    gm.recompile()
    return gm
