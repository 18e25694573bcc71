"""The authoring package layer: challenge.toml writer, Draft <-> files, zip import/export and its refusals."""

from __future__ import annotations

import io
import stat
import tomllib
import zipfile
from pathlib import Path

import pytest

from grader.errors import PackageError
from grader.package import version_of
from grader.package_load import package_from_files, read_package_files
from web.authoring.draft import Draft, HintRow, challenge_toml, draft_from_package, draft_to_files, new_draft
from web.authoring.toml_writer import toml_string, toml_value
from web.authoring.zipfiles import MAX_FILES, MAX_UNCOMPRESSED_BYTES, MAX_ZIP_BYTES, ZipRefused, read_package_zip, write_package_zip

REPO = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).parent / "fixtures" / "challenges" / "basics" / "add-two"
NASTY = [
    'quote " and backslash \\ and \\n literally',
    "tab\there, newline\nand CR\r\nend",
    'triple """ quotes """" and a trailing quote"',
    "control \x00\x01\x1f\x7f chars",
    "unicode: ∇ ünïcødé 🚀 \u2028 \ufeff",
    "\nstarts with a newline",
    "ends with a backslash \\",
    "",
]


@pytest.mark.parametrize("text", NASTY)
def test_toml_strings_parse_back_to_exactly_the_text(text: str) -> None:
    for multiline in (False, True):
        assert tomllib.loads(f"x = {toml_string(text, multiline=multiline)}\n")["x"] == text


def test_toml_values_numbers_and_lists() -> None:
    parsed = tomllib.loads("\n".join(f"k{i} = {toml_value(v)}" for i, v in enumerate([10.0, 0.25, 1e-9, 512, ["a", 'b"c', ""]])))
    assert parsed == {"k0": 10, "k1": 0.25, "k2": 1e-9, "k3": 512, "k4": ["a", 'b"c', ""]}
    with pytest.raises(ValueError, match="finite"):
        toml_value(float("inf"))
    with pytest.raises(TypeError):
        toml_value(True)


def _nasty_draft() -> Draft:
    base = new_draft(slug="nasty-strings", track="basics")
    hints = tuple(HintRow(f"h{i}", 1 + i % 3, (f"t{i}",), text or "x") for i, text in enumerate(NASTY))
    changes = {"title": NASTY[0], "summary": NASTY[2], "tags": ("a b", 'q"t'), "hints": hints}
    return Draft(**{**base.__dict__, **changes, "probe_seconds": 2.5, "wall_seconds": 30, "memory_mb": 256})


def test_a_draft_round_trips_through_the_graders_parser() -> None:
    draft = _nasty_draft()
    package = package_from_files(draft_to_files(draft))
    assert draft_from_package(package) == draft
    assert package.title == NASTY[0] and package.hints[1].text == NASTY[1]
    assert package.limits.probe_seconds == 2.5 and package.limits.memory_mb == 256


def test_every_repository_package_reads_back_into_the_form_and_writes_equivalent_toml() -> None:
    """Any package in challenges/ opened in the browser gives a challenge.toml the grader reads the same way."""
    folders = sorted(p.parent for p in (REPO / "challenges").glob("*/*/challenge.toml"))
    assert len(folders) > 10
    for folder in folders:
        files = read_package_files(folder)
        package = package_from_files(files)
        draft = draft_from_package(package)
        rewritten = package_from_files({**files, "challenge.toml": challenge_toml(draft).encode()})
        assert draft_from_package(rewritten) == draft, folder
        assert (rewritten.hints, rewritten.limits, rewritten.warm) == (package.hints, package.limits, package.warm), folder


def test_unchanged_fields_keep_the_original_toml_bytes_and_the_version() -> None:
    files = read_package_files(FIXTURE)
    draft = draft_from_package(package_from_files(files))
    assert draft_to_files(draft, files) == files
    changed = draft_to_files(Draft(**{**draft.__dict__, "title": "Add two, again"}), files)
    assert changed["challenge.toml"] != files["challenge.toml"]
    assert package_from_files(changed).title == "Add two, again"


def test_files_the_form_does_not_edit_are_kept_and_an_entry_rename_moves_the_code() -> None:
    files = read_package_files(FIXTURE)
    files["probes/checks.py"] = b"def close(actual, expected):\n    return actual == expected\n"
    files["solutions/wrong.py"] = b"def add(a, b):\n    return 0\n"
    draft = draft_from_package(package_from_files(files))
    out = draft_to_files(Draft(**{**draft.__dict__, "entry": "adder.py"}), files)
    assert out["probes/checks.py"] == files["probes/checks.py"] and out["solutions/wrong.py"] == files["solutions/wrong.py"]
    assert "starter/solution.py" not in out and out["starter/adder.py"] == files["starter/solution.py"]
    assert package_from_files(out).entry == "adder.py"


def test_empty_common_probes_means_no_file() -> None:
    draft = new_draft(slug="x-y", track="basics")
    assert "probes/common.py" not in draft_to_files(draft)
    with_common = draft_to_files(Draft(**{**draft.__dict__, "common_probes": "K = 2\n"}))
    assert with_common["probes/common.py"] == b"K = 2\n"


def test_a_new_draft_is_a_loadable_package_once_titled() -> None:
    draft = Draft(**{**new_draft(slug="double-it", track="basics").__dict__, "title": "Double it", "summary": "Doubles."})
    package = package_from_files(draft_to_files(draft))
    assert package.runtime == "python" and len(package.public_probes) == 1 and len(package.hidden_probes) == 2
    with pytest.raises(PackageError, match="title"):
        package_from_files(draft_to_files(new_draft(slug="double-it", track="basics")))


# --- Zips ------------------------------------------------------------------------------------


def _zip(entries: dict[str, bytes], *, symlink: str | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
        if symlink:
            info = zipfile.ZipInfo(symlink)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, "/etc/passwd")
    return buffer.getvalue()


def test_export_then_import_gives_the_same_files_and_version() -> None:
    for folder in (FIXTURE, REPO / "challenges" / "framework-internals" / "implement-engine-execute"):
        files = read_package_files(folder)
        data = write_package_zip(files, folder.name)
        assert read_package_zip(data) == files
        assert version_of(read_package_zip(data)) == version_of(files)
        assert write_package_zip(files, folder.name) == data  # deterministic
        names = zipfile.ZipFile(io.BytesIO(data)).namelist()
        assert all(name.startswith(f"{folder.name}/") for name in names)


def test_a_zip_without_a_top_folder_and_editor_litter_is_accepted() -> None:
    files = read_package_files(FIXTURE)
    litter = {"__MACOSX/._x": b"x", "probes/__pycache__/p.cpython-311.pyc": b"\0", ".DS_Store": b"\0"}
    assert read_package_zip(_zip({**files, **litter})) == files


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ({"../evil.py": b"x", "challenge.toml": b""}, "outside the package"),
        ({"pkg/../../evil.py": b"x", "pkg/challenge.toml": b""}, "outside the package"),
        ({"/etc/cron.d/x": b"x", "challenge.toml": b""}, "absolute path"),
        ({"C:/x.py": b"x", "challenge.toml": b""}, "absolute path"),
        ({"pkg\\x.py": b"x", "challenge.toml": b""}, "backslash"),
        ({"a/challenge.toml": b"", "b/statement.md": b""}, "no challenge.toml"),
        ({"statement.md": b"x"}, "no challenge.toml"),
        ({}, "no files"),
    ],
)
def test_unsafe_or_shapeless_zips_are_refused_naming_the_problem(entries: dict[str, bytes], message: str) -> None:
    with pytest.raises(ZipRefused, match=message):
        read_package_zip(_zip(entries))


def test_symlinks_are_refused() -> None:
    with pytest.raises(ZipRefused, match="symbolic link"):
        read_package_zip(_zip({"challenge.toml": b""}, symlink="starter/solution.py"))


def test_not_a_zip_and_size_limits() -> None:
    with pytest.raises(ZipRefused, match="not a zip"):
        read_package_zip(b"PK\x03\x04 this is not really a zip")
    with pytest.raises(ZipRefused, match="limit is"):
        read_package_zip(b"\0" * (MAX_ZIP_BYTES + 1))
    # A zip bomb: small compressed, large uncompressed.
    with pytest.raises(ZipRefused, match="unpacks to more than"):
        read_package_zip(_zip({"challenge.toml": b"", "big.bin": b"\0" * (MAX_UNCOMPRESSED_BYTES + 1)}))
    with pytest.raises(ZipRefused, match=f"limit is {MAX_FILES}"):
        read_package_zip(_zip({f"f{i}.txt": b"" for i in range(MAX_FILES + 1)}))
