"""WRONG (the reference before red team round 4): the check for an in-place change of the sigmoid's
result looks for it only as ``out=s``, or as the first operand (by position, ``input=`` or ``self=``)
of a call whose name ends in ``_``. ``torch.nn.init.constant_(s, 0.5)`` (FX records it with
``tensor=s``), ``torch.max(y, 0, out=(s, idx))`` (a tuple ``out=``) and operator overloads such as
``torch.ops.aten.mul_.Tensor(s, y)`` (named ``mul_.Tensor``) all write s and are missed, so the
product reading the changed s becomes F.silu.
"""

from __future__ import annotations

import operator

import torch
import torch.fx as fx
import torch.nn.functional as F


@torch.library.custom_op("fxlab::fused_linear_relu", mutates_args=())
def fused_linear_relu(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """relu(x @ weight.T + bias) in one call: the kernel an accelerator would provide."""
    return torch.relu(F.linear(x, weight, bias))


@fused_linear_relu.register_fake
def _(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    return x.new_empty((*x.shape[:-1], weight.shape[0]))


FUSED_LINEAR_RELU = torch.ops.fxlab.fused_linear_relu.default

# ---------------------------------------------------------------------------


def _module(gm: fx.GraphModule, node: fx.Node) -> torch.nn.Module | None:
    return gm.get_submodule(node.target) if node.op == "call_module" else None


def _bind(node: fx.Node, names: tuple, required: int) -> list | None:
    """The node's arguments in the order of ``names``, whether given by position or by keyword
    (None for an optional one left out), or None if the node has an argument not in ``names``
    (``out=``, say) or lacks one of the first ``required``."""
    if len(node.args) > len(names):
        return None
    bound = dict(zip(names, node.args))
    for key, value in node.kwargs.items():
        if key not in names or key in bound:
            return None
        bound[key] = value
    if any(name not in bound for name in names[:required]):
        return None
    return [bound.get(name) for name in names]


def _unary_input(gm: fx.GraphModule, node: object, functions: tuple, method: str, module_type: type) -> fx.Node | None:
    """The operand of a one-input call of the given function, method or module type, else None."""
    if not isinstance(node, fx.Node):
        return None
    if node.op == "call_method" and node.target == method:
        bound = _bind(node, ("self",), 1)
    elif (node.op == "call_function" and node.target in functions) or (
        node.op == "call_module" and isinstance(_module(gm, node), module_type)
    ):
        bound = _bind(node, ("input",), 1)
    else:
        return None
    return bound[0] if bound is not None else None


def _mul_operands(node: fx.Node) -> list | None:
    if node.op == "call_function" and node.target is operator.mul:
        return _bind(node, ("a", "b"), 2)
    if node.op == "call_function" and node.target is torch.mul:
        return _bind(node, ("input", "other"), 2)
    if node.op == "call_method" and node.target == "mul":
        return _bind(node, ("self", "other"), 2)
    return None


def _writes(gm: fx.GraphModule, node: fx.Node, value: fx.Node) -> bool:
    """Whether ``node`` changes ``value`` in place: ``out=value``, or with ``value`` as its first
    operand an in-place method or function (``s.mul_(2.0)``, ``torch.relu_(s)``), ``s[i] = ...``,
    ``inplace=True``, or a submodule built with ``inplace=True``."""
    if node.kwargs.get("out") is value:
        return True
    first = node.args[0] if node.args else node.kwargs.get("input", node.kwargs.get("self"))
    if first is not value:
        return False
    if node.op == "call_module":
        return getattr(_module(gm, node), "inplace", False) is True
    if node.op not in ("call_function", "call_method"):
        return False
    name = node.target if node.op == "call_method" else getattr(node.target, "__name__", "")
    if isinstance(name, str) and name.endswith("_") and not name.endswith("__"):
        return True
    if node.target is operator.setitem or node.kwargs.get("inplace") is True:
        return True
    return node.target is F.relu and len(node.args) > 1 and node.args[1] is True


def _changed_before(gm: fx.GraphModule, s: fx.Node, product: fx.Node) -> bool:
    """Whether a node between the sigmoid ``s`` and ``product`` changes ``s`` in place: the product
    then multiplies x by something else than sigmoid(x)."""
    node = s.next
    while node is not product and node.op != "root":
        if _writes(gm, node, s):
            return True
        node = node.next
    return False


def _fuse_silu(gm: fx.GraphModule) -> None:
    graph = gm.graph
    for node in list(graph.nodes):
        operands = _mul_operands(node)
        if operands is None:
            continue
        a, b = operands
        for x, s in ((a, b), (b, a)):
            if (
                isinstance(x, fx.Node)
                and _unary_input(gm, s, (torch.sigmoid,), "sigmoid", torch.nn.Sigmoid) is x
                and not _changed_before(gm, s, node)
            ):
                with graph.inserting_before(node):
                    silu = graph.call_function(F.silu, (x,))
                node.replace_all_uses_with(silu)
                graph.erase_node(node)
                if not s.users:
                    graph.erase_node(s)
                break


def _relu_input(gm: fx.GraphModule, node: fx.Node) -> fx.Node | None:
    if node.op == "call_function" and node.target is F.relu:
        # F.relu(h, inplace=...) is still a ReLU.
        bound = _bind(node, ("input", "inplace"), 1)
        return bound[0] if bound is not None else None
    return _unary_input(gm, node, (torch.relu,), "relu", torch.nn.ReLU)


def _is_linear_module(module: torch.nn.Module | None) -> bool:
    """An nn.Linear, or a subclass that keeps nn.Linear's forward (MultiheadAttention's out_proj); a subclass
    with a forward of its own (torch.ao.nn.qat.Linear fake-quantises its weight) computes something else."""
    return isinstance(module, torch.nn.Linear) and type(module).forward is torch.nn.Linear.forward


def _linear_operands(gm: fx.GraphModule, node: object) -> list | None:
    """[x, weight, bias] of a linear node, else None. For an nn.Linear submodule, weight and bias
    are None here: its parameters are not nodes until the fusion fetches them."""
    if not isinstance(node, fx.Node):
        return None
    if node.op == "call_module" and _is_linear_module(_module(gm, node)):
        bound = _bind(node, ("input",), 1)
        return None if bound is None else [bound[0], None, None]
    if node.op == "call_function" and node.target is F.linear:
        return _bind(node, ("input", "weight", "bias"), 2)
    return None


def _fuse_linear_relu(gm: fx.GraphModule) -> None:
    graph = gm.graph
    for node in list(graph.nodes):
        if node.op not in ("call_function", "call_method", "call_module"):
            continue
        lin = _relu_input(gm, node)
        operands = _linear_operands(gm, lin)
        if operands is None or len(lin.users) != 1:
            continue
        x, weight, bias = operands
        # Where the linear stands, not where the ReLU does: the module may change x (or a
        # weight it computed) in place between the two, and the fused op must read them
        # as the linear did.
        with graph.inserting_before(lin):
            if lin.op == "call_module":
                weight = graph.get_attr(f"{lin.target}.weight")
                bias = graph.get_attr(f"{lin.target}.bias") if _module(gm, lin).bias is not None else None
            fused = graph.call_function(FUSED_LINEAR_RELU, (x, weight, bias))
        node.replace_all_uses_with(fused)
        graph.erase_node(node)
        graph.erase_node(lin)


def fuse(gm: fx.GraphModule) -> fx.GraphModule:
    _fuse_silu(gm)
    _fuse_linear_relu(gm)
    gm.graph.lint()
    gm.recompile()
    return gm
