"""grader/solution_edits.py and `python -m grader solutions`: shipped solutions kept as edits of the reference."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from grader.__main__ import main
from grader.errors import PackageError
from grader.learn import common_mistakes
from grader.package_load import load_package_dir, read_package_files
from grader.solution_edits import apply_edit, edit_of, worth_an_edit
from tests.helpers import ADD_NUMBERS

REFERENCE = "".join(f"line {i}\n" for i in range(1, 31))


def mistaken(text: str, at: int, new: str) -> str:
    lines = text.splitlines(keepends=True)
    lines[at - 1] = new
    return "".join(lines)


def test_an_edit_gives_back_its_file_and_holds_only_the_mistake() -> None:
    wrong = mistaken(REFERENCE, 15, "line 15 with the mistake\n")
    patch = edit_of(REFERENCE, wrong, reference_path="reference/solution.py", solution_path="solutions/x.py")
    assert apply_edit(REFERENCE, patch, origin="x.patch") == wrong
    assert "-line 15\n+line 15 with the mistake\n" in patch and "line 1\n" not in patch.split("@@")[2]  # three lines of context
    # Files without a final newline, on either side, come back byte for byte.
    for a, b in ((REFERENCE.rstrip("\n"), wrong), (REFERENCE, wrong.rstrip("\n")), (REFERENCE.rstrip("\n"), wrong.rstrip("\n"))):
        assert apply_edit(a, edit_of(a, b, reference_path="r", solution_path="s"), origin="x.patch") == b


def test_an_edit_still_applies_after_the_reference_changed_elsewhere() -> None:
    wrong = mistaken(REFERENCE, 20, "line 20, wrong\n")
    patch = edit_of(REFERENCE, wrong, reference_path="r", solution_path="s")
    # A fix near the top of the reference (two lines more): the mistake lands where its lines now are.
    top = "# a fix\n# in two lines\n"
    fixed = top + mistaken(REFERENCE, 3, "line 3, fixed\n")
    assert apply_edit(fixed, patch, origin="x.patch") == top + mistaken(mistaken(REFERENCE, 3, "line 3, fixed\n"), 20, "line 20, wrong\n")


def test_an_edit_whose_lines_are_gone_is_refused_with_its_hunk_named() -> None:
    patch = edit_of(REFERENCE, mistaken(REFERENCE, 20, "line 20, wrong\n"), reference_path="r", solution_path="s")
    changed = mistaken(REFERENCE, 20, "line 20, rewritten\n")
    with pytest.raises(PackageError, match=r"solutions/x\.patch: hunk 1 \(patch line 3, reference line 17\) no longer applies"):
        apply_edit(changed, patch, origin="solutions/x.patch")
    with pytest.raises(PackageError, match="holds no hunk"):
        apply_edit(REFERENCE, "--- r\n+++ s\n", origin="solutions/x.patch")


def test_only_a_mostly_copied_solution_is_worth_an_edit() -> None:
    assert worth_an_edit(REFERENCE, mistaken(REFERENCE, 20, "line 20, wrong\n"))
    assert not worth_an_edit(REFERENCE, "def add(a, b):\n    return b + a\n")


# A reference long enough that a one-line mistake is mostly a copy of it.
LONG_REFERENCE = "import numpy as np\n\n" + "".join(f"# note {i}\n" for i in range(20)) + "\ndef add(a, b):\n    return np.add(a, b)\n"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    dest = tmp_path / "demo" / "add-numbers"
    shutil.copytree(ADD_NUMBERS, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (dest / "reference" / "solution.py").write_text(LONG_REFERENCE)
    (dest / "solutions" / "float64.py").write_text(LONG_REFERENCE.replace("np.add(a, b)", "np.asarray(a, dtype=np.float64) + b"))
    return dest


def test_the_command_keeps_a_mostly_copied_solution_as_an_edit_and_the_package_reads_it_back(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = load_package_dir(folder)
    whole = before.solution_code("float64")
    assert main(["solutions", str(folder), "--as-edits"]) == 0
    assert "edit   solutions/float64.py" in capsys.readouterr().out
    assert not (folder / "solutions" / "float64.py").exists() and (folder / "solutions" / "float64.patch").is_file()
    after = load_package_dir(folder)
    assert after.solution_code("float64") == whole and after.solution_path("float64") == "solutions/float64.patch"
    # What reads a solution reads the same source: the Learn page's diff is unchanged.
    assert common_mistakes(after) == common_mistakes(before)

    files = read_package_files(folder)
    files["solutions/float64.py"] = whole
    from grader.package_load import package_from_files

    with pytest.raises(PackageError, match=r"float64\.py and solutions/float64\.patch both exist"):
        package_from_files(files)
    (folder / "reference" / "solution.py").write_text("import numpy as np\n\n\ndef add(a, b):\n    return a.__add__(b)\n")
    with pytest.raises(PackageError, match=r"solutions/float64\.patch: hunk 1 .* no longer applies"):
        load_package_dir(folder)


# A correct alternative written from scratch, and a wrong variant of it: the variant is mostly the alternative, not
# the reference, so it is kept as an edit of the alternative.
ALTERNATIVE = "import operator\n\n" + "".join(f"# another note {i}\n" for i in range(20)) + "\ndef add(a, b):\n    return operator.add(a, b)\n"


def _with_alternative(folder: Path) -> None:
    (folder / "solutions" / "operator-add.py").write_text(ALTERNATIVE)
    (folder / "solutions" / "operator-float.py").write_text(ALTERNATIVE.replace("operator.add(a, b)", "operator.add(a, b) * 1.0"))
    with (folder / "solutions" / "expected.toml").open("a") as f:
        f.write('\n[operator-add]\nverdict = "accepted"\nwhy = "Correct: operator.add."\n')
        f.write('\n[operator-float]\nverdict = "partial"\nscore_below = 100\nwhy = "Multiplies by 1.0: floats for integers."\n')


def test_a_variant_of_another_solution_is_kept_as_an_edit_of_that_solution(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _with_alternative(folder)
    before = load_package_dir(folder)
    assert main(["solutions", str(folder), "--as-edits"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"edit   solutions/operator-float\.py: 25 lines -> a \d-line patch of solutions/operator-add\.py", out)
    assert "whole  solutions/operator-add.py" in out
    patch = (folder / "solutions" / "operator-float.patch").read_text()
    assert patch.startswith("--- solutions/operator-add.py\n") and "+    return operator.add(a, b) * 1.0\n" in patch
    after = load_package_dir(folder)
    for name in ("operator-add", "operator-float", "float64"):
        assert after.solution_code(name) == before.solution_code(name)
    # A fix to the base carries into its variant; a base whose edited lines are gone names itself.
    (folder / "solutions" / "operator-add.py").write_text(ALTERNATIVE.replace("# another note 3\n", "# a fixed note\n"))
    assert b"# a fixed note" in load_package_dir(folder).solution_code("operator-float")
    (folder / "solutions" / "operator-add.py").write_text(ALTERNATIVE.replace("operator.add(a, b)", "a + b"))
    gone = r"operator-float\.patch: hunk 1 \(patch line 3, base line \d+\) no longer applies: its lines are not in solutions/operator-add\.py"
    with pytest.raises(PackageError, match=gone):
        load_package_dir(folder)


def test_an_edit_of_a_missing_solution_or_of_itself_in_a_circle_is_refused(folder: Path) -> None:
    _with_alternative(folder)
    (folder / "solutions" / "operator-float.py").unlink()
    variant = ALTERNATIVE.replace("operator.add(a, b)", "operator.add(a, b) * 1.0")
    float_edit = edit_of(ALTERNATIVE, variant, reference_path="solutions/operator-add.py", solution_path="solutions/operator-float.py")
    (folder / "solutions" / "operator-float.patch").write_text(float_edit.replace("--- solutions/operator-add.py", "--- solutions/nowhere.py"))
    with pytest.raises(PackageError, match=r"operator-float\.patch.*an edit of solutions/nowhere\.py, which is not a solution of expected\.toml"):
        load_package_dir(folder)
    # operator-add an edit of operator-float, and operator-float an edit of operator-add.
    (folder / "solutions" / "operator-float.patch").write_text(float_edit)
    (folder / "solutions" / "operator-add.py").unlink()
    (folder / "solutions" / "operator-add.patch").write_text(float_edit.replace("--- solutions/operator-add.py", "--- solutions/operator-float.py"))
    with pytest.raises(PackageError, match="in a circle"):
        load_package_dir(folder)


def test_grading_an_edit_of_another_solution_grades_the_file_it_makes(folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _with_alternative(folder)
    assert main(["solutions", str(folder), "--as-edits"]) == 0
    capsys.readouterr()
    stray = tmp_path / "stray.patch"
    stray.write_text((folder / "solutions" / "operator-float.patch").read_text().replace("operator-add.py", "gone.py", 1))
    assert main(["grade", str(folder), str(stray)]) == 2
    assert "an edit of solutions/gone.py, which the package does not ship" in capsys.readouterr().err
