"""The layering rule (DESIGN.md): web -> grader -> sandbox, never back; grader and sandbox never import Django.

Read from each module's syntax tree, every import at any depth (a function's
local import counts): the rule is about what a module may need, not only what
it needs at import time. What each layer may not import is named with the
module and line that does.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# Each layer and the top-level packages its modules must never import.
FORBIDDEN = {
    "sandbox": ("django", "rest_framework", "channels", "celery", "web", "grader"),
    "grader": ("django", "rest_framework", "channels", "celery", "web"),
}


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, top-level package) of every absolute import in the module."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name.split(".")[0]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module.split(".")[0]))
    return found


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_a_lower_layer_never_imports_a_higher_one(layer: str) -> None:
    modules = sorted((REPO / layer).rglob("*.py"))
    assert modules, f"no module under {layer}/"
    broken = [
        f"{path.relative_to(REPO)}:{line} imports {package}"
        for path in modules
        for line, package in imports(path)
        if package in FORBIDDEN[layer]
    ]
    assert not broken, "\n".join(broken)


def test_the_rule_reads_local_imports_too(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("import os\n\ndef late():\n    from django.conf import settings\n    return settings\n")
    assert imports(module) == [(1, "os"), (4, "django")]
