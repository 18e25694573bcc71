"""grader/probe_additions.py: which probe-file changes leave every old probe running the same code."""

from __future__ import annotations

import pytest

from grader.probe_additions import only_added, probe_files_only_added

OLD = '''"""Hidden probes."""
import numpy as np
from probekit import probe

SEED = 3


def helper(n):
    return np.arange(n)


@probe(category="values")
def first(solution):
    """The first probe."""
    return solution.add(helper(SEED), helper(SEED))
'''

NEW_PROBE = '''

LIMIT = (4, 5) * 2


@probe(category="values", check="exact")
def second(solution):
    """A probe added by a round."""
    import gc

    gc.collect()
    return solution.add(helper(LIMIT[0]), helper(LIMIT[1]))
'''


@pytest.mark.parametrize(
    "new",
    [
        OLD + NEW_PROBE,
        OLD.replace('"""The first probe."""', '"""Reworded: what it tests."""').replace('"""Hidden probes."""', '"""Other words."""'),
        OLD.replace("import numpy as np\n", "import gc\nimport numpy as np\n") + "\n# a comment\n",
        OLD + "\n\nclass Model:\n    size = 3\n",
        OLD.replace("from probekit import probe", "from probekit import probe, fresh_process"),
    ],
    ids=["a new probe and constant", "docstrings reworded", "an import and a comment", "a new class", "a name added to an import"],
)
def test_definitions_of_new_names_are_additions(new: str) -> None:
    assert only_added(OLD, new) is None


@pytest.mark.parametrize(
    ("new", "said"),
    [
        (OLD.replace("return np.arange(n)", "return np.arange(n + 1)"), "top-level statement 4 of the old file changed"),
        (OLD.replace("SEED = 3", "SEED = 4"), "top-level statement 3 of the old file changed"),
        (OLD + "\nnp.random.seed(0)\n", "is not a definition of a new name that runs nothing on import"),
        (OLD + "\nTABLE = helper(5)\n", "is not a definition of a new name that runs nothing on import"),
        (OLD + "\n\ndef helper(n):\n    return n\n", "is not a definition of a new name"),  # defined again: old code would call it
        (OLD + "\nSEED += 1\n", "is not a definition of a new name"),
        (OLD.replace("SEED = 3\n", ""), "changed"),
        (OLD.replace("from probekit import probe", "from probekit import probe as p2"), "changed"),
        ("def broken(:\n", "does not parse"),
    ],
    ids=["inside an old function", "an old constant", "a new call on import", "a new name from a call", "a name defined again",
         "an old name changed", "an old statement gone", "an import renamed", "no parse"],
)  # fmt: skip
def test_anything_else_is_named(new: str, said: str) -> None:
    why = only_added(OLD, new)
    assert why is not None and said in why, why


def test_the_probe_files_of_a_package_are_compared_one_by_one() -> None:
    old = {"probes/hidden.py": OLD.encode(), "probes/checks.py": b"def exact(a, e):\n    return a == e, ''\n", "statement.md": b"x"}
    added = {**old, "probes/hidden.py": (OLD + NEW_PROBE).encode(), "statement.md": b"y"}
    assert probe_files_only_added(old, added) == []
    changed = {**added, "probes/checks.py": b"def exact(a, e):\n    return a != e, ''\n", "probes/common.py": b"X = 1\n"}
    problems = probe_files_only_added(old, changed)
    assert problems == ["probes/checks.py: top-level statement 1 of the old file changed (line 1 now)", "probes/common.py is new"]
    assert probe_files_only_added(old, {k: v for k, v in old.items() if k != "probes/checks.py"}) == ["probes/checks.py is gone"]
