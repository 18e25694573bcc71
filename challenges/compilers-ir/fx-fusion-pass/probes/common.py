"""What the public and hidden probes of fx-fusion-pass share, imported by both as ``probe_common``."""

from __future__ import annotations

import operator
from collections import Counter
from typing import Any

import torch
import torch.fx as fx
import torch.nn.functional as F
from torch import nn


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


def run_pass(solution: Any, module: nn.Module, *inputs: torch.Tensor) -> dict[str, Any]:
    module.eval()
    gm = fx.symbolic_trace(module)
    out = solution.fuse(gm)
    if not isinstance(out, fx.GraphModule):
        return {"error": f"fuse returned a {type(out).__name__}, not a GraphModule"}
    graph = out.graph
    try:
        graph.lint()
        lint = "ok"
    except Exception as exc:  # noqa: BLE001
        lint = f"{type(exc).__name__}: {str(exc)[:300]}"
    counts = Counter(target_name(out, n) for n in graph.nodes if n.op not in ("placeholder", "output", "get_attr"))
    # Nodes nothing reads (get_attr ones included: a rewrite that fetches a Linear's
    # parameters and then decides not to fuse leaves them behind). The traced modules
    # have none of their own.
    unused = sum(1 for n in graph.nodes if n.op not in ("placeholder", "output") and not n.users)
    rebuilt = fx.GraphModule(out, graph)  # what the graph computes, whether or not recompile() was called
    with torch.no_grad():
        result = rebuilt(*(t.clone() for t in inputs))
    return {"lint": lint, "nodes": dict(sorted(counts.items())), "unused nodes": unused, "outputs": result}


def randn(seed: int, *shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))
