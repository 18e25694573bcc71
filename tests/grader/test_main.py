"""`python -m grader`: operator mistakes give one line and exit 2, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.__main__ import main
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
