"""grader.source_rules: the statement's rules read off the source, in the worker, before the code runs.

Two halves: what ``rule_violations`` refuses and lets through (a rule that
refused correct code would be worse than none), and that a refused code never
reaches a sandbox and gets the ``rule_violation`` verdict naming its lines,
whichever way it is graded. Last, the catalogue: every package with rules
keeps its reference, starter and shipped solutions within them, and the ways
of switching off an in-process watch that a reviewer would try first are
refused in each sealed package.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from grader.execute import Run, execute_runs, refusals
from grader.feedback import TEMPLATES, candidate_view
from grader.grade import grade_submission
from grader.package_load import load_package_dir, package_from_files, read_package_files
from grader.source_rules import MAX_VIOLATIONS, SourceRules, describe, importable, rule_violations
from grader.verdicts import Verdict
from tests.fake_backend import FakeBackend

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "packages" / "demo" / "add-numbers"
SOFTMAX = SourceRules(forbidden=("*softmax*", "float64", "double"), why="yours to write", sealed=False)
SEALED = SourceRules(sealed=True)


def found(rules: SourceRules, source: str) -> list[str]:
    return [f"{v.line}:{v.what}" for v in rule_violations(rules, textwrap.dedent(source))]


# ---------------------------------------------------------------- forbidden names


@pytest.mark.parametrize(
    "source, expected",
    [
        ("import torch\ny = torch.softmax(x, -1)\n", ["2:torch.softmax"]),
        ("y = x.log_softmax(-1)\n", ["1:x.log_softmax"]),
        ("import torch\ny = torch.ops.aten._softmax(x, -1, False)\n", ["2:torch.ops.aten._softmax"]),
        ("from torch.nn.functional import softmax as sm\n", ["1:from torch.nn.functional import softmax"]),
        ("import torch.nn.functional\nF = torch.nn.functional.Softmax\n", ["2:torch.nn.functional.Softmax"]),
        ("y = getattr(F, 'softmax')(x)\n", ["1:getattr(F, ...)"]),
        ("y = x.to(dtype='float64')\n", ["1:'float64'"]),
        ("y = x.double()\n", ["1:x.double"]),
    ],
)
def test_a_forbidden_name_is_refused_wherever_code_can_reach_it(source: str, expected: list[str]) -> None:
    assert found(SOFTMAX, source) == expected


def test_the_message_names_each_line_and_construct_and_each_rules_reason_once() -> None:
    source = "import torch\nimport inspect\n\ny = torch.softmax(x, 1)\nz = torch.log_softmax(x, 1)\n"
    rules = SourceRules(forbidden=("*softmax*",), why="softmax is yours to write", sealed=True)
    assert describe(rule_violations(rules, source), rules) == (
        "Your code breaks this challenge's rules, so it was not run:\n"
        "- line 2: import inspect: not an import this challenge allows\n"
        "- line 4: torch.softmax: softmax is forbidden\n"
        "- line 5: torch.log_softmax: log_softmax is forbidden\n"
        "Why: softmax is yours to write.\n"
        "The probes watch this challenge's rules from inside your code's process, so code that could reach past them is refused: "
        f"imports other than {importable(rules)}; private attributes other than your own (self._x); "
        "eval, exec, open and attribute names computed at run time; introspection of frames, closures and modules."
    )
    assert "hashlib, heapq, itertools, json, math" in importable(rules)


@pytest.mark.parametrize("module", ["hashlib", "re", "json", "struct", "difflib", "fractions", "decimal", "array", "textwrap", "zlib"])
def test_a_sealed_package_admits_harmless_standard_library_modules(module: str) -> None:
    """A correct solution that hashes its dumps or parses text must not be refused (issue 27: hashlib got rule_violation, 0)."""
    rules = SourceRules(sealed=True)
    assert rule_violations(rules, f"import {module}\n") == []


@pytest.mark.parametrize("module", ["os", "sys", "io", "pathlib", "subprocess", "threading", "concurrent.futures", "inspect", "gc",
                                    "importlib", "ctypes", "pickle", "marshal", "types", "weakref", "string"])  # fmt: skip
def test_a_sealed_package_refuses_modules_that_reach_past_the_watch(module: str) -> None:
    """Processes, files, threads (outside the per-thread watch), frames, import machinery, and string's get_field."""
    assert [v.rule for v in rule_violations(SourceRules(sealed=True), f"import {module}\n")] == ["not an import this challenge allows"]


@pytest.mark.parametrize(
    "source",
    [
        # The candidate's own functions and attributes, which the statement asks them to name so.
        "def softmax(x, dim=-1):\n    return log_softmax(x, dim).exp()\n",
        "class M:\n    def __init__(self):\n        self.softmax_scale = 2.0\n        self.double = False\n",
        # Prose: error messages, docstrings, and names that only contain a forbidden word.
        "def f(x):\n    '''A softmax in float32, not float64.'''\n    raise ValueError('softmax needs a float64-free input')\n",
        "doubled = x * 2\ny = x.float()\n",
    ],
)
def test_the_codes_own_names_and_its_prose_are_not_refused(source: str) -> None:
    assert found(SOFTMAX, source) == []


def test_a_package_without_rules_refuses_nothing() -> None:
    assert found(SourceRules(), "import os, inspect\neval(open('x').read())\ntorch._C\n") == []


def test_code_that_does_not_parse_is_left_to_the_sandbox_to_report() -> None:
    assert found(SEALED, "def f(:\n    import inspect\n") == []


# ---------------------------------------------------------------- sealed


@pytest.mark.parametrize(
    "source, expected",
    [
        ("import inspect\n", ["1:import inspect"]),
        ("import os.path\n", ["1:import os.path"]),
        ("from importlib import import_module\n", ["1:from importlib import ..."]),
        ("import torch\nwith torch._C.DisableTorchFunction():\n    pass\n", ["2:torch._C"]),
        ("import torch.overrides\n", ["1:import torch.overrides"]),
        ("from torch.overrides import _pop_mode\n", ["1:from torch.overrides import ...", "1:from torch.overrides import _pop_mode"]),
        ("f = run.__closure__[0].cell_contents\n", ["1:run.__closure__"]),
        ("import numpy as np\nm = np.sys.modules\n", ["2:np.sys", "2:np.sys.modules"]),
        ("n = counter._calls\n", ["1:counter._calls"]),
        ("exec('x = 1')\n", ["1:exec"]),
        ("data = open('/proc/self/mem', 'rb')\n", ["1:open"]),
        ("x = getattr(torch, '_' + 'C')\n", ["1:getattr(torch, ...)"]),
        ("g = getattr\nx = g(torch, 'softmax')\n", ["1:getattr"]),
        ("x = getattr(torch, '_C')\n", ["1:getattr(torch, ...)"]),
        ("from operator import attrgetter\n", ["1:from operator import attrgetter"]),
        ("from probe_common import RuleWatch\n", ["1:from probe_common import ..."]),
        ("from .solution import f\n", ["1:from .solution import ..."]),
        ("from torch import *\n", ["1:from torch import *"]),
        ("def f():\n    try:\n        1 / 0\n    except ZeroDivisionError as e:\n        return e.__traceback__.tb_frame.f_back\n",
         ["5:e.__traceback__", "5:e.__traceback__.tb_frame", "5:e.__traceback__.tb_frame.f_back"]),
    ],
)  # fmt: skip
def test_a_sealed_package_refuses_what_could_reach_past_the_probes(source: str, expected: list[str]) -> None:
    assert found(SEALED, source) == expected


def test_a_sealed_package_lets_ordinary_numeric_code_through() -> None:
    source = """
        from __future__ import annotations

        import itertools
        import math
        from collections.abc import Callable, Sequence
        from dataclasses import dataclass

        import numpy as np
        import torch
        import torch.nn.functional as F


        @dataclass
        class Lanes:
            _sums: list[float]

            def add(self, x: torch.Tensor) -> None:
                self._sums.append(float(torch.finfo(x.dtype).eps))
                torch._check(x.dim() >= 1, lambda: "x needs a dimension")


        def search(space: Sequence[int], cost: Callable[[int], float], budget: int) -> int:
            best = min(itertools.islice(space, budget), key=cost)
            return int(np.clip(best, 0, math.inf)) if hasattr(cost, "__call__") else best


        def relu(x: torch.Tensor) -> torch.Tensor:
            return F.relu(x.float())
        """
    assert found(SEALED, source) == []


def test_allowed_modules_open_a_private_module_to_a_package() -> None:
    rules = SourceRules(sealed=True, allowed_modules=("torch.utils._python_dispatch",))
    assert found(rules, "from torch.utils._python_dispatch import TorchDispatchMode\n") == []
    assert found(SEALED, "from torch.utils._python_dispatch import TorchDispatchMode\n") == ["1:from torch.utils._python_dispatch import ..."]


def test_at_most_max_violations_in_line_order() -> None:
    source = "".join(f"import inspect as i{n}\n" for n in range(MAX_VIOLATIONS + 5))
    lines = [v.line for v in rule_violations(SEALED, source)]
    assert lines == list(range(1, MAX_VIOLATIONS + 1))


# ---------------------------------------------------------------- refused before any sandbox


def fixture_with_rules(rules_toml: str):
    files = read_package_files(FIXTURE)
    toml = files["challenge.toml"].decode()
    files["challenge.toml"] = toml.replace("[[hints]]", rules_toml + "\n[[hints]]", 1).encode()
    return package_from_files(files, origin=str(FIXTURE))


RULES = '[rules]\nforbidden = ["float64"]\nwhy = "keep the dtype"\nsealed = true\n'
HONEST = "import numpy as np\n\n\ndef add(a, b):\n    return np.add(a, b)\n"
WIDENS = "import numpy as np\n\n\ndef add(a, b):\n    return np.add(a, b).astype(np.float64)\n"
PEEKS = "import inspect\nimport numpy as np\n\n\ndef add(a, b):\n    return np.add(a, b)\n"


def test_a_refused_code_never_starts_a_sandbox_and_the_series_keeps_its_order() -> None:
    package = fixture_with_rules(RULES)
    fake = FakeBackend({"floats": 0, "keeps_float16": 0, "integers": 0})
    executions = execute_runs(package, [Run(WIDENS.encode(), False), Run(HONEST.encode(), False), Run(PEEKS.encode(), False)], fake)
    assert [bool(e.rule_violations) for e in executions] == [True, False, True]
    assert [job["sources"]["solution"] for job in fake.jobs] == [HONEST]
    assert [str(v) for v in executions[2].rule_violations] == ["line 1: import inspect: not an import this challenge allows"]
    fake.starts = 0
    execute_runs(package, [Run(WIDENS.encode(), True)], fake)
    assert fake.starts == 0


def test_a_refused_submission_gets_rule_violation_naming_its_lines_on_hidden_probes_too(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("GRADER_CACHE_DIR", str(tmp_path))
    package = fixture_with_rules(RULES)
    fake = FakeBackend({"floats": 0, "keeps_float16": 0, "integers": 0})
    result = grade_submission(package, WIDENS, public=False, backend=fake)
    assert (result.verdict, result.score) == (Verdict.RULE_VIOLATION, 0.0)
    assert {p.status for p in result.probes} == {"rule_violation"}
    view = candidate_view(result.to_dict())
    # The candidate's own source: shown in full, as a syntax error is.
    assert view["message"] == (
        "Your code breaks this challenge's rules, so it was not run:\n- line 5: np.float64: float64 is forbidden\nWhy: keep the dtype."
    )
    assert {p["message"] for p in view["probes"]} == {TEMPLATES["not_run_rule"]}
    assert fake.runs_of(WIDENS) == []


def test_a_reference_that_breaks_its_own_rules_makes_the_package_fail() -> None:
    from grader.errors import PackageError
    from grader.grade import expected_observations

    package = fixture_with_rules('[rules]\nforbidden = ["add"]\n')
    with pytest.raises(PackageError, match=r"the reference is refused before it runs \(.*\): line 5: np.add: add is forbidden"):
        expected_observations(package, False, FakeBackend({}))


# ---------------------------------------------------------------- the catalogue


PACKAGES = sorted(p.parent for p in (ROOT / "challenges").glob("*/*/challenge.toml"))
WITH_RULES = [p for p in PACKAGES if load_package_dir(p).rules.active]


def test_the_packages_with_in_process_rules_have_source_rules() -> None:
    names = {p.name for p in WITH_RULES}
    assert {
        "fp16-stable-softmax", "compensated-summation", "layernorm-cancellation", "dispatch-mode-op-counter",
        "find-the-broken-pass", "autotune-tiled-matmul",
    } <= names  # fmt: skip


@pytest.mark.parametrize("folder", WITH_RULES, ids=lambda p: p.name)
def test_a_packages_own_code_keeps_its_rules_but_the_solutions_the_rules_refuse(folder: Path) -> None:
    package = load_package_dir(folder)
    assert rule_violations(package.rules, package.reference_code) == []
    assert rule_violations(package.rules, package.starter_code) == []
    for expected in package.solutions:
        source = package.solution_code(expected.name)
        refused = bool(refusals(package, source))  # its rules, and the starter's parameters (tests/grader/test_interface.py)
        assert refused == (expected.verdict == Verdict.RULE_VIOLATION.value), expected.name


# A reviewer's first tries at switching off a watch or a counter from inside the process.
SWITCH_OFFS = {
    "disable the torch-function modes": "import torch\n\ndef f(x):\n    with torch._C.DisableTorchFunction():\n        return x\n",
    "pop the probe's mode": "from torch.overrides import _pop_mode\n",
    "patch the probe module": "import probe_common\nprobe_common.RuleWatch.__torch_function__ = None\n",
    "find it in sys.modules": "import sys\nsys.modules['probe_common'].BANNED_PARTS = ()\n",
    "reach it through numpy": "import numpy as np\nnp.sys.modules['probe_common'].BANNED_PARTS = ()\n",
    "walk up to the probe's frame": "import inspect\n\ndef f(x):\n    return inspect.currentframe().f_back.f_locals\n",
    "read a counter in a closure": "def f(run):\n    return run.__closure__[0].cell_contents\n",
    "import the module by a computed name": "import importlib\nm = importlib.import_module('pro' + 'be_common')\n",
    "spell the attribute at run time": "import torch\n\ndef f(x):\n    return getattr(torch, '_' + 'C')\n",
    "find objects through the collector": "import gc\nwatch = [o for o in gc.get_objects() if type(o).__name__ == 'RuleWatch']\n",
    "run text as code": "exec(bytes([105, 109, 112]).decode())\n",
}


@pytest.mark.parametrize("folder", [p for p in WITH_RULES if load_package_dir(p).rules.sealed], ids=lambda p: p.name)
@pytest.mark.parametrize("how", sorted(SWITCH_OFFS))
def test_a_sealed_package_refuses_each_way_of_switching_off_a_watch(folder: Path, how: str) -> None:
    package = load_package_dir(folder)
    assert rule_violations(package.rules, SWITCH_OFFS[how]), how
