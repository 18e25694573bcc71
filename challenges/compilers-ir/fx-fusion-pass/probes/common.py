"""What the public and hidden probes of fx-fusion-pass share, imported by both as ``probe_common``."""

from __future__ import annotations

import operator
from collections import Counter
from typing import Any

import torch
import torch.fx as fx
import torch.nn.functional as F
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode


def target_name(gm: fx.GraphModule, node: fx.Node) -> str:
    """A stable name for what a node calls."""
    if node.op == "call_module":
        return f"module:{type(gm.get_submodule(node.target)).__name__}"
    if node.op == "call_method":
        return f"method:{node.target}"
    t = node.target
    if t is F.silu:
        return "F.silu"
    if "fxlab" in str(t) and "fused_linear_relu" in str(t):
        return "fxlab.fused_linear_relu"  # the OpOverload or its packet
    names = {operator.mul: "operator.mul", torch.mul: "torch.mul", torch.sigmoid: "torch.sigmoid",
             torch.relu: "torch.relu", F.relu: "F.relu", F.linear: "F.linear", operator.add: "operator.add"}  # fmt: skip
    if t in names:
        return names[t]
    try:
        return fx.node._get_qualified_name(t)
    except Exception:  # noqa: BLE001
        return repr(t)


def node_counts(gm: fx.GraphModule) -> Counter:
    """What the graph's nodes call, counted (placeholders, outputs and get_attr nodes aside), how
    many fused calls get None for their bias (the statement's args for a linear without bias), and
    how many fused calls are not made with the statement's three positional args (x, weight, bias)."""
    counts = Counter(target_name(gm, n) for n in gm.graph.nodes if n.op not in ("placeholder", "output", "get_attr"))
    for n in gm.graph.nodes:
        if target_name(gm, n) == "fxlab.fused_linear_relu" and n.op == "call_function":
            bias = n.args[2] if len(n.args) > 2 else n.kwargs.get("bias")
            if bias is None:
                counts["fxlab.fused_linear_relu without bias"] += 1
            if len(n.args) != 3 or n.kwargs:  # fused(x, w) or fused(x, w, bias=b): not args (x, weight, bias)
                counts["fxlab.fused_linear_relu not called with args (x, weight, bias)"] += 1
        if n.op == "call_function" and n.target is F.silu and (len(n.args) != 1 or n.kwargs):  # F.silu(input=x): not args (x,)
            counts["F.silu not called with args (x,)"] += 1
    return counts


# ---------------------------------------------------------------- what the rewrites do not own
#
# Everything the pass does not rewrite stays as it was: every node the traced graph had, other than
# the calls a rewrite replaces, keeps its op, target, args and kwargs (in their order) and its place
# among the others. `snapshot` records a graph as plain data (node references as indices), taken
# before `fuse` runs (an in-place pass edits the very nodes); `untouched` aligns the returned graph
# with it.


def _pattern_kind(gm: fx.GraphModule, node: fx.Node) -> str | None:
    """Which of the patterns' calls a node could be (by op and target only): a rewrite may remove it."""
    op, t = node.op, node.target
    if op == "call_function":
        if t is operator.mul or t is torch.mul:
            return "product"
        return {torch.sigmoid: "sigmoid", F.relu: "relu", torch.relu: "relu", F.linear: "linear"}.get(t)
    if op == "call_method":
        return {"mul": "product", "sigmoid": "sigmoid", "relu": "relu"}.get(t)
    if op == "call_module":
        try:
            sub = gm.get_submodule(t)
        except AttributeError:
            return None
        for kind, cls in (("sigmoid", nn.Sigmoid), ("relu", nn.ReLU), ("linear", nn.Linear)):
            if isinstance(sub, cls):
                return kind
    return None


def _new_kind(node: fx.Node) -> str | None:
    """Which node a rewrite may add: the SiLU call, the fused call, a get_attr of a Linear's parameter."""
    if node.op == "call_function" and node.target is F.silu:
        return "silu"
    if node.op == "call_function" and "fxlab" in str(node.target) and "fused_linear_relu" in str(node.target):
        return "fused"
    if node.op == "get_attr":
        return "get_attr"
    return None


def _frozen(a: Any, index: dict) -> Any:
    """An argument as plain data: nodes as ("node", i), containers and constants by type and value."""
    if isinstance(a, fx.Node):
        return ("node", index.get(a, -1))
    if isinstance(a, tuple):
        return ("tuple", type(a).__name__, tuple(_frozen(v, index) for v in a))
    if isinstance(a, list):
        return ("list", tuple(_frozen(v, index) for v in a))
    if isinstance(a, dict):
        return ("dict", tuple((repr(k), _frozen(v, index)) for k, v in a.items()))
    if isinstance(a, slice):
        return ("slice", _frozen(a.start, index), _frozen(a.stop, index), _frozen(a.step, index))
    return ("const", type(a).__name__, repr(a))


def snapshot(gm: fx.GraphModule) -> list[dict[str, Any]]:
    """The graph's nodes in order: op, target, args and kwargs as plain data, what they read, their kinds."""
    nodes = list(gm.graph.nodes)
    index = {n: i for i, n in enumerate(nodes)}
    out = []
    for n in nodes:
        target = n.target if isinstance(n.target, str) else id(n.target)
        out.append({
            "op": n.op, "target": target,
            "args": _frozen(tuple(n.args), index), "kwargs": _frozen(dict(n.kwargs), index),
            "reads": sorted({index.get(a, -1) for a in n.all_input_nodes}),
            "kind": _pattern_kind(gm, n), "new": _new_kind(n),
        })  # fmt: skip
    return out


_REPLACED_BY = {"product": "silu", "relu": "fused"}


def untouched(before: list[dict[str, Any]], after: list[dict[str, Any]], budget: int = 200_000) -> str:
    """"ok" when the returned graph (``after``) is the traced one (``before``) with only the rewrites' own
    changes, else "changed". Each node of ``after`` is either a node of ``before`` kept, with the same
    op, target, args and kwargs (keywords in their order), where a reference to a kept node is to that
    node and one to a replaced product or ReLU is to an added F.silu or fused call, and in the same order
    as the other kept nodes; or a node a rewrite adds (F.silu, the fused call, get_attr). A node of
    ``before`` that is not kept must be one a rewrite replaces: a product that reads a sigmoid, a ReLU
    of a removed linear, a linear or a sigmoid read only by removed ReLUs or products; and there are as
    many added F.silu calls as removed products, as many added fused calls as removed ReLUs."""
    n_b, n_a = len(before), len(after)
    kept = [None] * n_b  # before index -> after index, or -1 when removed
    role = [None] * n_a  # after index -> before index, or -1 when added
    steps = [budget]

    def token_b(a: Any) -> Any:
        if isinstance(a, tuple) and len(a) == 2 and a[0] == "node":
            i = a[1]
            m = kept[i] if 0 <= i < n_b else None
            if m is None:
                return ("unknown",)
            return ("kept", m) if m >= 0 else ("replaced", _REPLACED_BY.get(before[i]["kind"], "gone"))
        if isinstance(a, tuple):
            return tuple(token_b(v) for v in a)
        return a

    def token_a(a: Any) -> Any:
        if isinstance(a, tuple) and len(a) == 2 and a[0] == "node":
            j = a[1]
            o = role[j] if 0 <= j < n_a else None
            if o is None:
                return ("unknown",)
            return ("kept", j) if o >= 0 else ("replaced", after[j]["new"])
        if isinstance(a, tuple):
            return tuple(token_a(v) for v in a)
        return a

    def same(b: dict, a: dict) -> bool:
        return (b["op"] == a["op"] and b["target"] == a["target"] and token_b(b["args"]) == token_a(a["args"])
                and token_b(b["kwargs"]) == token_a(a["kwargs"]))  # fmt: skip

    def valid() -> bool:
        removed = [i for i in range(n_b) if kept[i] == -1]
        gone = set(removed)
        readers: dict[int, list[int]] = {}
        for i, b in enumerate(before):
            for r in b["reads"]:
                readers.setdefault(r, []).append(i)
        for i in removed:
            kind, rd = before[i]["kind"], readers.get(i, [])
            if kind == "product":
                ok = any(before[r]["kind"] == "sigmoid" for r in before[i]["reads"] if r >= 0)
            elif kind == "relu":
                ok = any(r in gone and before[r]["kind"] == "linear" for r in before[i]["reads"])
            elif kind in ("sigmoid", "linear"):
                want = "product" if kind == "sigmoid" else "relu"
                ok = bool(rd) and all(r in gone and before[r]["kind"] == want for r in rd)
            else:
                ok = False
            if not ok:
                return False
        added = Counter(after[j]["new"] for j in range(n_a) if role[j] == -1)
        removed_kinds = Counter(before[i]["kind"] for i in removed)
        return added["silu"] == removed_kinds["product"] and added["fused"] == removed_kinds["relu"]

    def search(i: int, j: int) -> bool:
        steps[0] -= 1
        if steps[0] < 0:
            return False
        if j == n_a:
            if all(before[k]["kind"] for k in range(i, n_b)):
                for k in range(i, n_b):
                    kept[k] = -1
                if valid():
                    return True
                for k in range(i, n_b):
                    kept[k] = None
            return False
        a = after[j]
        k = i
        while k < n_b:  # a is the next kept node (the ones skipped are removed) ...
            if same(before[k], a):
                kept[k], role[j] = j, k
                if search(k + 1, j + 1):
                    return True
                kept[k], role[j] = -1, None
            if not before[k]["kind"]:
                break
            kept[k] = -1
            k += 1
        for m in range(i, min(k + 1, n_b)):
            kept[m] = None
        if a["new"]:  # ... or a node a rewrite added
            role[j] = -1
            if search(i, j + 1):
                return True
            role[j] = None
        return False

    import sys

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4 * (n_a + n_b) + 200))
    try:
        return "ok" if search(0, 0) else "changed"
    finally:
        sys.setrecursionlimit(limit)


class DispatchRecorder(TorchDispatchMode):
    """The operators a call dispatches, counted by overload packet."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: Counter[str] = Counter()

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None) -> Any:
        self.counts[str(func.overloadpacket)] += 1
        return func(*args, **(kwargs or {}))


def dispatched(module: Any, inputs: list | tuple) -> dict[str, int] | str:
    """The operators ``module(*inputs)`` dispatches (on clones of the inputs), counted."""
    args = [t.clone() for t in inputs]  # cloned before the recorder starts: only the module's own calls count
    try:
        with torch.no_grad(), DispatchRecorder() as recorder:
            module(*args)
    except Exception as exc:  # noqa: BLE001
        return f"raised {type(exc).__name__}"
    return dict(sorted(recorder.counts.items()))


def runs_its_graph(returned: fx.GraphModule, inputs: list | tuple) -> bool:
    """Whether the GraphModule as returned (not rebuilt) dispatches what its graph does: it does not
    when the pass edited the graph in place and forgot ``recompile()``, even where values agree."""
    as_returned = dispatched(returned, inputs)
    return isinstance(as_returned, dict) and as_returned == dispatched(fx.GraphModule(returned, returned.graph), inputs)


def own_attributes(gm: fx.GraphModule) -> dict[str, torch.Tensor]:
    """The module's own parameters and buffers, by dotted name, copied."""
    named = [*gm.named_parameters(remove_duplicate=False), *gm.named_buffers(remove_duplicate=False)]
    return {name: t.detach().clone() for name, t in named}


def attributes_changed(returned: fx.GraphModule, own: dict[str, torch.Tensor]) -> int:
    """How many of the module's own parameters and buffers the returned module holds with other values
    (a new attribute registered under a name the module already used replaces its own). A name the
    returned module no longer has is not counted: a rebuilt GraphModule keeps only what its graph reads."""
    changed = 0
    for name, before in own.items():
        try:
            now = returned.get_submodule(name.rpartition(".")[0]) if "." in name else returned
            now = getattr(now, name.rpartition(".")[2])
        except AttributeError:
            continue
        if not (isinstance(now, torch.Tensor) and now.shape == before.shape and now.dtype == before.dtype and torch.equal(now, before)):
            changed += 1
    return changed


def run_pass(solution: Any, module: nn.Module, *inputs: torch.Tensor, calls: int = 1) -> dict[str, Any]:
    """What fuse returns for the traced module, observed (see the module docstring). With ``calls`` > 1 the
    rewritten graph is run that many times in a row and "outputs" lists each call's: a module that changes
    its own parameters or buffers in place carries that state from one call into the next."""
    module.eval()
    gm = fx.symbolic_trace(module)
    own = own_attributes(gm)
    before = snapshot(gm)  # before the pass edits these very nodes
    out = solution.fuse(gm)
    if not isinstance(out, fx.GraphModule):
        return {"error": f"fuse returned a {type(out).__name__}, not a GraphModule"}
    changed = attributes_changed(out, own)  # before anything runs: a module may write its buffers
    graph = out.graph
    try:
        graph.lint()
        lint = "ok"
    except Exception as exc:  # noqa: BLE001
        lint = f"{type(exc).__name__}: {str(exc)[:300]}"
    counts = node_counts(out)
    # Nodes nothing reads (get_attr ones included: a rewrite that fetches a Linear's
    # parameters and then decides not to fuse leaves them behind). The traced modules
    # have none of their own.
    unused = sum(1 for n in graph.nodes if n.op not in ("placeholder", "output") and not n.users)
    rebuilt = fx.GraphModule(out, graph)  # what the graph computes, whether or not recompile() was called
    with torch.no_grad():
        results = [rebuilt(*(t.clone() for t in inputs)) for _ in range(calls)]
    result = results[0] if calls == 1 else results
    return {
        "lint": lint,
        "nodes": dict(sorted(counts.items())),
        "unused nodes": unused,
        "untouched nodes": untouched(before, snapshot(out)),
        "outputs": result,
        "module as returned runs its graph": runs_its_graph(out, inputs),
        "own parameters and buffers changed": changed,
    }


def randn(seed: int, *shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))
