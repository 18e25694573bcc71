"""grader.cheats: the generic cheats that validation grades, built from the starter's interface."""

from __future__ import annotations

import ast
import shutil
import textwrap
from pathlib import Path

import pytest

from grader.cheats import CHEATS, cheat_source, cheat_sources
from grader.package_load import load_package_dir
from grader.validate import validate_package
from sandbox import get_backend
from tests.helpers import ADD_NUMBERS, add_numbers

CLASS_STARTER = textwrap.dedent(
    """
    import torch

    class LogSumExp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            raise NotImplementedError

    def helper(x):
        raise NotImplementedError

    LIMIT = 3
    _private = 1
    """
)


def run_cheat(source: str) -> dict[str, object]:
    namespace: dict[str, object] = {}
    exec(compile(source, "cheat.py", "exec"), namespace)  # our own generated code
    return namespace


def test_every_cheat_stands_in_for_every_public_function_and_class(tmp_path: Path) -> None:
    folder = tmp_path / "demo" / "add-numbers"
    shutil.copytree(ADD_NUMBERS, folder)
    (folder / "starter" / "solution.py").write_text(CLASS_STARTER)
    package = load_package_dir(folder)
    for cheat in CHEATS:
        source = cheat_source(package, cheat)
        assert source is not None and cheat.does in source
        ast.parse(source)
        names = run_cheat(source)
        assert {"LogSumExp", "helper", "LIMIT"} <= names.keys() and "_private" not in names
        # A class answers through its class attributes (LogSumExp.apply) and its instances' methods alike.
        via_class = names["LogSumExp"].apply(7, 8)  # type: ignore[attr-defined]
        via_instance = names["LogSumExp"](1).forward(7)  # type: ignore[operator]
        assert via_class == names["helper"](7, 8) and via_instance == names["helper"](7)  # type: ignore[operator]


def test_the_cheats_answer_as_named() -> None:
    import numpy as np

    answers = {cheat.name: run_cheat(cheat_source(add_numbers(), cheat) or "")["add"] for cheat in CHEATS}
    a = np.arange(3.0)
    assert answers["returns-none"](a, a) is None  # type: ignore[operator]
    assert answers["returns-first-argument"](a, a + 1) is a  # type: ignore[operator]
    zeros = answers["returns-zeros"](a.astype(np.float16), a)  # type: ignore[operator]
    assert zeros.dtype == np.float16 and zeros.shape == (3,) and not zeros.any()
    assert answers["returns-zeros"]("not an array") is None  # type: ignore[operator]


def test_a_starter_with_no_function_or_class_gets_no_cheat(tmp_path: Path) -> None:
    folder = tmp_path / "demo" / "add-numbers"
    shutil.copytree(ADD_NUMBERS, folder)
    (folder / "starter" / "solution.py").write_text("import torch\n\ntorch.library.define('demo::op', '(Tensor x) -> Tensor')\n")
    assert cheat_sources(load_package_dir(folder)) == []


@pytest.mark.sandbox
def test_validation_fails_a_package_whose_probes_accept_a_cheat_and_names_it(tmp_path: Path) -> None:
    folder = tmp_path / "demo" / "add-numbers"
    shutil.copytree(ADD_NUMBERS, folder)
    shutil.rmtree(folder / "solutions")
    # A probe that observes only the shape of the sum: the input's own shape, or zeros of it, pass.
    (folder / "probes" / "hidden.py").write_text(
        "import numpy as np\nfrom probekit import probe\n\n\n@probe(category='values')\ndef shape_only(solution):\n"
        "    return list(np.shape(solution.add(np.ones(3), np.ones(3))))\n"
    )
    report = validate_package(folder, get_backend("bwrap"))
    failures = [line for line in report.lines if line.startswith("FAIL")]
    assert [line.split(" (")[0] for line in failures] == ["FAIL cheat returns-first-argument", "FAIL cheat returns-zeros"], report.lines
    assert all("they must reject code that does no work" in line for line in failures)
    assert any(line.startswith("  ok cheat returns-none: ") for line in report.lines)
