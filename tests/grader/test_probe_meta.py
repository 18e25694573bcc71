"""grader.probe_meta: probe declarations read from source, literals only."""

from __future__ import annotations

import textwrap

import pytest

from grader.errors import PackageError
from grader.probe_meta import ProbeSpec, parse_probe_file

PATH = "pkg/probes/hidden.py"


def parse(source: str) -> tuple[ProbeSpec, ...]:
    return parse_probe_file(textwrap.dedent(source), PATH)


def parse_error(source: str) -> PackageError:
    with pytest.raises(PackageError) as info:
        parse(source)
    assert info.value.path == PATH
    return info.value


def one_probe(args: str, body: str = "return 1") -> str:
    return f"from probekit import probe\n\n@probe({args})\ndef p(solution):\n    {body}\n"


def test_all_keywords_are_read_with_their_types():
    [spec] = parse(one_probe('category="gradients", weight=2, check="exact", rtol=1e-9, atol=0, hints=["a", "b"], timeout=5'))
    assert spec == ProbeSpec(name="p", category="gradients", weight=2.0, check="exact", rtol=1e-9, atol=0.0, hints=("a", "b"), timeout=5.0)
    assert isinstance(spec.weight, float) and isinstance(spec.atol, float)


def test_defaults_when_only_the_category_is_given():
    [spec] = parse(one_probe('category="values"'))
    assert spec == ProbeSpec(name="p", category="values")
    assert (spec.weight, spec.check, spec.rtol, spec.atol, spec.hints, spec.timeout, spec.description) == (
        1.0, "auto", None, None, (), None, "",
    )  # fmt: skip


def test_probes_keep_declaration_order_and_skip_undecorated_functions():
    specs = parse(
        """
        from probekit import probe

        def helper():
            return 0

        @probe(category="b")
        def second(solution):
            return 2

        @probe(category="a")
        def first(solution):
            return 1
        """
    )
    assert [s.name for s in specs] == ["second", "first"]


def test_attribute_form_of_the_decorator_is_recognised():
    [spec] = parse('import probekit\n\n@probekit.probe(category="c")\ndef q(solution):\n    return 1\n')
    assert spec.name == "q"


def test_hints_may_be_a_tuple_literal():
    [spec] = parse(one_probe('category="c", hints=("x",)'))
    assert spec.hints == ("x",)


def test_negative_literal_numbers_are_literals_but_out_of_range():
    err = parse_error(one_probe('category="c", weight=-1'))
    assert err.field == "weight"
    assert "must be a number from 0 to 1000" in str(err)


# ------------------------------------------------------------ literals only


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ('category="c", weight=WEIGHT', "weight"),
        ('category="c", weight=1 + 1', "weight"),
        ('category="c", rtol=float("1e-3")', "rtol"),
        ("category=CATEGORY", "category"),
        ('category="c", hints=[TAG]', "hints"),
        ('category="c", check=(lambda a, b: True)', "check"),
        ('category="c", timeout=(1 if True else 2)', "timeout"),
        ('category="c", hints={[1]: 2}', "hints"),  # literal syntax but unhashable: still not a usable literal
    ],
)
def test_a_non_literal_argument_names_the_field(args, field):
    err = parse_error(one_probe(args))
    assert err.field == field
    assert f"field '{field}'" in str(err)
    assert "probe 'p': must be a literal" in str(err)


def test_positional_arguments_are_refused():
    err = parse_error(one_probe('"values"'))
    assert "@probe takes keyword arguments only" in str(err)


def test_an_unknown_keyword_names_it_and_lists_the_allowed_ones():
    err = parse_error(one_probe('category="c", weigth=2'))
    assert err.field == "weigth"
    assert "unknown argument (allowed: atol, category, check, hints, rtol, timeout, weight)" in str(err)


def test_keyword_unpacking_is_refused():
    err = parse_error(one_probe("**OPTIONS"))
    assert "unknown argument" in str(err)


# ------------------------------------------------------------ values


def test_a_missing_category_is_an_error():
    err = parse_error(one_probe("weight=2"))
    assert err.field == "category"
    assert "category is required" in str(err)


@pytest.mark.parametrize("category", ['""', "3", "None"])
def test_a_category_must_be_a_non_empty_string(category):
    assert parse_error(one_probe(f"category={category}")).field == "category"


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ('category="c", weight=True', "weight"),
        ('category="c", weight=1001', "weight"),
        ('category="c", weight="2"', "weight"),
        ('category="c", rtol=-1e-3', "rtol"),
        ('category="c", atol=2e6', "atol"),
        ('category="c", timeout=0.05', "timeout"),
        ('category="c", timeout=601', "timeout"),
        ('category="c", check="not a name"', "check"),
        ('category="c", check=1', "check"),
        ('category="c", hints="values"', "hints"),
        ('category="c", hints=[1]', "hints"),
    ],
)
def test_out_of_range_or_mistyped_values_name_the_field(args, field):
    assert parse_error(one_probe(args)).field == field


def test_range_boundaries_are_inclusive():
    [spec] = parse(one_probe('category="c", weight=0, timeout=0.1, rtol=0, atol=1e6'))
    assert (spec.weight, spec.timeout, spec.rtol, spec.atol) == (0.0, 0.1, 0.0, 1e6)
    [spec] = parse(one_probe('category="c", weight=1000, timeout=600'))
    assert (spec.weight, spec.timeout) == (1000.0, 600.0)


def test_a_custom_check_name_is_kept():
    [spec] = parse(one_probe('category="c", check="within_bound"'))
    assert spec.check == "within_bound"


# ------------------------------------------------------------ declarations


def test_a_duplicate_probe_is_an_error():
    source = one_probe('category="a"') + "\n" + one_probe('category="b"').split("\n", 2)[2]
    assert source.count("def p(") == 2
    err = parse_error(source)
    assert "probe 'p' is declared twice" in str(err)


def test_two_probe_decorators_on_one_function_are_an_error():
    err = parse_error('@probe(category="a")\n@probe(category="b")\ndef p(solution):\n    return 1\n')
    assert "more than one @probe decorator" in str(err)


def test_the_docstring_first_line_becomes_the_description():
    [spec] = parse(
        '''
        @probe(category="c")
        def p(solution):
            """  Two paths meet again: their gradients add up.

            More detail that the candidate never sees.
            """
            return 1
        '''
    )
    assert spec.description == "Two paths meet again: their gradients add up."


def test_no_docstring_means_an_empty_description():
    [spec] = parse(one_probe('category="c"', body="x = 'not a docstring'\n    return x"))
    assert spec.description == ""


def test_a_syntax_error_in_a_probe_file_names_the_file_and_line():
    err = parse_error('@probe(category="c")\ndef p(solution):\n    return (\n')
    assert err.path == PATH
    assert "syntax error on line" in str(err)
    assert str(err).startswith(PATH)


def test_a_file_without_probes_gives_an_empty_tuple():
    assert parse("import numpy\n\ndef f():\n    return 1\n") == ()
