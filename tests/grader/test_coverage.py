"""grader/coverage.py: a coverage table is read strictly and checked against its statement and probes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from grader.coverage import MAX_SENTENCE, coverage_problems, package_coverage, parse_coverage, quoted_sentence
from grader.errors import PackageError
from grader.probe_meta import ProbeSpec
from grader.validate import validate_package
from tests.helpers import ADD_NUMBERS

STATEMENT = "Write `add(a, b)`. It must **broadcast** like NumPy,\nand an empty array gives an empty sum.\n"
HIDDEN = (ProbeSpec("broadcasting", "correctness"), ProbeSpec("empty_arrays", "edge"))
TABLE = """
[[entry]]
id = "broadcast"
kind = "rule"
statement = "It must broadcast like NumPy"
probes = ["broadcasting"]

[[entry]]
id = "empty"
kind = "input"
statement = "an empty array gives an empty sum"
probes = ["empty_arrays"]
"""


def test_a_table_that_quotes_the_statement_and_names_every_hidden_probe_holds() -> None:
    entries = parse_coverage(TABLE)
    assert [e.id for e in entries] == ["broadcast", "empty"]
    # Markdown's marks and line breaks in the statement do not matter to the quote.
    assert coverage_problems(entries, STATEMENT, HIDDEN) == []


def test_a_rule_with_no_hidden_probe_and_a_probe_with_no_rule_are_both_named() -> None:
    entries = parse_coverage(TABLE.replace('probes = ["empty_arrays"]', 'probes = ["public_example"]'))
    problems = coverage_problems(entries, STATEMENT, HIDDEN, (ProbeSpec("public_example", "correctness"),))
    assert any("entry 'empty' (input) has no hidden probe" in p for p in problems)
    assert any("hidden probe 'empty_arrays' is named by no entry" in p for p in problems)


def test_a_quote_the_statement_no_longer_says_and_an_unknown_probe_are_named() -> None:
    entries = parse_coverage(TABLE.replace("broadcast like NumPy", "broadcast like torch").replace('["broadcasting"]', '["broadcasting", "typo"]'))
    problems = coverage_problems(entries, STATEMENT, HIDDEN)
    assert any("entry 'broadcast': its quote is not in statement.md" in p for p in problems)
    assert any("entry 'broadcast': no probe is called typo" in p for p in problems)


@pytest.mark.parametrize(
    ("table", "named"),
    [
        ("[[entry]]\nid = 'x'\n", "kind"),
        ("[[entry]]\nid = 'Bad Id'\nkind = 'rule'\nstatement = 'long enough'\nprobes = ['p']\n", "id"),
        ("[[entry]]\nid = 'x'\nkind = 'rule'\nstatement = 'short'\nprobes = ['p']\n", "statement"),
        ("[[entry]]\nid = 'x'\nkind = 'rule'\nstatement = 'long enough'\nprobes = 'p'\n", "probes"),
        ("[[entry]]\nid = 'x'\nkind = 'rule'\nstatement = 'long enough'\nprobes = ['p']\nweight = 2\n", "unknown keys"),
        ("[[entry]]\nid = 'x'\nkind = 'rule'\nstatement = 'long enough'\nprobes = ['p']\n" * 2, "appears twice"),
        ("title = 'x'\n", "unknown top-level keys"),
        ("", "holds no [[entry]]"),
        ("[[entry]\n", "invalid TOML"),
    ],
)
def test_a_malformed_table_is_refused_with_the_field_named(table: str, named: str) -> None:
    with pytest.raises(PackageError, match=named.replace("[", r"\[")):
        parse_coverage(table)


def test_a_package_without_a_table_has_none_and_a_non_utf8_one_is_refused() -> None:
    assert package_coverage({"statement.md": b"x"}) is None
    with pytest.raises(PackageError, match="not UTF-8"):
        package_coverage({"coverage.toml": b"\xff"})


@pytest.fixture
def package(tmp_path: Path) -> Path:
    folder = tmp_path / ADD_NUMBERS.parent.name / ADD_NUMBERS.name
    shutil.copytree(ADD_NUMBERS, folder)
    return folder


def test_validation_requires_a_table_where_asked_and_fails_a_wrong_one_before_any_probe_runs(package: Path) -> None:
    missing = validate_package(package, require_coverage=True)
    assert not missing.ok and any("coverage: no coverage.toml" in line for line in missing.lines)
    (package / "coverage.toml").write_text(TABLE)
    wrong = validate_package(package)
    assert not wrong.ok
    assert any("its quote is not in statement.md" in line for line in wrong.lines)
    assert not any("reference" in line for line in wrong.lines)  # nothing ran


SENTENCES = (
    """# Sum

**Inputs.** `x` is a tensor of any size, 1 and 0 included (a size of 0 means no rows). It must not modify `x`.

| name | meaning |
|---|---|
| `levels` | `2 ** (bits - 1) - 1`, for bits from 2 to 16 |

```
|total(x) - S| <= 2·u·|S|
```

- a million equal terms; the same terms reordered

"""
    + "A long sentence that goes on " * 20
    + "and holds a fragment worth quoting.\n"
)


def test_a_quote_is_shown_in_the_sentence_that_holds_it_where_that_sentence_reads_on_its_own() -> None:
    # A fragment reads in its sentence; a bolded lead-in does not hide the break after it.
    assert quoted_sentence(SENTENCES, "1 and 0 included") == "`x` is a tensor of any size, 1 and 0 included (a size of 0 means no rows)."
    assert quoted_sentence(SENTENCES, "It must not modify `x`.") == "It must not modify `x`."
    # A table row's cell, with a power inside code kept as written; a list item without its dash.
    assert quoted_sentence(SENTENCES, "for bits from 2 to 16") == "`2 ** (bits - 1) - 1`, for bits from 2 to 16"
    assert quoted_sentence(SENTENCES, "the same terms reordered") == "a million equal terms; the same terms reordered"
    # A code block, a sentence too long to read as a hint, and a quote found nowhere: the quote itself.
    assert quoted_sentence(SENTENCES, "|total(x) - S| <= 2·u·|S|") == "|total(x) - S| <= 2·u·|S|"
    assert len(SENTENCES.splitlines()[-1]) > MAX_SENTENCE
    assert quoted_sentence(SENTENCES, "a fragment worth   quoting") == "a fragment worth quoting"
    assert quoted_sentence(SENTENCES, "not in the statement") == "not in the statement"
