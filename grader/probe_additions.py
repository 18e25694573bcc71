"""Whether a package's probe files changed only by adding new definitions: when a mutation record can keep its kills.

Place in the flow: ``python -m grader mutants PACKAGE --carry-over REV``
(grader/mutants.py, ``carry_over_record``). A round of issue 27 adds a probe
to a package, and its mutation record then stops matching what a mutant's
grading reads; grading every mutant again is 40 hidden runs, an hour or more
for the big packages. But each probe runs in a process of its own: if every
probe of ``REV`` runs the same code as before, a mutant it failed still fails
it, so a mutant killed then is killed now, and only the survivors need
grading again (the new probe may kill them).

"The same code" is checked on the syntax trees, not trusted: each probe file
(``probes/*.py``) must be its old self plus top-level definitions of names
it did not define before (functions and classes, a probe with its decorator
among them; imports; assignments of new names whose values call nothing, so
importing the module runs nothing new). Docstrings are left out of the
comparison: they are descriptions, read by no check. Anything else (a
changed line inside an old function, a new top-level call, a name defined
again) refuses, and the mutants must all be graded again.
"""

from __future__ import annotations

import ast

#: The files a probe's process imports: the probes themselves, their shared helpers, the trusted checks.
PROBE_PREFIX = "probes/"


def _without_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                node.body = node.body[1:] or [ast.Pass()]
    return tree


def _one_name_per_import(tree: ast.Module) -> ast.Module:
    """``from m import a, b`` as ``from m import a`` and ``from m import b``: a name added to an import is an addition."""
    body: list[ast.stmt] = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and len(node.names) > 1:
            body += [ast.ImportFrom(module=node.module, names=[alias], level=node.level) for alias in node.names]
        elif isinstance(node, ast.Import) and len(node.names) > 1:
            body += [ast.Import(names=[alias]) for alias in node.names]
        else:
            body.append(node)
    tree.body = body
    return tree


def _defined(node: ast.stmt) -> set[str]:
    """The module-level names a top-level statement binds."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {node.name}
    if isinstance(node, ast.Import | ast.ImportFrom):
        return {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AnnAssign | ast.AugAssign):
        targets = [node.target]
    names: set[str] = set()
    for target in targets:
        names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return names


def _an_addition(node: ast.stmt, old_names: set[str]) -> bool:
    """Whether ``node`` only defines names the old module did not, running nothing else when the module is imported."""
    names = _defined(node)
    if not names or names & old_names:
        return False
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Import | ast.ImportFrom):
        return True  # a decorator (``@probe(...)``) registers the new definition, which is the point
    if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
        if not all(isinstance(t, ast.Name) for t in (node.targets if isinstance(node, ast.Assign) else [node.target])):
            return False
        return not any(isinstance(n, ast.Call | ast.Await | ast.Yield | ast.YieldFrom | ast.NamedExpr) for n in ast.walk(node.value))
    return False


def only_added(old: str, new: str) -> str | None:
    """None when ``new`` is ``old`` with top-level definitions of new names added; else what differs, in a line."""
    try:
        old_tree = _one_name_per_import(ast.parse(old))
        new_tree = _one_name_per_import(ast.parse(new))
    except SyntaxError as exc:
        return f"does not parse ({exc.msg}, line {exc.lineno})"
    _without_docstrings(old_tree)
    _without_docstrings(new_tree)
    old_names = set().union(*(_defined(n) for n in old_tree.body)) if old_tree.body else set()
    kept = [n for n in new_tree.body if not _an_addition(n, old_names)]
    old_dumps = [ast.dump(n) for n in old_tree.body]
    new_dumps = [ast.dump(n) for n in kept]
    if old_dumps == new_dumps:
        return None
    for position, (was, now) in enumerate(zip(old_dumps, new_dumps, strict=False)):
        if was != now:
            return f"top-level statement {position + 1} of the old file changed (line {getattr(kept[position], 'lineno', '?')} now)"
    if len(new_dumps) > len(old_dumps):
        extra = kept[len(old_dumps)]
        return f"line {getattr(extra, 'lineno', '?')} is not a definition of a new name that runs nothing on import"
    return "a top-level statement of the old file is gone"


def probe_files_only_added(old: dict[str, bytes], new: dict[str, bytes]) -> list[str]:
    """Why the probe files of ``new`` are not ``old``'s with definitions added (empty when they are), one line per file."""
    problems = []
    for path in sorted(p for p in set(old) | set(new) if p.startswith(PROBE_PREFIX) and p.endswith(".py")):
        if path not in new:
            problems.append(f"{path} is gone")
        elif path not in old:
            problems.append(f"{path} is new")  # a new module could be imported by an old one: not an addition
        elif old[path] != new[path]:
            why = only_added(old[path].decode("utf-8", "replace"), new[path].decode("utf-8", "replace"))
            if why is not None:
                problems.append(f"{path}: {why}")
    return problems
