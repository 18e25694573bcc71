"""Counts a node's readers by scanning the other nodes' args, one level deep.

Everything else was right then. The mistake is in "the ReLU is the linear's only
reader" (and "keep the sigmoid when something reads it"): a node can read a
value from inside a tuple or list argument (``torch.cat([relu(h), h])``, the
output node's ``(relu(h), h)``) or through a keyword argument, and a flat
``a is node for a in n.args`` sees none of those. The pass then fuses a
Linear that must stay, so the matmul runs twice, and it erases a sigmoid
that is still read (``graph.erase_node`` refuses).

Written for the statement before issue 27's round, it also reads the operands of the
sigmoid, the product, the ReLU and the submodules from node.args only (every argument may now
be passed by keyword) and inserts the fused op where the ReLU stood (the module may change
the linear's input in place between the two): see its why in expected.toml.
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


def _unary_input(gm: fx.GraphModule, node: fx.Node, functions: tuple, method: str, module_type: type) -> fx.Node | None:
    """The operand of a one-input call of the given function, method or module type, else None."""
    if not isinstance(node, fx.Node) or len(node.args) != 1 or node.kwargs:
        return None
    if (node.op == "call_function" and node.target in functions) or (node.op == "call_method" and node.target == method):
        return node.args[0]
    if node.op == "call_module" and isinstance(_module(gm, node), module_type):
        return node.args[0]
    return None


def _mul_operands(node: fx.Node) -> tuple | None:
    if len(node.args) != 2 or node.kwargs:
        return None
    if (node.op == "call_function" and node.target in (operator.mul, torch.mul)) or (
        node.op == "call_method" and node.target == "mul"
    ):
        return node.args
    return None


def _readers(graph: fx.Graph, node: fx.Node) -> list[fx.Node]:
    """The nodes that take ``node`` as an argument."""
    return [n for n in graph.nodes if any(a is node for a in n.args)]


def _fuse_silu(gm: fx.GraphModule) -> None:
    graph = gm.graph
    for node in list(graph.nodes):
        operands = _mul_operands(node)
        if operands is None:
            continue
        a, b = operands
        for x, s in ((a, b), (b, a)):
            if isinstance(x, fx.Node) and _unary_input(gm, s, (torch.sigmoid,), "sigmoid", torch.nn.Sigmoid) is x:
                with graph.inserting_before(node):
                    silu = graph.call_function(F.silu, (x,))
                node.replace_all_uses_with(silu)
                graph.erase_node(node)
                if not _readers(graph, s):
                    graph.erase_node(s)
                break


def _relu_input(gm: fx.GraphModule, node: fx.Node) -> fx.Node | None:
    if node.op == "call_function" and node.target in (F.relu, torch.relu):
        # F.relu(h, inplace=...) is still a ReLU; anything else in kwargs is not ours.
        if 1 <= len(node.args) <= 2 and set(node.kwargs) <= {"inplace"}:
            return node.args[0]
        return None
    return _unary_input(gm, node, (), "relu", torch.nn.ReLU)


def _linear_args(gm: fx.GraphModule, node: fx.Node, graph: fx.Graph) -> tuple | None:
    """(x, weight, bias) of a linear node, creating get_attr nodes for a module's parameters."""
    if node.op == "call_module" and isinstance(_module(gm, node), torch.nn.Linear) and len(node.args) == 1 and not node.kwargs:
        mod = _module(gm, node)
        weight = graph.get_attr(f"{node.target}.weight")
        bias = graph.get_attr(f"{node.target}.bias") if mod.bias is not None else None
        return node.args[0], weight, bias
    if node.op == "call_function" and node.target is F.linear:
        args = list(node.args) + [None] * (3 - len(node.args))
        x, weight, bias = args[0], node.kwargs.get("weight", args[1]), node.kwargs.get("bias", args[2])
        return x, weight, bias
    return None


def _is_linear(gm: fx.GraphModule, node: object) -> bool:
    if not isinstance(node, fx.Node):
        return False
    return (node.op == "call_module" and isinstance(_module(gm, node), torch.nn.Linear)) or (
        node.op == "call_function" and node.target is F.linear
    )


def _fuse_linear_relu(gm: fx.GraphModule) -> None:
    graph = gm.graph
    for node in list(graph.nodes):
        if node.op not in ("call_function", "call_method", "call_module"):
            continue
        lin = _relu_input(gm, node)
        if not _is_linear(gm, lin) or len(_readers(graph, lin)) != 1:
            continue
        with graph.inserting_before(node):
            args = _linear_args(gm, lin, graph)
            if args is None:
                continue
            fused = graph.call_function(FUSED_LINEAR_RELU, args)
        node.replace_all_uses_with(fused)
        graph.erase_node(node)
        if not lin.users:
            graph.erase_node(lin)


def fuse(gm: fx.GraphModule) -> fx.GraphModule:
    _fuse_silu(gm)
    _fuse_linear_relu(gm)
    gm.graph.lint()
    gm.recompile()
    return gm
