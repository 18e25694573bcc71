"""Read a challenge package and check it against the challenge.toml schema: files in, a :class:`Package` out.

Place in the flow: every package enters here, as a folder of the repository
(:func:`load_package_dir`) or as {relative path: bytes} from the database, a
zip or the browser (:func:`package_from_files`); the result is the immutable
:class:`grader.package.Package`. Validated in one place, and every error
names the file and the field at fault, because the person reading it is a
coach fixing their package.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path
from typing import Any

from grader.errors import PackageError
from grader.package import (
    DIFFICULTIES,
    ENTRY_RE,
    GIVEN_RE,
    RUNTIMES,
    SLUG_RE,
    ExpectedVerdict,
    Hint,
    Limits,
    Package,
    version_of,
)
from grader.probe_meta import parse_probe_file
from grader.solution_edits import materialise
from grader.source_rules import SourceRules
from sandbox.runner.profiles import PRELOADS, PROFILES
from sandbox.warm import WARMABLE

MAX_PACKAGE_BYTES = 16 * 1024 * 1024


# Tool output a package folder may hold that is not package content: skipped
# when the folder is read, so a test run or an editor cannot change the version.
_IGNORED_PARTS = {"__pycache__", ".pytest_cache", ".mypy_cache", ".DS_Store"}


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


class TomlFields:
    """Typed access to a TOML table with errors that name the field."""

    def __init__(self, table: dict[str, Any], path: str, prefix: str = "") -> None:
        self.table, self.path, self.prefix = table, path, prefix

    def fail(self, key: str, message: str) -> PackageError:
        return PackageError(message, path=self.path, field=self.prefix + key)

    def text(self, key: str, default: str | None = None, *, choices: tuple[str, ...] | None = None) -> str:
        value = self.table.get(key, default)
        if value is None:
            raise self.fail(key, "is required")
        if not isinstance(value, str) or not value.strip():
            raise self.fail(key, "must be a non-empty string")
        if choices and value not in choices:
            raise self.fail(key, f"must be one of {', '.join(choices)} (got '{value}')")
        return value

    def num(self, key: str, default: float | None = None, *, low: float, high: float) -> float:
        value = self.table.get(key, default)
        if value is None:
            raise self.fail(key, "is required")
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(key, "must be a number")
        if not low <= value <= high:
            raise self.fail(key, f"must be between {low} and {high} (got {value})")
        return float(value)

    def str_list(self, key: str) -> tuple[str, ...]:
        value = self.table.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise self.fail(key, "must be a list of non-empty strings")
        return tuple(value)


# What challenge.toml may hold, per table: a key outside these is a typo whose value would be silently ignored
# (a misspelt `probe_second` left the default limit in force), so it is refused with the keys that exist.
TOP_LEVEL_KEYS = ("slug", "title", "track", "difficulty", "tags", "summary", "runtime", "entry", "limits", "hints", "rules", "warm", "preload")


LIMIT_KEYS = ("probe_seconds", "wall_seconds", "memory_mb")

HINT_KEYS = ("id", "tier", "tags", "text")


def _refuse_unknown_keys(table: dict[str, Any], known: tuple[str, ...], toml_path: str, where: str, field: str | None = None) -> None:
    """A key of ``table`` outside ``known`` is refused, naming it (or ``field``) and the keys ``where`` has."""
    unknown = sorted(set(table) - set(known))
    if unknown:
        raise PackageError(f"unknown key(s) {', '.join(unknown)}; {where} has {', '.join(known)}", path=toml_path, field=field or unknown[0])


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
    _refuse_unknown_keys(meta, TOP_LEVEL_KEYS, toml_path, "challenge.toml")
    f = TomlFields(meta, toml_path)
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
    for optional in ("probes/common.py", "learn.md"):
        if optional in files:
            _text(files, optional, origin)  # UTF-8, named in the error if not
    _check_given(files, origin)
    checks = _defined_functions(_text(files, "probes/checks.py", origin), f"{origin}/probes/checks.py") if "probes/checks.py" in files else set()
    for spec, probe_file in [(p, "public") for p in public] + [(p, "hidden") for p in hidden]:
        if spec.check not in ("auto", "exact") and spec.check not in checks:
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
        solutions=(solutions := _parse_solutions(files, origin)),
        solution_sources=_solution_sources(files, solutions, _text(files, f"reference/{entry}", origin), entry, origin),
        warm=_parse_warm(f, runtime),
        preload=_parse_preload(f, runtime),
        rules=_parse_rules(meta, toml_path),
        files=dict(files),
        version=version_of(files),
        checks_in_sandbox=checks_in_sandbox,
    )


def _solution_sources(files: dict[str, bytes], solutions: tuple[ExpectedVerdict, ...], reference: str, entry: str, origin: str) -> dict[str, bytes]:
    """Each shipped solution's source: its .py, or its .patch applied to the reference or to the shipped solution its
    header names (PackageError if it no longer applies, names no shipped solution, or edits go round in a circle)."""
    names = {solution.name for solution in solutions}
    sources: dict[str, bytes] = {}

    def source(name: str, chain: tuple[str, ...]) -> bytes:
        if name in sources:
            return sources[name]
        edit = f"solutions/{name}.patch"
        if edit not in files:
            sources[name] = files[f"solutions/{name}.py"]
            return sources[name]

        def base_code(base: str) -> str:
            if base not in names:
                raise PackageError(f"is an edit of solutions/{base}.py, which is not a solution of expected.toml", path=edit)
            if base in chain or base == name:
                circle = " -> ".join(f"solutions/{n}.patch" for n in (*chain, name, base))
                raise PackageError(f"edits that are edits of each other, in a circle: {circle}", path=edit)
            return source(base, (*chain, name)).decode("utf-8")

        patch = _text(files, edit, origin)
        sources[name] = materialise(patch, reference=reference, solution_code=base_code, origin=f"{origin}/{edit}").encode("utf-8")
        return sources[name]

    for solution in solutions:
        source(solution.name, ())
    return sources


def _defined_functions(source: str, path: str) -> set[str]:
    """The names of the functions a module defines at its top level (a custom check must be one of them).

    Read from its syntax tree, not its text: ``def name(`` in a comment, a
    string or a nested function is not a check the grader can call.
    """
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as exc:
        raise PackageError(f"does not compile: {exc.msg} (line {exc.lineno})", path=path) from None
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}


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


def _parse_warm(f: TomlFields, runtime: str) -> tuple[str, ...]:
    warm = f.str_list("warm")
    for name in warm:
        if name not in WARMABLE:
            raise f.fail("warm", f"must list only {', '.join(WARMABLE)} (got '{name}')")
    if "inductor" in warm and "torch" not in PROFILES[runtime]:
        raise f.fail("warm", f"an inductor cache needs a runtime with torch (this package runs in '{runtime}')")
    if "torch-headers" in warm and "torch" not in PROFILES[runtime]:
        raise f.fail("warm", f"precompiled torch headers need a runtime with torch (this package runs in '{runtime}')")
    # The compile cache's entries are IREE's compiles, keyed on its version: a runtime without IREE has none to reuse.
    if "compile" in warm and "iree.compiler" not in PROFILES[runtime]:
        raise f.fail("warm", f"a compile cache needs a runtime with IREE's compiler (this package runs in '{runtime}')")
    return warm


def _parse_preload(f: TomlFields, runtime: str) -> tuple[str, ...]:
    preload = f.str_list("preload")
    for name in preload:
        if name not in PRELOADS:
            raise f.fail("preload", f"must list only {', '.join(PRELOADS)} (got '{name}')")
        if not all(module.split(".")[0] in PROFILES[runtime] for module in PRELOADS[name]):
            raise f.fail("preload", f"'{name}' imports {', '.join(PRELOADS[name])}, which the '{runtime}' runtime does not have")
    return preload


_RULE_KEYS = ("forbidden", "why", "sealed", "allowed_modules")


def _parse_rules(meta: dict[str, Any], toml_path: str) -> SourceRules:
    table = meta.get("rules", {})
    if not isinstance(table, dict):
        raise PackageError("must be a table", path=toml_path, field="rules")
    _refuse_unknown_keys(table, _RULE_KEYS, toml_path, "a [rules] table", field="rules")
    rf = TomlFields(table, toml_path, "rules.")
    sealed = table.get("sealed", False)
    if not isinstance(sealed, bool):
        raise rf.fail("sealed", "must be true or false")
    modules = rf.str_list("allowed_modules")
    for module in modules:
        if not all(part.isidentifier() for part in module.split(".")):
            raise rf.fail("allowed_modules", f"must list dotted module names (got '{module}')")
    why = table.get("why", "")
    if not isinstance(why, str):
        raise rf.fail("why", "must be a string")
    return SourceRules(forbidden=rf.str_list("forbidden"), why=why.strip(), sealed=sealed, allowed_modules=modules)


def _parse_limits(meta: dict[str, Any], toml_path: str) -> Limits:
    limits_table = meta.get("limits", {})
    if not isinstance(limits_table, dict):
        raise PackageError("must be a table", path=toml_path, field="limits")
    _refuse_unknown_keys(limits_table, LIMIT_KEYS, toml_path, "[limits]")
    lf = TomlFields(limits_table, toml_path, "limits.")
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
        _refuse_unknown_keys(table, HINT_KEYS, toml_path, "a [[hints]] entry")
        hf = TomlFields(table, toml_path, f"hints[{i}].")
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
        whole, edit = f"solutions/{name}.py" in files, f"solutions/{name}.patch" in files
        if not whole and not edit:
            raise PackageError(f"names solutions/{name}.py (or .patch), which does not exist", path=path, field=name)
        if whole and edit:
            raise PackageError(f"solutions/{name}.py and solutions/{name}.patch both exist: keep one", path=path, field=name)
        _refuse_unknown_keys(entry, _SOLUTION_KEYS, path, f"a solution's table [{name}]", field=name)
        ef = TomlFields(entry, path, f"{name}.")

        def opt(key: str, ef: TomlFields = ef, entry: dict[str, Any] = entry) -> float | None:
            return ef.num(key, low=0, high=100) if key in entry else None

        out.append(
            ExpectedVerdict(
                name=name,
                verdict=ef.text("verdict"),
                score=opt("score"),
                score_below=opt("score_below"),
                score_at_least=opt("score_at_least"),
                why=str(entry.get("why", "")),
                diagnosis=ef.text("diagnosis").strip() if "diagnosis" in entry else "",
                family=ef.text("family").strip() if "family" in entry else "",
                varying=_probe_names(entry.get("varying", []), path, f"{name}.varying"),
            )
        )
    return tuple(out)


def _probe_names(value: Any, path: str, field: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise PackageError("must be a list of probe names", path=path, field=field)
    return tuple(value)


_SOLUTION_KEYS = ("verdict", "score", "score_below", "score_at_least", "why", "diagnosis", "family", "varying")
