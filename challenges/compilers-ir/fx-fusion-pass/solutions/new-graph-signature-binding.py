# Correct alternative (red team round 7, alt-newgraph-signature.py): decide every rewrite on the traced graph first, then build a NEW graph by
# copying node by node (env mapping); arguments bound with inspect.Signature objects (the module's own forward
# signature for submodules, a Signature built from the schema for torch.ops operators), in-place writes of a
# sigmoid found among its users (every write reads what it writes), torch.ops writes decided by the schema alone.
from __future__ import annotations

import copy
import inspect
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

_P = inspect.Parameter
_MISSING = object()


def _sig(*names, positional_only=False, defaults=None):
    defaults = defaults or {}
    kind = _P.POSITIONAL_ONLY if positional_only else _P.POSITIONAL_OR_KEYWORD
    return inspect.Signature([_P(n, kind, default=defaults.get(n, _P.empty)) for n in names])


SIG_UNARY_FN = _sig("input")
SIG_UNARY_METHOD = _sig("self")
SIG_F_RELU = _sig("input", "inplace", defaults={"inplace": False})
SIG_F_LINEAR = _sig("input", "weight", "bias", defaults={"bias": None})
SIG_OP_MUL = _sig("a", "b", positional_only=True)
SIG_TORCH_MUL = _sig("input", "other")
SIG_METHOD_MUL = _sig("self", "other")


def _bind(sig: inspect.Signature, node: fx.Node, prefix: tuple = ()):
    try:
        bound = sig.bind(*prefix, *node.args, **node.kwargs)
    except TypeError:
        return None
    bound.apply_defaults()
    return bound.arguments


def _submodule(gm, node):
    return gm.get_submodule(node.target) if node.op == "call_module" else None


def _module_input(gm, node):
    """The tensor a one-input submodule call is given, bound by the class's forward signature."""
    mod = _submodule(gm, node)
    args = _bind(inspect.signature(type(mod).forward), node, prefix=(mod,))
    if args is None or len(args) != 2:
        return None
    return list(args.values())[1]


def _sigmoid_input(gm, node):
    if not isinstance(node, fx.Node):
        return None
    if node.op == "call_function" and node.target is torch.sigmoid:
        a = _bind(SIG_UNARY_FN, node)
        return a and a["input"]
    if node.op == "call_method" and node.target == "sigmoid":
        a = _bind(SIG_UNARY_METHOD, node)
        return a and a["self"]
    if node.op == "call_module" and isinstance(_submodule(gm, node), torch.nn.Sigmoid):
        return _module_input(gm, node)
    return None


def _relu_input(gm, node):
    if node.op == "call_function" and node.target is F.relu:
        a = _bind(SIG_F_RELU, node)
        return a and a["input"]
    if node.op == "call_function" and node.target is torch.relu:
        a = _bind(SIG_UNARY_FN, node)
        return a and a["input"]
    if node.op == "call_method" and node.target == "relu":
        a = _bind(SIG_UNARY_METHOD, node)
        return a and a["self"]
    if node.op == "call_module" and isinstance(_submodule(gm, node), torch.nn.ReLU):
        return _module_input(gm, node)
    return None


def _mul_operands(node):
    if node.op == "call_function" and node.target is operator.mul:
        a = _bind(SIG_OP_MUL, node)
        return a and (a["a"], a["b"])
    if node.op == "call_function" and node.target is torch.mul:
        a = _bind(SIG_TORCH_MUL, node)
        return a and (a["input"], a["other"])
    if node.op == "call_method" and node.target == "mul":
        a = _bind(SIG_METHOD_MUL, node)
        return a and (a["self"], a["other"])
    return None


def _linear(gm, node):
    """(x, weight, bias) of a linear (weight/bias None for a submodule: fetched later), else None."""
    if not isinstance(node, fx.Node):
        return None
    if node.op == "call_module":
        mod = _submodule(gm, node)
        if isinstance(mod, torch.nn.Linear) and type(mod).forward is torch.nn.Linear.forward:
            x = _module_input(gm, node)
            return None if x is None else (x, None, None)
        return None
    if node.op == "call_function" and node.target is F.linear:
        a = _bind(SIG_F_LINEAR, node)
        return a and (a["input"], a["weight"], a["bias"])
    return None


# --- in-place writes -------------------------------------------------------------------------------------

_SCHEMA_SIGS: dict = {}


def _schema_signature(schema):
    key = str(schema)
    if key not in _SCHEMA_SIGS:
        params, names = [], {}
        for a in schema.arguments:
            pname = a.name if a.name.isidentifier() and a.name not in ("lambda", "from", "in", "is", "not", "and", "or") else a.name + "__"
            names[pname] = a
            kind = _P.KEYWORD_ONLY if a.kwarg_only else _P.POSITIONAL_OR_KEYWORD
            params.append(_P(pname, kind, default=_MISSING if a.has_default_value() else _P.empty))
        _SCHEMA_SIGS[key] = (inspect.Signature(params), names)
    return _SCHEMA_SIGS[key]


def _schema_writes(schema, node, t) -> bool:
    sig, names = _schema_signature(schema)
    kwargs = {(k + "__" if k + "__" in names else k): v for k, v in node.kwargs.items()}
    try:
        bound = sig.bind(*node.args, **kwargs)
    except TypeError:
        return False
    for pname, value in bound.arguments.items():
        a = names[pname]
        if a.alias_info is None or not a.alias_info.is_write:
            continue
        if isinstance(a.type, torch.ListType):  # a written list (Tensor(a!)[]): given a list or tuple holding t
            if isinstance(value, (list, tuple)) and any(v is t for v in value):
                return True
        elif value is t:  # a written tensor, Tensor(a!), given t
            return True
    return False


def _in(value, t) -> bool:
    return value is t or (isinstance(value, (list, tuple)) and any(_in(v, t) for v in value))


def _writes(gm, node, t) -> bool:
    target = node.target
    if node.op == "call_function" and isinstance(target, torch._ops.OpOverload):
        return _schema_writes(target._schema, node, t)
    if node.op == "call_function" and isinstance(target, torch._ops.OpOverloadPacket):
        return any(_schema_writes(getattr(target, o)._schema, node, t) for o in target.overloads())
    if _in(node.kwargs.get("out"), t):
        return True
    first = node.args[0] if node.args else next((node.kwargs[k] for k in ("input", "self", "tensor") if k in node.kwargs), None)
    if node.op == "call_module":
        return first is t and getattr(_submodule(gm, node), "inplace", False) is True
    if node.op == "call_method":
        name = target
    elif node.op == "call_function":
        name = getattr(target, "__name__", "")
    else:
        return False
    if isinstance(name, str) and name.endswith("_") and not name.endswith("__"):
        return first is t or (isinstance(first, (list, tuple)) and any(v is t for v in first))
    return first is t and node.kwargs.get("inplace") is True


# --- the pass ------------------------------------------------------------------------------------------------


def fuse(gm: fx.GraphModule) -> fx.GraphModule:
    old = gm.graph
    order = {n: i for i, n in enumerate(old.nodes)}

    silu_of = {}  # product -> x
    sig_of = {}  # product -> the sigmoid it reads
    for p in old.nodes:
        ops = _mul_operands(p)
        if not ops:
            continue
        for x, s in (ops, ops[::-1]):
            if not isinstance(x, fx.Node) or _sigmoid_input(gm, s) is not x:
                continue
            if any(order[s] < order[u] < order[p] and _writes(gm, u, s) for u in s.users):
                continue
            silu_of[p] = x
            sig_of[p] = s
            break
    # A sigmoid goes when every node reading it is a product replaced by a SiLU that read it as the sigmoid.
    dropped_sigmoids = {s for s in sig_of.values() if all(sig_of.get(u) is s and silu_of[u] is not s for u in s.users)}

    fused_at = {}  # linear -> (relu, x, w, b)
    for r in old.nodes:
        if r.op not in ("call_function", "call_method", "call_module"):
            continue
        lin = _relu_input(gm, r)
        lo = _linear(gm, lin)
        if lo is None or len(lin.users) != 1:
            continue
        fused_at[lin] = (r, *lo)
    relus = {v[0]: k for k, v in fused_at.items()}

    new = fx.Graph(tracer_cls=old._tracer_cls)
    new._codegen = copy.deepcopy(old._codegen)
    env: dict = {}

    def look(n):
        return env[n]

    for n in old.nodes:
        if n in dropped_sigmoids:
            continue
        if n in silu_of:
            env[n] = new.call_function(F.silu, (env[silu_of[n]],))
        elif n in fused_at:
            _, x, w, b = fused_at[n]
            if n.op == "call_module":
                mod = _submodule(gm, n)
                w = new.get_attr(f"{n.target}.weight")
                b = new.get_attr(f"{n.target}.bias") if mod.bias is not None else None
            else:
                w, b = fx.node.map_arg(w, look), fx.node.map_arg(b, look)
            env[n] = new.call_function(FUSED_LINEAR_RELU, (fx.node.map_arg(x, look), w, b))
        elif n in relus:
            env[n] = env[relus[n]]
        else:
            env[n] = new.node_copy(n, look)
    new.lint()
    # Installed on the module it was given (red team round 8): fx.GraphModule(gm, new) copies what each get_attr reads
    # when it is built, so a parametrized Linear's weight, computed when read, would stay fixed in the module returned.
    gm.graph = new
    gm.recompile()
    return gm
