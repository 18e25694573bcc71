"""`python -m grader`: operator mistakes give one line and exit 2, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grader.__main__ import main
from grader.feedback import candidate_view
from grader.solution_edits import edit_of
from tests.helpers import ADD_NUMBERS


def test_an_unknown_backend_is_named_in_one_line(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SANDBOX_BACKEND", "nope")
    assert main(["check", str(ADD_NUMBERS)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unknown SANDBOX_BACKEND 'nope'")
    assert "Traceback" not in err


def test_an_unreadable_submission_file_is_named(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["grade", str(ADD_NUMBERS), str(tmp_path / "missing.py")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_a_broken_package_fails_its_check_with_the_field_named(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    folder = tmp_path / "demo" / "broken"
    folder.mkdir(parents=True)
    (folder / "challenge.toml").write_text('slug = "broken"\n')
    assert main(["check", str(folder)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("FAIL")
    assert "challenge.toml" in out


@pytest.mark.sandbox
def test_a_probes_whole_message_is_printed_down_to_the_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code = tmp_path / "raises.py"
    code.write_text("def add(a, b):\n    def inner():\n        raise ValueError('boom: the sum is wrong')\n    return inner()\n")
    assert main(["grade", str(ADD_NUMBERS), str(code), "--public"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Runtime error: 0%")
    # Each probe's traceback, indented under it, ends with the exception the code raised.
    assert "      ValueError: boom: the sum is wrong" in out
    assert '      File "solution.py", line 3, in inner' in out


@pytest.mark.sandbox
def test_as_candidate_prints_what_the_candidate_of_a_hidden_grading_sees(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code = tmp_path / "leaks.py"
    code.write_text(
        "import os\n\ndef add(a, b):\n"
        "    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'probes.py')) as fh:\n"
        "        text = fh.read()\n"
        "    print(text)\n"
        "    raise ValueError(text)\n"
    )
    assert main(["grade", str(ADD_NUMBERS), str(code), "--json"]) == 0
    full = json.loads(capsys.readouterr().out)
    assert main(["grade", str(ADD_NUMBERS), str(code), "--as-candidate"]) == 0
    view = json.loads(capsys.readouterr().out)
    assert "default_rng" in json.dumps(full)  # the full result, a coach's view, has the hidden probes' text
    assert view == candidate_view(full)
    assert {p["message"] for p in view["probes"]} == {"raised ValueError at solution.py line 7"}
    assert "default_rng" not in json.dumps(view) and "timings" not in view


@pytest.mark.sandbox
def test_a_patch_is_graded_as_the_file_it_makes_of_the_reference(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Shipped solutions are stored as edits of the reference (grader/solution_edits.py): grade takes them as they are."""
    reference = (ADD_NUMBERS / "reference" / "solution.py").read_text()
    wrong = reference.replace("np.add(a, b)", "np.subtract(a, b)")
    assert wrong != reference
    patch = tmp_path / "subtracts.patch"
    patch.write_text(edit_of(reference, wrong, reference_path="reference/solution.py", solution_path="solutions/subtracts.py"))
    assert main(["grade", str(ADD_NUMBERS), str(patch), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["verdict"] == "wrong_answer" and result["score"] == 0

    stale = tmp_path / "stale.patch"
    stale.write_text(patch.read_text().replace("np.add(a, b)", "np.multiply(a, b)"))  # its old lines are not in the reference
    assert main(["grade", str(ADD_NUMBERS), str(stale)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "no longer applies" in err and "Traceback" not in err
