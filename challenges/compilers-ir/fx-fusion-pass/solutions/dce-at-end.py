"""WRONG: Cleans up with `graph.eliminate_dead_code()` at the end instead of erasing the replaced nodes
itself. FX's DCE thinks a call_method / non-aten call is pure, so an in-place op whose result is
unused (`y.add_(1)`) is deleted, and nodes that were already unused in the traced graph go too.

Oracle (oracle/oracle.py: eager vs returned graph, counts from the statement, matmuls dispatched): InplaceAddResultUnused: `y = x*2; y.add_(1); return y*sigmoid(y)` -> add_ deleted, max abs err ~1.7 vs eager; DeadReaderOfLinear: the unused h.sum() is deleted.
"""
from __future__ import annotations

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


FUSED = torch.ops.fxlab.fused_linear_relu.default


def _mod(gm, n):
    return gm.get_submodule(n.target) if n.op == "call_module" else None  #@GETMOD


def _operands(n, names):
    """The node's arguments bound to `names` (by position or keyword), or None if anything else is passed."""
    if len(n.args) > len(names):
        return None
    got = dict(zip(names, n.args))
    for k, v in n.kwargs.items():
        if k not in names or k in got:  #@KWBIND
            return None
        got[k] = v
    return got


def _sigmoid_arg(gm, n):
    """x if n computes sigmoid(x) with nothing else passed, else None."""
    if not isinstance(n, fx.Node):
        return None
    if (n.op == "call_function" and n.target is torch.sigmoid) \
            or (n.op == "call_module" and isinstance(_mod(gm, n), torch.nn.Sigmoid)):  #@SIGOPS
        got = _operands(n, ("input",))
    elif n.op == "call_method" and n.target == "sigmoid":
        got = _operands(n, ("self",))
    else:
        return None
    return None if got is None else got.get("input", got.get("self"))  #@SIGKW


def _mul_args(n):
    if n.op == "call_function" and n.target is operator.mul:
        got = _operands(n, ("a", "b"))
        return None if got is None or len(got) != 2 else (got["a"], got["b"])
    if n.op == "call_function" and n.target is torch.mul:
        got = _operands(n, ("input", "other"))
        return None if got is None or len(got) != 2 else (got["input"], got["other"])
    if n.op == "call_method" and n.target == "mul":  #@MULOPS
        got = _operands(n, ("self", "other"))
        return None if got is None or len(got) != 2 else (got["self"], got["other"])
    return None


def _relu_arg(gm, n):
    if not isinstance(n, fx.Node):
        return None
    if n.op == "call_function" and n.target is F.relu:
        got = _operands(n, ("input", "inplace"))
    elif (n.op == "call_function" and n.target is torch.relu) \
            or (n.op == "call_module" and isinstance(_mod(gm, n), torch.nn.ReLU)):  #@RELUOPS
        got = _operands(n, ("input",))
    elif n.op == "call_method" and n.target == "relu":
        got = _operands(n, ("self",))
    else:
        return None
    return None if got is None else got.get("input", got.get("self"))


def _linear_parts(gm, n):
    """(x, weight, bias, module) for a linear node, else None."""
    if not isinstance(n, fx.Node):
        return None
    if n.op == "call_module" and isinstance(_mod(gm, n), torch.nn.Linear):
        got = _operands(n, ("input",))
        if not got:
            return None
        return got["input"], None, None, _mod(gm, n)
    if n.op == "call_function" and n.target is F.linear:
        names = ("input", "weight", "bias")
        if len(n.args) > 3:
            return None
        got = dict(zip(names, n.args))
        for k, v in n.kwargs.items():
            if k not in names or k in got:
                return None
            got[k] = v
        if "input" not in got or "weight" not in got:
            return None
        return got["input"], got["weight"], got.get("bias"), None  #@BIAS
    return None


def _only_reader(lin, relu):
    return set(lin.users) == {relu}  #@READERS


def fuse(gm: fx.GraphModule) -> fx.GraphModule:
    g = gm.graph
    # SiLU
    for n in list(g.nodes):
        if n.graph is not g or n.op == "output":
            continue
        ops = _mul_args(n)
        if ops is None:
            continue
        for x, s in (ops, ops[::-1]):
            if isinstance(x, fx.Node) and _sigmoid_arg(gm, s) is x:
                with g.inserting_before(n):
                    silu = g.call_function(F.silu, (x,))
                n.replace_all_uses_with(silu)
                g.erase_node(n)
                break
    # Linear + ReLU
    for n in list(g.nodes):
        if n.op not in ("call_function", "call_method", "call_module"):
            continue
        lin = _relu_arg(gm, n)
        parts = _linear_parts(gm, lin)
        if parts is None or not _only_reader(lin, n):
            continue
        x, w, b, mod = parts
        with g.inserting_before(lin):  #@PLACE  (where the linear ran: an in-place op between it and the ReLU must not be seen)
            if mod is not None:
                w = g.get_attr(lin.target + ".weight")
                b = g.get_attr(lin.target + ".bias") if mod.bias is not None else None  #@MODBIAS
            fused = g.call_function(FUSED, (x, w, b))
        n.replace_all_uses_with(fused)
        g.erase_node(n)
    g.eliminate_dead_code()
    g.lint()
    gm.recompile()
    return gm
