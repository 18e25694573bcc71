"""Reference: an FX pass that makes SiLU and fuses Linear + ReLU.

Both rewrites match on the graph's structure, not on names: a node is a
sigmoid if it is ``torch.sigmoid``, the ``sigmoid`` method (``F.sigmoid``
traces to it) or an ``nn.Sigmoid`` submodule; a linear is an ``nn.Linear``
submodule or ``F.linear``. The SiLU pattern needs the *same* node on both
sides of the product, and no in-place change of the sigmoid's result before
the product reads it; the Linear + ReLU pattern needs the linear's output to
have no reader other than the ReLU, or fusing would compute the linear twice.
Replaced nodes are erased as soon as nothing reads them.
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


def _holds(arg: object, value: fx.Node) -> bool:
    """Whether ``arg`` is ``value`` or a tuple or list holding it (``out=(values, indices)``)."""
    return arg is value or (isinstance(arg, (tuple, list)) and any(_holds(a, value) for a in arg))


def _schema_writes(schema: torch.FunctionSchema, args: tuple, kwargs: dict, value: fx.Node) -> bool:
    """Whether a call of the operator with this schema, given ``args`` and ``kwargs``, writes ``value``: the
    arguments bind as Python binds them (each positional one to the schema's next argument before its keyword-only
    ones, each keyword to the argument of that name), and an argument the schema writes (``Tensor(a!)``) is given
    ``value``, or a list of tensors it writes (``Tensor(a!)[]``) holds it. False when the schema cannot take these
    arguments (too many positional ones, a keyword it does not have, an argument without a default left out)."""
    positional = [a for a in schema.arguments if not a.kwarg_only]
    if len(args) > len(positional):
        return False
    bound = {a.name: v for a, v in zip(positional, args)}
    names = {a.name for a in schema.arguments}
    for key, v in kwargs.items():
        if key not in names or key in bound:
            return False
        bound[key] = v
    if any(a.name not in bound and not a.has_default_value() for a in schema.arguments):
        return False
    for a in schema.arguments:
        if a.name not in bound or a.alias_info is None or not a.alias_info.is_write:
            continue
        v = bound[a.name]
        if isinstance(a.type, torch.ListType):
            if isinstance(v, (list, tuple)) and any(item is value for item in v):
                return True
        elif v is value:
            return True
    return False


def _writes(gm: fx.GraphModule, node: fx.Node, value: fx.Node) -> bool:
    """Whether ``node`` changes ``value`` in place: an operator of ``torch.ops`` whose schema writes an argument given
    it (the schema alone decides, even for an argument named ``out`` that it only reads), at any position or by keyword
    (``torch.ops.aten.mul_.Tensor(s, y)``, ``torch.ops.aten._cummax_helper.default(y, s, i, 0)``), an overload packet
    when one of its overloads that can take the call's arguments does (``torch.ops.aten.sort(y, values=s, indices=i)``,
    ``torch.ops.aten._foreach_add_([s, u], 0.5)``); any other call with ``out=`` holding ``value``; with ``value`` as
    its first operand (by position, or as ``input=``, ``self=``, ``tensor=``) an in-place method or function
    (``s.pow_(2.0)``, ``torch.exp_(s)``, ``torch.nn.init.constant_(s, 0.5)``, also with a list holding it:
    ``torch._foreach_mul_([s, u], 2.0)``), ``inplace=True``, or a submodule built with ``inplace=True``."""
    # The operators of torch.ops first: for them the schema alone decides, and some schemas have an argument named
    # out that they only read (aten::_scaled_dot_product_flash_attention_for_cpu_backward's out).
    if node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload):
        return _schema_writes(node.target._schema, node.args, node.kwargs, value)
    if node.op == "call_function" and isinstance(node.target, torch._ops.OpOverloadPacket):
        # A packet calls the one of its overloads that takes its arguments (torch.ops.aten.sort(y, values=s,
        # indices=i) is aten::sort.values, which writes values): it writes what such an overload writes.
        packet = node.target
        return any(_schema_writes(getattr(packet, name)._schema, node.args, node.kwargs, value) for name in packet.overloads())
    if _holds(node.kwargs.get("out"), value):
        return True
    keyed = (node.kwargs[k] for k in ("input", "self", "tensor") if k in node.kwargs)
    first = node.args[0] if node.args else next(keyed, None)
    if node.op == "call_module":
        return first is value and getattr(_module(gm, node), "inplace", False) is True
    if node.op not in ("call_function", "call_method"):
        return False
    name = node.target if node.op == "call_method" else getattr(node.target, "__name__", "")
    if isinstance(name, str) and name.endswith("_") and not name.endswith("__"):
        return _holds(first, value)
    return first is value and node.kwargs.get("inplace") is True


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
