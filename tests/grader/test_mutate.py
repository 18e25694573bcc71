"""grader/mutate.py: each mutation operator makes its one change; ids are stable; what cannot be graded is left out."""

from __future__ import annotations

import ast
import textwrap

import pytest

from grader.mutate import CPP_KINDS, KINDS, Mutant, is_cpp_source, make_mutants


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


# ---------------------------------------------------------------- C++ held in a Python string

CPP_REFERENCE = '''import torch

SOURCE = r"""
#include <torch/library.h>
// a comment: a < b && c + 1
at::Tensor twice(const at::Tensor& x, int64_t n) {
  TORCH_CHECK(n >= 1 && !x.is_meta(), "n must be >= 1, got ", n);
  const at::Tensor y = x.contiguous();
  at::Tensor out = at::zeros_like(y);
  for (int64_t i = 0; i < n; ++i) {
    out.add_(y, static_cast<double>(2 * i + 1) / 8);  /* 2 * i */
  }
  return out;
}

TORCH_LIBRARY(demo, m) {
  m.def("twice(Tensor x, int n=1) -> Tensor");
  m.impl("twice", torch::kCPU, &twice);
}
"""
'''
CHECK = 'TORCH_CHECK(n >= 1 && !x.is_meta(), "n must be >= 1, got ", n);'
ADD = "out.add_(y, static_cast<double>(2 * i + 1) / 8);  /* 2 * i */"
LOOP = "for (int64_t i = 0; i < n; ++i) {"

# (id, the C++ line after the change): one per mistake, in source order.
CPP_EXPECTED = [
    ("cpp-drop:7:3:0", ";"),
    ("cpp-compare:7:17:0", CHECK.replace("n >= 1 &&", "n > 1 &&")),
    ("cpp-const:7:20:0", CHECK.replace("n >= 1 &&", "n >= 0 &&")),
    ("cpp-boolop:7:22:0", CHECK.replace("&&", "||")),
    ("cpp-not:7:25:0", CHECK.replace("!x", "x")),
    ("cpp-contiguous:8:25:0", "const at::Tensor y = x;"),
    ("cpp-const:10:20:0", LOOP.replace("i = 0", "i = 1")),
    ("cpp-compare:10:25:0", LOOP.replace("i < n", "i <= n")),
    ("cpp-range:10:27:0", LOOP.replace("i < n", "i < n + 1")),
    ("cpp-range:10:27:1", LOOP.replace("i < n", "i < n - 1")),
    ("cpp-drop:11:5:0", ";  /* 2 * i */"),
    ("cpp-cast:11:17:0", ADD.replace("static_cast<double>(2 * i + 1)", "(2 * i + 1)")),
    ("cpp-const:11:37:0", ADD.replace("(2 * i", "(3 * i")),
    ("cpp-arith:11:39:0", ADD.replace("(2 * i", "(2 / i")),
    ("cpp-arith:11:43:0", ADD.replace("i + 1)", "i - 1)")),
    ("cpp-const:11:45:0", ADD.replace("i + 1)", "i + 0)")),
    ("cpp-arith:11:48:0", ADD.replace(") / 8", ") * 8")),
    ("cpp-const:11:50:0", ADD.replace(") / 8", ") / 9")),
    ("cpp-drop:17:3:0", ";"),
    ("cpp-drop:18:3:0", ";"),
]


def test_cpp_in_a_string_is_mutated_token_by_token() -> None:
    made = [m for m in make_mutants(CPP_REFERENCE) if m.kind.startswith("cpp-")]
    assert [(m.id, m.after) for m in made] == CPP_EXPECTED
    assert {m.kind for m in made} == set(CPP_KINDS)  # every C++ kind is exercised here
    compare = next(m for m in made if m.id == "cpp-compare:10:25:0")
    assert compare.line == 10
    assert compare.before == LOOP
    assert compare.description == f"line 10: C++ '{LOOP}' -> '{LOOP.replace('i < n', 'i <= n')}'"


def test_a_cpp_mutant_is_the_file_with_one_change_in_its_raw_string() -> None:
    for mutant in make_mutants(CPP_REFERENCE):
        compile(mutant.source, "solution.py", "exec")
        if not mutant.kind.startswith("cpp-"):
            continue
        # The file still reads as the reference: the same lines, one of them changed, the raw string kept.
        old, new = CPP_REFERENCE.splitlines(), mutant.source.splitlines()
        assert len(new) == len(old)
        assert [i + 1 for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b] == [mutant.line]
        assert 'SOURCE = r"""' in mutant.source


def test_comments_literals_includes_and_the_schema_are_not_mutated() -> None:
    for mutant in make_mutants(CPP_REFERENCE):
        assert "#include <torch/library.h>" in mutant.source
        assert "// a comment: a < b && c + 1" in mutant.source
        assert "/* 2 * i */" in mutant.source
        if mutant.kind != "cpp-drop":  # a dropped statement takes its literals with it
            assert '"n must be >= 1, got "' in mutant.source
            assert 'm.def("twice(Tensor x, int n=1) -> Tensor");' in mutant.source
    # Nothing but the dropped statement changes on the schema's line.
    assert [m.id for m in make_mutants(CPP_REFERENCE) if m.line == 17] == ["cpp-drop:17:3:0"]


def test_template_arguments_declarations_and_returns_are_not_mutated() -> None:
    source = '''CPP = r"""
#include <vector>
std::vector<std::array<int, 3>> f(int64_t n) {
  std::vector<std::array<int, 3>> out;
  const scalar_t* p = nullptr;
  return out;
}
"""
'''
    # The 3 in a template argument list, the '<'/'>' of templates, the pointer's '*', declarations, the return: nothing.
    assert make_mutants(source) == []


def test_cpp_ids_are_stable_when_an_unrelated_line_is_added_below() -> None:
    first = [m.id for m in make_mutants(CPP_REFERENCE)]
    edited = CPP_REFERENCE.replace("  return out;\n", "  return out;\n  // done\n") + "\nEXTRA = 1 + 2\n"
    again = [m.id for m in make_mutants(edited)]
    assert [i for i in again if int(i.split(":")[1]) <= 13] == [i for i in first if int(i.split(":")[1]) <= 13]
    assert len(set(first)) == len(first)


def test_which_strings_are_cpp() -> None:
    assert is_cpp_source("\n  #include <ATen/ATen.h>\nint f();")
    assert is_cpp_source('TORCH_LIBRARY(demo, m) { m.def("f(Tensor x) -> Tensor"); }')
    assert not is_cpp_source("f(Tensor x) -> Tensor")
    assert not is_cpp_source("a < b + 1; // include <this>")
    # Python strings that are not C++ are never tokenized: no mutants at all.
    assert make_mutants('MESSAGE = "a < b + 1;"\n') == []
