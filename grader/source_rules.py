"""The statement's rules that can be read off the source: checked in the worker, before the code runs.

Place in the flow: ``execute.execute_runs`` asks :func:`rule_violations` about
every code before it goes to a sandbox. A code that breaks a rule is not run;
its execution carries the violations, and ``grade.evaluate`` turns them into
the verdict ``rule_violation``, naming each line and the rule it breaks. The
source is the submitter's own, so the message may quote it in full.

Why here and not in the probes: some rules are watched from inside the
candidate's process while the probes run (a ``TorchFunctionMode`` that notes
float64 tensors or a call to softmax, a counter of compiles or cost-model
calls). The candidate's code runs in that same process and could switch a
watch off or rewrite what it reports. Nothing can watch a Python process
from outside it, but the worker can refuse, before anything runs:

- ``forbidden``: names the statement forbids (glob patterns, case-insensitive,
  leading underscores ignored), wherever code could reach them: an
  attribute (``torch.softmax``, ``x.double()``), an import, or a string that
  spells a name (``getattr(F, "softmax")``, ``dtype="float64"``);
- ``sealed``: code that could reach past a watch or a counter. Only the
  modules in :data:`SEALED_IMPORTS` (and a package's ``allowed_modules``) may
  be imported; no dynamic code (``eval``, ``exec``, ``__import__``,
  ``getattr`` with a computed name); no introspection of frames, closures,
  globals or modules; no private attribute (``torch._C``, ``obj._calls``)
  but the code's own (``self._x``).

A watch then only has to see what it was written for, and a watch switched
off is a program this module refused. What stays in-process, on purpose, is
said in docs/grading-integrity.md.
"""

from __future__ import annotations

import ast
import fnmatch
from collections.abc import Iterator
from dataclasses import dataclass

from sandbox.runner.codec import AST_LOCK

# What a sealed package's code may import (and anything below it), besides the package's allowed_modules:
# torch, numpy, and the standard library's modules that compute on values and reach no process, file, thread,
# frame or import machinery (a correct solution that hashes its dumps with hashlib or parses with re must not be
# refused). Not here, on purpose: os, sys, io, pathlib, subprocess, threading and concurrent (a thread runs outside
# the probes' per-thread watch), inspect, gc, importlib, ctypes, pickle, marshal, types, weakref, and string (its
# Formatter.get_field reads an attribute path given as a string, '0.__closure__', and returns the object).
SEALED_IMPORTS = (
    "__future__", "abc", "array", "base64", "binascii", "bisect", "cmath", "collections", "contextlib", "copy",
    "dataclasses", "datetime", "decimal", "difflib", "enum", "fractions", "functools", "hashlib", "heapq",
    "itertools", "json", "math", "numbers", "operator", "pprint", "random", "re", "statistics", "struct",
    "textwrap", "time", "typing", "typing_extensions", "unicodedata", "warnings", "zlib",
    "numpy", "torch",
)  # fmt: skip

# Built-in names that run code made at run time, or reach the interpreter's tables.
_DYNAMIC_NAMES = frozenset({"eval", "exec", "compile", "__import__", "globals", "locals", "vars", "breakpoint", "open", "__builtins__"})
# Built-ins that take an attribute name: a constant one is checked as an attribute, a computed one is refused.
_ATTRIBUTE_FUNCTIONS = frozenset({"getattr", "setattr", "delattr", "hasattr"})
# Attributes that reach frames, closures, globals, the module table, or modules a sealed package may not import.
_INTROSPECTION = frozenset({
    "__closure__", "__globals__", "__code__", "__dict__", "__builtins__", "__subclasses__", "__bases__", "__mro__",
    "__self__", "__func__", "__wrapped__", "__getattribute__", "__defaults__", "__kwdefaults__", "__traceback__",
    "__loader__", "__spec__", "__import__",
    "f_back", "f_globals", "f_locals", "f_builtins", "f_code", "tb_frame", "tb_next", "gi_frame", "cr_frame", "ag_frame",
    "sys", "os", "builtins", "inspect", "gc", "ctypes", "ctypeslib", "importlib", "subprocess", "overrides",
    "modules", "settrace", "setprofile", "meta_path",
    # attributes by a string, annotations evaluated, native code loaded
    "attrgetter", "methodcaller", "get_type_hints", "cpp_extension", "load_library",
})  # fmt: skip
# Private names that are public API in practice (torch's own docs use them in custom-op code).
_PUBLIC_PRIVATES = frozenset({"_check", "_check_is_size", "_check_with", "_assert"})
_OWN = frozenset({"self", "cls"})

MAX_VIOLATIONS = 10
_PAST = "reaches past the probes"


@dataclass(frozen=True)
class SourceRules:
    """A package's ``[rules]`` table (challenge.toml)."""

    forbidden: tuple[str, ...] = ()  # glob patterns over names
    why: str = ""  # the statement's reason, shown with each forbidden name
    sealed: bool = False
    allowed_modules: tuple[str, ...] = ()  # more imports a sealed package allows, private ones included

    @property
    def active(self) -> bool:
        return bool(self.forbidden) or self.sealed


@dataclass(frozen=True)
class Violation:
    line: int
    what: str  # the construct, as written: "torch.softmax", "import inspect"
    rule: str  # what is wrong with it, briefly
    sealed: bool = False  # refused by the seal (True) or as a forbidden name (False)
    interface: bool = False  # a definition that changes the starter's parameters (grader/interface.py)

    def __str__(self) -> str:
        return f"line {self.line}: {self.what}: {self.rule}"


def parse_source(source: str | bytes) -> ast.Module | None:
    """The submitter's code as a syntax tree, or None when it does not parse: a syntax error (the sandbox reports
    it), or nesting deep enough to exhaust the parser (hostile code must not crash the worker that reads it)."""
    try:
        with AST_LOCK:
            return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def rule_violations(rules: SourceRules, source: str | bytes) -> list[Violation]:
    """The places where ``source`` breaks ``rules``, in line order (at most MAX_VIOLATIONS).

    Code that does not parse breaks no rule here: the sandbox reports its
    syntax error as for any other package.
    """
    if not rules.active:
        return []
    tree = parse_source(source)
    if tree is None:
        return []
    found: dict[tuple[int, str], Violation] = {}
    for violation in _Walk(rules).violations(tree):
        found.setdefault((violation.line, violation.what), violation)
    return sorted(found.values(), key=lambda v: (v.line, v.what))[:MAX_VIOLATIONS]


def describe(violations: list[Violation], rules: SourceRules) -> str:
    """The message of a result whose code was refused: each line, then each rule's reason once."""
    lines = [f"- {v}" for v in violations]
    if all(v.interface for v in violations):
        return "Your code changes the parameters the starter gives, so it was not run:\n" + "\n".join([*lines, INTERFACE_WHY])
    if any(v.interface for v in violations):
        lines.append(INTERFACE_WHY)
    if rules.why and any(not v.sealed and not v.interface for v in violations):
        lines.append(f"Why: {rules.why}.")
    if any(v.sealed for v in violations):
        lines.append(
            "The probes watch this challenge's rules from inside your code's process, so code that could reach past them "
            f"is refused: imports other than {importable(rules)}; private attributes other than your own (self._x); "
            "eval, exec, open and attribute names computed at run time; introspection of frames, closures and modules."
        )
    return "Your code breaks this challenge's rules, so it was not run:\n" + "\n".join(lines)


#: Why a changed parameter list is refused, for the message (grader/interface.py).
INTERFACE_WHY = (
    "The probes call your functions as the starter defines them, by position or by a parameter's name, and leave "
    "out the parameters that have defaults: keep each parameter's name, position and default. You may add "
    "parameters that have defaults."
)


def importable(rules: SourceRules) -> str:
    """The modules a sealed package's code may import, for messages."""
    return ", ".join(sorted({m.split(".")[0] for m in SEALED_IMPORTS if m != "__future__"} | set(rules.allowed_modules)))


class _Walk:
    def __init__(self, rules: SourceRules) -> None:
        self.rules = rules
        self.patterns = tuple(p.lower() for p in rules.forbidden)
        self.allowed = tuple(rules.allowed_modules)

    def violations(self, tree: ast.AST) -> Iterator[Violation]:
        docstrings = _docstrings(tree)
        calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
        called = {id(node.func) for node in calls}
        # getattr(x, "name"): the name is checked as the attribute it is, not again as a string.
        named = {id(node.args[1]) for node in calls if _attribute_call(node)}
        for node in ast.walk(tree):
            line = getattr(node, "lineno", 0)
            if isinstance(node, ast.Attribute):
                yield from self._attribute(node.attr, _dotted(node), line, own=_is_own(node.value))
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    yield from self._module(alias.name, f"import {alias.name}", line)
            elif isinstance(node, ast.ImportFrom):
                yield from self._import_from(node, line)
            elif isinstance(node, ast.Name):
                yield from self._name(node, line, called)
            elif isinstance(node, ast.Call):
                yield from self._call(node, line)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings | named:
                yield from self._string(node.value, line)

    # ------------------------------------------------------------ each construct

    def _attribute(self, attr: str, written: str, line: int, *, own: bool) -> Iterator[Violation]:
        if own:  # the code's own objects: self.softmax_scale is a name of theirs
            return
        if self._forbidden(attr):
            yield Violation(line, written, self._forbidden_rule(attr))
        if not self.rules.sealed:
            return
        if attr in _INTROSPECTION:
            yield Violation(line, written, f"{attr} {_PAST}", sealed=True)
        elif _private(attr) and attr not in _PUBLIC_PRIVATES:
            yield Violation(line, written, f"{attr} is private", sealed=True)

    def _module(self, module: str, written: str, line: int) -> Iterator[Violation]:
        parts = module.split(".")
        for part in parts:
            if self._forbidden(part):
                yield Violation(line, written, self._forbidden_rule(part))
        if not self.rules.sealed or _within(module, self.allowed):
            return
        if not _within(module, SEALED_IMPORTS):
            yield Violation(line, written, "not an import this challenge allows", sealed=True)
        elif any(part in _INTROSPECTION or (_private(part) and part not in _PUBLIC_PRIVATES) for part in parts[1:]):
            yield Violation(line, written, f"{module} {_PAST}", sealed=True)

    def _import_from(self, node: ast.ImportFrom, line: int) -> Iterator[Violation]:
        module = node.module or ""
        if node.level:
            yield Violation(line, f"from {'.' * node.level}{module} import ...", "relative imports have nothing to import here", sealed=True)
            return
        yield from self._module(module, f"from {module} import ...", line)
        for alias in node.names:
            if alias.name == "*":
                if self.rules.active:
                    yield Violation(line, f"from {module} import *", "import names one by one: * would bring in forbidden names unseen")
                continue
            written = f"from {module} import {alias.name}"
            if self._forbidden(alias.name):
                yield Violation(line, written, self._forbidden_rule(alias.name))
            if self.rules.sealed and not _within(f"{module}.{alias.name}", self.allowed):
                if alias.name in _INTROSPECTION or (_private(alias.name) and alias.name not in _PUBLIC_PRIVATES):
                    yield Violation(line, written, f"{alias.name} {_PAST}", sealed=True)

    def _name(self, node: ast.Name, line: int, called: set[int]) -> Iterator[Violation]:
        if not self.rules.sealed:
            return
        if node.id in _DYNAMIC_NAMES:
            yield Violation(line, node.id, "code made or reached at run time", sealed=True)
        elif node.id in _ATTRIBUTE_FUNCTIONS and id(node) not in called:
            # g = getattr; g(torch, name): only a direct call shows which attribute it reads.
            yield Violation(line, node.id, f"call {node.id} directly, with the attribute's name written out", sealed=True)

    def _call(self, node: ast.Call, line: int) -> Iterator[Violation]:
        if not _attribute_call(node) or not isinstance(node.func, ast.Name):
            return
        name = node.args[1]
        written = f"{node.func.id}({_dotted(node.args[0])}, ...)"
        if isinstance(name, ast.Constant) and isinstance(name.value, str):
            yield from self._attribute(name.value, written, line, own=_is_own(node.args[0]))
        elif self.rules.sealed:
            yield Violation(line, written, "an attribute name computed at run time: write the name out", sealed=True)

    def _string(self, text: str, line: int) -> Iterator[Violation]:
        # Only a string that spells a name or a dotted path: an error message that mentions softmax is fine.
        if not self.patterns or not text or len(text) > 200 or not all(part.isidentifier() for part in text.split(".")):
            return
        for part in text.split("."):
            if self._forbidden(part):
                yield Violation(line, repr(text), self._forbidden_rule(part))
                return

    # ------------------------------------------------------------ the tests

    def _forbidden(self, name: str) -> bool:
        bare = name.lstrip("_").lower()
        return any(fnmatch.fnmatchcase(bare, pattern) for pattern in self.patterns)

    def _forbidden_rule(self, name: str) -> str:
        return f"{name} is forbidden"


def _attribute_call(node: ast.Call) -> bool:
    """``getattr(obj, name, ...)`` and its kin, called by name."""
    return isinstance(node.func, ast.Name) and node.func.id in _ATTRIBUTE_FUNCTIONS and len(node.args) >= 2


def _within(module: str, roots: tuple[str, ...]) -> bool:
    return any(module == root or module.startswith(root + ".") for root in roots)


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _is_own(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id in _OWN


def _dotted(node: ast.AST) -> str:
    """``torch.nn.functional.softmax`` as written, or ``...`` for what is not a plain dotted name."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    parts.append(node.id if isinstance(node, ast.Name) else "...")
    return ".".join(reversed(parts))


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the docstring constants of the module, its classes and functions."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                found.add(id(first.value))
    return found
