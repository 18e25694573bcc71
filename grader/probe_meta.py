"""Read probe declarations from a probe file's source, without running it.

The ``@probe(...)`` decorator's arguments decide how an observation is
checked and how much it is worth. They must come from the package as the
coach wrote it, not from the sandbox, where the candidate's code could
rewrite the registry. So the trusted worker parses the file with ``ast`` and
accepts only literal arguments.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from grader.errors import PackageError
from sandbox.runner.codec import AST_LOCK

_ALLOWED = {"category", "weight", "check", "rtol", "atol", "hints", "timeout"}


@dataclass(frozen=True)
class ProbeSpec:
    name: str
    category: str
    weight: float = 1.0
    check: str = "auto"
    rtol: float | None = None
    atol: float | None = None
    hints: tuple[str, ...] = ()
    timeout: float | None = None
    description: str = ""


def _is_probe_decorator(node: ast.expr) -> ast.Call | None:
    if isinstance(node, ast.Call):
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        if name == "probe":
            return node
    return None


def parse_probe_file(source: str, path: str) -> tuple[ProbeSpec, ...]:
    """Return the probes declared in ``source``, in order; PackageError on bad declarations."""
    try:
        with AST_LOCK:
            tree = ast.parse(source, filename=path)
    except SyntaxError as exc:
        raise PackageError(f"syntax error on line {exc.lineno}: {exc.msg}", path=path) from None
    specs: list[ProbeSpec] = []
    seen: set[str] = set()
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        calls = [c for c in (_is_probe_decorator(d) for d in node.decorator_list) if c is not None]
        if not calls:
            continue
        if len(calls) > 1:
            raise PackageError(f"probe '{node.name}' has more than one @probe decorator", path=path)
        call = calls[0]
        if call.args:
            raise PackageError(f"probe '{node.name}': @probe takes keyword arguments only", path=path)
        meta: dict[str, object] = {}
        for kw in call.keywords:
            if kw.arg not in _ALLOWED:
                raise PackageError(
                    f"probe '{node.name}': unknown argument (allowed: {', '.join(sorted(_ALLOWED))})",
                    path=path,
                    field=str(kw.arg),
                )
            try:
                meta[kw.arg] = ast.literal_eval(kw.value)
            except (ValueError, TypeError):  # TypeError: an unhashable key, {[1]: 2}
                raise PackageError(f"probe '{node.name}': must be a literal", path=path, field=kw.arg) from None
        if node.name in seen:
            raise PackageError(f"probe '{node.name}' is declared twice", path=path)
        seen.add(node.name)
        specs.append(_build_spec(node, meta, path))
    return tuple(specs)


def _number(name: str, key: str, value: object, path: str, *, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise PackageError(f"probe '{name}': must be a number from {low} to {high}", path=path, field=key)
    return float(value)


def _build_spec(node: ast.FunctionDef, meta: dict[str, object], path: str) -> ProbeSpec:
    name = node.name
    category = meta.get("category")
    if not isinstance(category, str) or not category:
        raise PackageError(f"probe '{name}': category is required (a string)", path=path, field="category")
    check = meta.get("check", "auto")
    if not isinstance(check, str) or not check.isidentifier():
        raise PackageError(f"probe '{name}': must be 'auto', 'exact' or a function name", path=path, field="check")
    hints = meta.get("hints", [])
    if not isinstance(hints, list | tuple) or not all(isinstance(h, str) for h in hints):
        raise PackageError(f"probe '{name}': must be a list of strings", path=path, field="hints")
    doc = ast.get_docstring(node) or ""
    return ProbeSpec(
        name=name,
        category=category,
        weight=_number(name, "weight", meta.get("weight", 1), path, low=0, high=1000),
        check=check,
        rtol=_number(name, "rtol", meta["rtol"], path, low=0, high=1e6) if "rtol" in meta else None,
        atol=_number(name, "atol", meta["atol"], path, low=0, high=1e6) if "atol" in meta else None,
        hints=tuple(hints),
        timeout=_number(name, "timeout", meta["timeout"], path, low=0.1, high=600) if "timeout" in meta else None,
        description=doc.strip().splitlines()[0] if doc.strip() else "",
    )
