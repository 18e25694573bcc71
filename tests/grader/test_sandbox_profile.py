"""grader.sandbox_profile: torch packages that never reach TorchDynamo run in the lighter torch-eager profile."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from grader.package import RUNTIMES
from grader.package_load import load_package_dir
from grader.sandbox_profile import reaches_dynamo, sandbox_profile
from tests.helpers import ADD_NUMBERS, FIXTURES

pytestmark = pytest.mark.sandbox  # imports torch in subprocesses

TORCH_LINEAR = FIXTURES / "demo" / "torch-linear"

# Code that imports TorchDynamo when it runs (measured in the test below),
# and code that does not.
REACHES = {
    "custom_op": """
        import torch
        @torch.library.custom_op("t::double", mutates_args=())
        def double(x: torch.Tensor) -> torch.Tensor:
            return x * 2
        double(torch.ones(2))
        """,
    "dispatch_mode": """
        import torch
        from torch.utils._python_dispatch import TorchDispatchMode
        class Passthrough(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                return func(*args, **(kwargs or {}))
        with Passthrough():
            torch.ones(2) + 1
        """,
    "make_fx": """
        import torch
        from torch.fx.experimental.proxy_tensor import make_fx
        make_fx(lambda x: x * 2)(torch.ones(2))
        """,
    "func_grad": """
        import torch
        from torch import func
        func.grad(lambda x: (x * x).sum())(torch.ones(2))
        """,
}
EAGER = {
    "autograd_function": """
        import torch
        class Double(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2
            @staticmethod
            def backward(ctx, grad):
                return grad * 2
        x = torch.ones(2, requires_grad=True)
        Double.apply(x).sum().backward()
        torch.autograd.gradcheck(lambda t: t * 2, (torch.ones(2, dtype=torch.float64, requires_grad=True),))
        """,
    "fx_and_nn": """
        import torch
        import torch.fx
        import torch.nn.functional as F
        class M(torch.nn.Module):
            def forward(self, x):
                return F.softmax(x.to(torch.float16), dim=0)
        torch.fx.symbolic_trace(M())(torch.ones(3))
        print(torch.__version__)
        """,
}


@pytest.mark.parametrize(("name", "source"), [*REACHES.items(), *EAGER.items()])
def test_the_rule_agrees_with_what_torch_imports(name: str, source: str) -> None:
    # The rule is a reading of the source; this runs it and asks torch.
    code = textwrap.dedent(source) + "\nimport sys\nprint('torch._dynamo' in sys.modules)\n"
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    imported = ran.stdout.strip().splitlines()[-1] == "True"
    assert imported == (name in REACHES), ran.stdout
    assert reaches_dynamo(textwrap.dedent(source)) == imported


@pytest.mark.parametrize(
    "source",
    [
        "model = torch.compile(model)",
        "import torch._dynamo as dynamo",
        "from torch._subclasses.fake_tensor import FakeTensorMode",
        "from torch.library import opcheck",
        "lib = torch . library . Library('x', 'DEF')",
        "exported = torch.export.export(m, (x,))",
        "torch.onnx.export(m, (x,), path)",
        "from torch import compile as c",
        "from torch.fx import experimental",
        "import functorch",
    ],
)
def test_every_way_of_naming_those_apis_counts(source: str) -> None:
    assert reaches_dynamo(source)


@pytest.mark.parametrize("source", ["torch.nn.functional.relu(x)", "torch.__version__", "torch.fx.symbolic_trace(m)", "torch.ops.aten.add(x, y)"])
def test_plain_torch_does_not(source: str) -> None:
    assert not reaches_dynamo(source)


def _torch_linear(tmp_path: Path, **extra: str) -> Path:
    folder = tmp_path / "demo" / "torch-linear"
    shutil.copytree(TORCH_LINEAR, folder)
    for rel, text in extra.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    return folder


def test_a_torch_package_that_never_reaches_dynamo_runs_eager(tmp_path: Path) -> None:
    assert sandbox_profile(load_package_dir(_torch_linear(tmp_path))) == "torch-eager"


@pytest.mark.parametrize("rel", ["reference/solution.py", "starter/solution.py", "probes/hidden.py", "probes/public.py"])
def test_a_mention_in_any_file_of_the_package_keeps_dynamo(tmp_path: Path, rel: str) -> None:
    folder = _torch_linear(tmp_path)
    path = folder / rel
    path.write_text(path.read_text() + "\n\ndef _compiled(f):\n    return torch.compile(f)\n")
    assert sandbox_profile(load_package_dir(folder)) == "torch"


def test_shipped_solutions_do_not_count(tmp_path: Path) -> None:
    # solutions/ are other candidates' code: what a candidate may write decides nothing.
    folder = _torch_linear(tmp_path, **{"solutions/compiled.py": "import torch\nlinear = torch.compile(lambda x, w, b: x @ w.T + b)\n"})
    assert sandbox_profile(load_package_dir(folder)) == "torch-eager"


def test_inductor_keeps_dynamo(tmp_path: Path) -> None:
    folder = _torch_linear(tmp_path)
    toml = folder / "challenge.toml"
    toml.write_text(toml.read_text().replace('runtime = "torch"', 'runtime = "torch"\npreload = ["inductor"]'))
    assert sandbox_profile(load_package_dir(folder)) == "torch"


def test_other_runtimes_run_in_their_own_profile() -> None:
    assert sandbox_profile(load_package_dir(ADD_NUMBERS)) == "python"


def test_the_variant_is_not_a_runtime_a_package_can_name() -> None:
    assert "torch" in RUNTIMES and "torch-eager" not in RUNTIMES
