"""Hidden probes for fx-fusion-pass: they make the score.

Each probe builds a small module with seeded parameters, traces it with
``torch.fx.symbolic_trace``, runs the candidate's ``fuse`` on the
GraphModule, and observes what the returned graph holds (node targets,
counted, without placeholders, outputs and get_attr nodes, and the fused
calls' argument form), what a GraphModule rebuilt from that graph computes
on fixed inputs, whether the returned module called as it is dispatches
what its graph does (recompiled), whether any of the module's own
parameters or buffers changed, and whether every node the rewrites do not
replace is still there as it was (op, target, args, kwargs, order: see
``untouched`` in probes/common.py). All are compared with the reference's
(auto check: exact for the counts and flags, float32 tolerance for the
values).
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from typing import Any

import torch
import torch.fx as fx
import torch.nn.functional as F
from probe_common import DispatchRecorder, attributes_changed, own_attributes, randn, run_pass, runs_its_graph, snapshot, untouched
from probekit import probe
from torch import nn

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


class LinearReadsItsParameters(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.block = nn.Sequential(nn.Linear(3, 3), nn.ReLU())

    def forward(self, x: torch.Tensor) -> tuple:
        r = F.relu(self.fc(x))
        s = self.block(r)
        return r + self.fc.bias, self.fc.weight.sum(), s * self.block[0].weight.mean(), self.block[0].bias * 2.0


@probe(category="linear-relu", hints=["get-attr"])
def linear_parameters_also_read_by_the_module(solution: Any) -> dict[str, Any]:
    """Fused nn.Linears whose weight and bias the module itself reads after them (self.fc.bias, self.block[0].weight):
    the fused op must read parameters defined before it."""
    torch.manual_seed(67)
    return run_pass(solution, LinearReadsItsParameters(), randn(68, 2, 4))


class MyLinear(nn.Linear):
    """A user's subclass of nn.Linear: torch.fx traces through it (it is no torch.nn class), into F.linear."""


class LinearSubclasses(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.MultiheadAttention(6, 2).out_proj  # NonDynamicallyQuantizableLinear: an nn.Linear subclass, a leaf
        self.head = nn.modules.linear.NonDynamicallyQuantizableLinear(6, 4, bias=False)
        self.mine = MyLinear(6, 5)
        with torch.no_grad():
            self.proj.bias.normal_()  # MultiheadAttention starts it at zero

    def forward(self, x: torch.Tensor) -> tuple:
        return F.relu(self.proj(x)), self.head(x).relu(), torch.relu(self.mine(x))


class WeightNormedLinear(nn.Module):
    """Red team round 7: torch.nn.utils.parametrize makes a weight-normed nn.Linear a ParametrizedLinear, torch's own
    nn.Linear subclass (a leaf) with nn.Linear's forward, whose weight is computed when read: no Parameter to register
    elsewhere, and no class name in a list of nn.Linear's."""

    def __init__(self) -> None:
        super().__init__()
        self.norm = torch.nn.utils.parametrizations.weight_norm(nn.Linear(6, 4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(self.norm(input=x)) + torch.relu(self.norm(x))


@probe(category="linear-relu", weight=2, hints=["match-by-type"])
def linear_subclass_submodules(solution: Any) -> dict[str, Any]:
    """Subclasses of nn.Linear: MultiheadAttention's out_proj (NonDynamicallyQuantizableLinear, with and without bias),
    a user's subclass, which FX traces into F.linear, and a weight-normed nn.Linear (torch's ParametrizedLinear,
    whose weight is computed when read): each is a linear, so each ReLU fuses."""
    torch.manual_seed(69)
    observed = run_pass(solution, LinearSubclasses(), randn(70, 2, 3, 6))
    torch.manual_seed(123)
    normed = run_pass(solution, WeightNormedLinear(), randn(124, 2, 3, 6))
    # The module as returned computes the weight when it reads it, while a GraphModule rebuilt from its graph holds a
    # copy: their dispatches differ for an in-place pass, not for one that builds a new GraphModule. Not observed here.
    normed.pop("module as returned runs its graph", None)
    observed["second module"] = normed
    return observed


class NamesAlreadyTaken(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.block = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
        self.fc_weight = nn.Parameter(torch.randn(4, 4))
        self.fc_bias = nn.Parameter(torch.randn(4))
        self.register_buffer("block_0_weight", torch.randn(4, 4))
        self.block_0_bias = nn.Parameter(torch.randn(4))
        self.weight = nn.Parameter(torch.randn(4, 4))
        self.bias = nn.Parameter(torch.randn(4))
        self.fused_weight = nn.Parameter(torch.randn(4, 4))

    def forward(self, x: torch.Tensor) -> tuple:
        r = F.relu(self.fc(x))
        s = self.block(r)
        return (
            s + x @ self.fc_weight + self.fc_bias,
            F.linear(x, self.block_0_weight, self.block_0_bias) * 2.0,
            torch.addmm(self.bias, x, self.weight) - x @ self.fused_weight,
        )


@probe(category="linear-relu", weight=2, hints=["get-attr"])
def attribute_names_already_taken(solution: Any) -> dict[str, Any]:
    """A module whose own parameters and buffers already have the names a pass might give a fused Linear's
    (fc_weight, fc_bias, block_0_weight, weight, bias, ...), all read by forward: none may be replaced."""
    torch.manual_seed(71)
    return run_pass(solution, NamesAlreadyTaken(), randn(72, 3, 4))


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


# ---------------------------------------------------------------- keywords, in-place, dead nodes


class SiluKeywords(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.gate = nn.Sigmoid()

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple:
        a = torch.mul(input=x, other=torch.sigmoid(input=x))
        b = y.mul(other=y.sigmoid())
        c = torch.mul(self.gate(input=y), other=y)
        return a, b, c


@probe(category="silu", hints=["silu-forms", "keywords"])
def silu_keyword_arguments(solution: Any) -> dict[str, Any]:
    """Products and sigmoids whose operands are passed by keyword: torch.mul(input=, other=), x.mul(other=), sigmoid(input=)."""
    return run_pass(solution, SiluKeywords(), randn(37, 3, 4), randn(38, 2, 4))


class SigmoidSharedByProducts(nn.Module):
    def forward(self, x: torch.Tensor) -> tuple:
        s = torch.sigmoid(x)
        return x * s, torch.mul(s, x), x.mul(s)


@probe(category="silu", hints=["silu-dead-code"])
def silu_sigmoid_shared_by_products_only(solution: Any) -> dict[str, Any]:
    """One sigmoid read by three products and nothing else: three silu calls, and the sigmoid goes."""
    return run_pass(solution, SigmoidSharedByProducts(), randn(39, 2, 5))


class LinearReluKeywords(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(5, 4))
        self.b = nn.Parameter(torch.randn(5))
        self.fc = nn.Linear(4, 3)

    def forward(self, x: torch.Tensor, w: torch.Tensor) -> tuple:
        a = F.relu(F.linear(input=x, weight=self.w, bias=None))
        b = torch.relu(input=F.linear(x, weight=w, bias=self.b))
        c = F.relu(input=self.fc(input=x), inplace=True)
        d = self.fc(input=x).relu()
        return a, b, c, d


@probe(category="linear-relu", weight=2, hints=["linear-relu-forms", "keywords"])
def linear_relu_keyword_arguments_everywhere(solution: Any) -> dict[str, Any]:
    """F.linear(input=x, weight=w, bias=None), a bias by keyword, self.fc(input=x), torch.relu(input=h), F.relu(input=h)."""
    torch.manual_seed(41)
    return run_pass(solution, LinearReluKeywords(), randn(42, 2, 3, 4), randn(43, 5, 4))


class LinearWeightsFromAnywhere(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.wt = nn.Parameter(torch.randn(4, 6))
        self.fc = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> tuple:
        a = F.relu(F.linear(x, w, b))
        g = torch.tanh(x)
        h = self.fc(x)
        k = g * 2.0
        c = torch.relu(F.linear(x, self.wt.t(), None))
        return a, k, h.relu(), c


@probe(category="linear-relu", hints=["linear-relu-forms"])
def linear_weights_from_inputs_and_far_relus(solution: Any) -> dict[str, Any]:
    """Weights and bias that are inputs of forward or computed in it, explicit bias None, and a ReLU several nodes after its Linear."""
    torch.manual_seed(44)
    return run_pass(solution, LinearWeightsFromAnywhere(), randn(45, 3, 4), randn(46, 5, 4), randn(47, 5))


class InplaceAroundMatches(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.w = nn.Parameter(torch.randn(4, 4))

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple:
        x.add_(1.0)  # before the SiLU: it reads the new x
        a = x * torch.sigmoid(x)
        y.mul_(-2.0)
        h = self.fc(y)
        y.add_(3.0)  # between a Linear and its ReLU: the fused op reads y as the Linear did
        r = F.relu(h)
        g = F.linear(y, self.w)
        y.mul_(0.5)
        g = torch.relu(g)
        y.add_(1.0)  # after the matches
        x.mul_(0.5)
        return a, r, g, x, y


@probe(category="mixed", weight=2, hints=["inplace"])
def inplace_ops_before_and_after_matches(solution: Any) -> dict[str, Any]:
    """Inputs changed in place before, after, and between a Linear and its ReLU: each rewrite reads the values the module read."""
    torch.manual_seed(48)
    return run_pass(solution, InplaceAroundMatches(), randn(49, 3, 4), randn(50, 3, 4))


class DeadAndInplace(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> tuple:
        torch.sigmoid(x)  # read by nothing: the module's own dead node
        x.relu()
        y = x.clone()
        y.mul_(2.0)  # its result is read by nothing, but it changes y
        z = torch.tanh(x)
        F.relu(z, inplace=True)  # likewise: it changes z
        h = self.fc(x)
        return y * torch.sigmoid(y), z, F.relu(h)


@probe(category="leave-alone", weight=2, hints=["dead-code-kept"])
def dead_nodes_and_inplace_calls_kept(solution: Any) -> dict[str, Any]:
    """Nodes of the module's own that nothing reads, and in-place calls whose result nothing reads: all stay."""
    torch.manual_seed(51)
    return run_pass(solution, DeadAndInplace(), randn(52, 3, 4))


class InplaceForms(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.fc2 = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> tuple:
        c = x.clone()
        c.mul_(torch.sigmoid(c))  # writes c
        d = x.clone()
        t = d.sigmoid_()  # writes d: d * t is sigmoid(x) squared
        return c, d * t, self.fc(x).relu_(), torch.relu_(self.fc2(x))


@probe(category="leave-alone", hints=["inplace"])
def inplace_methods_are_not_matches(solution: Any) -> dict[str, Any]:
    """c.mul_(sigmoid(c)), d * d.sigmoid_(), relu_() and torch.relu_ after a Linear: in-place calls are not the patterns' calls."""
    torch.manual_seed(53)
    return run_pass(solution, InplaceForms(), randn(54, 2, 4))


class NestedBlocks(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.block = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 6))
        self.heads = nn.ModuleDict({"act": nn.Sigmoid(), "out": nn.Linear(6, 3), "relu": nn.ReLU()})

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.block(x)
        h = h * self.heads["act"](h)
        return self.heads["relu"](self.heads["out"](h))


@probe(category="linear-relu", weight=2, hints=["linear-relu-forms", "get-attr"])
def submodules_nested_in_containers(solution: Any) -> dict[str, Any]:
    """Linear, ReLU and Sigmoid submodules inside an nn.Sequential and an nn.ModuleDict of the module: dotted targets."""
    torch.manual_seed(60)
    return run_pass(solution, NestedBlocks(), randn(61, 2, 3, 4))


class LinearReadByTwoRelus(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.w = nn.Parameter(torch.randn(3, 4))
        self.act = nn.ReLU()

    def forward(self, x: torch.Tensor) -> tuple:
        h = self.fc(x)
        g = F.linear(x, self.w)
        return F.relu(h) + torch.relu(h), g.relu(), self.act(g)


@probe(category="leave-alone", hints=["other-users"])
def linear_read_by_two_relus(solution: Any) -> dict[str, Any]:
    """A Linear read by two ReLUs: neither is its only reader, so nothing fuses (fusing both would run the matmul twice)."""
    torch.manual_seed(57)
    return run_pass(solution, LinearReadByTwoRelus(), randn(58, 2, 4))


class SigmoidWithOut(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("buf", torch.zeros(3, 4))

    def forward(self, x: torch.Tensor) -> tuple:
        s = torch.sigmoid(x, out=self.buf)
        return x * s + self.buf, self.buf * 2.0


@probe(category="leave-alone", hints=["keywords"])
def sigmoid_with_an_out_argument(solution: Any) -> dict[str, Any]:
    """x * torch.sigmoid(x, out=buf): the sigmoid also writes buf, so it is not one of the pattern's calls."""
    return run_pass(solution, SigmoidWithOut(), randn(59, 3, 4))


class MoreLookAlikes(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.relu = nn.Sigmoid()  # a sigmoid, whatever its name
        self.sigmoid = nn.Tanh()  # not a sigmoid
        self.fc = nn.Linear(4, 4)
        self.bilinear = nn.Bilinear(4, 4, 4)
        self.act = nn.ReLU6()
        self.w = nn.Parameter(torch.randn(4, 4))

    def forward(self, x: torch.Tensor) -> tuple:
        return (
            x * self.relu(x),
            self.sigmoid(x) * x,
            x * F.hardsigmoid(x),
            F.logsigmoid(x) * x,
            F.relu(self.bilinear(x, x)),
            torch.relu(torch.matmul(x, self.w.t()) + 1.0),
            self.act(self.fc(x)),
            F.relu6(self.fc(x)),
            F.elu(self.fc(x)),
        )


@probe(category="leave-alone", weight=2, hints=["match-by-type"])
def look_alike_functions_and_names(solution: Any) -> dict[str, Any]:
    """An nn.Sigmoid named relu (a SiLU), an nn.Tanh named sigmoid, hardsigmoid, logsigmoid, Bilinear, matmul + add, ReLU6, elu."""
    torch.manual_seed(55)
    return run_pass(solution, MoreLookAlikes(), randn(56, 3, 4))


class SameValuedAliases(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.fc2 = nn.Linear(4, 4)
        self.thr = nn.Threshold(0.0, 0.0)
        self.w = nn.Parameter(torch.randn(4, 4))
        self.b = nn.Parameter(torch.randn(4))

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple:
        return (
            torch.multiply(x, torch.sigmoid(x)),
            y.multiply(y.sigmoid()),
            x * torch.special.expit(x),
            torch.special.expit(y).mul(y),
            F.threshold(self.fc(x), 0.0, 0.0),
            self.thr(self.fc2(y)),
            torch.addmm(self.b, x, self.w.t()).relu(),
        )


@probe(category="leave-alone", weight=2, hints=["match-by-type"])
def same_valued_aliases_stay(solution: Any) -> dict[str, Any]:
    """torch.multiply, the multiply method, torch.special.expit, F.threshold(h, 0, 0), nn.Threshold(0, 0) and
    torch.addmm: they compute what a listed spelling computes, but the statement does not list them, so they stay."""
    torch.manual_seed(62)
    return run_pass(solution, SameValuedAliases(), randn(63, 3, 4), randn(64, 3, 4))


class RepeatedExpressions(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple:
        a = (x + 1.0) * torch.sigmoid(x + 1.0)  # two additions, two nodes
        b = torch.tanh(y).mul(torch.tanh(y).sigmoid())
        c = y.clone()
        u = c * 0.5
        c.add_(1.0)  # the second c * 0.5 reads the changed c: not even the same value
        d = u * torch.sigmoid(c * 0.5)
        return a, b, d, c


@probe(category="leave-alone", weight=2, hints=["same-operand"])
def repeated_expressions_are_other_nodes(solution: Any) -> dict[str, Any]:
    """(x + 1) * sigmoid(x + 1), tanh(y) * sigmoid(tanh(y)), and u * sigmoid(c * 0.5) with u = c * 0.5 before an
    in-place change of c: equal expressions written twice are two nodes, so none is a SiLU."""
    return run_pass(solution, RepeatedExpressions(), randn(65, 3, 4), randn(66, 2, 4))


class UntouchedCallsWithKeywords(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 4))
        self.fc = nn.Linear(4, 4)
        self.act = nn.Sigmoid()

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple:
        h = F.linear(x, weight=self.w)  # two readers: it stays, and so does its ReLU
        g = self.fc(input=x)  # likewise
        k = torch.tanh(y)
        return (
            torch.relu(input=h) + h,
            torch.mul(h, other=y),
            g.mul(other=self.act(input=k)),
            torch.sigmoid(input=g) * y,
            F.relu(inplace=False, input=k),
            torch.sub(y, alpha=0.5, other=g),
        )


@probe(category="leave-alone", weight=2, hints=["keywords", "dead-code-kept"])
def untouched_calls_keep_their_arguments(solution: Any) -> dict[str, Any]:
    """Products, sigmoids, ReLUs and linears that are no match, written with keyword arguments (some in an order
    of their own): each stays exactly as written, op, target, args and kwargs in their order."""
    torch.manual_seed(76)
    return run_pass(solution, UntouchedCallsWithKeywords(), randn(77, 3, 4), randn(78, 3, 4))


class OwnUnreadNodesOfEveryKind(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.aux = nn.Linear(4, 2)
        self.gate = nn.Sigmoid()
        self.act = nn.ReLU()
        self.w = nn.Parameter(torch.randn(2, 4))
        self.scale = nn.Parameter(torch.randn(4))
        self.register_buffer("shift", torch.randn(4))

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        self.fc.weight  # get_attr nodes nothing reads
        self.scale
        self.shift
        self.aux(x)  # an nn.Linear and an F.linear nothing reads
        F.linear(x, self.w)
        F.linear(input=y, weight=self.w, bias=None)
        torch.sigmoid(x + 1.0)  # a sigmoid, a product, ReLUs nothing reads
        self.gate(y)
        x * y
        torch.mul(x, 2.0)
        self.act(y)
        y.relu()
        return torch.relu(self.fc(x))


@probe(category="leave-alone", weight=2, hints=["dead-code-kept"])
def own_unread_nodes_of_every_kind(solution: Any) -> dict[str, Any]:
    """The module's own nodes that nothing reads, of every kind: get_attr of a Linear's weight, of a parameter and of a
    buffer, an nn.Linear and F.linear calls, a sigmoid, an nn.Sigmoid, products, ReLUs: all stay."""
    torch.manual_seed(79)
    return run_pass(solution, OwnUnreadNodesOfEveryKind(), randn(80, 3, 4), randn(81, 3, 4))


class KeywordsInAnyOrder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(5, 4))
        self.b = nn.Parameter(torch.randn(5))

    def forward(self, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> tuple:
        return (
            torch.relu(F.linear(x, bias=b, weight=w)),
            F.relu(F.linear(weight=self.w, input=x)),
            F.relu(inplace=True, input=F.linear(bias=self.b, input=x, weight=self.w)),
            F.linear(weight=w, bias=b, input=x).relu(),
            torch.mul(other=torch.sigmoid(input=x), input=x),
        )


@probe(category="linear-relu", weight=2, hints=["keywords", "linear-relu-forms"])
def keyword_arguments_in_any_order(solution: Any) -> dict[str, Any]:
    """F.linear(x, bias=b, weight=w), F.linear(weight=w, input=x), F.relu(inplace=True, input=h),
    torch.mul(other=s, input=x): keywords bind by name, whatever order they were written in."""
    torch.manual_seed(82)
    return run_pass(solution, KeywordsInAnyOrder(), randn(83, 2, 4), randn(84, 5, 4), randn(85, 5))


class WeightChangedBeforeRelu(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(3, 4))
        self.b = nn.Parameter(torch.randn(3))
        self.act = nn.Hardtanh(-100.0, 100.0, inplace=True)

    def forward(self, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> tuple:
        v = self.w * 1.0
        c = self.b + 0.0
        h = F.linear(x, v, c)
        v.mul_(2.0)  # between the linear and its ReLU: the fused op reads v and c as the linear did
        c.sub_(5.0)
        r = torch.relu(h)
        g = F.linear(x, w, bias=b)
        b.add_(3.0)
        g = F.relu(g)
        k = F.linear(x, w)
        w.mul_(-1.0)
        # Red team round 7: changed through another name of the same tensor, the result of an in-place call.
        y = x * 2.0
        ry = F.relu(y, inplace=True)  # ry is y itself
        e = F.linear(y, w, b)
        ry.mul_(0.5)  # changes y between the linear and its ReLU
        e = F.relu(e)
        u = self.w * 1.0
        au = u.add_(0.0)  # au is u
        q = F.linear(x, u, self.b)
        au.mul_(-2.0)  # changes the weight u between the linear and its ReLU
        z = x + 1.0
        rz = self.act(z)  # an in-place submodule returns z itself
        p = F.linear(z, self.w, self.b)
        rz.mul_(3.0)  # changes z between the linear and its ReLU
        p = F.relu(p)
        o = torch.empty_like(x)
        ro = torch.add(x, 1.0, out=o)  # a call with out=o returns o itself
        t = F.linear(o, self.w)
        ro.sub_(2.0)  # changes o between the linear and its ReLU
        return r, g, k.relu(), v, c, w, b, e, q.relu(), ry, au, p, t.relu(), rz, ro


@probe(category="mixed", weight=2, hints=["inplace"])
def weight_and_bias_changed_between_linear_and_relu(solution: Any) -> dict[str, Any]:
    """A linear's input, weight or bias (computed in forward, or an input) changed in place between the linear and its
    ReLU, directly or through the result of an in-place call (which is the tensor it wrote): the fused op must read them
    as the linear did."""
    torch.manual_seed(86)
    return run_pass(solution, WeightChangedBeforeRelu(), randn(87, 2, 4), randn(88, 3, 4), randn(89, 3))


class LinearParametersChangedBefore(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.block = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
        self.w = nn.Parameter(torch.randn(3, 4))
        self.requires_grad_(False)  # parameters the module itself changes in place

    def forward(self, x: torch.Tensor) -> tuple:
        self.fc.weight.mul_(0.5)  # before the Linear: the fused op reads the new weight and bias
        self.fc.bias.add_(1.0)
        r = F.relu(self.fc(x))
        self.block[0].weight.sub_(0.25)
        s = self.block(x)
        self.w.mul_(-1.0)
        g = torch.relu(F.linear(x, self.w))
        return r, s, g


@probe(category="mixed", weight=2, hints=["inplace", "get-attr"])
def linear_own_parameters_changed_before_the_linear(solution: Any) -> dict[str, Any]:
    """An nn.Linear's own weight and bias (and a parameter read by F.linear) changed in place in forward before the
    linear, and the graph called twice: each call's fused op reads the parameters as they are then."""
    torch.manual_seed(104)
    return run_pass(solution, LinearParametersChangedBefore(), randn(105, 2, 4), calls=2)


class LinearParametersChangedBetween(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.fc2 = nn.Linear(4, 3, bias=False)
        self.fc3 = nn.Linear(4, 2)
        self.w = nn.Parameter(torch.randn(3, 4))
        self.requires_grad_(False)

    def forward(self, x: torch.Tensor) -> tuple:
        aw = self.fc3.weight.mul_(1.0)  # Red team round 7: aw is fc3's own weight, changed through it below
        ab = self.fc3.bias.add_(0.0)
        m = self.fc3(x)
        aw.add_(0.5)
        ab.mul_(-1.0)
        m = F.relu(m)
        h = self.fc(x)
        self.fc.weight.mul_(0.5)  # between the Linear and its ReLU: the fused op reads them as the Linear did
        self.fc.bias.add_(1.0)
        r = F.relu(h)
        k = self.fc2(x)
        self.fc2.weight.add_(0.5)
        q = k.relu()
        g = F.linear(x, self.w)
        self.w.mul_(-1.0)
        g = torch.relu(g)
        return r, q, g, m


@probe(category="mixed", weight=2, hints=["inplace", "get-attr"])
def linear_own_parameters_changed_between_linear_and_relu(solution: Any) -> dict[str, Any]:
    """An nn.Linear's own weight and bias (and a parameter read by F.linear) changed in place between the linear and
    its ReLU, directly or through the result of an in-place call, and the graph called twice: the fused op reads them
    as the linear did, on each call."""
    torch.manual_seed(106)
    return run_pass(solution, LinearParametersChangedBetween(), randn(107, 2, 4), calls=2)


class ExplicitOutNone(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple:
        return torch.mul(x, torch.sigmoid(x), out=None), torch.sigmoid(y, out=None) * y, x * torch.sigmoid(x)


@probe(category="leave-alone", hints=["keywords"])
def explicit_out_none(solution: Any) -> dict[str, Any]:
    """torch.mul(x, sigmoid(x), out=None) and torch.sigmoid(y, out=None) * y: out=None is an argument the lists do not
    allow, so neither is one of the patterns' calls; the plain x * sigmoid(x) next to them becomes F.silu."""
    return run_pass(solution, ExplicitOutNone(), randn(90, 3, 4), randn(91, 3, 4))


class SigmoidChangedInPlace(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.gate = nn.Sigmoid()

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple:
        s = torch.sigmoid(x)
        s.mul_(2.0)  # the product reads 2 * sigmoid(x): no SiLU
        a = x * s
        t = y.sigmoid()
        b = t * y  # reads sigmoid(y): a SiLU
        t.add_(1.0)
        c = y.mul(t)  # reads sigmoid(y) + 1: no SiLU
        u = self.gate(x)
        torch.add(y, 1.0, out=u)  # writes u
        d = torch.mul(u, x)
        v = x.sigmoid()
        e = v * x
        v.clamp_(max=0.5)  # after the product: e is a SiLU, and v stays (clamp_ reads it)
        w = torch.sigmoid(y)
        F.hardtanh(w, min_val=0.0, max_val=0.6, inplace=True)  # writes w
        f = w * y
        return a, b, c, d, e, v, f


@probe(category="silu", weight=2, hints=["inplace", "silu-dead-code"])
def sigmoid_changed_in_place_before_the_product(solution: Any) -> dict[str, Any]:
    """The sigmoid's result changed in place (mul_, add_, out=, F.hardtanh(..., inplace=True)) before a product reads
    it: that product is no SiLU and stays; a product that reads it before the change becomes F.silu."""
    return run_pass(solution, SigmoidChangedInPlace(), randn(92, 3, 4), randn(93, 3, 4))


# Red team round 4: the sigmoid's result changed in place by spellings the probe above does not use, each
# before its product (so no product here is a SiLU but the controls named as such).


class SigmoidChangedBySubmodules(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.clip = nn.Hardtanh(0.0, 0.25, inplace=True)
        self.cut = nn.Threshold(0.6, 0.0, inplace=True)
        self.act = nn.SiLU(inplace=True)
        self.keep = nn.Hardtanh(0.0, 0.25)  # built without inplace: it makes a new tensor and writes nothing

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple:
        s = torch.sigmoid(x)
        self.clip(s)  # writes s
        a = x * s
        t = y.sigmoid()
        self.cut(t)  # writes t
        b = t * y
        u = torch.sigmoid(y)
        self.act(u)  # writes u
        c = torch.mul(y, u)
        v = torch.sigmoid(x)
        k = self.keep(v)
        d = x * v  # a SiLU: v is unchanged
        return a, b, c, d, k


@probe(category="silu", hints=["inplace"])
def sigmoid_changed_by_inplace_submodules(solution: Any) -> dict[str, Any]:
    """The sigmoid's result passed to a submodule built with inplace=True (nn.Hardtanh, nn.Threshold, nn.SiLU) before
    the product: that writes it, so the product is no SiLU; the same Hardtanh built without inplace writes nothing."""
    return run_pass(solution, SigmoidChangedBySubmodules(), randn(94, 3, 4), randn(95, 3, 4))


class SigmoidChangedByInplaceFunctions(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple:
        s = torch.sigmoid(x)
        torch.exp_(s)
        a = x * s
        t = y.sigmoid()
        torch.sigmoid_(t)
        b = torch.mul(t, y)
        u = torch.sigmoid(y)
        torch.clamp_(u, max=0.3)
        c = y.mul(u)
        v = torch.sigmoid(x)
        torch.square_(v)
        d = v * x
        return a, b, c, d


@probe(category="silu", hints=["inplace"])
def sigmoid_changed_by_inplace_torch_functions(solution: Any) -> dict[str, Any]:
    """The sigmoid's result changed by in-place torch functions (torch.exp_, torch.sigmoid_, torch.clamp_,
    torch.square_) before the product: no product is a SiLU."""
    return run_pass(solution, SigmoidChangedByInplaceFunctions(), randn(96, 3, 4), randn(97, 3, 4))


class SigmoidChangedByKeyword(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple:
        s = torch.sigmoid(x)
        torch.clamp_(input=s, max=0.25)
        a = x * s
        u = torch.sigmoid(y)
        torch.exp_(input=u)
        c = torch.mul(u, y)
        v = x.sigmoid()
        torch.ops.aten.exp_(self=v)  # the overload packet, its tensor by keyword
        d = v * x
        return a, c, d


@probe(category="silu", hints=["inplace"])
def sigmoid_changed_in_place_by_keyword(solution: Any) -> dict[str, Any]:
    """In-place functions given the sigmoid's result by keyword (torch.clamp_(input=s, ...), torch.exp_(input=s),
    torch.ops.aten.exp_(self=s)) before the product: no product is a SiLU."""
    return run_pass(solution, SigmoidChangedByKeyword(), randn(98, 3, 4), randn(99, 3, 4))


class SigmoidChangedByOtherMethods(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple:
        s = torch.sigmoid(x)
        s.pow_(2.0)
        a = x * s
        t = y.sigmoid()
        t.exp_()
        b = t * y
        u = torch.sigmoid(y)
        u.masked_fill_(y > 0.0, 0.0)
        c = torch.mul(y, u)
        v = x.sigmoid()
        v.sqrt_()
        d = x.mul(v)
        w = torch.sigmoid(x)
        w.neg_()
        e = w * x
        return a, b, c, d, e


@probe(category="silu", hints=["inplace"])
def sigmoid_changed_by_other_inplace_methods(solution: Any) -> dict[str, Any]:
    """The sigmoid's result changed by in-place methods beyond the common few (pow_, exp_, masked_fill_, sqrt_, neg_)
    before the product: every method whose name ends in one underscore writes its tensor, so no product is a SiLU."""
    return run_pass(solution, SigmoidChangedByOtherMethods(), randn(100, 3, 4), randn(101, 3, 4))


class SigmoidWrittenByOverloadsAndOutTuples(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple:
        m = x.sum(0)
        s = torch.sigmoid(m)
        idx = torch.argmax(y, 0)
        torch.max(y, 0, out=(s, idx))  # writes s (and idx)
        a = m * s
        t = torch.sigmoid(x)
        torch.ops.aten.mul_.Tensor(t, y)  # an overload whose schema writes its first argument
        b = x * t
        u = y.sigmoid()
        torch.ops.aten.clamp_.default(u, None, max=0.3)
        torch.ops.aten.exp_.default(self=u)  # the schema's written argument, by keyword
        c = torch.mul(u, y)
        v = torch.sigmoid(x)
        torch.ops.aten.mul.out(y, y, out=v)
        d = v * x
        w = torch.sigmoid(y)
        e = w * y  # a SiLU: the overload below writes w after the product
        torch.ops.aten.add_.Tensor(w, x)
        z = y.sigmoid()
        torch.nn.init.constant_(z, 0.5)  # traced as constant_(tensor=z, val=0.5)
        f = z * y
        q = torch.sigmoid(x)
        r = torch.ops.aten.mul.Tensor(q, y)  # an overload that only reads q: x * q below is a SiLU
        g = x * q
        return a, b, c, d, e, w, idx, f, r, g


@probe(category="silu", hints=["inplace"])
def sigmoid_written_by_overloads_init_and_out_tuples(solution: Any) -> dict[str, Any]:
    """The sigmoid's result written by torch.max(y, 0, out=(s, idx)) (a tuple out=), by aten operator overloads
    (torch.ops.aten.mul_.Tensor, clamp_.default, mul.out(out=s)) and by torch.nn.init.constant_ (which FX records with
    tensor=s) before the product: no SiLU; one written after its product is one, and so is one an overload only reads."""
    return run_pass(solution, SigmoidWrittenByOverloadsAndOutTuples(), randn(102, 3, 4), randn(103, 3, 4))


# Red team round 5: in-place calls between a sigmoid and its product that write something else (they only read the
# sigmoid's result or x, or change another tensor: every product here is a SiLU), schema writes through keywords
# other than out= and through overload packets, in-place functions and submodules of types no probe above names, an
# in-place submodule given its tensor by keyword, aten operators, and nn.Linear subclasses with a forward of their own.


class SigmoidReadByCallsWritingOthers(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple:
        buf = y.clone()
        s = torch.sigmoid(x)
        buf.add_(s)  # writes buf, reads s
        a = x * s  # a SiLU
        out = torch.empty_like(y)
        t = x.sigmoid()
        torch.add(buf, t, out=out)  # writes out, reads t
        b = torch.mul(t, x)
        cpy = torch.zeros_like(y)
        u = torch.sigmoid(y)
        cpy.copy_(u)  # writes cpy, reads u
        c = y.mul(u)
        acc = y.clone()
        v = torch.sigmoid(x)
        torch.ops.aten.add_.Tensor(acc, v)  # the overload writes acc (its self), only reads v
        vals, idx = torch.empty_like(y), torch.empty(y.shape, dtype=torch.long)
        torch.ops.aten.sort.values(v, -1, False, values=vals, indices=idx)  # reads v, writes vals and idx
        d = v * x
        w = y.sigmoid()
        torch.ops.aten.sort(w, values=vals, indices=idx)  # the packet: reads w, writes vals and idx
        buf.addcmul_(w, w)  # writes buf, reads w twice
        e = w * y
        # Red team round 7: this schema's argument named out is read-only (the attention's output), so out=f reads f.
        q, k = x.view(1, 1, 3, 4), y.view(1, 1, 3, 4)
        lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default(q, k, k)[1]
        z = q + k
        f = torch.sigmoid(z)
        torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward.default(q, q, k, k, out=f, logsumexp=lse, dropout_p=0.0, is_causal=False)
        g = z * f
        n = k.sigmoid()
        torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward(k, q, k, q, logsumexp=lse, dropout_p=0.0, is_causal=False, out=n)
        h = n * k
        return a, b, c, d, e, g, h, s, buf, out, cpy, acc, vals, idx


@probe(category="silu", weight=2, hints=["inplace"])
def calls_that_only_read_the_sigmoid_between(solution: Any) -> dict[str, Any]:
    """In-place and out= calls between the sigmoid and the product that write another tensor and only read the
    sigmoid's result (buf.add_(s), torch.add(buf, t, out=out), cpy.copy_(u), aten.add_.Tensor(acc, v),
    aten.sort(v, values=vals, ...), buf.addcmul_(w, w), an operator of torch.ops whose schema only reads its argument
    named out): s is unchanged, so every product is a SiLU."""
    return run_pass(solution, SigmoidReadByCallsWritingOthers(), randn(104, 3, 4), randn(105, 3, 4))


class OtherTensorsChangedBetween(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.clip = nn.Hardtanh(-0.5, 0.5, inplace=True)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple:
        s = torch.sigmoid(x)
        y.add_(1.0)  # changes y, not s
        a = x * s
        t = x.sigmoid()
        torch.exp_(y)
        F.hardtanh(y, -2.0, 2.0, inplace=True)
        b = torch.mul(x, t)
        buf = y.clone()
        u = torch.sigmoid(y)
        buf.add_(y)  # writes buf, reads y (the product's x): y is unchanged
        self.clip(buf)
        c = u.mul(y)
        out = torch.empty_like(x)
        v = torch.sigmoid(x)
        torch.mul(x, 2.0, out=out)  # writes out, reads x
        torch.nn.init.constant_(buf, 0.25)
        d = v * x
        return a, b, c, d, y, buf, out


@probe(category="silu", hints=["inplace"])
def other_tensors_changed_between_sigmoid_and_product(solution: Any) -> dict[str, Any]:
    """In-place changes of other tensors between the sigmoid and the product (y.add_(1.0), torch.exp_(y), an in-place
    Hardtanh of buf, buf.add_(x) and torch.mul(x, 2.0, out=out), which only read the product's x): the sigmoid's
    result is unchanged, so every product is a SiLU."""
    return run_pass(solution, OtherTensorsChangedBetween(), randn(106, 3, 4), randn(107, 3, 4))


class SigmoidWrittenBySchemaKeywords(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple:
        s = torch.sigmoid(x)
        idx = torch.empty(y.shape, dtype=torch.long)
        torch.ops.aten.sort.values(y, values=s, indices=idx)  # the schema writes values (not named out)
        a = x * s
        m = x.sum(1, keepdim=True)
        t = torch.sigmoid(m)
        top = torch.empty(m.shape, dtype=torch.long)
        torch.ops.aten.max.dim_max(y, 1, True, max=t, max_values=top)  # writes max
        b = m * t
        u = y.sigmoid()
        torch.ops.aten.mul_.Tensor(self=u, other=x)  # the written self by keyword
        c = torch.mul(y, u)
        v = torch.sigmoid(y)
        top4 = torch.empty(y.shape, dtype=torch.long)
        torch.ops.aten.topk.values(y, 4, values=v, indices=top4)  # writes values
        d = v * y
        return a, b, c, d, idx, top, top4


@probe(category="silu", hints=["inplace"])
def sigmoid_written_through_schema_keywords(solution: Any) -> dict[str, Any]:
    """Operator overloads whose schema writes the sigmoid's result through a keyword (aten.sort.values(values=s),
    aten.max.dim_max(max=t), aten.mul_.Tensor(self=u, ...), aten.topk.values(values=v)) before the product:
    no product is a SiLU."""
    return run_pass(solution, SigmoidWrittenBySchemaKeywords(), randn(108, 3, 4), randn(109, 3, 4))


class SigmoidWrittenThroughPackets(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple:
        s = torch.sigmoid(x)
        idx = torch.empty(y.shape, dtype=torch.long)
        torch.ops.aten.sort(y, values=s, indices=idx)  # dispatches to aten::sort.values: writes s
        a = x * s
        m = x.sum(1, keepdim=True)
        t = torch.sigmoid(m)
        top = torch.empty(m.shape, dtype=torch.long)
        torch.ops.aten.max(y, 1, True, max=t, max_values=top)  # aten::max.dim_max: writes t
        b = t * m
        u = y.sigmoid()
        torch.ops.aten.mul(y, x, out=u)
        c = y.mul(u)
        v = torch.sigmoid(x)
        w = torch.ops.aten.sort(v)  # the packet only reads v: a SiLU below
        d = x * v
        q = torch.sigmoid(y)
        r = y.sigmoid()
        torch.ops.aten._foreach_add_(self=[q, r], scalar=0.5)  # a written list argument (Tensor(a!)[] self) holding both
        e = y * q
        f = torch.mul(r, y)
        return a, b, c, d, e, f, idx, top, w


@probe(category="silu", hints=["inplace"])
def sigmoid_written_through_overload_packets(solution: Any) -> dict[str, Any]:
    """Overload packets given the sigmoid's result by a keyword one of their overloads writes (torch.ops.aten.sort(y,
    values=s, ...), torch.ops.aten.max(y, 1, True, max=t, ...), torch.ops.aten.mul(..., out=u), a list holding q and r
    as torch.ops.aten._foreach_add_'s self=) before the product: no SiLU; a packet that only reads the sigmoid's result
    leaves its product a SiLU."""
    return run_pass(solution, SigmoidWrittenThroughPackets(), randn(110, 3, 4), randn(111, 3, 4))


class SigmoidChangedByMoreSubmodules(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.mish = nn.Mish(inplace=True)
        self.selu = nn.SELU(inplace=True)
        self.celu = nn.CELU(0.5, inplace=True)
        self.hsig = nn.Hardsigmoid(inplace=True)
        self.rrelu = nn.RReLU(inplace=True)
        self.drop = nn.Dropout(0.3, inplace=True)
        self.keep = nn.Mish()  # built without inplace: writes nothing

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple:
        s = torch.sigmoid(x)
        self.mish(s)
        a = x * s
        t = y.sigmoid()
        self.selu(t)
        b = t * y
        u = torch.sigmoid(y)
        self.celu(u)
        c = torch.mul(y, u)
        v = torch.sigmoid(x)
        self.hsig(v)
        d = x.mul(v)
        w = x.sigmoid()
        self.rrelu(w)  # in eval mode a fixed slope: the values of a sigmoid stay, but the call writes w
        e = w * x
        q = torch.sigmoid(y)
        self.drop(q)  # in eval mode the identity, written in place
        f = y * q
        k = torch.sigmoid(x)
        g = self.keep(k)
        h = x * k  # a SiLU: k is unchanged
        return a, b, c, d, e, f, g, h


@probe(category="silu", hints=["inplace"])
def sigmoid_changed_by_inplace_submodules_of_other_types(solution: Any) -> dict[str, Any]:
    """The sigmoid's result passed to submodules of other types built with inplace=True (nn.Mish, nn.SELU, nn.CELU,
    nn.Hardsigmoid, nn.RReLU, nn.Dropout) before the product: each writes it, so no product is a SiLU; an nn.Mish
    built without inplace writes nothing."""
    return run_pass(solution, SigmoidChangedByMoreSubmodules(), randn(112, 3, 4), randn(113, 3, 4))


class SigmoidChangedByMoreInplaceFunctions(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple:
        s = torch.sigmoid(x)
        F.mish(s, inplace=True)
        a = x * s
        t = y.sigmoid()
        F.selu(t, inplace=True)
        b = t * y
        u = torch.sigmoid(y)
        F.hardsigmoid(u, inplace=True)
        c = torch.mul(y, u)
        v = torch.sigmoid(x)
        F.celu(v, 0.5, inplace=True)
        d = x.mul(v)
        w = x.sigmoid()
        F.hardswish(w, inplace=True)
        e = w * x
        q = torch.sigmoid(y)
        F.dropout(q, 0.3, False, True)  # training=False, inplace=True: the identity, written in place
        f = y * q
        k = torch.sigmoid(x)
        g = F.mish(k)  # inplace=False: writes nothing
        h = x * k  # a SiLU
        return a, b, c, d, e, f, g, h


@probe(category="silu", hints=["inplace"])
def sigmoid_changed_by_inplace_functions_of_other_types(solution: Any) -> dict[str, Any]:
    """The sigmoid's result given to other functions with inplace=True (F.mish, F.selu, F.hardsigmoid, F.celu,
    F.hardswish, F.dropout) before the product: each writes it, so no product is a SiLU; F.mish without inplace writes
    nothing."""
    return run_pass(solution, SigmoidChangedByMoreInplaceFunctions(), randn(114, 3, 4), randn(115, 3, 4))


class InplaceSubmoduleByKeyword(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.clip = nn.Hardtanh(0.0, 0.5, inplace=True)
        self.act = nn.SiLU(inplace=True)
        self.keep = nn.Hardtanh(0.0, 0.5)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple:
        s = torch.sigmoid(x)
        self.clip(input=s)  # writes s: the tensor by keyword
        a = x * s
        t = y.sigmoid()
        self.act(input=t)
        b = torch.mul(t, y)
        u = torch.sigmoid(y)
        k = self.keep(input=u)  # built without inplace
        c = y * u  # a SiLU
        return a, b, c, k


@probe(category="silu", hints=["inplace", "keywords"])
def inplace_submodule_given_its_tensor_by_keyword(solution: Any) -> dict[str, Any]:
    """Submodules built with inplace=True called with the sigmoid's result by keyword (self.clip(input=s)) before the
    product: they write it, so the product is no SiLU; the same call of one built without inplace writes nothing."""
    return run_pass(solution, InplaceSubmoduleByKeyword(), randn(116, 3, 4), randn(117, 3, 4))


class AtenOperatorsStay(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.w = nn.Parameter(torch.randn(4, 4))
        self.b = nn.Parameter(torch.randn(4))

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple:
        return (
            x * torch.ops.aten.sigmoid.default(x),
            torch.ops.aten.mul.Tensor(y, torch.sigmoid(y)),
            torch.ops.aten.sigmoid(y).mul(y),
            torch.ops.aten.mul(x, x.sigmoid()),
            torch.ops.aten.relu.default(F.linear(x, self.w, self.b)),
            F.relu(torch.ops.aten.linear.default(y, self.w, self.b)),
            torch.ops.aten.relu(self.fc(x)),
            torch.relu(torch.ops.aten.linear(x, self.w)),
        )


@probe(category="leave-alone", weight=2, hints=["match-by-type"])
def aten_operators_stay(solution: Any) -> dict[str, Any]:
    """torch.ops.aten.sigmoid.default, aten.mul.Tensor, aten.relu.default, aten.linear.default and their packets next to
    listed spellings: they compute what a listed call computes, but the statement's lists do not name them, so they stay."""
    torch.manual_seed(118)
    return run_pass(solution, AtenOperatorsStay(), randn(119, 3, 4), randn(120, 3, 4))


class LinearSubclassesWithTheirOwnForward(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        import torch.ao.nn.qat as nnqat
        import torch.ao.nn.qat.dynamic as nnqatd

        qconfig = torch.ao.quantization.get_default_qat_qconfig("x86")
        self.qat = nnqat.Linear(6, 5, qconfig=qconfig)  # fake-quantises its weight
        self.dyn = nnqatd.Linear(6, 4, qconfig=torch.ao.quantization.qconfig.default_dynamic_qat_qconfig)  # no forward in its class, but its parent's: not nn.Linear's
        self.plain = nn.modules.linear.NonDynamicallyQuantizableLinear(6, 3)  # nn.Linear's forward: a linear
        # Red team round 7: a float-in, float-out subclass with a forward of its own other than qat.Linear's (it
        # quantises and dequantises its weight first).
        qparams = {"qscheme": torch.per_tensor_affine, "dtype": torch.qint8, "scale": 0.1, "zero_point": 0}
        self.ref = torch.ao.nn.quantized.reference.Linear(6, 4, weight_qparams=qparams)
        with torch.no_grad():
            self.qat.weight.mul_(3.0)
            self.dyn.weight.mul_(3.0)
            self(torch.zeros(1, 6))  # the fake-quantisers observe the weights once, so every call computes the same

    def forward(self, x: torch.Tensor) -> tuple:
        return F.relu(self.qat(x)), self.dyn(x).relu(), torch.relu(self.plain(x)), torch.relu(self.ref(x))


@probe(category="leave-alone", weight=2, hints=["match-by-type"])
def linear_subclasses_with_their_own_forward(solution: Any) -> dict[str, Any]:
    """A ReLU of torch.ao.nn.qat.Linear (whose forward fake-quantises the weight), of its dynamic subclass (which
    inherits that forward) and of torch.ao.nn.quantized.reference.Linear (which quantises its weight) stays: they are
    no linears. A NonDynamicallyQuantizableLinear (nn.Linear's forward) fuses."""
    torch.manual_seed(121)
    return run_pass(solution, LinearSubclassesWithTheirOwnForward(), randn(122, 2, 3, 6))


# Red team round 6: an operator's schema may write an argument at any position, not only its first, and a list of
# tensors it writes (Tensor(a!)[]) writes each tensor in it. Each kind of argument passing gets its probe: later
# positional arguments of overloads, the same by keyword, lists in any position, overload packets given their
# arguments by position, and in-place functions whose first argument is a list. Every probe also has controls: the
# same position given an argument the schema only reads, where the product is a SiLU.


class SigmoidWrittenAtLaterPositions(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> tuple:
        s = torch.sigmoid(y)
        idx = torch.zeros_like(y, dtype=torch.long)
        torch.ops.aten._cummax_helper.default(z, s, idx, 1)  # writes values, its argument 1
        a = y * s
        m = torch.sigmoid(x)
        rv = torch.ones_like(x)
        torch.ops.aten._batch_norm_with_update.default(z, None, None, m, rv, 0.1, 1e-5)  # running_mean, argument 3
        b = x * m
        v = x.sigmoid()
        rm = torch.zeros_like(x)
        torch.ops.aten._native_batch_norm_legit.default(z, None, None, rm, v, True, 0.1, 1e-5)  # running_var, argument 4
        c = torch.mul(v, x)
        w = x.sum(0, keepdim=True)
        q = torch.sigmoid(w)
        on = torch.ones_like(w, dtype=torch.long)
        lo, hi, zp = w - 1.0, w + 1.0, torch.zeros_like(w, dtype=torch.int32)
        fq = torch.ops.aten.fused_moving_avg_obs_fake_quant.default(y, on, on, lo, hi, q, zp, 0.01, 0, 255, 0)  # scale, argument 5
        d = w * q
        u = torch.sigmoid(x)
        torch.ops.aten.rrelu_with_noise.default(x, u, 0.1, 0.3, False)  # noise, argument 1 (its schema writes it)
        e = u.mul(x)
        r = torch.sigmoid(x)
        n = torch.ops.aten._native_batch_norm_legit_no_training.default(z, None, None, r, rv, 0.1, 1e-5)  # reads argument 3
        f = x * r  # a SiLU
        t = y.sigmoid()
        vals = torch.empty_like(y)
        torch.ops.aten._cummax_helper.default(t, vals, idx, 1)  # reads t as self, writes vals
        g = t * y  # a SiLU
        k = torch.sigmoid(z)
        buf = z.clone()
        torch.ops.aten.addcmul_.default(buf, k, z)  # reads k at argument 1, writes buf
        h = z * k  # a SiLU
        return a, b, c, d, e, f, g, h, s, m, v, q, u, rm, rv, lo, hi, fq, n[0], vals, buf


@probe(category="silu", weight=2, hints=["inplace"])
def sigmoid_written_at_later_positions_of_overloads(solution: Any) -> dict[str, Any]:
    """Operator overloads whose schema writes an argument after the first, given the sigmoid's result there by
    position (aten._cummax_helper's values, _batch_norm_with_update's running_mean, _native_batch_norm_legit's
    running_var, fused_moving_avg_obs_fake_quant's scale, rrelu_with_noise's noise) before the product: no SiLU; the
    same positions of overloads that only read them leave their products SiLUs."""
    return run_pass(solution, SigmoidWrittenAtLaterPositions(), randn(130, 4), randn(131, 3, 4), randn(132, 3, 4))


class SigmoidWrittenAtLaterPositionsByKeyword(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> tuple:
        s = torch.sigmoid(y)
        idx = torch.zeros_like(y, dtype=torch.long)
        torch.ops.aten._cummax_helper.default(z, indices=idx, dim=1, values=s)
        a = s * y
        m = x.sigmoid()
        rm = torch.zeros_like(x)
        torch.ops.aten._batch_norm_with_update.default(z, None, None, rm, eps=1e-5, running_var=m, momentum=0.1)
        b = torch.mul(x, m)
        u = torch.sigmoid(x)
        torch.ops.aten.rrelu_with_noise.default(x, noise=u, lower=0.1, upper=0.3, training=False)
        c = x * u
        w = x.sum(0, keepdim=True)
        f = torch.sigmoid(w)
        g = y.clone()
        torch.ops.aten._amp_foreach_non_finite_check_and_unscale_.default([g], inv_scale=torch.ones_like(w), found_inf=f)
        d = f.mul(w)
        r = torch.sigmoid(x)
        n = torch.ops.aten._native_batch_norm_legit_no_training.default(z, None, None, running_var=rm + 1.0, running_mean=r,
                                                                          momentum=0.1, eps=1e-5)  # fmt: skip
        e = r * x  # a SiLU: running_mean is only read here
        return a, b, c, d, e, s, m, u, f, g, rm, n[0]


@probe(category="silu", hints=["inplace", "keywords"])
def sigmoid_written_at_later_positions_by_keyword(solution: Any) -> dict[str, Any]:
    """The same overloads given the sigmoid's result by keyword, keywords in any order (values=, running_var=, noise=,
    found_inf=) before the product: no SiLU; _native_batch_norm_legit_no_training(running_mean=r), which reads it,
    leaves its product a SiLU."""
    return run_pass(solution, SigmoidWrittenAtLaterPositionsByKeyword(), randn(133, 4), randn(134, 3, 4), randn(135, 3, 4))


class SigmoidWrittenThroughListArguments(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple:
        step = torch.ones_like(y.sum())
        p, gr, ea, es = y.clone(), y * 0.5, y * 0.25, y * y
        s = torch.sigmoid(y)
        torch.ops.aten._foreach_mul_.Scalar([p, s], 2.0)  # a written list, argument 0, holding s
        a = y * s
        t = torch.sigmoid(y)
        sgd = dict(weight_decay=0.0, momentum=0.0, lr=0.1, dampening=0.0, nesterov=False, maximize=False, is_first_step=False)
        torch.ops.aten._fused_sgd_.default([p], [t], [], **sgd)  # grads, argument 1
        b = t * y
        u = y.sigmoid()
        adam = dict(lr=0.1, beta1=0.9, beta2=0.99, weight_decay=0.0, eps=1e-8, maximize=False)
        torch.ops.aten._fused_adam_.default([p], [gr], (u,), [es], [], [step], amsgrad=False, **adam)  # exp_avgs, argument 2, a tuple
        c = torch.mul(y, u)
        v = torch.sigmoid(y)
        torch.ops.aten._fused_adam_.default([p], [gr], [ea], [v], [], [step], amsgrad=False, **adam)  # exp_avg_sqs, argument 3
        d = v.mul(y)
        w = torch.sigmoid(x)
        torch.ops.aten._fused_adagrad_.default([x.clone()], [x * 0.5], [w], [torch.ones_like(x.sum())], lr=0.1, lr_decay=0.0,
                                               weight_decay=0.0, eps=1e-8, maximize=False)  # state_sums, argument 2  # fmt: skip
        e = x * w
        q = torch.sigmoid(y)
        torch.ops.aten._fused_sgd_.default(self=[p], grads=[gr], momentum_buffer_list=[q], **{**sgd, "momentum": 0.5})
        f = y * q  # momentum_buffer_list by keyword
        k = torch.sigmoid(y)
        torch.ops.aten._foreach_add_.List([p], [k])  # k in a list the schema only reads: a SiLU below
        torch.ops.aten._fused_adam_.default([p], [gr], [ea], [es], [], [step], amsgrad=False, grad_scale=k, **adam)
        g = k * y  # a SiLU: grad_scale is read only
        return a, b, c, d, e, f, g, p, s, t, u, v, w, q, gr, ea, es


@probe(category="silu", weight=2, hints=["inplace"])
def sigmoid_written_through_list_arguments(solution: Any) -> dict[str, Any]:
    """Overloads whose schema writes a list of tensors (Tensor(a!)[]) given a list or tuple holding the sigmoid's
    result, at argument 0 (_foreach_mul_), 1 (_fused_sgd_'s grads), 2 (_fused_adam_'s exp_avgs, a tuple;
    _fused_adagrad_'s state_sums), 3 (exp_avg_sqs), by keyword (momentum_buffer_list=): no SiLU; a list the schema
    only reads, and a tensor argument it only reads, leave the product a SiLU."""
    return run_pass(solution, SigmoidWrittenThroughListArguments(), randn(136, 4), randn(137, 3, 4))


class SigmoidWrittenThroughPacketsByPosition(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> tuple:
        s = torch.sigmoid(y)
        idx = torch.zeros_like(y, dtype=torch.long)
        torch.ops.aten._cummax_helper(z, s, idx, 1)  # the packet: its one overload writes values
        a = y * s
        t = y.sigmoid()
        u = y * 0.5
        torch.ops.aten._foreach_add_([t, u], 0.5)  # aten::_foreach_add_.Scalar writes both
        b = torch.mul(t, y)
        m = torch.sigmoid(x)
        torch.ops.aten._batch_norm_with_update(z, None, None, m, torch.ones_like(x), 0.1, 1e-5)
        c = x * m
        v = torch.sigmoid(y)
        torch.ops.aten.mul_(v, 2.0)
        d = v * y
        step = torch.ones_like(y.sum())
        p, gr, es = y.clone(), y * 0.5, y * y
        adam = dict(lr=0.1, beta1=0.9, beta2=0.99, weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=False)
        w = torch.sigmoid(y)
        torch.ops.aten._fused_adam_([p], [gr], [w], [es], [], [step], **adam)
        e = y.mul(w)
        k = torch.sigmoid(y)
        new = torch.ops.aten._fused_adam([p], [gr], [k], [es], [], [step], **adam)  # functional: writes nothing
        f = k * y  # a SiLU (aten::_fused_adam.out would write exp_avgs, but it needs out=)
        q = torch.sigmoid(x)
        bn = torch.ops.aten._batch_norm_with_update_functional(z, None, None, q, torch.ones_like(x), 0.1, 1e-5)
        g = q * x  # a SiLU
        total = z.sum()
        r = torch.sigmoid(total)
        buf = z.clone()
        torch.ops.aten._foreach_add_([buf], r)  # aten::_foreach_add_.Tensor: reads r, writes buf
        h = total * r  # a SiLU
        col = x.sum(0, keepdim=True)
        n = torch.sigmoid(col)
        unscaled = torch.ops.aten._amp_foreach_non_finite_check_and_unscale([y], n, torch.ones_like(n))  # functional
        i = n * col  # a SiLU
        return a, b, c, d, e, f, g, h, i, s, t, u, m, v, w, p, new[2], bn[0], buf, unscaled[0][0]


@probe(category="silu", weight=2, hints=["inplace"])
def sigmoid_written_through_packets_by_position(solution: Any) -> dict[str, Any]:
    """Overload packets given the sigmoid's result by position where the overload they call writes it
    (torch.ops.aten._cummax_helper(z, s, i, 1), _foreach_add_([t, u], 0.5), _batch_norm_with_update(z, None, None, m,
    ...), mul_(v, 2.0), _fused_adam_([p], [g], [w], ...)) before the product: no SiLU. Packets whose overloads that can
    take the arguments only read it (_fused_adam and _amp_foreach_non_finite_check_and_unscale without out=,
    _batch_norm_with_update_functional, _foreach_add_([buf], r)) leave their products SiLUs."""
    return run_pass(solution, SigmoidWrittenThroughPacketsByPosition(), randn(138, 4), randn(139, 3, 4), randn(140, 3, 4))


class SigmoidWrittenByInplaceFunctionsOfLists(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple:
        s = torch.sigmoid(y)
        u = y * 0.5
        torch._foreach_mul_([u, s], 2.0)  # a function ending in _, its first argument a list holding s
        a = y * s
        t = x.sigmoid()
        torch._foreach_zero_((t,))  # a tuple
        b = torch.mul(x, t)
        v = torch.sigmoid(y)
        torch._foreach_add_(self=[v], scalar=0.5)  # the list by keyword
        c = v.mul(y)
        w = torch.sigmoid(x)
        buf = x.clone()
        torch._foreach_add_([buf], [w])  # w in the second list, which is only read: a SiLU below
        torch._foreach_copy_([buf], [w])
        d = x * w
        return a, b, c, d, s, t, u, v, w, buf


@probe(category="silu", hints=["inplace"])
def sigmoid_written_by_inplace_functions_of_lists(solution: Any) -> dict[str, Any]:
    """In-place functions of torch whose first argument is a list or tuple holding the sigmoid's result
    (torch._foreach_mul_([u, s], 2.0), torch._foreach_zero_((t,)), torch._foreach_add_(self=[v], scalar=0.5)) before
    the product: they write every tensor in it, so no SiLU; one holding it in a later list, which it only reads,
    leaves the product a SiLU."""
    return run_pass(solution, SigmoidWrittenByInplaceFunctionsOfLists(), randn(141, 3, 4), randn(142, 3, 4))


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


class OnlySilus(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(x) + x.mul(x.sigmoid())


class OnlyLinearRelus(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 5)
        self.act = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.fc(x))


def _dispatched_as_returned(solution: Any, module: nn.Module, x: torch.Tensor) -> dict[str, Any]:
    returned = solution.fuse(fx.symbolic_trace(module.eval()))
    if not isinstance(returned, fx.GraphModule):
        return {"error": f"fuse returned a {type(returned).__name__}, not a GraphModule"}
    with torch.no_grad(), DispatchRecorder() as recorder:
        returned(x)
    return {"dispatched": dict(sorted(recorder.counts.items()))}


@probe(category="silu", hints=["recompile"])
def returned_module_runs_its_graph_silu_only(solution: Any) -> dict[str, Any]:
    """A module with SiLU products and no Linear + ReLU, called as returned: it dispatches silu, not sigmoid and mul."""
    return _dispatched_as_returned(solution, OnlySilus(), randn(73, 3, 4))


@probe(category="linear-relu", hints=["recompile"])
def returned_module_runs_its_graph_linear_relu_only(solution: Any) -> dict[str, Any]:
    """A module with a Linear + ReLU and no SiLU, called as returned: it dispatches the fused op, not the Linear and ReLU."""
    torch.manual_seed(74)
    return _dispatched_as_returned(solution, OnlyLinearRelus(), randn(75, 2, 4))


# ---------------------------------------------------------------- many calls in one process
#
# Every other probe calls fuse on modules that live as long as the probe. A pass that keeps
# something from one call to the next (the modules it already rewrote, by id(); a rewritten graph
# or module, by the code the module traced to, its class name or its submodules' names) passes
# them all. This one calls fuse several times in one process: on the same module after its
# parameters, its graph or its submodules changed in place, on new modules of the same class
# (the same code and names, other values or other submodule types), and on a new module that
# Python put at the address of one it freed; at the end it looks again at what earlier calls
# returned. Each call is compared with the truth computed there and then: the module run eagerly.


class _Block(nn.Module):
    """x * act(x), fc and a ReLU, out and a ReLU. Every instance traces to the same code, whatever
    its submodules' types (torch.nn's own modules are leaves): what the pass may rewrite depends on
    them, not on the code."""

    def __init__(self, seed: int, act: nn.Module, fc_is_linear: bool = True, out_bias: bool = True) -> None:
        super().__init__()
        torch.manual_seed(seed)
        self.act = act
        self.fc = nn.Linear(4, 4) if fc_is_linear else nn.Identity()
        self.out = nn.Linear(4, 3, bias=out_bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x * self.act(x)
        h = F.relu(self.fc(h))
        return torch.relu(self.out(h))


def _called(gm: fx.GraphModule, x: torch.Tensor) -> torch.Tensor:
    """What the graph computes (rebuilt, so whether or not the pass recompiled), on a copy of the graph: a
    GraphModule built on the graph itself would become its owning module, and the next call of fuse is given
    the module as it was returned."""
    import copy

    with torch.no_grad():
        return fx.GraphModule(gm, copy.deepcopy(gm.graph))(x.clone())


def _step(out: Any, x: torch.Tensor, truth: torch.Tensor) -> tuple[dict[str, Any], torch.Tensor | None]:
    """What one call returned, as plain data: the calls its graph holds (counted) and whether it computes the
    truth; and its output, kept to look at it again at the end."""
    from probe_common import node_counts

    if not isinstance(out, fx.GraphModule):
        return {"nodes": out if isinstance(out, str) else "no GraphModule", "values": False}, None
    counts = ",".join(f"{k}:{v}" for k, v in sorted(node_counts(out).items()))
    try:
        got = _called(out, x)
        same = isinstance(got, torch.Tensor) and got.shape == truth.shape and bool(torch.allclose(got, truth, rtol=1.3e-6, atol=1e-5))
    except Exception as exc:  # noqa: BLE001
        return {"nodes": counts, "values": f"raised {type(exc).__name__}"}, None
    return {"nodes": counts, "values": same}, got.clone()


def _truth(module: nn.Module, x: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return module(x.clone())


def _new_at_freed_id(cls: type, freed: set[int], root: nn.Module, graph: fx.Graph, name: str) -> tuple[fx.GraphModule, bool]:
    """A GraphModule of ``root`` and ``graph`` that is, as a rule, a new object at the id of a freed one.

    The object is allocated on its own (``cls`` is the class of a GraphModule made earlier) before
    ``GraphModule.__init__`` runs, so no allocation of the constructor takes the freed slot first;
    objects that land elsewhere are kept until the one wanted comes up, so each try takes the next
    free slot of the allocator. After 65536 tries the last one is used."""
    spare: list[Any] = []
    obj = None
    for _ in range(1 << 16):
        obj = object.__new__(cls)
        if id(obj) in freed:
            break
        spare.append(obj)
    hit = id(obj) in freed
    fx.GraphModule.__init__(obj, root, graph, name)
    return obj, hit


def _fuse(solution: Any, gm: fx.GraphModule) -> Any:
    """fuse's result, or what it raised, as a word: the sequence goes on with its next step."""
    try:
        return solution.fuse(gm)
    except Exception as exc:  # noqa: BLE001
        return f"fuse raised {type(exc).__name__}"


@probe(category="mixed", weight=2, hints=["state"])
def many_calls_in_one_process(solution: Any) -> dict[str, Any]:
    """fuse called many times in one process: on a module changed in place, on new look-alike modules, on one
    rebuilt where a freed one was; and the modules earlier calls returned, looked at again at the end."""
    import gc
    import operator

    steps: dict[str, Any] = {}
    seen: set[int] = set()  # the ids of every GraphModule given to fuse or returned by it in steps 1-4

    def remember(*gms: Any) -> None:
        seen.update(id(g) for g in gms if isinstance(g, fx.GraphModule))

    x = randn(520, 2, 4)

    # 1. A first call.
    first = _Block(521, nn.Sigmoid())
    gm_first = fx.symbolic_trace(first.eval())
    returned_first = _fuse(solution, gm_first)
    remember(gm_first, returned_first)
    steps["1 first call"], _ = _step(returned_first, x, _truth(first, x))

    # 2. The same module's parameters changed in place (an optimizer step), and the pass applied again to
    # the module it returned: the traced module shares the submodules, so both see the new values.
    with torch.no_grad():
        first.fc.weight.mul_(-0.75)
        first.out.bias.add_(0.5)
    edited = returned_first if isinstance(returned_first, fx.GraphModule) else gm_first
    again = _fuse(solution, edited)
    remember(again)
    steps["2 weights changed in place"], _ = _step(again, x, _truth(first, x))

    # 3. That module's graph edited in place: a new SiLU and a new Linear + ReLU after its output. The truth is
    # the module run eagerly, then the same three calls.
    edited = again if isinstance(again, fx.GraphModule) else edited
    torch.manual_seed(522)
    extra = nn.Linear(3, 3)
    with torch.no_grad():
        value = first(x.clone())
        truth = torch.relu(extra(value * torch.sigmoid(value)))
    try:
        edited.add_submodule("extra", extra)
        graph = edited.graph
        output = next(n for n in graph.nodes if n.op == "output")
        value = output.args[0]
        with graph.inserting_before(output):
            sig = graph.call_method("sigmoid", (value,))
            product = graph.call_function(operator.mul, (value, sig))
            lin = graph.call_module("extra", (product,))
            relu = graph.call_function(torch.relu, (lin,))
        output.args = (relu,)
        edited.recompile()
        again = _fuse(solution, edited)
    except Exception as exc:  # noqa: BLE001  (the module returned in step 2 cannot be edited)
        again = f"edit raised {type(exc).__name__}"
    remember(again)
    steps["3 graph edited in place"], _ = _step(again, x, truth)
    graph = output = value = sig = product = lin = relu = None
    del again, edited, returned_first, graph, output, value, sig, product, lin, relu

    # 4. The same module object with submodules of other types put in place, traced again: the same code.
    first.act = nn.Tanh()
    first.fc = nn.Identity()
    gm_swapped = fx.symbolic_trace(first.eval())
    returned_swapped = _fuse(solution, gm_swapped)
    remember(gm_swapped, returned_swapped)
    steps["4 submodules swapped, retraced"], _ = _step(returned_swapped, x, _truth(first, x))

    # 5. A new module of the same class: the same code, names, shapes and dtypes, other parameter values.
    # 6. A new module of the same class with the same names and other submodule types.
    kept: list[tuple[str, Any, torch.Tensor, torch.Tensor]] = []
    look_alikes = [("5 same class, other weights", _Block(524, nn.Sigmoid())),
                   ("6 same names, other types", _Block(525, nn.Hardsigmoid(), out_bias=False))]  # fmt: skip
    for label, module in look_alikes:
        returned = _fuse(solution, fx.symbolic_trace(module.eval()))
        truth = _truth(module, x)
        steps[label], output_then = _step(returned, x, truth)
        kept.append((label, returned, truth, output_then))
    del returned, module

    # 7. The modules of steps 1-4 freed (gc.collect(): a GraphModule and its graph hold each other), and a new
    # module's GraphModule built at one of their addresses: an id() that fuse saw before, on a module it never saw.
    rebuilt_module = _Block(526, nn.Sigmoid())
    rebuilt_graph = fx.Tracer().trace(rebuilt_module.eval())
    cls = type(fx.GraphModule(rebuilt_module, fx.Tracer().trace(rebuilt_module)))
    del gm_first, gm_swapped, returned_swapped
    gc.collect()
    rebuilt, hit = _new_at_freed_id(cls, seen, rebuilt_module, rebuilt_graph, type(rebuilt_module).__name__)
    del rebuilt_graph
    steps["7 rebuilt at a freed address"], _ = _step(_fuse(solution, rebuilt), x, _truth(rebuilt_module, x))

    # 8. What the calls of steps 5 and 6 returned, looked at again after every later call: the same graph,
    # computing the same values as when it was returned.
    at_end = {}
    for label, returned, truth, output_then in kept:
        now, output_now = _step(returned, x, truth)
        now["same output as when returned"] = output_now is not None and output_then is not None and bool(torch.equal(output_now, output_then))
        at_end[label[:1]] = now
    steps["8 earlier results, at the end"] = at_end
    return {**steps, "a rebuilt module took a freed id": hit}


# ---------------------------------------------------------------- generated modules
#
# A seeded generator of modules whose forward is Python source made up of "blocks": a SiLU
# match, a Linear + ReLU match, a look-alike that is no match, an in-place operation, a dead
# node. Each case is traced with symbolic_trace like every other probe; the check is semantic:
# the module run eagerly against the returned graph on the same inputs, graph.lint(), what
# the graph calls (counted), unused nodes, whether the returned module called as it is
# dispatches what its graph does, whether the module's own parameters kept their values, and
# the pass applied a second time to its own result (it must change nothing). One probe per
# family; each family draws its constructs many times, from a fixed seed.

_SIG_POS = ("torch.sigmoid({x})", "{x}.sigmoid()", "F.sigmoid({x})", "MOD:Sigmoid({x})")
_SIG_KW = ("torch.sigmoid(input={x})", "F.sigmoid(input={x})", "MOD:Sigmoid(input={x})")
_MUL_POS = ("{a} * {b}", "torch.mul({a}, {b})", "{a}.mul({b})")
_MUL_KW = ("torch.mul({a}, other={b})", "torch.mul(input={a}, other={b})", "{a}.mul(other={b})")
_RELU_POS = ("F.relu({h})", "F.relu({h}, inplace=True)", "F.relu({h}, inplace=False)", "torch.relu({h})", "{h}.relu()",
             "MOD:ReLU({h})", "MOD:ReLUi({h})")  # fmt: skip
_RELU_KW = ("F.relu(input={h})", "F.relu(input={h}, inplace=True)", "torch.relu(input={h})", "MOD:ReLU(input={h})")
# Keywords written in an order other than the signature's (red team round 3): they bind by name.
_MUL_KW_ORDER = ("torch.mul(other={b}, input={a})",)
_RELU_KW_ORDER = ("F.relu(inplace=True, input={h})", "F.relu(inplace=False, input={h})")
_LINEAR_KW_ORDER = ("F.linear({x}, bias={b}, weight={w})", "F.linear(weight={w}, input={x}, bias={b})",
                    "F.linear(bias={b}, weight={w}, input={x})", "F.linear(weight={w}, bias={b}, input={x})")  # fmt: skip
# Names a submodule may get: some say what it is not.
_MOD_NAMES = ("fc", "proj", "act", "gate", "linear", "relu", "sigmoid", "layer")


class _Gen:
    """One generated module: its forward's source, its submodules and parameters, its inputs."""

    def __init__(self, seed: int, family: str) -> None:
        import random

        self.rng = random.Random(seed)
        # The constructs red team round 2 added draw from a stream of their own, so the cases drawn
        # before them stay as they were (see _with_extra).
        self.extra = random.Random(seed * 31 + 7)
        self.family = family
        self.lines: list[str] = []
        self.modules: dict[str, nn.Module] = {}
        self.params: dict[str, tuple] = {}
        self.inputs: list[tuple[str, tuple]] = []
        self.pool: list[tuple[str, int]] = []  # activations: (name, features)
        self.reads: Counter[str] = Counter()
        self.extra_outputs: list[str] = []
        self.defined: list[str] = []
        self.nested: dict[str, nn.Module] = {}
        self.buffers: dict[str, tuple] = {}
        self.inplace_inside = family in ("inplace-dead", "everything")
        self.n = 0
        self.batch = self.rng.choice([(), (1,), (3,), (2, 3), (2, 1, 3)])
        self.dtype = torch.float64 if self.rng.random() < 0.2 else torch.float32
        for _ in range(self.rng.choice([1, 1, 2])):
            self.new_input(self.rng.choice([3, 4, 5]))

    # -- names
    def fresh(self, prefix: str = "v") -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def new_input(self, feat: int) -> str:
        name = self.fresh("x")
        self.inputs.append((name, (*self.batch, feat)))
        self.pool.append((name, feat))
        return name

    def module(self, kind: str, *args: Any) -> str:
        if kind == "Linear" and self.extra.random() < 0.3:  # a subclass of nn.Linear is a linear too
            kind = self.extra.choice(["LinearNDQ", "LinearSub"])
        name = f"{self.rng.choice(_MOD_NAMES)}{self.n}_{len(self.modules) + len(self.nested)}"
        if self.rng.random() < 0.3:  # inside a container: its target is dotted ("blocks.fc3_1")
            self.nested[name] = kind_module(kind, *args)
            return f"self.blocks.{name}"
        self.modules[name] = kind_module(kind, *args)
        return f"self.{name}"

    def param(self, *shape: int) -> str:
        name = self.fresh("p")
        self.params[name] = shape
        return f"self.{name}"

    def use(self, *names: str) -> None:
        for name in names:
            self.reads[name] += 1

    def emit(self, expr: str, feat: int | None = None, reads: tuple = ()) -> str:
        name = self.fresh()
        self.lines.append(f"{name} = {expr}")
        self.defined.append(name)
        self.use(*reads)
        if feat is not None:
            self.pool.append((name, feat))
        return name

    def _with_extra(self, block: Any) -> None:
        """Run a block drawing every choice from the extra stream."""
        main, self.rng = self.rng, self.extra
        try:
            block()
        finally:
            self.rng = main

    def stmt(self, code: str, reads: tuple = ()) -> None:
        self.lines.append(code)
        self.use(*reads)

    def pick(self, feat: int | None = None) -> tuple[str, int]:
        choices = [v for v in self.pool if feat is None or v[1] == feat]
        return self.rng.choice(choices) if choices else (self.new_input(feat), feat)

    def spell(self, template: str, **names: str) -> str:
        if template.startswith("MOD:"):
            kind, rest = template[4:].split("(", 1)
            return self.module(kind) + "(" + rest.format(**names)
        return template.format(**names)

    # -- blocks
    def filler(self) -> None:
        """An unrelated node: no match, not a look-alike."""
        x, f = self.pick()
        expr = self.rng.choice(["{x} * 0.5", "torch.tanh({x})", "{x} - 0.25", "torch.sin({x})", "torch.abs({x})"])
        self.emit(expr.format(x=x), f, (x,))

    def silu(self, keywords: bool) -> None:
        x, f = self.pick()
        sig_forms = _SIG_KW if keywords else _SIG_POS
        mul_forms = _MUL_KW if keywords else _MUL_POS
        s = self.emit(self.spell(self.rng.choice(sig_forms), x=x), None, (x,))
        readers = self.rng.choice([1, 1, 1, 2, 3])
        other = self.rng.random() < 0.35
        for i in range(readers):
            a, b = (x, s) if self.rng.random() < 0.5 else (s, x)
            form = self.rng.choice(mul_forms)
            if keywords and self.extra.random() < 0.3:
                form = self.extra.choice(_MUL_KW_ORDER)
            self.emit(self.spell(form, a=a, b=b), f, (x, s))
            if other and i == 0:
                self.other_reader(s, f)
            if self.rng.random() < 0.2:
                self.filler()
        self.later(s, f)

    def later(self, v: str, feat: int) -> None:
        """Now and then, a pattern's intermediate is read again by a later block."""
        if self.rng.random() < 0.15:
            self.pool.append((v, feat))

    def other_reader(self, v: str, feat: int) -> None:
        """A reader of v outside any pattern: flat, in a list, as a keyword, or v returned."""
        how = self.rng.choice(["flat", "list", "keyword", "output", "dict", "relu"])
        if how == "relu":  # a second ReLU of the same value
            self.emit(self.spell(self.rng.choice(["torch.relu({h})", "{h}.relu()", "F.relu({h})", "MOD:ReLU({h})"]), h=v), feat, (v,))
        elif how == "flat":
            self.emit(f"{v} + 1.0", feat, (v,))
        elif how == "list":
            y, _ = self.pick(feat)
            self.extra_outputs.append(self.emit(f"torch.cat([{y}, {v}], dim=-1)", None, (y, v)))
        elif how == "keyword":
            y, _ = self.pick(feat)
            self.emit(f"torch.sub({y}, other={v}, alpha=0.5)", feat, (y, v))
        elif how == "output":
            self.extra_outputs.append(v)
            self.use(v)
        else:
            self.extra_outputs.append(f'{{"pre": [{v}]}}')
            self.use(v)

    def linear_relu(self, keywords: bool, gaps: bool = True) -> None:
        x, f = self.pick()
        e = self.rng.choice([2, 3, 4, 5, 6])
        bias = self.rng.random() < 0.6
        kind = self.rng.choice(["module", "module", "function", "placeholder", "computed"])
        if kind == "module":
            mod = self.module("Linear", f, e, bias)
            h = self.emit(f"{mod}(input={x})" if keywords else f"{mod}({x})", None, (x,))
        else:
            if kind == "function":
                w = self.param(e, f)
                b = self.param(e) if bias else "None"
            elif kind == "placeholder":
                w = self.fresh("w")
                self.inputs.append((w, (e, f)))
                b = "None"
                if bias:
                    b = self.fresh("b")
                    self.inputs.append((b, (e,)))
            else:
                w = self.emit(f"{self.param(f, e)}.t()")
                b = self.emit(f"{self.param(e)} * 0.5") if bias else "None"
            self.use(w, b)
            if keywords:
                spellings = [f"F.linear(input={x}, weight={w}, bias={b})", f"F.linear({x}, weight={w}, bias={b})",
                             f"F.linear({x}, {w}, bias={b})", f"F.linear(input={x}, weight={w})" if b == "None" else f"F.linear({x}, weight={w}, bias={b})"]  # fmt: skip
            else:
                spellings = [f"F.linear({x}, {w}, {b})", f"F.linear({x}, {w})" if b == "None" else f"F.linear({x}, {w}, {b})"]
            spelling = self.rng.choice(spellings)
            if keywords and self.extra.random() < 0.4:
                spelling = self.extra.choice(_LINEAR_KW_ORDER).format(x=x, w=w, b=b)
            h = self.emit(spelling, None, (x,))
        if gaps and self.rng.random() < 0.4:
            self.filler()
        if self.inplace_inside and x != h and self.rng.random() < 0.5:  # the fused op must read x as the linear did
            self.stmt(self.rng.choice([f"{x}.add_(0.5)", f"{x}.mul_(-1.5)"]), (x,))
        if self.inplace_inside and kind in ("placeholder", "computed") and self.extra.random() < 0.85:
            # ... and the weight and bias too (a computed weight is a view of a parameter: only its bias changes)
            changed = [v for v in ((w,) if kind == "placeholder" else ()) + ((b,) if b != "None" else ())]
            if changed:
                v = self.extra.choice(changed)
                self.stmt(self.extra.choice([f"{v}.add_(0.5)", f"{v}.mul_(-1.5)"]), (v,))
        other = self.rng.random() < 0.3
        if other and self.rng.random() < 0.5:
            self.other_reader(h, e)
        relu_forms = _RELU_KW if keywords else _RELU_POS
        r_form = self.rng.choice(relu_forms)
        if keywords and self.extra.random() < 0.3:
            r_form = self.extra.choice(_RELU_KW_ORDER)
        r = self.emit(self.spell(r_form, h=h), e, (h,))
        if other and self.reads[h] == 1:
            self.other_reader(h, e)
        self.later(h, e)
        if kind == "module":
            self.linear_attributes(mod, x, r, f, e, bias)

    def linear_attributes(self, mod: str, x: str, r: str, f: int, e: int, bias: bool) -> None:
        """After a fused nn.Linear: the module reads its parameters itself (get_attr nodes after the
        fused op), or has parameters of its own named as a pass might name the Linear's."""
        if self.extra.random() < 0.4:
            if bias and self.extra.random() < 0.5:
                self.emit(f"{r} + {mod}.bias", e, (r,))
            else:
                self.emit(self.extra.choice([f"{mod}.weight.sum()", f"{mod}.weight * 2.0"]))
        if self.extra.random() < 0.35:
            flat = mod[len("self.") :].replace(".", "_")
            self.params[f"{flat}_weight"] = (e, f)
            self.emit(f"torch.matmul({x}, self.{flat}_weight.t())", e, (x,))
            if self.extra.random() < 0.5:
                self.params[f"{flat}_bias"] = (e,)
                self.emit(f"self.{flat}_bias * 1.5", e)

    def alias_or_repeat(self) -> None:
        """No match either: a spelling the statement does not list, computing what a listed one does
        (torch.multiply, the multiply method, torch.special.expit, a threshold at 0), or an expression
        written twice, two nodes (with an in-place change between them, or without)."""
        x, f = self.pick()
        choice = self.rng.randrange(5)
        if choice == 0:
            s = self.emit(self.spell(self.rng.choice(_SIG_POS), x=x), None, (x,))
            a, b = (x, s) if self.rng.random() < 0.5 else (s, x)
            self.emit(self.rng.choice([f"torch.multiply({a}, {b})", f"{a}.multiply({b})"]), f, (x, s))
        elif choice == 1:
            s = self.emit(f"torch.special.expit({x})", None, (x,))
            a, b = (x, s) if self.rng.random() < 0.5 else (s, x)
            self.emit(self.spell(self.rng.choice(_MUL_POS), a=a, b=b), f, (x, s))
        elif choice == 2:
            e = self.rng.choice([2, 3, 4])
            h = self.emit(f"{self.module('Linear', f, e, self.rng.random() < 0.5)}({x})", None, (x,))
            self.emit(self.spell(self.rng.choice(["F.threshold({h}, 0.0, 0.0)", "MOD:Threshold({h})"]), h=h), e, (h,))
        else:
            expr = self.rng.choice(["{v} + 1.0", "{v} * 0.5", "torch.tanh({v})", "{v}.abs()", "torch.sin({v})"])
            v = x
            if choice == 4:  # the second copy reads v after an in-place change: another value
                v = self.emit(f"{x}.clone()", None, (x,))
                self.extra_outputs.append(v)
            first = self.emit(expr.format(v=v), None, (v,))
            if choice == 4:
                self.stmt(self.rng.choice([f"{v}.add_(0.5)", f"{v}.mul_(-1.5)"]), (v,))
            second = self.emit(expr.format(v=v), None, (v,))
            s = self.emit(self.spell(self.rng.choice(_SIG_POS), x=second), None, (second,))
            a, b = (first, s) if self.rng.random() < 0.5 else (s, first)
            self.emit(self.spell(self.rng.choice(_MUL_POS), a=a, b=b), f, (first, s))

    def look_alike(self) -> None:
        """Something that resembles a match and is none."""
        if self.extra.random() < 0.4:
            self._with_extra(self.alias_or_repeat)
        x, f = self.pick()
        y, _ = self.pick(f)
        choice = self.rng.randrange(16)
        if choice == 0:  # a gate (or, with a single activation of this width, a sum)
            s = self.emit(f"torch.sigmoid({y})", f, (y,))
            self.emit(f"{x} * {s}" if y != x else f"{x} + {s}", f, (x, s))
        elif choice == 1:
            s = self.emit(f"torch.sigmoid({x})", f, (x,))
            self.emit(self.rng.choice([f"{x} + {s}", f"torch.add({s}, {x})", f"{x}.sub({s})"]), f, (x, s))
        elif choice == 2:
            t = self.emit(f"{x}.tanh()", f, (x,))
            self.emit(f"{x} * {t}", f, (x, t))
        elif choice == 3:
            t = self.emit(f"F.hardsigmoid({x})", f, (x,))
            self.emit(f"torch.mul({t}, {x})", f, (x, t))
        elif choice == 4:
            t = self.emit(f"F.logsigmoid({x})", f, (x,))
            self.emit(f"{x} * {t}", f, (x, t))
        elif choice == 5:  # sigmoid(x) * sigmoid(x), sigmoid(x) * 2
            s = self.emit(f"{x}.sigmoid()", f, (x,))
            self.emit(self.rng.choice([f"{s} * {s}", f"{s} * 2.0", f"torch.mul({s}, 0.5)"]), f, (s, s))
        elif choice == 6:  # an in-place product: it writes c
            c = self.emit(f"{x}.clone()", f, (x,))
            s = self.emit(f"torch.sigmoid({c})", f, (c,))
            self.stmt(f"{c}.mul_({s})", (c, s))
            self.extra_outputs.append(c)
        elif choice == 7:  # an in-place sigmoid: it writes c, so c * t is sigmoid(x) squared
            c = self.emit(f"{x}.clone()", None, (x,))
            t = self.emit(f"{c}.sigmoid_()", f, (c,))
            self.emit(f"{c} * {t}", f, (c, t))
        elif choice == 8:  # an nn.Sigmoid named like something else is a sigmoid; an nn.Tanh named sigmoid is not
            name = f"sigmoid{self.n}_{len(self.modules)}"
            self.modules[name] = nn.Tanh()
            t = self.emit(f"self.{name}({x})", f, (x,))
            self.emit(f"{t} * {x}", f, (x, t))
        else:  # a Linear, or something like one, under something like a ReLU
            e = self.rng.choice([2, 3, 4, 5])
            lin_kind = self.rng.randrange(4)
            if lin_kind == 0:
                h = self.emit(f"{self.module('Identity')}({x})", f, (x,))
                e = f
            elif lin_kind == 1:
                h = self.emit(f"{self.module('Bilinear', f, f, e)}({x}, {y})", e, (x, y))
            elif lin_kind == 2:
                h = self.emit(f"torch.matmul({x}, {self.param(f, e)}) + {self.param(e)}", e, (x,))
            else:
                h = self.emit(f"{self.module('Linear', f, e, True)}({x})", e, (x,))
            act = self.rng.choice(["F.relu6({h})", "F.leaky_relu({h})", "F.gelu({h})", "{h}.clamp(min=0.0)", "torch.clamp_min({h}, 0.0)",
                                   "F.elu({h})", "MOD:ReLU6({h})", "MOD:LeakyReLU({h})", "{h}.relu_()", "torch.relu_({h})",
                                   "F.hardtanh({h}, 0.0, 6.0)"])  # fmt: skip
            if lin_kind != 3 and self.rng.random() < 0.5:
                act = self.rng.choice(["F.relu({h})", "{h}.relu()", "torch.relu({h})", "MOD:ReLU({h})"])
            self.emit(self.spell(act, h=h), e, (h,))

    def inplace(self) -> None:
        """An in-place change of an activation, between matches (never inside one)."""
        x, f = self.pick()
        self.stmt(self.rng.choice([f"{x}.add_(0.5)", f"{x}.mul_(0.75)", f"torch.relu_({x})", f"F.relu({x}, inplace=True)"]), (x,))

    def dead(self) -> None:
        """A node whose result nothing reads: the module's own, so it stays."""
        x, f = self.pick()
        choice = self.rng.randrange(5)
        if choice == 0:
            self.stmt(self.rng.choice([f"torch.sigmoid({x})", f"{x}.relu()", f"{x} * 2.0", f"F.silu({x})"]), (x,))
        elif choice == 1:  # a whole SiLU nothing reads: it is still rewritten
            self.stmt(f"{x} * torch.sigmoid({x})", (x,))
        elif choice == 2:  # a Linear + ReLU nothing reads
            self.stmt(f"F.relu({self.module('Linear', f, 3, True)}({x}))", (x,))
        elif choice == 3:  # a copy changed in place and never read again
            c = self.emit(f"{x}.clone()", None, (x,))
            self.stmt(f"{c}.mul_(2.0)", (c,))
            self.extra_outputs.append(c)
        else:  # a sigmoid computed twice, one of them read by nothing
            self.stmt(f"{x}.sigmoid()", (x,))
        if self.extra.random() < 0.5:
            self._with_extra(self.dead_more)

    def dead_more(self) -> None:
        """More of the module's own nodes nothing reads, of every kind (red team round 3): get_attr nodes,
        linears, products, ReLUs, some with keyword arguments. All stay."""
        x, f = self.pick()
        y, _ = self.pick(f)
        e = self.rng.choice([2, 3])
        choice = self.rng.randrange(8)
        if choice == 0:  # a parameter read and dropped
            self.stmt(self.param(f))
        elif choice == 1:  # a Linear's weight read and dropped
            mod = self.module("Linear", f, e, True)
            self.stmt(self.rng.choice([f"{mod}.weight", f"{mod}.bias"]))
        elif choice == 2:
            self.stmt(f"{self.module('Linear', f, e, self.rng.random() < 0.5)}({x})", (x,))
        elif choice == 3:
            self.stmt(self.rng.choice([f"F.linear({x}, {self.param(e, f)})", f"F.linear(input={x}, weight={self.param(e, f)})",
                                       f"F.linear({x}, bias={self.param(e)}, weight={self.param(e, f)})"]), (x,))  # fmt: skip
        elif choice == 4:
            self.stmt(self.rng.choice([f"{x} * {y}", f"torch.mul({x}, other={y})", f"{x}.mul(0.5)"]), (x, y))
        elif choice == 5:
            self.stmt(self.spell(self.rng.choice(["torch.relu(input={h})", "MOD:ReLU({h})", "F.relu({h})"]), h=x), (x,))
        elif choice == 6:
            self.stmt(self.spell(self.rng.choice(["torch.sigmoid(input={x})", "MOD:Sigmoid({x})"]), x=x), (x,))
        else:  # a buffer read and dropped
            name = self.fresh("buf")
            self.buffers[name] = (f,)
            self.stmt(f"self.{name}")

    # -- the module
    def build(self) -> tuple[nn.Module, list[torch.Tensor]]:
        outputs = [name for name in self.defined if not self.reads[name]] + self.extra_outputs or [self.inputs[0][0]]
        if self.rng.random() < 0.5 and len(outputs) > 1:  # nest some outputs
            outputs = [outputs[0], "[" + ", ".join(outputs[1:]) + "]"]
        args = ", ".join(name for name, _ in self.inputs)
        body = "\n".join("    " + line for line in self.lines) or "    pass"
        src = f"def forward(self, {args}):\n{body}\n    return ({', '.join(outputs)},)\n"
        namespace: dict[str, Any] = {"torch": torch, "F": F}
        exec(compile(src, f"<generated {self.family}>", "exec"), namespace)  # noqa: S102
        cls = type("Generated", (nn.Module,), {"forward": namespace["forward"]})
        module = cls()
        gen = torch.Generator().manual_seed(self.rng.randrange(2**31))
        for name, sub in self.modules.items():
            module.add_module(name, sub)
        if self.nested:
            module.add_module("blocks", nn.Sequential(OrderedDict(self.nested)) if self.rng.random() < 0.5 else nn.ModuleDict(self.nested))
        for name, shape in self.params.items():
            module.register_parameter(name, nn.Parameter(torch.randn(*shape, generator=gen) * 0.5))
        for name, shape in self.buffers.items():
            module.register_buffer(name, torch.randn(*shape, generator=gen))
        for p in module.parameters():
            with torch.no_grad():
                p.copy_(torch.randn(p.shape, generator=gen) * 0.5)
        module.to(self.dtype).eval()
        inputs = [torch.randn(*shape, generator=gen, dtype=self.dtype) for _, shape in self.inputs]
        module.src = src  # for whoever debugs a case
        return module, inputs


def kind_module(kind: str, *args: Any) -> nn.Module:
    return {"Sigmoid": nn.Sigmoid, "ReLU": nn.ReLU, "ReLUi": lambda: nn.ReLU(inplace=True), "Linear": nn.Linear, "Identity": nn.Identity,
            "Bilinear": nn.Bilinear, "ReLU6": nn.ReLU6, "LeakyReLU": nn.LeakyReLU, "LinearSub": MyLinear,
            "LinearNDQ": nn.modules.linear.NonDynamicallyQuantizableLinear, "Threshold": lambda: nn.Threshold(0.0, 0.0)}[kind](*args)  # fmt: skip


# ---------------------------------------------------------------- generated: calls that write the sigmoid's result
#
# Red team round 6: between a sigmoid and its product, calls that write its result in place, or write another tensor
# and only read it, in every way a tensor can reach the written argument: a method's receiver, a function's first
# argument (alone, or in a list or tuple: torch._foreach_mul_), out=, inplace=True, a submodule built with
# inplace=True, and the operators of torch.ops, whose written arguments come from their schemas (Tensor(a!) and
# Tensor(a!)[]) at any position. A torch.ops call is spelled from its schema: a random number of leading arguments by
# position, the rest by keyword in a random order, as the overload or as its packet.


def _spell_op(rng: Any, packet: str, overload: str, values: dict[str, str]) -> str:
    """torch.ops.aten.<packet>[.<overload>](...) with ``values`` (argument name -> source): a random number of
    leading arguments by position (as many of the schema's positional ones as are given in a row), the rest by
    keyword in a random order; as the overload or, half the time, as its packet."""
    params = getattr(getattr(torch.ops.aten, packet), overload)._schema.arguments
    prefix = 0
    for a in params:
        if a.kwarg_only or a.name not in values:
            break
        prefix += 1
    cut = rng.randint(0, prefix)
    positional = [values[a.name] for a in params[:cut]]
    keywords = [a.name for a in params[cut:] if a.name in values]
    rng.shuffle(keywords)
    target = f"torch.ops.aten.{packet}" + ("" if rng.random() < 0.5 else f".{overload}")
    return f"{target}({', '.join([*positional, *(f'{k}={values[k]}' for k in keywords)])})"


class _WriterGen(_Gen):
    """Generated modules whose SiLU candidates have calls between the sigmoid and the product that write its result
    (no SiLU) or only read it (a SiLU)."""

    def buf(self, x: str, expr: str = "{x}.clone()") -> str:
        """A fresh tensor a call may write (returned, so its value is compared too)."""
        name = self.emit(expr.format(x=x), None, (x,))
        self.extra_outputs.append(name)
        return name

    def submodule(self, module: nn.Module) -> str:
        name = f"{self.rng.choice(_MOD_NAMES)}{self.n}_{len(self.modules)}"
        self.modules[name] = module
        return f"self.{name}"

    def listed(self, *names: str) -> str:
        names = list(names)
        self.rng.shuffle(names)
        return ("[{}]" if self.rng.random() < 0.6 else "({},)").format(", ".join(names))

    def writer(self, s: str, x: str, write: bool) -> None:
        """One call between the sigmoid ``s`` of ``x`` and its product: it writes ``s``, or (``write`` False) writes
        another tensor and reads ``s``."""
        rng, one_d = self.rng, len(self.batch) == 0
        kinds = ["method", "function", "foreach", "out", "inplace-flag", "module", "mul_", "addcmul_", "copy_", "cummax", "sort",
                 "foreach-op", "rrelu-noise", "mul-out"] + (["fused-sgd"] if write else []) + (["batch-norm"] if one_d else [])  # fmt: skip
        kind = rng.choice(kinds)
        buf = self.buf(x)
        other = self.buf(x, "{x} * 0.5 + 0.25")
        t, o = (s, buf) if write else (buf, s)  # the written tensor and the one only read
        if kind == "method":
            self.stmt(rng.choice([f"{t}.add_({o})", f"{t}.mul_(other={o})", f"{t}.copy_({o})", f"{t}.addcmul_({o}, {other})",
                                  f"{t}.sub_({o}, alpha=0.5)", f"{t}.addcmul_(tensor1={other}, tensor2={o})"]), (t, o))  # fmt: skip
        elif kind == "function":
            if write:
                self.stmt(rng.choice([f"torch.exp_({s})", f"torch.clamp_(input={s}, max=0.5)", f"torch.nn.init.constant_({s}, 0.5)",
                                      f"torch.sigmoid_({s})", f"torch.nn.init.zeros_(tensor={s})"]), (s,))  # fmt: skip
            else:
                self.stmt(rng.choice([f"torch.clamp_({buf}, max={s})", f"torch.add({buf}, {s}, out={other})"]), (buf, s))
        elif kind == "foreach":
            if write:
                self.stmt(rng.choice([f"torch._foreach_mul_({self.listed(s, buf)}, 2.0)", f"torch._foreach_zero_({self.listed(s)})",
                                      f"torch._foreach_add_(self={self.listed(buf, s)}, scalar=0.5)"]), (s, buf))  # fmt: skip
            else:
                self.stmt(rng.choice([f"torch._foreach_add_([{buf}], [{s}])", f"torch._foreach_copy_([{other}, {buf}], ({s}, {s}))",
                                      f"torch._foreach_mul_(self=[{buf}], other=[{s}])"]), (s, buf))  # fmt: skip
        elif kind == "out":
            self.stmt(f"torch.mul({o}, {other}, out={t})" if rng.random() < 0.5 else f"torch.add({other}, {o}, alpha=0.5, out={t})", (t, o))
        elif kind == "inplace-flag":
            fn = rng.choice(["F.hardtanh({v}, 0.0, 0.5, inplace={flag})", "F.relu({v}, inplace={flag})", "F.mish({v}, inplace={flag})",
                             "F.dropout({v}, 0.2, False, {flag})", "F.threshold({v}, 0.6, 0.0, {flag})"])  # fmt: skip
            if write:
                self.stmt(fn.format(v=s, flag=True), (s,))
            else:
                self.extra_outputs.append(self.emit(fn.format(v=s, flag=False), None, (s,)))
        elif kind == "module":
            mod = rng.choice([lambda i: nn.Hardtanh(0.0, 0.5, inplace=i), lambda i: nn.Threshold(0.6, 0.0, inplace=i),
                              lambda i: nn.SiLU(inplace=i), lambda i: nn.Mish(inplace=i)])(write)  # fmt: skip
            call = self.submodule(mod) + (f"(input={s})" if rng.random() < 0.4 else f"({s})")
            if write:
                self.stmt(call, (s,))
            else:
                self.extra_outputs.append(self.emit(call, None, (s,)))
        elif kind == "mul_":
            self.stmt(_spell_op(rng, "mul_", "Tensor", {"self": t, "other": o}), (t, o))
        elif kind == "addcmul_":
            values = {"self": t, "tensor1": o, "tensor2": other} if rng.random() < 0.5 else {"self": t, "tensor1": other, "tensor2": o}
            if rng.random() < 0.5:
                values["value"] = "0.5"
            self.stmt(_spell_op(rng, "addcmul_", "default", values), (t, o))
        elif kind == "copy_":
            self.stmt(_spell_op(rng, "copy_", "default", {"self": t, "src": o}), (t, o))
        elif kind == "cummax":
            idx = self.emit(f"torch.zeros_like({x}, dtype=torch.long)", None, (x,))
            self.extra_outputs.append(idx)
            self.stmt(_spell_op(rng, "_cummax_helper", "default", {"self": o, "values": t, "indices": idx, "dim": "0"}), (t, o, idx))
        elif kind == "sort":
            idx = self.emit(f"torch.zeros_like({x}, dtype=torch.long)", None, (x,))
            self.extra_outputs.append(idx)
            self.stmt(_spell_op(rng, "sort", "values", {"self": o, "dim": "-1", "values": t, "indices": idx}), (t, o, idx))
        elif kind == "foreach-op":
            if write:
                self.stmt(_spell_op(rng, "_foreach_mul_", "Scalar", {"self": self.listed(s, buf), "scalar": "2.0"}), (s, buf))
            else:
                self.stmt(_spell_op(rng, "_foreach_add_", "List", {"self": f"[{buf}]", "other": self.listed(s)}), (s, buf))
        elif kind == "fused-sgd":  # s in one of the three lists it writes
            where = rng.choice(["self", "grads", "momentum_buffer_list"])
            lists = {name: (self.listed(s) if name == where else f"[{self.buf(x)}]") for name in ("self", "grads", "momentum_buffer_list")}
            values = {**lists, "weight_decay": "0.0", "momentum": "0.5", "lr": "0.1", "dampening": "0.0", "nesterov": "False",
                      "maximize": "False", "is_first_step": "False"}  # fmt: skip
            self.stmt(_spell_op(rng, "_fused_sgd_", "default", values), (s,))
        elif kind == "rrelu-noise":
            self.stmt(_spell_op(rng, "rrelu_with_noise", "default", {"self": o, "noise": t, "lower": "0.1", "upper": "0.3",
                                                                   "training": "False"}), (t, o))  # fmt: skip
        elif kind == "mul-out":
            self.stmt(_spell_op(rng, "mul", "out", {"self": o, "other": other, "out": t}), (t, o))
        else:  # batch-norm: a 1-D s as running statistics (written) or as weight or bias (read)
            z = self.emit(f"torch.stack([{x}, {x} * 0.5, {x} - 1.0])", None, (x,))
            rm, rv = self.buf(x, "torch.zeros_like({x})"), self.buf(x, "torch.ones_like({x})")
            values = {"input": z, "weight": "None", "bias": "None", "running_mean": rm, "running_var": rv, "momentum": "0.1", "eps": "1e-05"}
            if write:
                values[rng.choice(["running_mean", "running_var"])] = s
                name = rng.choice(["_batch_norm_with_update", "_native_batch_norm_legit"])
            else:
                name = rng.choice(["_batch_norm_with_update", "_native_batch_norm_legit_no_training", "_native_batch_norm_legit"])
                read = ["weight", "bias"] + (["running_mean", "running_var"] if name.endswith("no_training") else [])
                values[rng.choice(read)] = s
            if name == "_native_batch_norm_legit":
                values["training"] = "True"
            self.extra_outputs.append(self.emit(_spell_op(rng, name, "default", values), None, (z, s)) + "[0]")

    def writer_block(self) -> None:
        x, f = self.pick()
        s = self.emit(self.spell(self.rng.choice(_SIG_POS + _SIG_KW), x=x), None, (x,))
        mul_forms = _MUL_POS + _MUL_KW
        if self.rng.random() < 0.3:  # a product before the calls: a SiLU
            a, b = (x, s) if self.rng.random() < 0.5 else (s, x)
            self.emit(self.spell(self.rng.choice(mul_forms), a=a, b=b), f, (x, s))
        for _ in range(self.rng.choice([1, 1, 2])):
            self.writer(s, x, self.rng.random() < 0.5)
        a, b = (x, s) if self.rng.random() < 0.5 else (s, x)
        self.emit(self.spell(self.rng.choice(mul_forms), a=a, b=b), f, (x, s))
        if self.rng.random() < 0.3:
            self.extra_outputs.append(s)


def _blocks(gen: _Gen, family: str) -> None:
    rng = gen.rng
    for _ in range(rng.choice([2, 3, 3, 4])):
        if family == "writers":
            gen.writer_block()
        elif family == "silu":
            gen.silu(keywords=False)
        elif family == "linear-relu":
            gen.linear_relu(keywords=False)
        elif family == "keywords":
            gen.silu(keywords=True) if rng.random() < 0.5 else gen.linear_relu(keywords=True)
        elif family == "look-alike":
            gen.look_alike()
        elif family == "inplace-dead":
            for block in rng.sample([gen.inplace, gen.dead, gen.inplace, lambda: gen.silu(False), lambda: gen.linear_relu(False)], 3):
                block()
        else:  # everything, in any order
            rng.choice([lambda: gen.silu(rng.random() < 0.5), lambda: gen.linear_relu(rng.random() < 0.5), gen.look_alike,
                        gen.inplace, gen.dead, gen.filler])()  # fmt: skip
        if rng.random() < 0.3:
            gen.filler()


def _graph_record(gm: fx.GraphModule, inputs: list, expected: Any, before: list) -> list:
    """lint, what the graph calls (counted), unused nodes, whether every node the rewrites do not replace
    is as it was in ``before`` (the graph fuse was given), whether it computes what the module does, and
    whether the module as returned runs its graph (dispatches what a GraphModule rebuilt from it does)."""
    from probe_common import node_counts

    try:
        gm.graph.lint()
        lint = True
    except Exception:  # noqa: BLE001
        lint = False
    counts = node_counts(gm)
    unused = sum(1 for n in gm.graph.nodes if n.op not in ("placeholder", "output") and not n.users)
    record = [lint, ",".join(f"{k}:{v}" for k, v in sorted(counts.items())), unused, untouched(before, snapshot(gm))]
    if inputs is None:
        return record
    try:
        with torch.no_grad():
            got = fx.GraphModule(gm, gm.graph)(*(t.clone() for t in inputs))
        flat_got, spec_got = torch.utils._pytree.tree_flatten(got)
        flat_exp, spec_exp = torch.utils._pytree.tree_flatten(expected)
        tol = 1e-9 if inputs[0].dtype == torch.float64 else 2e-5
        same = spec_got == spec_exp and all(
            isinstance(g, torch.Tensor) and g.shape == e.shape and g.dtype == e.dtype and torch.allclose(g, e, rtol=tol, atol=tol)
            for g, e in zip(flat_got, flat_exp)
        )
    except Exception as exc:  # noqa: BLE001
        same = f"run raised {type(exc).__name__}"
    return [*record, same, runs_its_graph(gm, inputs)]


def _generated_family(solution: Any, family: str, seed: int, count: int) -> dict[str, Any]:
    """Per case: [lint, node counts, unused nodes, untouched nodes as they were, same values as the module, the
    module as returned runs its graph, own parameters changed, unchanged by a second fuse]."""
    import random

    seeds = random.Random(seed)
    cases = []
    for _ in range(count):
        gen = (_WriterGen if family == "writers" else _Gen)(seeds.randrange(2**31), family)
        _blocks(gen, family)
        module, inputs = gen.build()
        with torch.no_grad():
            expected = module(*(t.clone() for t in inputs))
        traced = fx.symbolic_trace(module)
        own = own_attributes(traced)
        before = snapshot(traced)  # before the pass edits these very nodes
        try:
            out = solution.fuse(traced)
        except Exception as exc:  # noqa: BLE001
            cases.append(f"fuse raised {type(exc).__name__}")
            continue
        if not isinstance(out, fx.GraphModule):
            cases.append("fuse returned no GraphModule")
            continue
        first = [*_graph_record(out, inputs, expected, before), attributes_changed(out, own)]
        try:  # the pass applied to its own result changes nothing
            returned = snapshot(out)
            again = solution.fuse(out)
            second = _graph_record(again, None, None, returned) if isinstance(again, fx.GraphModule) else None
        except Exception:  # noqa: BLE001
            second = None
        cases.append([*first, second == first[:4]])
    return {"cases": cases}


@probe(category="silu", weight=2, timeout=40, hints=["silu-forms", "same-operand", "silu-dead-code"])
def generated_silu(solution: Any) -> dict[str, Any]:
    """Generated modules: SiLUs in every positional spelling, shared sigmoids, other readers, other shapes and dtypes."""
    return _generated_family(solution, "silu", seed=2701, count=20)


@probe(category="linear-relu", weight=2, timeout=40, hints=["linear-relu-forms", "get-attr", "other-users"])
def generated_linear_relu(solution: Any) -> dict[str, Any]:
    """Generated modules: Linear + ReLU in every positional spelling, weights of every origin, other readers, shapes, dtypes."""
    return _generated_family(solution, "linear-relu", seed=2702, count=20)


@probe(category="mixed", weight=2, timeout=40, hints=["keywords"])
def generated_keyword_arguments(solution: Any) -> dict[str, Any]:
    """Generated modules: both patterns with their arguments passed by keyword wherever Python allows it."""
    return _generated_family(solution, "keywords", seed=2703, count=20)


@probe(category="leave-alone", weight=2, timeout=40, hints=["match-by-type", "same-operand", "inplace"])
def generated_look_alikes(solution: Any) -> dict[str, Any]:
    """Generated modules: gates, sums, look-alike functions and modules, in-place calls: nothing to rewrite."""
    return _generated_family(solution, "look-alike", seed=2704, count=20)


@probe(category="mixed", weight=2, timeout=40, hints=["inplace", "dead-code-kept"])
def generated_inplace_and_dead_nodes(solution: Any) -> dict[str, Any]:
    """Generated modules: matches between in-place changes of their operands, and nodes nothing reads."""
    return _generated_family(solution, "inplace-dead", seed=2705, count=20)


@probe(category="mixed", weight=2, timeout=40, hints=["silu-forms", "linear-relu-forms", "other-users", "inplace"])
def generated_everything(solution: Any) -> dict[str, Any]:
    """Generated modules: every construct above, in any order, and the pass applied to its own result."""
    return _generated_family(solution, "everything", seed=2706, count=20)


@probe(category="silu", weight=2, timeout=40, hints=["inplace", "keywords"])
def generated_writers_between_sigmoid_and_product(solution: Any) -> dict[str, Any]:
    """Generated modules: between a sigmoid and its product, calls that write its result or only read it, in every way
    a tensor reaches a call (a method's receiver, a function's first argument alone or in a list, out=, inplace=True,
    an in-place submodule, and torch.ops overloads and packets given it at any position of their schemas, by position
    or keyword, alone or in a list)."""
    return _generated_family(solution, "writers", seed=2707, count=24)


# ---------------------------------------------------------------- red team round 8
#
# Computed weights read at the wrong time (a parametrized Linear's get_attr hoisted above the module's own change of
# its parametrization's original tensor; a new GraphModule built with fx.GraphModule(gm, graph), which copies the
# value of each get_attr it is built with, so a computed weight becomes a fixed tensor): the value check of
# run_pass rebuilds the returned module the same way and cannot see either. These probes call the returned module
# as it is, twice in a row, and compare it with a second instance of the module run eagerly.


def _as_returned(solution: Any, make: Any, *inputs: torch.Tensor, calls: int = 2) -> dict[str, Any]:
    """The returned GraphModule called as it is (not rebuilt), ``calls`` times in a row, beside the same module run
    eagerly (a second instance built by ``make`` with the same seed): the outputs of each call, whether each matches
    the eager module's, and what the graph calls, counted."""
    from probe_common import node_counts

    eager = make().eval()
    module = make().eval()
    gm = fx.symbolic_trace(module)
    out = solution.fuse(gm)
    if not isinstance(out, fx.GraphModule):
        return {"error": f"fuse returned a {type(out).__name__}, not a GraphModule"}
    try:
        out.graph.lint()
        lint = "ok"
    except Exception as exc:  # noqa: BLE001
        lint = f"raised {type(exc).__name__}"
    got, same = [], []
    with torch.no_grad():
        for _ in range(calls):
            try:
                result = out(*(t.clone() for t in inputs))
            except Exception as exc:  # noqa: BLE001
                return {"lint": lint, "nodes": dict(sorted(node_counts(out).items())), "called as returned": f"raised {type(exc).__name__}"}
            truth = eager(*(t.clone() for t in inputs))
            flat_got, spec_got = torch.utils._pytree.tree_flatten(result)
            flat_exp, spec_exp = torch.utils._pytree.tree_flatten(truth)
            same.append(spec_got == spec_exp and all(
                isinstance(g, torch.Tensor) and g.shape == e.shape and torch.allclose(g, e, rtol=1.3e-6, atol=1e-5)
                for g, e in zip(flat_got, flat_exp, strict=False)
            ))  # fmt: skip
            got.append(result)
    return {"lint": lint, "nodes": dict(sorted(node_counts(out).items())), "outputs as returned": got, "same as the module": same}


class _Doubled(nn.Module):
    """A parametrization of one's own: the weight (or bias) read is twice the stored original, computed when read."""

    def forward(self, original: torch.Tensor) -> torch.Tensor:
        return original * 2.0


class WeightNormChangedBeforeTheLinear(nn.Module):
    """Red team round 8: a weight-normed Linear whose magnitude (original0) the module scales in place before the
    Linear, and one whose direction (original1) it changes between the Linear and its ReLU."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(801)
        self.fc = torch.nn.utils.parametrizations.weight_norm(nn.Linear(4, 5))
        self.fc2 = torch.nn.utils.parametrizations.weight_norm(nn.Linear(4, 3, bias=False))
        self.requires_grad_(False)

    def forward(self, x: torch.Tensor) -> tuple:
        self.fc.parametrizations.weight.original0.mul_(0.75)  # before the Linear: the fused op reads the new weight
        r = F.relu(self.fc(x))
        h = self.fc2(x)
        self.fc2.parametrizations.weight.original1.add_(0.5)  # between the Linear and its ReLU: it must not reach it
        return r, torch.relu(h)


@probe(category="mixed", weight=2, hints=["inplace", "get-attr"])
def parametrized_weight_changed_before_the_linear(solution: Any) -> dict[str, Any]:
    """A weight-normed Linear (its weight computed when read) whose parametrization the module changes in place before
    the Linear, another changed between its Linear and ReLU; the returned module called as it is, twice: each call's
    fused op reads the weight as the Linear would."""
    return _as_returned(solution, WeightNormChangedBeforeTheLinear, randn(802, 2, 4))


class OwnParametrizationChangedBefore(nn.Module):
    """Red team round 8: a Linear under a parametrization of one's own, on its weight and its bias (both computed
    when read), changed in place before the Linear; a plain Linear beside it."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(803)
        self.fc = nn.Linear(4, 4)
        torch.nn.utils.parametrize.register_parametrization(self.fc, "weight", _Doubled())
        torch.nn.utils.parametrize.register_parametrization(self.fc, "bias", _Doubled())
        self.block = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
        torch.nn.utils.parametrize.register_parametrization(self.block[0], "bias", _Doubled())
        self.plain = nn.Linear(4, 2)
        self.requires_grad_(False)

    def forward(self, x: torch.Tensor) -> tuple:
        self.fc.parametrizations.bias.original.add_(0.5)
        self.fc.parametrizations.weight.original.mul_(-0.5)
        a = self.fc(x)
        r = F.relu(a)
        self.block[0].parametrizations.bias.original.sub_(0.25)
        s = self.block(x)
        self.plain.weight.mul_(0.5)
        q = self.plain(r).relu()
        return r, s, q


@probe(category="linear-relu", weight=2, hints=["inplace", "get-attr"])
def own_parametrization_changed_before_the_linear(solution: Any) -> dict[str, Any]:
    """Linears whose weight and bias a parametrization computes when read, changed in place by the module before the
    Linear; the returned module called as it is, twice: the fused op must see each change, on each call."""
    return _as_returned(solution, OwnParametrizationChangedBefore, randn(804, 3, 4))


class PacketsReadingTheSigmoid(nn.Module):
    """Red team round 8: torch.ops.aten.max(y, s) is aten::max.other (reads s); aten::max.unary_out(self, *, out) can
    take no second positional argument, so the packet does not write s. The same for min."""

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple:
        s = torch.sigmoid(x)
        m = torch.ops.aten.max(y, s)  # reads s: a SiLU below
        a = x * s
        t = x.sigmoid()
        n = torch.ops.aten.min(y, t)
        b = torch.mul(t, x)
        u = torch.sigmoid(y)
        k = torch.ops.aten.max(x, u)
        v = torch.ops.aten.min(u, x)
        c = y.mul(u)
        return a, b, c, m, n, k, v


@probe(category="silu", weight=2, hints=["inplace"])
def packets_given_the_sigmoid_by_position_only_read_it(solution: Any) -> dict[str, Any]:
    """Overload packets given the sigmoid's result as a second positional argument that no overload writes in that
    place (an argument after * takes no positional one): they only read it, and each product is a SiLU."""
    return run_pass(solution, PacketsReadingTheSigmoid(), randn(805, 3, 4), randn(806, 3, 4))


class SubmodulesNamedLikeInplaceCalls(nn.Module):
    """Red team round 8: submodules whose attribute names end in one _ read the sigmoid's result between it and the
    product; a submodule writes only when built with inplace=True, whatever its name."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(807)
        self.norm_ = nn.LayerNorm(4)
        self.proj_ = nn.Linear(4, 4)
        self.act_ = nn.ReLU()
        self.drop_ = nn.Dropout(0.5)
        self.sig_ = nn.Sigmoid()
        self.clip_ = nn.Hardtanh(0.0, 0.5, inplace=True)  # this one writes: because of inplace=True

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple:
        s = torch.sigmoid(x)
        n = self.norm_(s)
        a = x * s
        t = x.sigmoid()
        p = self.proj_(t)
        q = self.act_(input=t)
        b = torch.mul(t, x)
        u = self.sig_(y)
        d = self.drop_(u)
        c = y.mul(u)
        w = torch.sigmoid(y)
        self.clip_(w)
        e = y * w
        return a, b, c, e, n, p, q, d


@probe(category="silu", weight=2, hints=["inplace"])
def submodules_named_like_inplace_calls(solution: Any) -> dict[str, Any]:
    """Submodules whose attribute names end in one underscore (a LayerNorm, a Linear, a ReLU, a Dropout, a Sigmoid)
    reading the sigmoid's result between it and the product: the name is no in-place call, and those products are
    SiLUs; one built with inplace=True writes it."""
    return run_pass(solution, SubmodulesNamedLikeInplaceCalls(), randn(808, 3, 4), randn(809, 3, 4))


class SigmoidWrittenAtLaterPlacesOfOutTuples(nn.Module):
    """Red team round 8: the sigmoid's result as the second or third tensor of an out= tuple (or list)."""

    def forward(self, x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> tuple:
        m = x.sum(0)
        s = torch.sigmoid(m)
        mn = torch.empty(m.shape)
        torch.aminmax(y, dim=0, out=(mn, s))  # writes s, its second tensor
        a = m * s
        t = torch.sigmoid(z)
        u = torch.empty(z.shape)
        sv = torch.empty(z.shape[0])
        torch.linalg.svd(z, out=(u, sv, t))  # writes t, its third tensor (Vh)
        b = torch.mul(z, t)
        v = m.sigmoid()
        lo = torch.empty(m.shape)
        torch.aminmax(y, dim=0, out=[lo, v])  # a list holding v
        c = v.mul(m)
        w = torch.sigmoid(m)
        hi, lo2 = torch.empty(m.shape), torch.empty(m.shape)
        torch.aminmax(w.unsqueeze(0), dim=0, out=(lo2, hi))  # only reads w: a SiLU below
        d = w * m
        return a, b, c, d, mn, u, sv, lo, hi, lo2


@probe(category="silu", weight=2, hints=["inplace"])
def sigmoid_written_at_later_places_of_out_tuples(solution: Any) -> dict[str, Any]:
    """The sigmoid's result written as the second or third tensor of an out= tuple or list (torch.aminmax,
    torch.linalg.svd) before the product: no SiLU; a call whose out= holds other tensors only reads it."""
    return run_pass(solution, SigmoidWrittenAtLaterPlacesOfOutTuples(), randn(810, 3, 4), randn(811, 3, 4), randn(812, 4, 4))


class _Reshaped(nn.Module):
    """x * act(x) read by act between the two, fc and a ReLU, out and a ReLU: the submodules' flags and biases are
    changed between calls of fuse."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(813)
        self.act = nn.Hardtanh(0.0, 0.5)
        self.fc = nn.Linear(4, 4)
        self.out = nn.Linear(4, 3, bias=False)

    def forward(self, x: torch.Tensor) -> tuple:
        s = torch.sigmoid(x)
        k = self.act(s)  # writes s only while act.inplace is True
        h = x * s
        return torch.relu(self.out(F.relu(self.fc(h)))), k


@probe(category="mixed", weight=2, hints=["state"])
def submodules_changed_in_structure_between_calls(solution: Any) -> dict[str, Any]:
    """fuse called on one module three times, its submodules changed in structure between the calls (a Linear's bias
    removed, another's added, an activation's inplace flag flipped): each call works from the module as it is then."""
    module = _Reshaped()
    x = randn(814, 2, 4)
    observed: dict[str, Any] = {}

    def step(name: str) -> None:
        try:
            observed[name] = run_pass(solution, module, x)
        except Exception as exc:  # noqa: BLE001
            observed[name] = f"raised {type(exc).__name__}"

    step("1 as built")
    module.fc.bias = None
    module.out.bias = nn.Parameter(randn(815, 3))
    module.act.inplace = True
    step("2 fc's bias removed, out's added, act in place")
    module.fc.bias = nn.Parameter(randn(816, 4))
    module.out.bias = None
    module.act.inplace = False
    step("3 back")
    return observed


class SiluOfASigmoid(nn.Module):
    """Red team round 8: t * sigmoid(t) where t is itself a sigmoid's result: both operands are sigmoids, and only one
    pairing is a SiLU."""

    def __init__(self) -> None:
        super().__init__()
        self.sig = nn.Sigmoid()

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple:
        t = torch.sigmoid(y)
        a = t * torch.sigmoid(t)
        u = x.sigmoid()
        b = torch.mul(u, u.sigmoid())
        v = self.sig(y)
        c = v.mul(self.sig(v))
        w = torch.sigmoid(x + 1.0)
        d = torch.mul(w, other=torch.sigmoid(w))
        q = torch.sigmoid(x)
        e = torch.sigmoid(q) * q
        return a, b, c, d, e


@probe(category="silu", hints=["silu-forms", "same-operand"])
def silu_of_a_sigmoid(solution: Any) -> dict[str, Any]:
    """t * sigmoid(t) where t is itself a sigmoid's result, in every product spelling and both orders: each is a SiLU
    of t (try both pairings of the operands)."""
    return run_pass(solution, SiluOfASigmoid(), randn(817, 3, 4), randn(818, 3, 4))


# Red team round 8, second looks: each class above with other data, so that no mistake of it rests on one probe.


class PacketsReadingTheSigmoidElsewhere(nn.Module):
    """torch.ops.aten.min / max packets given the sigmoid's result second by position, beside products in the other
    spellings, and a packet given it as out= where an overload does write it (a control)."""

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple:
        z = y.exp()
        s = x.sigmoid()
        lo = torch.ops.aten.min(z, s)  # aten::min.other: reads s
        a = s.mul(x)
        t = torch.sigmoid(y)
        hi = torch.ops.aten.max(t.neg(), t)  # aten::max.other: reads t
        b = y * t
        w = x.sigmoid()
        torch.ops.aten.minimum(z, y, out=w)  # aten::minimum.out: writes w
        c = torch.mul(w, x)
        return a, b, c, lo, hi


@probe(category="silu", hints=["inplace"])
def packets_reading_the_sigmoid_in_other_spellings(solution: Any) -> dict[str, Any]:
    """Overload packets given the sigmoid's result as a second positional argument that only an overload's keyword-only
    argument could write (so none does), beside a packet that does write it: only the last product stays."""
    return run_pass(solution, PacketsReadingTheSigmoidElsewhere(), randn(819, 3, 4), randn(820, 3, 4))


class NestedSubmodulesNamedLikeInplaceCalls(nn.Module):
    """Submodules in containers whose last name ends in _ (targets "blocks.norm_", "head_") read the sigmoid's result
    between it and the product."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(821)
        self.blocks = nn.ModuleDict({"norm_": nn.LayerNorm(4), "gelu_": nn.GELU(), "keep_": nn.Identity()})
        self.head_ = nn.Linear(4, 2)

    def forward(self, x: torch.Tensor) -> tuple:
        s = torch.sigmoid(x)
        n = self.blocks["norm_"](s)
        g = self.blocks.gelu_(input=s)
        k = self.blocks["keep_"](s)
        h = self.head_(s)
        a = s * x
        return a, n, g, k, F.relu(h)


@probe(category="silu", hints=["inplace"])
def nested_submodules_named_like_inplace_calls(solution: Any) -> dict[str, Any]:
    """Submodules inside containers, and a Linear, whose names end in an underscore read the sigmoid's result between it
    and the product: none writes it, so the product is a SiLU (and the Linear's ReLU fuses)."""
    return run_pass(solution, NestedSubmodulesNamedLikeInplaceCalls(), randn(822, 3, 4))


class SigmoidWrittenLaterInOtherOutTuples(nn.Module):
    """The sigmoid's result as the second tensor of other out= tuples: torch.linalg.qr's R, torch.aminmax's max over
    dim 1 (a list)."""

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple:
        s = torch.sigmoid(x)
        q = torch.empty(x.shape)
        torch.linalg.qr(y, out=(q, s))  # writes s (R)
        a = torch.mul(s, x)
        m = x.sum(1)
        t = m.sigmoid()
        lo = torch.empty(m.shape)
        torch.aminmax(y, dim=1, out=[lo, t])  # writes t
        b = m * t
        return a, b, q, lo


@probe(category="silu", hints=["inplace"])
def sigmoid_written_later_in_other_out_tuples(solution: Any) -> dict[str, Any]:
    """The sigmoid's result given as the second tensor of an out= tuple or list of other functions before the product:
    no SiLU."""
    return run_pass(solution, SigmoidWrittenLaterInOtherOutTuples(), randn(823, 4, 4), randn(824, 4, 4))


class _Flipped(nn.Module):
    """A Linear + ReLU inside a Sequential and an activation submodule reading the sigmoid's result: their bias and
    inplace flag are changed between calls of fuse."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(825)
        self.block = nn.Sequential(nn.Linear(4, 4, bias=False), nn.ReLU())
        self.act = nn.ReLU()

    def forward(self, x: torch.Tensor) -> tuple:
        s = x.sigmoid()
        k = self.act(s)
        h = torch.mul(x, s)
        return self.block(h), k


@probe(category="mixed", weight=2, hints=["state"])
def submodule_bias_and_flag_changed_between_calls(solution: Any) -> dict[str, Any]:
    """fuse called on one module three times: a bias given to a Linear inside a Sequential and an activation made
    in-place, then both undone: each call works from the module as it is then."""
    module = _Flipped()
    x = randn(826, 3, 4)
    observed: dict[str, Any] = {}

    def step(name: str) -> None:
        try:
            observed[name] = run_pass(solution, module, x)
        except Exception as exc:  # noqa: BLE001
            observed[name] = f"raised {type(exc).__name__}"

    step("1 as built")
    module.block[0].bias = nn.Parameter(randn(827, 4))
    module.act.inplace = True
    step("2 a bias added, act in place")
    module.block[0].bias = None
    module.act.inplace = False
    step("3 back")
    return observed
