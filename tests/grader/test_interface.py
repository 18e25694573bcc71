"""The starter's parameters, kept or refused before the code runs (grader/interface.py).

One half compares definitions with a starter's (what a caller of the
starter's signature could no longer do is refused; what it still can is not);
the other grades through the worker's path (the refusal is a
``rule_violation`` that never starts a sandbox, with a message that quotes
both parameter lists) and holds the catalogue to it (every reference and
accepted solution keeps its starter's parameters).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from grader.execute import Run, execute_runs, refusals
from grader.feedback import candidate_view
from grader.grade import grade_submission
from grader.interface import interface_violations, starter_interface
from grader.package_load import load_package_dir, package_from_files, read_package_files
from grader.verdicts import Verdict
from tests.fake_backend import FakeBackend

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "packages" / "demo" / "add-numbers"

STARTER = '''
def layer_norm(x, weight, bias, eps=1e-5):
    """The statement's function."""
    raise NotImplementedError


def report(model, *, strict=False):
    raise NotImplementedError


def power(base, exp, /):
    raise NotImplementedError


class Engine:
    def __init__(self, seed, max_delta=0.1):
        pass

    def execute(self, roots, retain_graph=False):
        raise NotImplementedError


class Scaler:
    def forward(self, x, scale=1.0):
        raise NotImplementedError

    def __call__(self, images):
        raise NotImplementedError
'''


def problems(source: str, starter: str = STARTER) -> list[str]:
    return [str(v) for v in interface_violations(starter_interface(textwrap.dedent(starter)), textwrap.dedent(source))]


@pytest.mark.parametrize(
    "source",
    [
        "def layer_norm(x, weight, bias, eps=1e-5):\n    return x\n",
        "def layer_norm(x, weight, bias, eps=1e-3, *, chunk=None):\n    return x\n",  # another default, one more optional
        "def layer_norm(*args, **kwargs):\n    return args\n",  # a wrapper that takes anything
        "def report(model, strict=False):\n    return {}\n",  # keyword-only made positional-or-keyword
        "def power(a, b, /):\n    return a ** b\n",  # positional-only names are the candidate's own
        "def power(a, b):\n    return a ** b\n",
        "class Engine:\n    def __init__(me, seed, max_delta=0.1):\n        pass\n\n    def execute(me, roots, retain_graph=False):\n        pass\n",
        "class Scaler:\n    def forward(self, input, factor=2.0):\n        pass\n\n    def __call__(self, batch):\n        pass\n",
        "layer_norm = lambda x, w, b, e=1e-5: x\n",  # bound another way: the probes judge what it does
        "from torch.nn.functional import layer_norm\n",
        "def layer_norm(x, w, b, e):\n    return x\n\n\ndef layer_norm(x, weight, bias, eps=1e-5):\n    return x\n",  # the last one binds
        "def helper(a, b):\n    return a\n",
        "def layer_norm(x, weight, bias, eps=1e-5:\n",  # a syntax error: the compile step reports it
    ],
    ids=[
        "same",
        "other-default-and-optional-extra",
        "varargs-wrapper",
        "keyword-only-relaxed",
        "positional-only-renamed",
        "positional-only-relaxed",
        "self-renamed",
        "called-by-position-renamed",
        "lambda",
        "import",
        "redefined",
        "unrelated",
        "syntax-error",
    ],
)
def test_a_definition_every_caller_of_the_starter_can_still_call_is_kept(source: str) -> None:
    assert problems(source) == []


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        ("def layer_norm(x, weight, bias, epsilon=1e-5):\n    return x\n", "`epsilon` stands where the starter has `eps`"),
        ("def layer_norm(input, gamma, beta, eps=1e-5):\n    return x\n", "`gamma` stands where the starter has `weight`"),
        ("def layer_norm(x, weight, bias, *, eps=1e-5):\n    return x\n", "`eps` cannot be passed by position"),
        ("def layer_norm(x, weight, bias, eps=1e-5, /):\n    return x\n", "`x` cannot be passed by name"),
        ("def layer_norm(x, weight, bias, eps):\n    return x\n", "`eps` has no default, so a call that leaves it out fails"),
        ("def layer_norm(x, weight, bias):\n    return x\n", "it takes no `eps`"),
        ("def layer_norm(x, weight, bias, chunk, eps=1e-5):\n    return x\n", "`chunk` stands where the starter has `eps`"),
        ("def report(model, *, strictly=False):\n    return {}\n", "it takes no keyword `strict`"),
        ("def report(model, *, strict):\n    return {}\n", "`strict` has no default"),
        ("def report(model, *, strict=False, level):\n    return {}\n", "it adds `level` without a default, which no caller passes"),
        ("def power(a):\n    return a\n", "it takes no `exp`"),
        ("class Engine:\n    def execute(self, root_nodes, retain_graph=False):\n        pass\n", "`root_nodes` stands where"),
        ("class Engine:\n    def __init__(self, seed, *, max_delta=0.1):\n        pass\n", "`max_delta` cannot be passed by position"),
        ("class Scaler:\n    def forward(self, input, factor):\n        pass\n", "`factor` has no default"),
    ],
    ids=[
        "renamed",
        "renamed-several",
        "made-keyword-only",
        "made-positional-only",
        "default-dropped",
        "parameter-dropped",
        "required-inserted",
        "keyword-renamed",
        "keyword-default-dropped",
        "required-added",
        "positional-dropped",
        "method-renamed",
        "constructor-keyword-only",
        "called-by-position-default-dropped",
    ],
)
def test_a_definition_a_caller_of_the_starter_could_not_call_is_refused_with_what_to_change(source: str, problem: str) -> None:
    (found,) = problems(source)
    assert problem in found
    assert "the starter's is `" in found  # both parameter lists are quoted: the candidate sees what to write


@pytest.mark.parametrize(
    ("depth", "judged"), [(1000, True), (5000, False), (100_000, False)], ids=["prints-too-deep", "parses-too-deep", "exhausts-memory"]
)
def test_hostile_nesting_never_crashes_the_check(depth: int, judged: bool) -> None:
    """A default nested too deep to print, to parse, or to fit in memory: the worker reading it must not crash. One
    that parses is still judged (its default elided in the message); one that does not is the sandbox's to report."""
    found = problems(f"def layer_norm(x, weight, bias, epsilon={'-' * depth}1):\n    return x\n")
    if judged:
        (message,) = found
        assert message.startswith("line 1: `layer_norm(x, weight, bias, epsilon, ...)`") and "`epsilon` stands where" in message
    else:
        assert found == []


def test_the_message_names_the_line_and_quotes_both_parameter_lists() -> None:
    (found,) = problems("import math\n\n\ndef layer_norm(x, weight, bias, epsilon=1e-5):\n    return x\n")
    assert found == (
        "line 4: `layer_norm(x, weight, bias, epsilon=1e-05)`: the starter's is `layer_norm(x, weight, bias, eps=1e-05)`: "
        "`epsilon` stands where the starter has `eps`, which callers may pass by name"
    )


FRAMEWORK_STARTER = """
import torch


class LogSumExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, dim, keepdim):
        raise NotImplementedError

    @staticmethod
    def backward(ctx, grad):
        raise NotImplementedError


class Counter:
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError


@torch.library.custom_op("lab::op", mutates_args=())
def op(x: torch.Tensor, scale: float) -> torch.Tensor:
    raise NotImplementedError


@op.register_fake
def op_fake(x, scale):
    raise NotImplementedError


def _check(x):
    pass


def setup_context(ctx, inputs, output):
    raise NotImplementedError


def backward(ctx, grad_out):
    raise NotImplementedError


torch.library.register_autograd("lab::op", backward, setup_context=setup_context)
"""


def test_what_the_framework_calls_by_position_may_be_written_in_its_other_valid_forms() -> None:
    """An autograd Function's methods (the new style's forward has no ctx), dunder hooks, private helpers, and
    functions the starter registers as callbacks: torch calls them by position, so their names are free."""
    interface = starter_interface(textwrap.dedent(FRAMEWORK_STARTER))
    assert sorted(interface) == ["op"]
    rewritten = """
        import torch


        class LogSumExp(torch.autograd.Function):
            @staticmethod
            def forward(x, dim, keepdim):
                return x

            @staticmethod
            def setup_context(ctx, inputs, output):
                pass

            @staticmethod
            def backward(ctx, g):
                return g, None, None


        class Counter:
            def __torch_dispatch__(self, fn, types, a=(), kw=None):
                pass


        def _check(tensor, strict):
            pass


        def setup_context(context, inputs, out):
            pass


        def backward(context, g):
            return g
        """
    assert problems(rewritten, FRAMEWORK_STARTER) == []
    assert problems("def op(x, factor):\n    return x\n", FRAMEWORK_STARTER)  # the operator itself is the API


# ---------------------------------------------------------------- through the worker


def fixture_package():
    return package_from_files(read_package_files(FIXTURE), origin=str(FIXTURE))


RENAMED = "import numpy as np\n\n\ndef add(x, y):\n    return np.add(x, y)\n"
HONEST = "import numpy as np\n\n\ndef add(a, b):\n    return np.add(a, b)\n"


def test_a_changed_interface_never_starts_a_sandbox_and_gets_rule_violation_quoting_both_lists(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path))
    package = fixture_package()
    fake = FakeBackend({"floats": 0, "keeps_float16": 0, "integers": 0})
    executions = execute_runs(package, [Run(RENAMED.encode(), False), Run(HONEST.encode(), False)], fake)
    assert [bool(e.rule_violations) for e in executions] == [True, False]
    assert [job["sources"]["solution"] for job in fake.jobs] == [HONEST]
    result = grade_submission(package, RENAMED, public=True, backend=fake)
    assert (result.verdict, result.score) == (Verdict.RULE_VIOLATION, 0.0)
    message = candidate_view(result.to_dict())["message"]
    assert message.startswith("Your code changes the parameters the starter gives, so it was not run:\n- line 4: `add(x, y)`: ")
    assert "the starter's is `add(a, b)`" in message and "keep each parameter's name, position and default" in message


def test_the_platform_s_own_test_codes_are_not_refused_for_their_parameters() -> None:
    """Run(rules=False) (the cheat battery, the leaker) is run as written: they test the probes, not the interface."""
    package = fixture_package()
    fake = FakeBackend({"floats": 0, "keeps_float16": 0, "integers": 0})
    (execution,) = execute_runs(package, [Run(RENAMED.encode(), False, rules=False)], fake)
    assert not execution.rule_violations and [job["sources"]["solution"] for job in fake.jobs] == [RENAMED]


# ---------------------------------------------------------------- the catalogue

PACKAGES = sorted(p.parent for p in (ROOT / "challenges").glob("*/*/challenge.toml"))


@pytest.mark.parametrize("folder", PACKAGES, ids=lambda p: p.name)
def test_every_reference_and_accepted_solution_keeps_its_starter_s_parameters(folder: Path) -> None:
    package = load_package_dir(folder)
    assert refusals(package, package.reference_code) == []
    assert refusals(package, package.starter_code) == []
    for expected in package.solutions:
        if expected.verdict == Verdict.ACCEPTED.value:
            assert refusals(package, package.solution_code(expected.name)) == [], expected.name
