"""Hidden probes for fx-fusion-pass: they make the score.

Each probe builds a small module with seeded parameters, traces it with
``torch.fx.symbolic_trace``, runs the candidate's ``fuse`` on the
GraphModule, and observes what the returned graph holds (node targets,
counted, without placeholders, outputs and get_attr nodes) and what a
GraphModule rebuilt from that graph computes on fixed inputs. Both are
compared with the reference's (auto check: exact for the counts, float32
tolerance for the values).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import torch
import torch.fx as fx
import torch.nn.functional as F
from probe_common import randn, run_pass
from probekit import probe
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode

# ---------------------------------------------------------------- silu


class SiluOperatorForms(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple:
        return x * torch.sigmoid(x), torch.sigmoid(y) * y, torch.mul(x, torch.sigmoid(x))


@probe(category="silu", hints=["silu-forms"])
def silu_operator_forms(solution: Any) -> dict[str, Any]:
    """x * torch.sigmoid(x), torch.sigmoid(y) * y and torch.mul(x, torch.sigmoid(x))."""
    return run_pass(solution, SiluOperatorForms(), randn(1, 3, 5), randn(2, 4))


class SiluMethodForms(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple:
        return x * x.sigmoid(), x.mul(F.sigmoid(x)), y.sigmoid().mul(y), y * F.sigmoid(y)


@probe(category="silu", hints=["silu-forms"])
def silu_method_forms(solution: Any) -> dict[str, Any]:
    """x * x.sigmoid(), x.mul(F.sigmoid(x)), y.sigmoid().mul(y) and y * F.sigmoid(y)."""
    return run_pass(solution, SiluMethodForms(), randn(3, 2, 6), randn(4, 6))


class SiluModule(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.gate = nn.Sigmoid()
        self.proj = nn.Linear(6, 6)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.proj(x)
        return self.gate(h) * h


@probe(category="silu", hints=["silu-forms"])
def silu_sigmoid_submodule(solution: Any) -> dict[str, Any]:
    """An nn.Sigmoid submodule applied to h, times h."""
    torch.manual_seed(5)
    return run_pass(solution, SiluModule(), randn(5, 3, 6))


class SharedSigmoid(nn.Module):
    def forward(self, x: torch.Tensor) -> tuple:
        s = torch.sigmoid(x)
        return x * s, s * x, s + 1.0


@probe(category="silu", hints=["silu-dead-code"])
def silu_sigmoid_with_other_reader(solution: Any) -> dict[str, Any]:
    """One sigmoid read by two products and by an addition: the products become silu, the sigmoid stays."""
    return run_pass(solution, SharedSigmoid(), randn(6, 4, 4))


class SigmoidReadInsideStructures(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple:
        s = torch.sigmoid(x)
        t = y.sigmoid()
        return x * s, [s], torch.sub(y * t, other=t, alpha=0.5)


@probe(category="silu", hints=["silu-dead-code"])
def silu_sigmoid_read_inside_structures(solution: Any) -> dict[str, Any]:
    """Sigmoids also read from inside the returned list and as a keyword argument: the products become silu, the sigmoids stay."""
    return run_pass(solution, SigmoidReadInsideStructures(), randn(23, 3, 4), randn(24, 2, 4))


# ---------------------------------------------------------------- linear-relu


class LinearReluForms(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 8)
        self.c = nn.Linear(8, 8, bias=False)
        self.d = nn.Linear(8, 8)
        self.act = nn.ReLU()

    def forward(self, x: torch.Tensor) -> tuple:
        return F.relu(self.a(x)), torch.relu(self.b(x)), self.c(x).relu(), self.act(self.d(x))


@probe(category="linear-relu", weight=2, hints=["linear-relu-forms", "get-attr"])
def linear_relu_forms(solution: Any) -> dict[str, Any]:
    """nn.Linear followed by F.relu, torch.relu, .relu() and an nn.ReLU module; one Linear has no bias."""
    torch.manual_seed(7)
    return run_pass(solution, LinearReluForms(), randn(8, 2, 3, 8))


class FunctionalLinear(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w1 = nn.Parameter(torch.randn(5, 4))
        self.b1 = nn.Parameter(torch.randn(5))
        self.w2 = nn.Parameter(torch.randn(3, 5))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.relu(F.linear(x, self.w1, self.b1))
        return torch.relu(F.linear(h, self.w2))


@probe(category="linear-relu", hints=["linear-relu-forms"])
def functional_linear(solution: Any) -> dict[str, Any]:
    """F.linear with a bias and without one, each followed by a ReLU."""
    torch.manual_seed(9)
    return run_pass(solution, FunctionalLinear(), randn(10, 6, 4))


@probe(category="linear-relu", weight=2, hints=["linear-relu-forms", "get-attr"])
def sequential_mlp(solution: Any) -> dict[str, Any]:
    """nn.Sequential(Linear, ReLU, Linear, ReLU(inplace=True), Linear) on a 3-D input."""
    torch.manual_seed(11)
    mlp = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 12, bias=False), nn.ReLU(inplace=True), nn.Linear(12, 3))
    return run_pass(solution, mlp, randn(12, 2, 5, 6))


class FunctionalLinearKeywords(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w1 = nn.Parameter(torch.randn(5, 4))
        self.b1 = nn.Parameter(torch.randn(5))
        self.w2 = nn.Parameter(torch.randn(3, 5))
        self.b2 = nn.Parameter(torch.randn(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.relu(F.linear(x, self.w1, bias=self.b1))
        return F.relu(F.linear(h, weight=self.w2, bias=self.b2))


@probe(category="linear-relu", hints=["linear-relu-forms"])
def functional_linear_keyword_arguments(solution: Any) -> dict[str, Any]:
    """F.linear with its bias, or its weight and bias, passed as keywords, each followed by F.relu."""
    torch.manual_seed(25)
    return run_pass(solution, FunctionalLinearKeywords(), randn(26, 2, 3, 4))


class InplaceRelu(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(self.fc(x), inplace=True) + x


@probe(category="linear-relu", hints=["linear-relu-forms"])
def functional_relu_inplace(solution: Any) -> dict[str, Any]:
    """F.relu(self.fc(x), inplace=True) + x."""
    torch.manual_seed(13)
    return run_pass(solution, InplaceRelu(), randn(14, 3, 4))


# ---------------------------------------------------------------- leave-alone


class SigmoidOfOther(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple:
        return x * torch.sigmoid(y), x * torch.sigmoid(x + 1.0), torch.sigmoid(x) * torch.sigmoid(x), y.sigmoid() * 2.0


@probe(category="leave-alone", weight=2, hints=["same-operand"])
def sigmoid_of_something_else(solution: Any) -> dict[str, Any]:
    """x * sigmoid(y), x * sigmoid(x + 1), sigmoid(x) * sigmoid(x), sigmoid(y) * 2: none is a SiLU."""
    return run_pass(solution, SigmoidOfOther(), randn(15, 3, 3), randn(16, 3, 3))


class LinearOtherUsers(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(5, 5)
        self.fc2 = nn.Linear(5, 5)

    def forward(self, x: torch.Tensor) -> tuple:
        h = self.fc(x)
        g = self.fc2(x)
        return F.relu(h) + h, torch.relu(g), g.sum()


@probe(category="leave-alone", weight=2, hints=["other-users"])
def linear_output_read_elsewhere(solution: Any) -> dict[str, Any]:
    """Linear outputs read by a ReLU and by something else: fusing would compute them twice."""
    torch.manual_seed(17)
    return run_pass(solution, LinearOtherUsers(), randn(18, 2, 5))


class LinearAlsoReturned(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(5, 5)
        self.fc2 = nn.Linear(5, 5)

    def forward(self, x: torch.Tensor) -> tuple:
        h = self.fc(x)
        g = self.fc2(x)
        return F.relu(h), h, {"act": torch.relu(g), "pre": [g]}


@probe(category="leave-alone", weight=2, hints=["other-users"])
def linear_output_also_returned(solution: Any) -> dict[str, Any]:
    """Linear outputs returned next to their ReLU, in a tuple and nested in a dict: the Linears have two readers."""
    torch.manual_seed(27)
    return run_pass(solution, LinearAlsoReturned(), randn(28, 3, 5))


class LinearInAList(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 6)
        self.w = nn.Parameter(torch.randn(6, 4))

    def forward(self, x: torch.Tensor) -> tuple:
        h = self.fc(x)
        g = F.linear(x, self.w)
        return torch.cat([F.relu(h), h], dim=-1), torch.stack((g.relu(), g))


@probe(category="leave-alone", weight=2, hints=["other-users"])
def linear_output_in_a_list_argument(solution: Any) -> dict[str, Any]:
    """torch.cat([relu(h), h]) and torch.stack((relu(g), g)): the list or tuple argument reads the Linear's output too."""
    torch.manual_seed(29)
    return run_pass(solution, LinearInAList(), randn(30, 2, 3, 4))


class LinearAsKeyword(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.fc2 = nn.Linear(4, 4, bias=False)

    def forward(self, x: torch.Tensor) -> tuple:
        h = self.fc(x)
        g = self.fc2(x)
        return torch.add(F.relu(h), other=h), torch.sub(g.relu(), other=g, alpha=0.5)


@probe(category="leave-alone", weight=2, hints=["other-users"])
def linear_output_as_a_keyword_argument(solution: Any) -> dict[str, Any]:
    """torch.add(relu(h), other=h) and torch.sub(relu(g), other=g, alpha=0.5): a keyword argument is a reader too."""
    torch.manual_seed(31)
    return run_pass(solution, LinearAsKeyword(), randn(32, 3, 4))


class LookAlikes(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Identity()
        self.fc = nn.Linear(4, 4)
        self.conv = nn.Conv1d(4, 4, 1)
        self.relu = nn.LeakyReLU()

    def forward(self, x: torch.Tensor) -> tuple:
        return (
            F.relu(self.linear(x)),
            self.relu(self.fc(x)),
            F.gelu(self.fc(x)),
            F.relu(self.conv(x.transpose(1, 2))),
            self.fc(x).clamp(min=0.0),
        )


@probe(category="leave-alone", weight=2, hints=["match-by-type"])
def look_alike_modules(solution: Any) -> dict[str, Any]:
    """A submodule named linear that is nn.Identity, a LeakyReLU named relu, GELU, Conv1d and clamp."""
    torch.manual_seed(19)
    return run_pass(solution, LookAlikes(), randn(20, 2, 3, 4))


class NotAProductOrNotAReLU(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.register_buffer("buf", torch.zeros(3, 4))

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple:
        written = torch.mul(x, torch.sigmoid(x), out=self.buf)
        return x + torch.sigmoid(x), y.add(y.sigmoid()), x * x.tanh(), self.fc(y).tanh(), written + self.buf


@probe(category="leave-alone", weight=2, hints=["same-operand", "match-by-type"])
def sums_tanh_and_out_argument(solution: Any) -> dict[str, Any]:
    """x + sigmoid(x), y.add(y.sigmoid()), x * x.tanh(), a Linear read by .tanh(), and torch.mul(x, sigmoid(x), out=buf):
    none is a SiLU or a Linear + ReLU."""
    torch.manual_seed(33)
    return run_pass(solution, NotAProductOrNotAReLU(), randn(34, 3, 4), randn(35, 3, 4))


# ---------------------------------------------------------------- mixed


class MlpWithSilu(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(6, 10)
        self.fc2 = nn.Linear(10, 10)
        self.fc3 = nn.Linear(10, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x * torch.sigmoid(x)
        h = F.relu(self.fc1(x))
        h = self.fc2(h)
        h = h * h.sigmoid()
        return torch.relu(self.fc3(h))


@probe(category="mixed", weight=2, hints=["silu-forms", "linear-relu-forms", "other-users"])
def mlp_with_both_patterns(solution: Any) -> dict[str, Any]:
    """SiLU, Linear+ReLU, a Linear read by a SiLU (not fusable with ReLU), and Linear+ReLU again."""
    torch.manual_seed(21)
    return run_pass(solution, MlpWithSilu(), randn(22, 4, 6))


class DispatchRecorder(TorchDispatchMode):
    """The operators a call dispatches, counted by overload packet."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: Counter[str] = Counter()

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None) -> Any:
        self.counts[str(func.overloadpacket)] += 1
        return func(*args, **(kwargs or {}))


@probe(category="mixed", weight=2, hints=["recompile"])
def returned_module_runs_its_graph(solution: Any) -> dict[str, Any]:
    """The returned GraphModule, called as it is (not rebuilt from its graph), runs the rewritten graph: the
    operators it dispatches are counted."""
    torch.manual_seed(21)
    module = MlpWithSilu().eval()
    returned = solution.fuse(fx.symbolic_trace(module))
    if not isinstance(returned, fx.GraphModule):
        return {"error": f"fuse returned a {type(returned).__name__}, not a GraphModule"}
    x = randn(36, 4, 6)  # made before the recorder starts: only the module's own calls are counted
    with torch.no_grad(), DispatchRecorder() as recorder:
        returned(x)
    return {"dispatched": dict(sorted(recorder.counts.items()))}
