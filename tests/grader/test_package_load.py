"""grader.package_load and grader.package: read, validate and version challenge packages."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

import grader.package_load as package_load_module
from grader.errors import PackageError
from grader.package import Hint, Limits, version_of
from grader.package_load import discover_packages, load_package_dir, package_from_files, read_package_files

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "packages" / "demo" / "add-numbers"
FIXTURE_FILES = sorted(p.relative_to(FIXTURE).as_posix() for p in FIXTURE.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def edit(folder: Path, rel: str, old: str, new: str) -> None:
    path = folder / rel
    text = path.read_text()
    assert old in text, f"{old!r} not in {rel}"
    path.write_text(text.replace(old, new, 1))


def drop_line(folder: Path, rel: str, key: str) -> None:
    path = folder / rel
    text, count = re.subn(rf"(?m)^{re.escape(key)} = .*\n", "", path.read_text(), count=1)
    assert count == 1, f"no line '{key} = ...' in {rel}"
    path.write_text(text)


def load_error(folder: Path) -> PackageError:
    with pytest.raises(PackageError) as info:
        load_package_dir(folder)
    return info.value


def assert_names(err: PackageError, file: str, field: str | None) -> None:
    """The error names the file (path and message) and, when there is one, the field."""
    assert err.path is not None and err.path.endswith(file), err.path
    assert file in str(err)
    assert err.field == field
    if field is not None:
        assert f"field '{field}'" in str(err)


# ------------------------------------------------------------ a valid package


def test_the_demo_package_loads_with_its_metadata(demo_dir):
    package = load_package_dir(demo_dir)
    assert (package.slug, package.track, package.difficulty, package.runtime) == ("add-numbers", "demo", "warm-up", "python")
    assert package.title == "Add numbers"
    assert package.tags == ("fixture",)
    assert package.entry == "solution.py"
    assert package.limits == Limits(probe_seconds=3.0, wall_seconds=60.0, memory_mb=256)
    assert package.hints[0] == Hint("broadcast", 1, ("values",), "Check what your function returns for arrays.")
    assert [h.id for h in package.hints] == ["broadcast", "dtype", "near"]
    assert [p.name for p in package.public_probes] == ["small"]
    assert [p.name for p in package.hidden_probes] == ["floats", "keeps_float16", "integers"]
    assert package.probes(True) == package.public_probes and package.probes(False) == package.hidden_probes
    assert package.probe_source(False) == (demo_dir / "probes" / "hidden.py").read_bytes()
    assert package.checks_source is None
    assert package.statement.startswith("# Add numbers")
    assert "np.add" in package.reference_code
    assert "NotImplementedError" in package.starter_code
    [solution] = package.solutions
    assert (solution.name, solution.verdict, solution.score_below, solution.score) == ("float64", "partial", 100.0, None)


def test_limits_default_when_the_table_is_absent(package_copy):
    text = (package_copy / "challenge.toml").read_text()
    text = re.sub(r"(?s)\[limits\].*?\n\n", "", text)
    (package_copy / "challenge.toml").write_text(text)
    assert load_package_dir(package_copy).limits == Limits(probe_seconds=10.0, wall_seconds=120.0, memory_mb=1024)


def test_discover_packages_finds_track_slug_folders(demo_dir):
    root = demo_dir.parent.parent
    assert demo_dir in discover_packages(root)
    assert all(p.parent.parent == root for p in discover_packages(root))


# ------------------------------------------------------------ challenge.toml errors


@pytest.mark.parametrize("key", ["slug", "title", "track", "difficulty", "summary", "runtime"])
def test_a_missing_required_field_names_challenge_toml_and_the_field(package_copy, key):
    drop_line(package_copy, "challenge.toml", key)
    err = load_error(package_copy)
    assert_names(err, "challenge.toml", key)
    assert "is required" in str(err)


def test_an_empty_string_field_is_refused(package_copy):
    edit(package_copy, "challenge.toml", 'title = "Add numbers"', 'title = "  "')
    err = load_error(package_copy)
    assert_names(err, "challenge.toml", "title")
    assert "must be a non-empty string" in str(err)


def test_a_bad_difficulty_names_the_field_and_the_choices(package_copy):
    edit(package_copy, "challenge.toml", 'difficulty = "warm-up"', 'difficulty = "expert"')
    err = load_error(package_copy)
    assert_names(err, "challenge.toml", "difficulty")
    assert "must be one of warm-up, easy, medium, hard (got 'expert')" in str(err)


def test_a_bad_runtime_names_the_field_and_the_choices(package_copy):
    edit(package_copy, "challenge.toml", 'runtime = "python"', 'runtime = "jax"')
    err = load_error(package_copy)
    assert_names(err, "challenge.toml", "runtime")
    assert "must be one of python, torch, tensorflow, onnx, tvm, mlir (got 'jax')" in str(err)


def test_warm_defaults_to_no_cache(package_copy):
    assert load_package_dir(package_copy).warm == ()


def test_an_unknown_warm_cache_is_refused_by_name(package_copy):
    edit(package_copy, "challenge.toml", 'runtime = "python"', 'runtime = "torch"\nwarm = ["xla"]')
    err = load_error(package_copy)
    assert_names(err, "challenge.toml", "warm")
    assert "must list only inductor, compile, torch-headers (got 'xla')" in str(err)


def test_an_inductor_cache_needs_a_runtime_with_torch(package_copy):
    edit(package_copy, "challenge.toml", 'runtime = "python"', 'runtime = "python"\nwarm = ["inductor"]')
    err = load_error(package_copy)
    assert_names(err, "challenge.toml", "warm")
    assert "needs a runtime with torch" in str(err)


def test_preload_defaults_to_nothing(package_copy):
    assert load_package_dir(package_copy).preload == ()


def test_preload_inductor_is_accepted_where_torch_is(package_copy):
    edit(package_copy, "challenge.toml", 'runtime = "python"', 'runtime = "onnx"\npreload = ["inductor"]')
    assert load_package_dir(package_copy).preload == ("inductor",)


def test_an_unknown_preload_is_refused_by_name(package_copy):
    edit(package_copy, "challenge.toml", 'runtime = "python"', 'runtime = "torch"\npreload = ["tensorflow"]')
    err = load_error(package_copy)
    assert_names(err, "challenge.toml", "preload")
    assert "must list only inductor (got 'tensorflow')" in str(err)


def test_preloading_inductor_needs_a_runtime_with_torch(package_copy):
    edit(package_copy, "challenge.toml", 'runtime = "python"', 'runtime = "mlir"\npreload = ["inductor"]')
    err = load_error(package_copy)
    assert_names(err, "challenge.toml", "preload")
    assert "which the 'mlir' runtime does not have" in str(err)


def test_rules_default_to_none(package_copy):
    assert not load_package_dir(package_copy).rules.active


def test_rules_are_read_from_their_table(package_copy):
    rules = '[rules]\nforbidden = ["float64"]\nwhy = "keep the dtype"\nsealed = true\nallowed_modules = ["torch.utils._pytree"]\n\n[[hints]]'
    edit(package_copy, "challenge.toml", "[[hints]]", rules)
    loaded = load_package_dir(package_copy).rules
    assert (loaded.forbidden, loaded.why, loaded.sealed, loaded.allowed_modules) == (("float64",), "keep the dtype", True, ("torch.utils._pytree",))


@pytest.mark.parametrize(
    "table, field, message",
    [
        ("seal = true", "rules", "unknown key(s) seal; a [rules] table has forbidden, why, sealed, allowed_modules"),
        ('sealed = "yes"', "rules.sealed", "must be true or false"),
        ("forbidden = [1]", "rules.forbidden", "must be a list of non-empty strings"),
        ('allowed_modules = ["torch utils"]', "rules.allowed_modules", "must list dotted module names (got 'torch utils')"),
    ],
)
def test_a_bad_rules_table_is_refused_by_name(package_copy, table, field, message):
    edit(package_copy, "challenge.toml", "[[hints]]", f"[rules]\n{table}\n\n[[hints]]")
    err = load_error(package_copy)
    assert_names(err, "challenge.toml", field)
    assert message in str(err)


@pytest.mark.parametrize(
    "before, after, field, message",
    [
        ('runtime = "python"', 'runtime = "python"\ndificulty = "hard"', "dificulty", "unknown key(s) dificulty; challenge.toml has slug, title"),
        ("probe_seconds = 3", "probe_second = 3", "probe_second", "unknown key(s) probe_second; [limits] has probe_seconds, wall_seconds, memory_mb"),
        ("[[hints]]", "[[hints]]\ntiers = 2", "tiers", "unknown key(s) tiers; a [[hints]] entry has id, tier, tags, text"),
    ],
)
def test_a_misspelt_key_is_refused_by_name_not_ignored(package_copy, before, after, field, message):
    """A typo's value was silently dropped: a misspelt limit left the default in force."""
    edit(package_copy, "challenge.toml", before, after)
    err = load_error(package_copy)
    assert_names(err, "challenge.toml", field)
    assert message in str(err)


def test_an_inductor_cache_is_accepted_for_torch(package_copy):
    edit(package_copy, "challenge.toml", 'runtime = "python"', 'runtime = "torch"\nwarm = ["inductor"]')
    assert load_package_dir(package_copy).warm == ("inductor",)


@pytest.mark.parametrize("runtime", ["mlir", "onnx"])
def test_a_compile_cache_is_accepted_where_iree_is(package_copy, runtime):
    edit(package_copy, "challenge.toml", 'runtime = "python"', f'runtime = "{runtime}"\nwarm = ["compile"]')
    assert load_package_dir(package_copy).warm == ("compile",)


@pytest.mark.parametrize("runtime", ["python", "torch", "tensorflow", "tvm"])
def test_a_compile_cache_needs_a_runtime_with_iree(package_copy, runtime):
    edit(package_copy, "challenge.toml", 'runtime = "python"', f'runtime = "{runtime}"\nwarm = ["compile"]')
    err = load_error(package_copy)
    assert_names(err, "challenge.toml", "warm")
    assert f"a compile cache needs a runtime with IREE's compiler (this package runs in '{runtime}')" in str(err)


def test_a_slug_that_is_not_kebab_case_is_refused(package_copy):
    edit(package_copy, "challenge.toml", 'slug = "add-numbers"', 'slug = "Add_Numbers"')
    assert_names(load_error(package_copy), "challenge.toml", "slug")


def test_slug_must_match_the_folder_name(package_copy):
    moved = package_copy.parent / "add-more-numbers"
    package_copy.rename(moved)
    err = load_error(moved)
    assert_names(err, "challenge.toml", "slug")
    assert "slug 'add-numbers' does not match the folder name 'add-more-numbers'" in str(err)


def test_track_must_match_the_parent_folder(package_copy, tmp_path):
    moved = tmp_path / "other-track" / "add-numbers"
    moved.parent.mkdir()
    package_copy.rename(moved)
    err = load_error(moved)
    assert_names(err, "challenge.toml", "track")
    assert "track 'demo' does not match the parent folder 'other-track'" in str(err)


def test_a_bad_entry_name_is_refused(package_copy):
    edit(package_copy, "challenge.toml", 'runtime = "python"', 'runtime = "python"\nentry = "../evil.py"')
    assert_names(load_error(package_copy), "challenge.toml", "entry")


def test_a_limit_out_of_range_names_the_limits_field(package_copy):
    edit(package_copy, "challenge.toml", "memory_mb = 256", "memory_mb = 10")
    err = load_error(package_copy)
    assert_names(err, "challenge.toml", "limits.memory_mb")
    assert "must be between 64 and 16384 (got 10)" in str(err)


def test_a_non_number_limit_is_refused(package_copy):
    edit(package_copy, "challenge.toml", "probe_seconds = 3", 'probe_seconds = "3"')
    err = load_error(package_copy)
    assert_names(err, "challenge.toml", "limits.probe_seconds")
    assert "must be a number" in str(err)


def test_tags_must_be_a_list_of_strings(package_copy):
    edit(package_copy, "challenge.toml", 'tags = ["fixture"]', "tags = [1]")
    assert_names(load_error(package_copy), "challenge.toml", "tags")


def test_invalid_toml_names_the_file(package_copy):
    edit(package_copy, "challenge.toml", 'title = "Add numbers"', "title = ")
    err = load_error(package_copy)
    assert_names(err, "challenge.toml", None)
    assert "invalid TOML" in str(err)


def test_a_missing_challenge_toml_is_reported_by_file(package_copy):
    (package_copy / "challenge.toml").unlink()
    err = load_error(package_copy)
    assert_names(err, "challenge.toml", None)
    assert "file is missing" in str(err)


# ------------------------------------------------------------ hints


def test_a_duplicate_hint_id_names_the_second_hint(package_copy):
    edit(package_copy, "challenge.toml", 'id = "dtype"', 'id = "broadcast"')
    err = load_error(package_copy)
    assert_names(err, "challenge.toml", "hints[1].id")
    assert "duplicate hint id 'broadcast'" in str(err)


@pytest.mark.parametrize(
    ("tier", "message"),
    [("4", "must be between 1 and 3 (got 4)"), ("0", "must be between 1 and 3 (got 0)"), ("1.5", "must be 1, 2 or 3"), ('"1"', "must be a number")],
)
def test_a_bad_hint_tier_names_the_hint(package_copy, tier, message):
    edit(package_copy, "challenge.toml", "tier = 1", f"tier = {tier}")
    err = load_error(package_copy)
    assert_names(err, "challenge.toml", "hints[0].tier")
    assert message in str(err)


def test_a_hint_needs_at_least_one_tag(package_copy):
    edit(package_copy, "challenge.toml", 'tags = ["dtype"]', "tags = []")
    assert_names(load_error(package_copy), "challenge.toml", "hints[2].tags")


def test_a_hint_needs_text(package_copy):
    edit(package_copy, "challenge.toml", 'text = "Keep the input\'s dtype."\n', "")
    err = load_error(package_copy)
    assert_names(err, "challenge.toml", "hints[1].text")
    assert "is required" in str(err)


# ------------------------------------------------------------ files


def test_a_non_utf8_statement_names_the_file_and_the_byte(package_copy):
    (package_copy / "statement.md").write_bytes(b"# Add\n\xff\xfe numbers\n")
    err = load_error(package_copy)
    assert_names(err, "statement.md", None)
    assert "not valid UTF-8 at byte 6" in str(err)


@pytest.mark.parametrize("rel", ["starter/solution.py", "reference/solution.py", "statement.md", "probes/public.py", "probes/hidden.py"])
def test_a_missing_required_file_is_named(package_copy, rel):
    (package_copy / rel).unlink()
    err = load_error(package_copy)
    assert_names(err, rel, None)
    assert "file is missing" in str(err)


def test_the_entry_name_decides_which_starter_and_reference_are_required(package_copy):
    edit(package_copy, "challenge.toml", 'runtime = "python"', 'runtime = "python"\nentry = "main.py"')
    assert_names(load_error(package_copy), "starter/main.py", None)
    shutil.copy(package_copy / "starter" / "solution.py", package_copy / "starter" / "main.py")
    assert_names(load_error(package_copy), "reference/main.py", None)
    shutil.copy(package_copy / "reference" / "solution.py", package_copy / "reference" / "main.py")
    assert load_package_dir(package_copy).entry == "main.py"


@pytest.mark.parametrize("rel", ["probes/public.py", "probes/hidden.py"])
def test_a_probe_file_without_probes_is_refused(package_copy, rel):
    (package_copy / rel).write_text("import numpy as np\n\n\ndef helper(solution):\n    return 1\n")
    err = load_error(package_copy)
    assert_names(err, rel, None)
    assert "declares no probes" in str(err)


def test_a_probe_declaration_error_names_the_probe_file(package_copy):
    edit(package_copy, "probes/hidden.py", 'category="dtype"', 'category="dtype", colour="red"')
    err = load_error(package_copy)
    assert_names(err, "probes/hidden.py", "colour")


def test_an_unknown_check_name_names_the_probe_and_the_field(package_copy):
    edit(package_copy, "probes/hidden.py", 'check="exact"', 'check="close_enough"')
    err = load_error(package_copy)
    assert_names(err, "probes/hidden.py", "check")
    assert "probe 'integers' names check 'close_enough', which probes/checks.py does not define" in str(err)


@pytest.mark.parametrize(
    "checks",
    [
        "# def close_enough(actual, expected): a comment is not a check\n",
        'NOTE = """def close_enough(actual, expected):"""\n',
        "def outer():\n    def close_enough(actual, expected):\n        return True\n",
    ],
)
def test_a_check_named_only_in_text_is_not_a_check(package_copy, checks):
    """The test was ``def name(`` anywhere in the file's text."""
    edit(package_copy, "probes/hidden.py", 'check="exact"', 'check="close_enough"')
    (package_copy / "probes" / "checks.py").write_text(checks)
    assert "which probes/checks.py does not define" in str(load_error(package_copy))


def test_a_checks_file_that_does_not_compile_is_named(package_copy):
    edit(package_copy, "probes/hidden.py", 'check="exact"', 'check="close_enough"')
    (package_copy / "probes" / "checks.py").write_text("def close_enough(actual, expected)\n    return True\n")
    err = load_error(package_copy)
    assert_names(err, "probes/checks.py", None)
    assert "does not compile" in str(err)


def test_a_custom_check_defined_in_checks_py_is_accepted(package_copy):
    edit(package_copy, "probes/hidden.py", 'check="exact"', 'check="close_enough"')
    (package_copy / "probes" / "checks.py").write_text("def close_enough(actual, expected):\n    return True\n")
    package = load_package_dir(package_copy)
    assert package.hidden_probes[2].check == "close_enough"
    assert package.checks_source == b"def close_enough(actual, expected):\n    return True\n"


def test_expected_toml_naming_a_missing_solution_names_the_entry(package_copy):
    with (package_copy / "solutions" / "expected.toml").open("a") as fh:
        fh.write('\n[ghost]\nverdict = "accepted"\n')
    err = load_error(package_copy)
    assert_names(err, "solutions/expected.toml", "ghost")
    assert "names solutions/ghost.py (or .patch), which does not exist" in str(err)


def test_expected_toml_fields_are_validated(package_copy):
    edit(package_copy, "solutions/expected.toml", "score_below = 100", "score_below = 101")
    assert_names(load_error(package_copy), "solutions/expected.toml", "float64.score_below")
    edit(package_copy, "solutions/expected.toml", "score_below = 101", "score_below = 100")
    drop_line(package_copy, "solutions/expected.toml", "verdict")
    assert_names(load_error(package_copy), "solutions/expected.toml", "float64.verdict")


def test_invalid_toml_in_expected_toml_names_that_file(package_copy):
    (package_copy / "solutions" / "expected.toml").write_text("[float64\nverdict = 1\n")
    err = load_error(package_copy)
    assert_names(err, "solutions/expected.toml", None)
    assert "invalid TOML" in str(err)


def test_a_package_without_solutions_is_valid(package_copy):
    shutil.rmtree(package_copy / "solutions")
    assert load_package_dir(package_copy).solutions == ()


def test_a_symlink_in_the_package_is_refused(package_copy, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("token")
    link = package_copy / "solutions" / "leak.py"
    os.symlink(secret, link)
    err = load_error(package_copy)
    assert err.path == str(link)
    assert "symbolic links are not allowed in a package" in str(err)


def test_a_symlinked_folder_is_refused(package_copy, tmp_path):
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", package_copy / "data")
    err = load_error(package_copy)
    assert err.path == str(package_copy / "data")


def test_a_package_over_the_size_limit_is_refused(package_copy, monkeypatch):
    monkeypatch.setattr(package_load_module, "MAX_PACKAGE_BYTES", 1000)
    (package_copy / "statement.md").write_text("x" * 1001)
    err = load_error(package_copy)
    assert "package is larger than 1000 bytes" in str(err)


def test_a_path_that_is_not_a_folder_is_refused(tmp_path):
    err = load_error(tmp_path / "nope")
    assert "not a folder" in str(err)


def test_package_from_files_errors_name_the_origin(demo_dir):
    files = read_package_files(demo_dir)
    del files["statement.md"]
    with pytest.raises(PackageError) as info:
        package_from_files(files, origin="db:42")
    assert info.value.path == "db:42/statement.md"
    with pytest.raises(PackageError) as info:
        package_from_files(files)
    assert info.value.path == "<package>/statement.md"


# ------------------------------------------------------------ version


def test_version_is_a_stable_sha256_of_the_files(demo_dir):
    first, second = load_package_dir(demo_dir), load_package_dir(demo_dir)
    assert first.version == second.version
    assert re.fullmatch(r"[0-9a-f]{64}", first.version)
    assert first.version == version_of(read_package_files(demo_dir))


def test_version_does_not_depend_on_where_the_folder_is(demo_dir, package_copy):
    assert load_package_dir(package_copy).version == load_package_dir(demo_dir).version


def test_version_ignores_caches_that_are_not_package_content(demo_dir, package_copy):
    (package_copy / "probes" / "__pycache__").mkdir()
    (package_copy / "probes" / "__pycache__" / "hidden.cpython-311.pyc").write_bytes(b"\x00junk")
    (package_copy / ".DS_Store").write_bytes(b"junk")
    package = load_package_dir(package_copy)
    assert package.version == load_package_dir(demo_dir).version
    assert not any("__pycache__" in p or p.endswith(".DS_Store") for p in package.files)


@pytest.mark.parametrize("rel", FIXTURE_FILES)
def test_version_changes_when_any_file_changes(demo_dir, package_copy, rel):
    with (package_copy / rel).open("a") as fh:
        fh.write("\n# changed\n")
    assert load_package_dir(package_copy).version != load_package_dir(demo_dir).version


def test_version_changes_when_a_file_is_added_or_renamed(demo_dir, package_copy):
    original = load_package_dir(demo_dir).version
    (package_copy / "solutions" / "extra.py").write_text("def add(a, b):\n    return a + b\n")
    added = load_package_dir(package_copy).version
    assert added != original
    (package_copy / "solutions" / "extra.py").rename(package_copy / "solutions" / "other.py")
    assert load_package_dir(package_copy).version not in (original, added)


def test_version_of_separates_path_and_content():
    # The same bytes split differently between path and content must not collide.
    assert version_of({"a": b"bc"}) != version_of({"ab": b"c"})
    assert version_of({"a": b"", "b": b"x"}) != version_of({"a": b"x", "b": b""})
    assert version_of({"a": b"1", "b": b"2"}) == version_of({"b": b"2", "a": b"1"})


def test_package_from_files_equals_load_package_dir(demo_dir):
    files = read_package_files(demo_dir)
    from_files = package_from_files(files, checks_in_sandbox=False)
    from_dir = load_package_dir(demo_dir)
    assert from_files == from_dir
    assert from_files.version == from_dir.version
    assert from_files.files == from_dir.files == files
    assert set(files) == {
        "challenge.toml",
        "statement.md",
        "starter/solution.py",
        "reference/solution.py",
        "probes/public.py",
        "probes/hidden.py",
        "solutions/expected.toml",
        "solutions/float64.py",
        "solutions/signatures.toml",
    }


def test_the_package_keeps_its_own_copy_of_the_files(demo_dir):
    files = read_package_files(demo_dir)
    package = package_from_files(files)
    files["statement.md"] = b"changed"
    assert package.files["statement.md"] != b"changed"


# ------------------------------------------------------------ given/: read-only modules


def write_given(folder: Path, name: str, text: str) -> None:
    (folder / "given").mkdir(exist_ok=True)
    (folder / "given" / name).write_text(text)


def test_given_modules_are_loaded_by_module_name(package_copy):
    write_given(package_copy, "pipeline.py", "STAGES = 3\n")
    write_given(package_copy, "helpers.py", "from given.pipeline import STAGES\n")
    package = load_package_dir(package_copy)
    assert package.given_sources == {"helpers": b"from given.pipeline import STAGES\n", "pipeline": b"STAGES = 3\n"}
    assert package.files["given/pipeline.py"] == b"STAGES = 3\n"


def test_a_package_without_given_has_no_given_modules(demo_dir):
    assert load_package_dir(demo_dir).given_sources == {}


def test_a_given_module_is_part_of_the_version(package_copy):
    write_given(package_copy, "pipeline.py", "STAGES = 3\n")
    before = load_package_dir(package_copy).version
    write_given(package_copy, "pipeline.py", "STAGES = 4\n")
    changed = load_package_dir(package_copy).version
    assert changed != before
    write_given(package_copy, "extra.py", "X = 1\n")
    assert load_package_dir(package_copy).version not in (before, changed)


@pytest.mark.parametrize("name", ["__init__.py", "notes.txt", "two-words.py", "1st.py"])
def test_given_holds_only_importable_modules(package_copy, name):
    write_given(package_copy, name, "X = 1\n")
    err = load_error(package_copy)
    assert_names(err, f"given/{name}", None)
    assert "given/<name>.py" in str(err)


def test_a_folder_inside_given_is_refused(package_copy):
    (package_copy / "given" / "sub").mkdir(parents=True)
    (package_copy / "given" / "sub" / "mod.py").write_text("X = 1\n")
    assert_names(load_error(package_copy), "given/sub/mod.py", None)


def test_a_given_module_with_a_syntax_error_names_the_file_and_line(package_copy):
    write_given(package_copy, "pipeline.py", "X = 1\ndef broken(:\n")
    err = load_error(package_copy)
    assert_names(err, "given/pipeline.py", None)
    assert "line 2" in str(err)


def test_a_given_module_must_be_utf8(package_copy):
    (package_copy / "given").mkdir()
    (package_copy / "given" / "pipeline.py").write_bytes(b"X = '\xff'\n")
    assert_names(load_error(package_copy), "given/pipeline.py", None)


def test_custom_checks_run_in_a_sandbox_unless_the_loader_vouches_for_the_author(demo_dir):
    # Files from anywhere (the database, a zip, the browser): sandboxed by default, so a new caller
    # cannot run a coach's check code in the worker by forgetting a flag.
    assert package_from_files(read_package_files(demo_dir)).checks_in_sandbox is True
    # A folder of the repository on the worker's disk is reviewed code.
    assert load_package_dir(demo_dir).checks_in_sandbox is False
