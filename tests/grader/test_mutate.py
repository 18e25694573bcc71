"""grader/mutate.py: each mutation operator makes its one change; ids are stable; what cannot be graded is left out."""

from __future__ import annotations

import ast
import textwrap

import pytest

from grader.mutant import Mutant
from grader.mutate import KINDS, make_mutants


def mutants(source: str) -> list[Mutant]:
    return make_mutants(textwrap.dedent(source))


def afters(source: str, kind: str) -> list[str]:
    """The changed line of every mutant of ``kind``."""
    return [m.after for m in mutants(source) if m.kind == kind]


CASES = [
    ("arith", "def f(a, b):\n    return a + b\n", ["return a - b"]),
    ("arith", "def f(a, b):\n    return a * b\n", ["return a / b"]),
    ("arith", "def f(a, b):\n    return a // b\n", ["return a / b"]),
    ("arith", "def f(a, b):\n    return a @ b\n", ["return a * b"]),
    ("arith", "def f(a, b):\n    a += b\n    return a\n", ["a -= b"]),
    ("sign", "def f(a):\n    return -a\n", ["return a"]),
    ("sign", "def f(a, b):\n    c = a - b\n    return c\n", ["c = -(a - b)", "return -c"]),
    ("not", "def f(a):\n    return not a\n", ["return a"]),
    ("compare", "def f(a, b):\n    return a < b\n", ["return a <= b"]),
    ("compare", "def f(a, b):\n    return a >= b\n", ["return a > b"]),
    ("compare", "def f(a, b):\n    return a == b\n", ["return a != b"]),
    ("compare", "def f(a, b):\n    return a is not b\n", ["return a is b"]),
    ("compare", "def f(a, b):\n    return 0 <= a < b\n", ["return 0 < a < b", "return 0 <= a <= b"]),
    ("boolop", "def f(a, b):\n    return a and b\n", ["return a or b"]),
    ("dim", "def f(x):\n    return x.sum(dim=0)\n", ["return x.sum(dim=1)", "return x.sum(dim=-1)"]),
    ("dim", "def f(x):\n    return x.mean(axis=-1)\n", ["return x.mean(axis=0)", "return x.mean(axis=1)"]),
    ("dim", "def f(x, dim):\n    return x.amax(dim)\n", ["return x.amax(-1)", "return x.amax(0)"]),
    ("dim", "import torch\ndef f(x):\n    return torch.sum(x, 1)\n", ["return torch.sum(x, 0)", "return torch.sum(x, -1)"]),
    ("keepdim", "def f(x):\n    return x.sum(1, keepdim=True)\n", ["return x.sum(1, keepdim=False)"]),
    ("dtype", "import torch\ndef f(x):\n    return x.to(torch.float32)\n", ["return x.to(torch.float64)", "return x.to(torch.float16)"]),
    ("dtype", "def f(x):\n    return x.astype('float64')\n", ["return x.astype('float32')"]),
    ("dtype", "def f(x):\n    return x.half()\n", ["return x.float()"]),
    ("const", "def f(x):\n    return x[0]\n", ["return x[1]"]),
    ("const", "def f(x):\n    return x * 1\n", ["return x * 0"]),
    ("const", "def f(x):\n    return x + 7\n", ["return x + 8"]),
    ("const", "def f(x):\n    return x + 1e-06\n", ["return x + 1e-05"]),
    ("drop", "def f(x, log):\n    log(x)\n    return x\n", ["pass"]),
    ("drop", "def f(x, y):\n    x += y\n    return x\n", ["pass"]),
    ("drop", "def f(x):\n    x.add_(1)\n    return x\n", ["pass"]),
    ("drop", "def f(x):\n    if x < 0:\n        raise ValueError('negative')\n    return x\n", ["pass"]),
    ("inplace", "def f(x):\n    y = x.copy_(x * 2)\n    return y\n", ["y = x"]),
    ("swap", "def f(g, a, b, c):\n    return g(a, b, c)\n", ["return g(b, a, c)", "return g(a, c, b)"]),
    ("range", "def f(n):\n    return list(range(n))\n", ["return list(range(n + 1))", "return list(range(n - 1))"]),
    ("slice", "def f(x, n):\n    return x[:n]\n", ["return x[:n + 1]", "return x[:n - 1]"]),
]


@pytest.mark.parametrize(("kind", "source", "expected"), CASES)
def test_each_operator_makes_its_change(kind: str, source: str, expected: list[str]) -> None:
    assert afters(source, kind) == expected


def test_every_kind_is_exercised_above() -> None:
    # The parametrised cases name every kind the mutator declares; a new kind needs a case.
    assert {kind for kind, _, _ in CASES} == set(KINDS)


def test_a_mutant_is_the_whole_file_with_one_change_and_says_what_changed() -> None:
    source = "import math\n\n\ndef f(a, b):\n    # a comment\n    if a < b:\n        return math.inf\n    return a\n"
    (mutant,) = [m for m in make_mutants(source) if m.kind == "compare"]
    assert mutant.id == "compare:6:8:0"
    assert mutant.line == 6
    assert mutant.description == "line 6: '<' -> '<=' in 'a < b'"
    assert (mutant.before, mutant.after) == ("if a < b:", "if a <= b:")
    assert mutant.source == ast.unparse(ast.parse(source.replace("a < b", "a <= b"))) + "\n"


def test_ids_are_stable_and_unique() -> None:
    source = "def f(x, y):\n    z = x + y + 1\n    return z * 2\n"
    first = [m.id for m in make_mutants(source)]
    assert first == [m.id for m in make_mutants(source)]
    assert len(set(first)) == len(first)
    # Two BinOps start at one column in `x + y + 1`: the trailing index tells them apart.
    assert {"arith:2:9:0", "arith:2:9:1"} <= set(first)
    # An edit on a later line leaves the ids of the lines before it alone.
    edited = [m.id for m in make_mutants(source.replace("z * 2", "z * 3 - 1"))]
    assert [i for i in first if i.split(":")[1] == "2"] == [i for i in edited if i.split(":")[1] == "2"]


def test_a_mutant_that_does_not_compile_is_left_out() -> None:
    # Each constant 0 -> 1 or 1 -> 0 would repeat a key of the mapping pattern, which the compiler refuses.
    source = "def f(d):\n    match d:\n        case {0: a, 1: b}:\n            return a + b\n    return None\n"
    with pytest.raises(SyntaxError):
        compile(source.replace("{0:", "{1:"), "solution.py", "exec")
    made = make_mutants(source)
    assert not [m for m in made if m.line == 3]
    assert [m.kind for m in made if m.line == 4] == ["sign", "arith"]


def test_a_mutant_identical_to_the_reference_or_to_another_is_left_out() -> None:
    # An infinite constant plus one is the same constant: no mutant.
    assert not [m for m in make_mutants("LIMIT = 1e400\n") if m.kind == "const"]
    # range(0, n): the constant 0 -> 1 and the start one more are the same program; it is made once.
    made = make_mutants("def f(n):\n    return list(range(0, n))\n")
    assert [m.after for m in made].count("return list(range(1, n))") == 1
    assert len({m.source for m in made}) == len(made)


def test_annotations_docstrings_fstrings_and_commuting_calls_are_not_mutated() -> None:
    source = '''
        """Module docstring 1 + 2."""
        import numpy as np


        def f(x: np.ndarray, n: int = 0) -> dict[str, int]:
            """Docstring with x < 1."""
            y: list[int] = []
            if x.size == 0:
                raise ValueError(f"empty {x.size - 1}")
            return max(x, n)
    '''
    made = mutants(source)
    # The default n = 0, the test, the raise and the return value; not the docstrings, annotations or message.
    assert {m.line for m in made} == {6, 9, 10, 11}
    assert all("max(n, x)" not in m.source for m in made)  # max commutes: a swap would be equivalent
    assert all("{x.size - 1}" in m.source for m in made if m.kind != "drop")  # dropping the raise drops its message


def test_a_reference_that_does_not_compile_is_an_error() -> None:
    with pytest.raises(SyntaxError):
        make_mutants("def f(:\n")
