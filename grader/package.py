"""Challenge packages: load, validate and version them.

A package is a folder ``challenges/<track>/<slug>/`` (format in
docs/challenge-format.md) or the same set of files stored in the database.
Both arrive here as a mapping of relative paths to bytes, are validated in
one place, and become an immutable :class:`Package`. Every error names the
file and the field at fault, because the person reading it is a coach
fixing their package.

The version is the SHA-256 of every file's path and content: two packages
with the same version grade the same way, which is what lets expected
observations be cached and lets a submission record what it was graded on.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import tomllib
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader.errors import PackageError
from grader.probe_meta import ProbeSpec, parse_probe_file
from grader.source_rules import SourceRules
from sandbox.runner.profiles import PRELOADS, PROFILES, VARIANT_OF
from sandbox.warm import WARMABLE

# A package's runtime is the sandbox profile it runs in, or the one whose
# lighter variant it runs in (grader/sandbox_profile.py).
RUNTIMES = tuple(p for p in PROFILES if p not in VARIANT_OF)
DIFFICULTIES = ("warm-up", "easy", "medium", "hard")
SLUG_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
ENTRY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\.py$")
# given/<name>.py: a read-only module the candidate sees and imports as given.<name>.
GIVEN_RE = re.compile(r"^given/([A-Za-z_][A-Za-z0-9_]*)\.py$")

MAX_PACKAGE_BYTES = 16 * 1024 * 1024
# The result of the mutation analysis of the reference (grader/mutants.py).
MUTANTS_RECORD = "solutions/mutants.toml"
# Tool output a package folder may hold that is not package content: skipped
# when the folder is read, so a test run or an editor cannot change the version.
_IGNORED_PARTS = {"__pycache__", ".pytest_cache", ".mypy_cache", ".DS_Store"}


@dataclass(frozen=True)
class Limits:
    probe_seconds: float
    wall_seconds: float
    memory_mb: int


@dataclass(frozen=True)
class Hint:
    id: str
    tier: int
    tags: tuple[str, ...]
    text: str


@dataclass(frozen=True)
class ExpectedVerdict:
    """What a shipped solution in ``solutions/`` must get on the hidden probes."""

    name: str
    verdict: str
    score: float | None = None
    score_below: float | None = None
    score_at_least: float | None = None
    why: str = ""


@dataclass(frozen=True)
class Package:
    slug: str
    title: str
    track: str
    difficulty: str
    tags: tuple[str, ...]
    summary: str
    runtime: str
    entry: str
    limits: Limits
    hints: tuple[Hint, ...]
    statement: str
    starter_code: str
    reference_code: str
    public_probes: tuple[ProbeSpec, ...]
    hidden_probes: tuple[ProbeSpec, ...]
    solutions: tuple[ExpectedVerdict, ...]
    files: dict[str, bytes] = field(repr=False, compare=False)
    version: str = ""
    # Compiler caches the sandbox environment pre-fills from this package's
    # reference (sandbox/warm.py): "inductor" (TorchInductor's kernels) and
    # "compile" (the IREE compiles its probes send through compile_cache);
    # "torch-headers" asks for torch's ATen.h precompiled for the candidates'
    # own C++ extensions (sandbox/runner/torch_headers.py).
    warm: tuple[str, ...] = ()
    # Library modules the runner imports once before it forks the probes
    # (sandbox/runner/profiles.py: PRELOADS); only "inductor" exists.
    preload: tuple[str, ...] = ()
    # Run probes/checks.py in a sandbox rather than in the worker
    # (grader/sandboxed_checks.py). True unless the caller vouches for the
    # package's author: a package from files (the database, a zip, the
    # browser) is untrusted by default; a folder of the repository on the
    # worker's disk (load_package_dir) and the repository's synced versions
    # (web/challenges/services.py: challenge_package) are reviewed code.
    checks_in_sandbox: bool = True
    # The statement's rules checked on the source before it runs (grader/source_rules.py).
    rules: SourceRules = field(default_factory=SourceRules)

    def probes(self, public: bool) -> tuple[ProbeSpec, ...]:
        return self.public_probes if public else self.hidden_probes

    def narrowed(self, public: bool, names: Collection[str]) -> Package:
        """This package with only the named public or hidden probes, in their order: what a run of those alone is judged on."""
        kept = tuple(s for s in self.probes(public) if s.name in names)
        if public:
            return dataclasses.replace(self, public_probes=kept)
        return dataclasses.replace(self, hidden_probes=kept)

    def probe_source(self, public: bool) -> bytes:
        return self.files["probes/public.py" if public else "probes/hidden.py"]

    @property
    def checks_source(self) -> bytes | None:
        return self.files.get("probes/checks.py")

    @property
    def common_source(self) -> bytes | None:
        """``probes/common.py``: machinery both probe files import as ``probe_common``."""
        return self.files.get("probes/common.py")

    @property
    def given_sources(self) -> dict[str, bytes]:
        """``given/<name>.py`` by module name: read-only modules the candidate sees, imported as ``given.<name>``."""
        return given_sources(self.files)


def given_sources(files: dict[str, bytes]) -> dict[str, bytes]:
    """The package's ``given/`` modules in ``files``, {module name: source}, sorted by name."""
    found = {}
    for path in sorted(files):
        match = GIVEN_RE.match(path)
        if match:
            found[match.group(1)] = files[path]
    return found


def version_of(files: dict[str, bytes]) -> str:
    digest = hashlib.sha256()
    for path in sorted(files):
        data = files[path]
        digest.update(path.encode() + b"\0" + str(len(data)).encode() + b"\0" + data)
    return digest.hexdigest()


def version_without_mutants(files: dict[str, bytes]) -> str:
    """The version of the package without its mutation record: the version that record names.

    ``solutions/mutants.toml`` (grader/mutants.py) records the package version
    its mutants were graded on; it cannot record the version of a package
    that holds it, since writing it would change that version.
    """
    return version_of({path: data for path, data in files.items() if path != MUTANTS_RECORD})


def read_package_files(folder: Path) -> dict[str, bytes]:
    """Read every file of a package folder into memory, refusing links and bulk."""
    if not folder.is_dir():
        raise PackageError("not a folder", path=str(folder))
    files: dict[str, bytes] = {}
    total = 0
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if any(part in _IGNORED_PARTS or part.endswith(".pyc") for part in rel.parts):
            continue
        if path.is_symlink():
            raise PackageError("symbolic links are not allowed in a package", path=str(path))
        if path.is_dir():
            continue
        data = path.read_bytes()
        total += len(data)
        if total > MAX_PACKAGE_BYTES:
            raise PackageError(f"package is larger than {MAX_PACKAGE_BYTES} bytes", path=str(folder))
        files[rel.as_posix()] = data
    return files


def load_package_dir(folder: Path | str) -> Package:
    """Load and validate the package in ``folder``; slug and track must match the path."""
    folder = Path(folder)
    # A folder of the repository: reviewed code, its checks run in the worker.
    package = package_from_files(read_package_files(folder), origin=str(folder), checks_in_sandbox=False)
    if package.slug != folder.name:
        raise PackageError(
            f"slug '{package.slug}' does not match the folder name '{folder.name}'",
            path=str(folder / "challenge.toml"),
            field="slug",
        )
    if package.track != folder.parent.name:
        raise PackageError(
            f"track '{package.track}' does not match the parent folder '{folder.parent.name}'",
            path=str(folder / "challenge.toml"),
            field="track",
        )
    return package


def discover_packages(root: Path | str) -> list[Path]:
    """Every ``<root>/<track>/<slug>`` folder holding a challenge.toml, sorted."""
    return sorted(p.parent for p in Path(root).glob("*/*/challenge.toml"))


def _text(files: dict[str, bytes], name: str, origin: str) -> str:
    if name not in files:
        raise PackageError("file is missing", path=f"{origin}/{name}")
    try:
        return files[name].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PackageError(f"not valid UTF-8 at byte {exc.start}", path=f"{origin}/{name}") from None


class _Fields:
    """Typed access to a TOML table with errors that name the field."""

    def __init__(self, table: dict[str, Any], path: str, prefix: str = "") -> None:
        self.table, self.path, self.prefix = table, path, prefix

    def _fail(self, key: str, message: str) -> PackageError:
        return PackageError(message, path=self.path, field=self.prefix + key)

    def text(self, key: str, default: str | None = None, *, choices: tuple[str, ...] | None = None) -> str:
        value = self.table.get(key, default)
        if value is None:
            raise self._fail(key, "is required")
        if not isinstance(value, str) or not value.strip():
            raise self._fail(key, "must be a non-empty string")
        if choices and value not in choices:
            raise self._fail(key, f"must be one of {', '.join(choices)} (got '{value}')")
        return value

    def num(self, key: str, default: float | None = None, *, low: float, high: float) -> float:
        value = self.table.get(key, default)
        if value is None:
            raise self._fail(key, "is required")
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self._fail(key, "must be a number")
        if not low <= value <= high:
            raise self._fail(key, f"must be between {low} and {high} (got {value})")
        return float(value)

    def str_list(self, key: str) -> tuple[str, ...]:
        value = self.table.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise self._fail(key, "must be a list of non-empty strings")
        return tuple(value)


def package_from_files(files: dict[str, bytes], *, origin: str = "<package>", checks_in_sandbox: bool = True) -> Package:
    """Validate a package given as {relative path: bytes} and build it.

    Its custom checks run in a sandbox unless ``checks_in_sandbox=False``
    says its author is trusted (see ``Package.checks_in_sandbox``).
    """
    toml_path = f"{origin}/challenge.toml"
    try:
        meta = tomllib.loads(_text(files, "challenge.toml", origin))
    except tomllib.TOMLDecodeError as exc:
        raise PackageError(f"invalid TOML: {exc}", path=toml_path) from None
    f = _Fields(meta, toml_path)
    slug = f.text("slug")
    if not SLUG_RE.match(slug):
        raise PackageError("must be lowercase words joined by '-'", path=toml_path, field="slug")
    track = f.text("track")
    if not SLUG_RE.match(track):
        raise PackageError("must be lowercase words joined by '-'", path=toml_path, field="track")
    entry = f.text("entry", "solution.py")
    if not ENTRY_RE.match(entry):
        raise PackageError("must be a Python file name such as solution.py", path=toml_path, field="entry")

    limits = _parse_limits(meta, toml_path)

    hints = _parse_hints(meta.get("hints", []), toml_path)
    runtime = f.text("runtime", choices=RUNTIMES)

    public = parse_probe_file(_text(files, "probes/public.py", origin), f"{origin}/probes/public.py")
    hidden = parse_probe_file(_text(files, "probes/hidden.py", origin), f"{origin}/probes/hidden.py")
    if not public:
        raise PackageError("declares no probes", path=f"{origin}/probes/public.py")
    if not hidden:
        raise PackageError("declares no probes", path=f"{origin}/probes/hidden.py")
    if "probes/common.py" in files:
        _text(files, "probes/common.py", origin)  # UTF-8, named in the error if not
    _check_given(files, origin)
    checks_text = _text(files, "probes/checks.py", origin) if "probes/checks.py" in files else ""
    for spec, probe_file in [(p, "public") for p in public] + [(p, "hidden") for p in hidden]:
        if spec.check not in ("auto", "exact") and f"def {spec.check}(" not in checks_text:
            raise PackageError(
                f"probe '{spec.name}' names check '{spec.check}', which probes/checks.py does not define",
                path=f"{origin}/probes/{probe_file}.py",
                field="check",
            )

    return Package(
        slug=slug,
        title=f.text("title"),
        track=track,
        difficulty=f.text("difficulty", choices=DIFFICULTIES),
        tags=f.str_list("tags"),
        summary=f.text("summary"),
        runtime=runtime,
        entry=entry,
        limits=limits,
        hints=hints,
        statement=_text(files, "statement.md", origin),
        starter_code=_text(files, f"starter/{entry}", origin),
        reference_code=_text(files, f"reference/{entry}", origin),
        public_probes=public,
        hidden_probes=hidden,
        solutions=_parse_solutions(files, origin),
        warm=_parse_warm(f, runtime),
        preload=_parse_preload(f, runtime),
        rules=_parse_rules(meta, toml_path),
        files=dict(files),
        version=version_of(files),
        checks_in_sandbox=checks_in_sandbox,
    )


def _check_given(files: dict[str, bytes], origin: str) -> None:
    """``given/`` holds only Python modules, each UTF-8 text that compiles.

    The runner makes ``given`` a package of exactly these modules (it has no
    ``__init__.py`` of its own), so anything else there would never be seen.
    """
    for path in sorted(p for p in files if p.startswith("given/")):
        match = GIVEN_RE.match(path)
        if not match or match.group(1) == "__init__":
            raise PackageError(
                "given/ holds only Python modules named given/<name>.py (no folders, no __init__.py), imported as given.<name>",
                path=f"{origin}/{path}",
            )
        text = _text(files, path, origin)
        try:
            compile(text, path, "exec", dont_inherit=True)
        except SyntaxError as exc:
            raise PackageError(f"syntax error at line {exc.lineno}: {exc.msg}", path=f"{origin}/{path}") from None
        except (ValueError, RecursionError, MemoryError) as exc:
            raise PackageError(f"cannot be compiled: {type(exc).__name__}", path=f"{origin}/{path}") from None


def _parse_warm(f: _Fields, runtime: str) -> tuple[str, ...]:
    warm = f.str_list("warm")
    for name in warm:
        if name not in WARMABLE:
            raise f._fail("warm", f"must list only {', '.join(WARMABLE)} (got '{name}')")
    if "inductor" in warm and "torch" not in PROFILES[runtime]:
        raise f._fail("warm", f"an inductor cache needs a runtime with torch (this package runs in '{runtime}')")
    if "torch-headers" in warm and "torch" not in PROFILES[runtime]:
        raise f._fail("warm", f"precompiled torch headers need a runtime with torch (this package runs in '{runtime}')")
    # The compile cache's entries are IREE's compiles, keyed on its version: a runtime without IREE has none to reuse.
    if "compile" in warm and "iree.compiler" not in PROFILES[runtime]:
        raise f._fail("warm", f"a compile cache needs a runtime with IREE's compiler (this package runs in '{runtime}')")
    return warm


def _parse_preload(f: _Fields, runtime: str) -> tuple[str, ...]:
    preload = f.str_list("preload")
    for name in preload:
        if name not in PRELOADS:
            raise f._fail("preload", f"must list only {', '.join(PRELOADS)} (got '{name}')")
        if not all(module.split(".")[0] in PROFILES[runtime] for module in PRELOADS[name]):
            raise f._fail("preload", f"'{name}' imports {', '.join(PRELOADS[name])}, which the '{runtime}' runtime does not have")
    return preload


_RULE_KEYS = ("forbidden", "why", "sealed", "allowed_modules")


def _parse_rules(meta: dict[str, Any], toml_path: str) -> SourceRules:
    table = meta.get("rules", {})
    if not isinstance(table, dict):
        raise PackageError("must be a table", path=toml_path, field="rules")
    unknown = sorted(set(table) - set(_RULE_KEYS))
    if unknown:
        raise PackageError(f"unknown key(s) {', '.join(unknown)}; a [rules] table has {', '.join(_RULE_KEYS)}", path=toml_path, field="rules")
    rf = _Fields(table, toml_path, "rules.")
    sealed = table.get("sealed", False)
    if not isinstance(sealed, bool):
        raise rf._fail("sealed", "must be true or false")
    modules = rf.str_list("allowed_modules")
    for module in modules:
        if not all(part.isidentifier() for part in module.split(".")):
            raise rf._fail("allowed_modules", f"must list dotted module names (got '{module}')")
    why = table.get("why", "")
    if not isinstance(why, str):
        raise rf._fail("why", "must be a string")
    return SourceRules(forbidden=rf.str_list("forbidden"), why=why.strip(), sealed=sealed, allowed_modules=modules)


def _parse_limits(meta: dict[str, Any], toml_path: str) -> Limits:
    limits_table = meta.get("limits", {})
    if not isinstance(limits_table, dict):
        raise PackageError("must be a table", path=toml_path, field="limits")
    lf = _Fields(limits_table, toml_path, "limits.")
    return Limits(
        probe_seconds=lf.num("probe_seconds", 10, low=0.1, high=600),
        wall_seconds=lf.num("wall_seconds", 120, low=1, high=1800),
        memory_mb=int(lf.num("memory_mb", 1024, low=64, high=16384)),
    )


def limits_from_toml(text: str, origin: str = "challenge.toml") -> Limits:
    """A package's ``[limits]`` from its challenge.toml alone, defaults filled in.

    For what needs the limits without loading the whole package: the web
    sizes a grading task's time limits by them when it sends the task.
    """
    try:
        meta = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PackageError(f"invalid TOML: {exc}", path=origin) from None
    return _parse_limits(meta, origin)


def _parse_hints(raw: Any, toml_path: str) -> tuple[Hint, ...]:
    if not isinstance(raw, list):
        raise PackageError("must be an array of tables ([[hints]])", path=toml_path, field="hints")
    hints = []
    seen: set[str] = set()
    for i, table in enumerate(raw):
        if not isinstance(table, dict):
            raise PackageError("must be a table", path=toml_path, field=f"hints[{i}]")
        hf = _Fields(table, toml_path, f"hints[{i}].")
        hint_id = hf.text("id")
        if hint_id in seen:
            raise PackageError(f"duplicate hint id '{hint_id}'", path=toml_path, field=f"hints[{i}].id")
        seen.add(hint_id)
        tier = hf.num("tier", low=1, high=3)
        if tier != int(tier):
            raise PackageError("must be 1, 2 or 3", path=toml_path, field=f"hints[{i}].tier")
        tags = hf.str_list("tags")
        if not tags:
            raise PackageError("must name at least one tag", path=toml_path, field=f"hints[{i}].tags")
        hints.append(Hint(id=hint_id, tier=int(tier), tags=tags, text=hf.text("text")))
    return tuple(hints)


def _parse_solutions(files: dict[str, bytes], origin: str) -> tuple[ExpectedVerdict, ...]:
    path = f"{origin}/solutions/expected.toml"
    if "solutions/expected.toml" not in files:
        return ()
    try:
        table = tomllib.loads(_text(files, "solutions/expected.toml", origin))
    except tomllib.TOMLDecodeError as exc:
        raise PackageError(f"invalid TOML: {exc}", path=path) from None
    out = []
    for name, entry in table.items():
        if not isinstance(entry, dict):
            raise PackageError("must be a table", path=path, field=name)
        if f"solutions/{name}.py" not in files:
            raise PackageError(f"names solutions/{name}.py, which does not exist", path=path, field=name)
        ef = _Fields(entry, path, f"{name}.")

        def opt(key: str, ef: _Fields = ef, entry: dict[str, Any] = entry) -> float | None:
            return ef.num(key, low=0, high=100) if key in entry else None

        out.append(
            ExpectedVerdict(
                name=name,
                verdict=ef.text("verdict"),
                score=opt("score"),
                score_below=opt("score_below"),
                score_at_least=opt("score_at_least"),
                why=str(entry.get("why", "")),
            )
        )
    return tuple(out)


@dataclass(frozen=True)
class Track:
    """A track's page: ``challenges/<track>/track.toml`` (title, summary, description, order)."""

    slug: str
    title: str
    summary: str
    description: str
    order: tuple[str, ...]


def load_track(folder: Path | str) -> Track:
    """Load ``<folder>/track.toml``; PackageError naming the file and field on bad input.

    ``order`` lists the track's challenge slugs from warm-up to hard; the
    catalogue shows listed challenges in that order and any others after them.
    """
    folder = Path(folder)
    path = folder / "track.toml"
    try:
        meta = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PackageError("file is missing", path=str(path)) from None
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise PackageError(f"invalid TOML: {exc}", path=str(path)) from None
    f = _Fields(meta, str(path))
    order = f.str_list("order")
    if len(set(order)) != len(order):
        raise PackageError("lists a challenge twice", path=str(path), field="order")
    bad = [slug for slug in order if not SLUG_RE.match(slug)]
    if bad:
        raise PackageError(f"not a challenge slug: {', '.join(bad)}", path=str(path), field="order")
    return Track(
        slug=folder.name,
        title=f.text("title"),
        summary=f.text("summary"),
        description=f.text("description"),
        order=order,
    )


def discover_tracks(root: Path | str) -> list[Path]:
    """Every ``<root>/<track>`` folder that has a track.toml, sorted."""
    return sorted(p.parent for p in Path(root).glob("*/track.toml"))
