"""Public probes for fx-fusion-pass: what Run shows.

Each probe builds a small module with seeded parameters, traces it with
``torch.fx.symbolic_trace``, runs the candidate's ``fuse`` on the
GraphModule, and observes what the returned graph holds (node targets,
counted, without placeholders, outputs and get_attr nodes) and what a
GraphModule rebuilt from that graph computes on fixed inputs. Both are
compared with the reference's (auto check: exact for the counts, float32
tolerance for the values).
"""

from __future__ import annotations

import operator
from collections import Counter
from typing import Any

import torch
import torch.fx as fx
import torch.nn.functional as F
from probekit import probe

nn = torch.nn


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
    rebuilt = fx.GraphModule(out, graph)  # what the graph computes, whether or not recompile() was called
    with torch.no_grad():
        result = rebuilt(*(t.clone() for t in inputs))
    return {"lint": lint, "nodes": dict(sorted(counts.items())), "outputs": result}


def randn(seed: int, *shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


# ---------------------------------------------------------------- probes


class Swish(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(x) + 1.0


@probe(category="silu", hints=["silu-forms"])
def silu_basic(solution: Any) -> dict[str, Any]:
    """x * torch.sigmoid(x) + 1: the product becomes one F.silu call."""
    return run_pass(solution, Swish(), randn(1, 2, 4))


class LinearRelu(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(self.fc(x))


@probe(category="linear-relu", hints=["linear-relu-forms", "get-attr"])
def linear_relu_basic(solution: Any) -> dict[str, Any]:
    """F.relu(self.fc(x)) with an nn.Linear: one fused_linear_relu call."""
    torch.manual_seed(3)
    return run_pass(solution, LinearRelu(), randn(4, 5, 4))


class Gate(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(y)


@probe(category="leave-alone", hints=["same-operand"])
def sigmoid_gate_untouched(solution: Any) -> dict[str, Any]:
    """x * torch.sigmoid(y) is a gate, not a SiLU: the graph stays as it is."""
    return run_pass(solution, Gate(), randn(5, 3, 3), randn(6, 3, 3))
