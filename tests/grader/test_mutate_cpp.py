"""grader/mutate_cpp.py: C++ held in a Python string mutated token by token, through make_mutants."""

from __future__ import annotations

from grader.mutate import make_mutants
from grader.mutate_cpp import CPP_KINDS, is_cpp_source

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
