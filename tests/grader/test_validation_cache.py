"""Remembered validations (grader/validation_cache.py): a hit skips the work, and nothing that matters can hit stale."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from grader import validate, validation_cache
from grader.package_load import load_package_dir
from grader.validate import Report, validate_package

REPO = Path(__file__).resolve().parents[2]
BWRAP = SimpleNamespace(name="bwrap", bwrap=shutil.which("bwrap") or "bwrap")


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "validated"
    monkeypatch.setenv("GRADER_VALIDATION_CACHE_DIR", str(folder))
    monkeypatch.delenv("GRADER_VALIDATION_CACHE", raising=False)
    return folder


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Stand-in for the real validation (sandboxes are tested elsewhere): records each run, passes or fails on demand."""
    calls: list[str] = []

    def fake(package: Any, report: Report, backend: Any, share: Any, *, record_signatures: bool = False, by_record: bool = False) -> None:
        calls.append(package.version)
        if "FAIL" in package.files["probes/hidden.py"].decode():
            report.fail("reference, hidden: probe 'x' fails")
        else:
            report.info("reference, hidden: 100% on 3 probes")

    monkeypatch.setattr(validate, "_validate_loaded", fake)
    return calls


def test_a_passing_validation_is_not_run_again(package_copy: Path, runs: list[str]) -> None:
    first = validate_package(package_copy, BWRAP, remember=True)  # type: ignore[arg-type]
    second = validate_package(package_copy, BWRAP, remember=True)  # type: ignore[arg-type]
    assert first.ok and second.ok
    assert len(runs) == 1
    assert second.lines[0] == first.lines[0]
    assert "not run again" in second.lines[-1]


def test_editing_a_probe_validates_again(package_copy: Path, runs: list[str]) -> None:
    validate_package(package_copy, BWRAP, remember=True)  # type: ignore[arg-type]
    hidden = package_copy / "probes" / "hidden.py"
    hidden.write_text(hidden.read_text() + "\n# one more line\n")
    report = validate_package(package_copy, BWRAP, remember=True)  # type: ignore[arg-type]
    assert len(runs) == 2 and runs[0] != runs[1]
    assert not any("not run again" in line for line in report.lines)


def test_a_failure_is_never_remembered(package_copy: Path, runs: list[str], private_cache: Path) -> None:
    hidden = package_copy / "probes" / "hidden.py"
    hidden.write_text(hidden.read_text() + "\n# FAIL\n")
    assert not validate_package(package_copy, BWRAP, remember=True).ok  # type: ignore[arg-type]
    assert not validate_package(package_copy, BWRAP, remember=True).ok  # type: ignore[arg-type]
    assert len(runs) == 2
    assert not list(private_cache.glob("*.json"))


def test_without_remember_or_with_the_cache_off_it_always_runs(package_copy: Path, runs: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    validate_package(package_copy, BWRAP, remember=True)  # type: ignore[arg-type]
    validate_package(package_copy, BWRAP)  # type: ignore[arg-type]
    monkeypatch.setenv("GRADER_VALIDATION_CACHE", "0")
    validate_package(package_copy, BWRAP, remember=True)  # type: ignore[arg-type]
    assert len(runs) == 3


def _platform_copy(tmp_path: Path) -> Path:
    root = tmp_path / "checkout"
    for folder in validation_cache.PLATFORM_FOLDERS:
        shutil.copytree(REPO / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__"))
    return root


@pytest.mark.parametrize("edited", ["sandbox/runner/runner.py", "grader/checks.py", "sandbox/Dockerfile"])
def test_editing_the_runner_the_grader_or_the_image_changes_the_platform_fingerprint(tmp_path: Path, edited: str) -> None:
    root = _platform_copy(tmp_path)
    before = validation_cache.platform_fingerprint(root)
    assert validation_cache.platform_fingerprint(root) == before, "the fingerprint is deterministic"
    target = root / edited
    target.write_bytes(target.read_bytes() + b"\n# edited\n")
    assert validation_cache.platform_fingerprint(root) != before


def test_a_new_platform_file_changes_the_fingerprint(tmp_path: Path) -> None:
    root = _platform_copy(tmp_path)
    before = validation_cache.platform_fingerprint(root)
    (root / "grader" / "new_rule.py").write_text("RULE = 1\n")
    assert validation_cache.platform_fingerprint(root) != before


def test_the_key_covers_package_platform_runtime_backend_and_mode(demo_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    version = load_package_dir(demo_dir).version
    base = validation_cache.key(version, BWRAP, checks_in_sandbox=False, platform_code="p1")
    assert validation_cache.key(version, BWRAP, checks_in_sandbox=False, platform_code="p1") == base
    assert validation_cache.key("other-version", BWRAP, checks_in_sandbox=False, platform_code="p1") != base
    assert validation_cache.key(version, BWRAP, checks_in_sandbox=False, platform_code="p2") != base
    assert validation_cache.key(version, BWRAP, checks_in_sandbox=True, platform_code="p1") != base
    local = SimpleNamespace(name="local")
    assert validation_cache.key(version, local, checks_in_sandbox=False, platform_code="p1") != base
    pooled = SimpleNamespace(name="bwrap", inner=BWRAP)
    assert validation_cache.key(version, pooled, checks_in_sandbox=False, platform_code="p1") == base, "a warm pool is its inner backend"
    monkeypatch.setattr(validation_cache, "runtime_fingerprint", lambda: "another-runtime")
    assert validation_cache.key(version, BWRAP, checks_in_sandbox=False, platform_code="p1") != base


def test_a_docker_key_names_the_image_it_ran_on(demo_dir: Path) -> None:
    images = {"mlprep-sandbox:a": "sha256:1111", "mlprep-sandbox:b": "sha256:2222"}

    def docker(tag: str) -> SimpleNamespace:
        client = SimpleNamespace(
            images=SimpleNamespace(get=lambda name: SimpleNamespace(id=images[name])),
            version=lambda: {"Version": "20.10.24"},
        )
        return SimpleNamespace(name="docker", client=client, image=tag, runtime=None)

    version = load_package_dir(demo_dir).version
    a = validation_cache.key(version, docker("mlprep-sandbox:a"), checks_in_sandbox=False, platform_code="p")
    b = validation_cache.key(version, docker("mlprep-sandbox:b"), checks_in_sandbox=False, platform_code="p")
    assert a != b


def test_a_damaged_entry_is_a_miss(private_cache: Path) -> None:
    private_cache.mkdir(parents=True)
    (private_cache / "k1.json").write_text("{not json")
    (private_cache / "k2.json").write_text('{"name": "x"}')
    assert validation_cache.lookup("k1") is None
    assert validation_cache.lookup("k2") is None
    validation_cache.record("k3", "demo/add-numbers", ["  ok fine"])
    assert validation_cache.lookup("k3") is not None


def test_each_part_of_a_shared_validation_is_remembered_on_its_own(package_copy: Path, runs: list[str]) -> None:
    from grader.validate import Share

    validate_package(package_copy, BWRAP, remember=True, share=Share(0, 2))  # type: ignore[arg-type]
    validate_package(package_copy, BWRAP, remember=True, share=Share(1, 2))  # type: ignore[arg-type]
    assert len(runs) == 2  # part 2 is other work than part 1: not "passed before"
    validate_package(package_copy, BWRAP, remember=True, share=Share(1, 2))  # type: ignore[arg-type]
    validate_package(package_copy, BWRAP, remember=True)  # type: ignore[arg-type]
    assert len(runs) == 3  # part 2 again is remembered; the whole validation is not a part


def test_a_validation_by_record_does_not_stand_for_a_whole_one(package_copy: Path, runs: list[str]) -> None:
    """make test grades wrong solutions by their record; grader check's whole validation must not find that pass."""
    validate_package(package_copy, BWRAP, remember=True, by_record=True)  # type: ignore[arg-type]
    whole = validate_package(package_copy, BWRAP, remember=True)  # type: ignore[arg-type]
    again = validate_package(package_copy, BWRAP, remember=True, by_record=True)  # type: ignore[arg-type]
    assert len(runs) == 2
    assert not any("not run again" in line for line in whole.lines)
    assert "not run again" in again.lines[-1]
