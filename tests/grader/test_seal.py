"""grader.seal: the leaker built from a starter, and the search for a leak in a candidate's view (no sandbox).

The leaker itself is run through real sandboxes in tests/sandbox/test_seal.py
and, for every catalogue package, by validation (tests/challenges).
"""

from __future__ import annotations

import ast

import numpy as np

from grader.execute import Execution, ProbeRun
from grader.feedback import candidate_view
from grader.grade import evaluate
from grader.package_load import package_from_files, read_package_files
from grader.seal import check_seal, leaker_source, public_names, seal_problems
from sandbox.runner.codec import TaggedArray
from tests.helpers import ADD_NUMBERS, add_numbers

PACKAGE = add_numbers()
HIDDEN = PACKAGE.probe_source(False).decode()
EXPECTED = {
    "floats": TaggedArray(np.ones((3, 5)), "float64", "numpy"),
    "keeps_float16": TaggedArray(np.full(3, 2, dtype=np.float16), "float16", "numpy"),
    "integers": [5, 7, 9],
}


def test_public_names_are_the_starters_top_level_definitions_in_order():
    starter = (
        "import torch\nfrom x import y\n\nLIMIT = 3\n_private = 1\n\n"
        "def execute(graph):\n    pass\n\nclass Engine:\n    def run(self):\n        pass\n\nasync def later():\n    pass\n\n"
        "table: dict = {}\n"
    )
    assert public_names(starter) == [("LIMIT", "value"), ("execute", "function"), ("Engine", "class"), ("later", "function"), ("table", "value")]


def test_the_leaker_defines_every_public_name_and_compiles():
    source = leaker_source(PACKAGE)
    tree = ast.parse(source)
    defined = {t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets if isinstance(t, ast.Name)}
    defined |= {node.name for node in tree.body if isinstance(node, ast.ClassDef | ast.FunctionDef)}
    assert "add" in defined
    compile(source, "solution.py", "exec")


def test_a_starter_without_functions_gets_a_leaker_that_raises_on_import():
    files = read_package_files(ADD_NUMBERS)
    files["starter/solution.py"] = b'SOURCE = "int add(int a, int b);"\n'
    source = leaker_source(package_from_files(files))
    assert source.rstrip().endswith("_leak()")
    assert "_leak()" not in leaker_source(PACKAGE).rstrip().splitlines()[-1]


def full_result_leaking_through(run: ProbeRun):
    runs = {name: ProbeRun(name, "ok", observation=value) for name, value in EXPECTED.items()}
    runs[run.name] = run
    return evaluate(PACKAGE, Execution(probes=runs), EXPECTED, public=False).to_dict()


def test_hidden_source_in_a_view_is_found():
    result = full_result_leaking_through(ProbeRun("floats", "error", exc_type="RuntimeError", traceback=f"RuntimeError: {HIDDEN}"))
    # A view that showed the message as it is (the public policy) leaks; the hidden one does not.
    leaky = candidate_view({**result, "public": True})
    assert any("hidden probe source" in p for p in seal_problems(PACKAGE, leaky, EXPECTED))
    problems, reached = check_seal(PACKAGE, result, EXPECTED)
    assert (problems, reached) == ([], True)


def test_source_broken_over_lines_and_spaces_is_still_found():
    squeezed = " ".join(HIDDEN.split())
    view = {"probes": [{"name": "floats", "message": squeezed[100:180]}], "message": ""}
    assert seal_problems(PACKAGE, view, EXPECTED)


def test_an_expected_string_in_a_view_is_found_but_not_template_words_short_strings_or_exception_names():
    expected = {**EXPECTED, "integers": ["fold-constants", "value", "ab", "ValueError"]}
    view = {"probes": [{"name": "integers", "message": "the value is wrong; raised ValueError; ab"}], "message": ""}
    assert seal_problems(PACKAGE, view, expected) == []
    view["probes"][0]["message"] = "the first broken pass is 'fold-constants'"
    [problem] = seal_problems(PACKAGE, view, expected)
    assert "fold-constants" in problem and "probe 'integers' message" in problem


def test_the_packages_own_texts_are_not_leaks():
    # A long docstring is hidden source too, but it is the probe's description, shown on purpose.
    files = read_package_files(ADD_NUMBERS)
    long = "float64 sums of two random 3 by 5 arrays, drawn from a seeded generator."
    files["probes/hidden.py"] = files["probes/hidden.py"].replace(b"float64 sums.", long.encode())
    package = package_from_files(files)
    view = {"probes": [{"name": "floats", "description": long, "message": ""}], "message": ""}
    assert seal_problems(package, view, EXPECTED) == []
    view["probes"][0]["message"] = long
    assert seal_problems(package, view, EXPECTED) == []  # the same words, whatever field
    view["probes"][0]["message"] = long + " and more"
    assert seal_problems(package, view, EXPECTED)  # not the package's text as it is: a window of the source


def test_a_leaker_that_never_reached_a_message_is_reported_as_untested():
    result = full_result_leaking_through(ProbeRun("floats", "timeout"))
    assert check_seal(PACKAGE, result, EXPECTED) == ([], False)


def test_a_hidden_error_report_shows_nothing_the_seal_counts_as_a_leak():
    # A float tensor off everywhere, with NaNs: the full result's report has values; the hidden view has positions and decades.
    wrong = np.ones((3, 5)) + np.linspace(0, 1, 15).reshape(3, 5)
    wrong[2, 4] = np.nan
    result = evaluate(
        PACKAGE, Execution(probes={"floats": ProbeRun("floats", "ok", observation=TaggedArray(wrong, "float64", "numpy"))}), EXPECTED, public=False
    )
    full = result.to_dict()
    assert full["probes"][0]["error_report"]["max_abs_error"] is not None
    view = candidate_view(full)
    report = view["probes"][0]["error_report"]
    assert report["hidden"] is True and report["nan_mismatches"] == 1
    assert seal_problems(PACKAGE, view, EXPECTED) == []
