"""grader/mutants.py and `python -m grader mutants`: grading mutants, and the record make test checks.

The real run grades on bwrap a copy of the add-numbers fixture whose
reference has one mutant the probes kill (a lost sign) and one they cannot
(a dropped print: hidden probes ignore stdout).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from grader.__main__ import main
from grader.errors import PackageError
from grader.mutants import carry_over_record, files_at, mutation_score, record_problems, recount_record, spread
from grader.mutate import make_mutants
from grader.package import MUTANTS_RECORD, graded_version, hidden_graded_version, version_of, version_without_mutants
from grader.package_load import load_package_dir, read_package_files
from tests.helpers import ADD_NUMBERS

REFERENCE = "import numpy as np\n\n\ndef add(a, b):\n    print(a.shape)\n    return np.add(a, b)\n"
WHY = "hidden probes do not read stdout, and the statement says nothing about printing"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    dest = tmp_path / "demo" / "add-numbers"
    shutil.copytree(ADD_NUMBERS, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (dest / "reference" / "solution.py").write_text(REFERENCE)
    return dest


def record_text(folder: Path, *, killed: int = 9, survived: int = 1, equivalent: int = 1, score: float = 100.0, why: str = WHY) -> str:
    """A hand-written record of ``folder``'s current version with one equivalent survivor."""
    version = version_without_mutants(read_package_files(folder))
    return (
        f'version = "{version}"\nscore = {score}\n\n[counts]\ngenerated = 10\ntotal = {killed + survived}\n'
        f"killed = {killed}\nsurvived = {survived}\nequivalent = {equivalent}\n\n"
        f'[[equivalent]]\nid = "drop:5:5:0"\ndescription = "line 5: dropped"\nwhy = "{why}"\n'
    )


@pytest.mark.sandbox
def test_a_real_run_kills_reports_the_survivor_and_writes_a_record_that_keeps_its_why(
    folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SANDBOX_BACKEND", "bwrap")
    assert main(["mutants", str(folder), "--jobs", "2", "--json", "--write"]) == 1  # 50%: below the target
    report = json.loads(capsys.readouterr().out)
    assert (report["total"], report["killed"], report["survived"], report["equivalent"], report["errors"]) == (2, 1, 1, 0, 0)
    assert report["score"] == 50.0
    outcome = {m["id"]: m for m in report["mutants"]}
    assert outcome["sign:6:5:0"]["killed"] and outcome["sign:6:5:0"]["score"] < 100
    assert not outcome["drop:5:5:0"]["killed"] and outcome["drop:5:5:0"]["score"] == 100
    assert outcome["drop:5:5:0"]["before"] == "print(a.shape)" and outcome["drop:5:5:0"]["after"] == "pass"

    record = folder / MUTANTS_RECORD
    text = record.read_text()
    assert '[[survivor]]\nid = "drop:5:5:0"' in text and "\n[[equivalent]]" not in text
    problems = record_problems(folder)
    assert any("mutation score 50.0% is below the target 95%" in p for p in problems)

    # The author judges the survivor equivalent; the next run keeps the why and counts it.
    record.write_text(text.replace('id = "drop:5:5:0"', f'id = "drop:5:5:0"\nwhy = "{WHY}"'))
    assert main(["mutants", str(folder), "--jobs", "2", "--write"]) == 0
    out = capsys.readouterr().out
    assert "killed 1, survived 1 (1 recorded equivalent), errors 0; mutation score 100.0%" in out
    assert "EQUIVALENT drop:5:5:0  line 5: 'print(a.shape)' dropped" in out
    text = record.read_text()
    assert f'[[equivalent]]\nid = "drop:5:5:0"\ndescription = "line 5: \'print(a.shape)\' dropped"\nwhy = "{WHY}"' in text
    assert "\n[[survivor]]" not in text
    assert record_problems(folder) == []


def test_the_version_a_record_names_ignores_the_record_and_nothing_else(folder: Path) -> None:
    before = read_package_files(folder)
    (folder / MUTANTS_RECORD).write_text(record_text(folder))
    after = read_package_files(folder)
    assert version_without_mutants(after) == version_without_mutants(before) == version_of(before)
    assert load_package_dir(folder).version != version_of(before)  # the package itself is a new version
    (folder / "solutions" / "other.toml").write_text("x = 1\n")
    assert version_without_mutants(read_package_files(folder)) != version_of(before)


def test_a_current_record_with_its_counts_in_order_has_no_problems(folder: Path) -> None:
    assert record_problems(folder) == []  # no record: nothing to check
    (folder / MUTANTS_RECORD).write_text(record_text(folder))
    assert record_problems(folder) == []


def test_a_record_of_an_older_version_is_stale(folder: Path) -> None:
    (folder / MUTANTS_RECORD).write_text(record_text(folder))
    (folder / "reference" / "solution.py").write_text(REFERENCE.replace("np.add(a, b)", "a + b"))
    (problem,) = record_problems(folder)
    assert "was computed for version" in problem and "--write" in problem


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"killed": 8}, "killed 8 + survived 1 must be total 10"),
        ({"equivalent": 0}, "counts.equivalent is 0 but 1 [[equivalent]] entries are listed"),
        ({"why": ""}, "equivalent mutants need a one-line why: drop:5:5:0"),
        ({"score": 90.0}, "score must be 100.0, what its counts give"),
    ],
)
def test_counts_that_do_not_add_up_are_named(folder: Path, change: dict[str, object], named: str) -> None:
    text = record_text(folder, **change)  # type: ignore[arg-type]
    if change.get("killed") == 8:
        text = text.replace("total = 9", "total = 10")
    (folder / MUTANTS_RECORD).write_text(text)
    assert any(named in p for p in record_problems(folder)), record_problems(folder)


def test_a_score_below_the_target_fails(folder: Path) -> None:
    text = record_text(folder, killed=18, survived=3, equivalent=1, score=90.0)
    text += '\n[[survivor]]\nid = "const:6:1:0"\ndescription = "x"\n\n[[survivor]]\nid = "const:6:2:0"\ndescription = "y"\n'
    (folder / MUTANTS_RECORD).write_text(text.replace("generated = 10", "generated = 30"))
    assert record_problems(folder) == ["mutation score 90.0% is below the target 95%: 2 survivors need a probe"]


def test_recount_turns_a_survivor_given_a_why_into_an_equivalent_mutant_without_grading(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    survivor = '\n[[survivor]]\nid = "sign:6:5:0"\ndescription = "line 6: minus"\n'
    text = record_text(folder, killed=1, survived=2, score=50.0) + survivor
    (folder / MUTANTS_RECORD).write_text(text)
    assert record_problems(folder) == ["mutation score 50.0% is below the target 95%: 1 survivors need a probe"]
    (folder / MUTANTS_RECORD).write_text(text.replace('"line 6: minus"', '"line 6: minus"\nwhy = "a judgement"'))
    assert main(["mutants", str(folder), "--recount"]) == 0
    assert capsys.readouterr().out.startswith("rewrote ")
    record = (folder / MUTANTS_RECORD).read_text()
    assert "equivalent = 2" in record and "score = 100.0" in record and "[[survivor]]\nid" not in record
    assert 'id = "sign:6:5:0"\ndescription = "line 6: minus"\nwhy = "a judgement"' in record
    assert record_problems(folder) == []


def test_recount_refuses_a_package_that_changed(folder: Path) -> None:
    (folder / MUTANTS_RECORD).write_text(record_text(folder))
    (folder / "statement.md").write_text("Changed.\n")
    with pytest.raises(PackageError, match="run with --write, not --recount"):
        recount_record(folder)


def add_rules(folder: Path, table: str) -> None:
    toml = folder / "challenge.toml"
    toml.write_text(toml.read_text().replace("[[hints]]", f"[rules]\n{table}\n\n[[hints]]", 1))


def test_carry_over_keeps_a_record_across_what_no_mutants_grading_reads_and_kills_the_survivors_rules_refuse(folder: Path) -> None:
    # One equivalent survivor (the dropped print) and one more survivor, the lost sign, which still prints a.shape.
    survivor = '\n[[survivor]]\nid = "sign:6:5:0"\ndescription = "line 6: minus"\n'
    (folder / MUTANTS_RECORD).write_text(record_text(folder, killed=8, survived=2, score=88.9) + survivor)
    base = read_package_files(folder)
    (folder / "statement.md").write_text("Reworded.\n")
    (folder / "solutions" / "float64.py").write_text("def add(a, b):\n    return a\n")
    add_rules(folder, 'forbidden = ["shape"]\nwhy = "no shapes"')
    path, refused = carry_over_record(folder, base)
    assert refused == ["sign:6:5:0"]
    record = path.read_text()
    assert "killed = 9" in record and "survived = 1" in record and 'id = "drop:5:5:0"' in record and "sign:6:5:0" not in record
    assert f'why = "{WHY}"' in record
    assert record_problems(folder) == []


@pytest.mark.parametrize(
    "change",
    [
        lambda f: (f / "probes" / "hidden.py").write_text((f / "probes" / "hidden.py").read_text() + "\n# changed\n"),
        lambda f: (f / "challenge.toml").write_text((f / "challenge.toml").read_text().replace("probe_seconds = 3", "probe_seconds = 4")),
        lambda f: (f / "reference" / "solution.py").write_text(REFERENCE.replace("print(a.shape)", "print(a)")),
    ],
    ids=["probes", "limits", "reference"],
)
def test_carry_over_refuses_a_change_a_mutants_grading_reads(folder: Path, change) -> None:  # grading nothing
    (folder / MUTANTS_RECORD).write_text(record_text(folder))
    base = read_package_files(folder)
    change(folder)
    with pytest.raises(PackageError, match=r"what a mutant's grading reads changed .*: run with --write"):
        carry_over_record(folder, base)


def test_carry_over_reads_its_base_from_git(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import subprocess

    (folder / MUTANTS_RECORD).write_text(record_text(folder))
    repo = folder.parents[1]
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "base"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True)
    assert files_at(folder, "HEAD") == read_package_files(folder)
    (folder / "statement.md").write_text("Reworded.\n")
    assert record_problems(folder) != []
    assert main(["mutants", str(folder), "--carry-over", "HEAD"]) == 0
    assert "survivors the rules or new probes now kill: none" in capsys.readouterr().out
    assert record_problems(folder) == []
    with pytest.raises(PackageError, match="git ls-tree -r failed: fatal: Not a valid object name no-such-revision"):
        files_at(folder, "no-such-revision")


@pytest.mark.parametrize(
    ("change", "still_current"),
    [
        (lambda f: (f / "statement.md").write_text("Reworded.\n"), True),
        (lambda f: (f / "challenge.toml").write_text((f / "challenge.toml").read_text().replace("Keep the input's dtype.", "Mind the dtype.")), True),
        (lambda f: (f / "solutions" / "float64.py").write_text("def add(a, b):\n    return a\n"), True),
        (lambda f: edit_toml(f, 'title = "Add numbers"', 'title = "Adding two arrays"'), True),
        (lambda f: edit_toml(f, 'summary = "A tiny', 'summary = "A small'), True),
        (lambda f: edit_toml(f, 'tags = ["fixture"]', 'tags = ["fixture", "numpy"]'), True),
        (lambda f: edit_toml(f, 'difficulty = "warm-up"', 'difficulty = "medium"'), True),
        # A hidden grading never receives the public probes (grader/execute.probes_job).
        (lambda f: (f / "probes" / "public.py").write_text((f / "probes" / "public.py").read_text() + "\n# changed\n"), True),
        (lambda f: (f / "probes" / "hidden.py").write_text((f / "probes" / "hidden.py").read_text() + "\n# changed\n"), False),
        (lambda f: (f / "challenge.toml").write_text((f / "challenge.toml").read_text().replace("probe_seconds = 3", "probe_seconds = 4")), False),
        (lambda f: add_rules(f, 'forbidden = ["shape"]\nwhy = "no shapes"'), False),
    ],
    ids=["statement", "hints", "solutions", "title", "summary", "tags", "difficulty", "public-probes", "probes", "limits", "rules"],
)
def test_a_record_with_its_graded_hash_stays_current_across_what_no_mutant_reads(folder: Path, change, still_current: bool) -> None:
    """Keyed on the whole package, a statement, hint or title edit made the record stale and asked for --carry-over."""
    graded = hidden_graded_version(read_package_files(folder))
    (folder / MUTANTS_RECORD).write_text(record_text(folder).replace("\nscore =", f'\ngraded = "{graded}"\nscore =', 1))
    assert record_problems(folder) == []
    change(folder)
    assert (record_problems(folder) == []) is still_current, record_problems(folder)


def edit_toml(folder: Path, old: str, new: str) -> None:
    text = (folder / "challenge.toml").read_text()
    assert old in text
    (folder / "challenge.toml").write_text(text.replace(old, new, 1))


def test_an_unreadable_record_is_named(folder: Path) -> None:
    (folder / MUTANTS_RECORD).write_text("version = \n")
    (problem,) = record_problems(folder)
    assert problem.startswith(f"{MUTANTS_RECORD}: invalid TOML")


def test_the_score_leaves_equivalent_mutants_out() -> None:
    assert mutation_score(killed=19, total=21, equivalent=1) == 95.0
    assert mutation_score(killed=0, total=2, equivalent=2) == 100.0


def test_a_limit_takes_the_same_even_spread_every_time() -> None:
    made = make_mutants("def f(a, b, c, d):\n    return a + b - c * d / 2\n")
    assert len(made) >= 6
    chosen = spread(made, 3)
    assert chosen == spread(made, 3) and len(chosen) == 3
    assert chosen[0] is made[0] and chosen[-1] is made[2 * len(made) // 3]
    assert spread(made, 1000) == made
    with pytest.raises(PackageError, match="--limit must be at least 1"):
        spread(made, 0)


def commit_all(repo: Path) -> None:
    import subprocess

    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "base"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True)


NEW_PROBE = '''

@probe(category="values", check="exact")
def negatives(solution):
    """A probe a round added."""
    return solution.add(np.array([-1, -2]), np.array([-3, 4])).tolist()
'''


@pytest.mark.sandbox
def test_carry_over_across_added_probes_grades_only_the_survivors_again(
    folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A round adds a probe: the kills stand (old probes run the same code), the survivors are graded on the new set."""
    monkeypatch.setenv("SANDBOX_BACKEND", "bwrap")
    # As if the old probes had missed the lost sign: a survivor; the dropped print is equivalent.
    survivor = '\n[[survivor]]\nid = "sign:6:5:0"\ndescription = "line 6: minus"\n'
    (folder / MUTANTS_RECORD).write_text(record_text(folder, killed=8, survived=2, score=88.9) + survivor)
    commit_all(folder.parents[1])
    hidden = folder / "probes" / "hidden.py"
    hidden.write_text(hidden.read_text() + NEW_PROBE)
    toml = folder / "challenge.toml"  # and a hint for it: challenge.toml's bytes change, not what a grading reads of it
    toml.write_text(toml.read_text() + '\n[[hints]]\nid = "negatives"\ntier = 1\ntags = ["values"]\ntext = "Mind the signs."\n')
    assert record_problems(folder) != []
    assert main(["mutants", str(folder), "--carry-over", "HEAD", "--jobs", "1"]) == 0
    captured = capsys.readouterr()
    assert "probes were added: grading the 2 survivors again (drop:5:5:0, sign:6:5:0)" in captured.err
    assert "survivors the rules or new probes now kill: sign:6:5:0" in captured.out
    record = (folder / MUTANTS_RECORD).read_text()
    assert "killed = 9" in record and "survived = 1" in record and f'why = "{WHY}"' in record and "sign:6:5:0" not in record
    assert record_problems(folder) == []

    # A change inside an old probe is not an addition: every mutant must be graded again.
    hidden.write_text(hidden.read_text().replace("rng.normal(size=(3, 5))", "rng.normal(size=(3, 6))", 1))
    with pytest.raises(PackageError, match=r"not only probes added: probes/hidden.py: top-level statement \d+ of the old file changed"):
        carry_over_record(folder, files_at(folder, "HEAD"), lambda package, ids: pytest.fail("graded"))


def test_carry_over_takes_a_base_whose_record_is_current_by_its_graded_hash(folder: Path) -> None:
    """A record carried over a statement edit keeps its graded hash, not the whole version: still the base's record."""
    text = record_text(folder).replace('version = "', 'version = "from-an-earlier-statement-', 1)
    (folder / MUTANTS_RECORD).write_text(text.replace("score = ", f'graded = "{hidden_graded_version(read_package_files(folder))}"\nscore = ', 1))
    base = read_package_files(folder)
    (folder / "statement.md").write_text("Reworded again.\n")
    _, refused = carry_over_record(folder, base)
    assert refused == [] and record_problems(folder) == []


def test_the_public_probes_count_for_what_a_candidate_is_graded_on_but_not_for_hidden_records(folder: Path) -> None:
    """A public probe's edit is a change of the tests for a candidate (drafts say so) but not for a hidden grading."""
    before = read_package_files(folder)
    public = folder / "probes" / "public.py"
    public.write_text(public.read_text() + "\n# changed\n")
    after = read_package_files(folder)
    assert graded_version(after) != graded_version(before)
    assert hidden_graded_version(after) == hidden_graded_version(before)
    hidden = folder / "probes" / "hidden.py"
    hidden.write_text(hidden.read_text() + "\n# changed\n")
    assert hidden_graded_version(read_package_files(folder)) != hidden_graded_version(before)
