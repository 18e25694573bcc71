"""grader/learn.py: a package's lesson, and its shipped wrong solutions with their diffs against the reference."""

from __future__ import annotations

import shutil
from pathlib import Path

from grader.learn import MAX_DIFF_LINES, common_mistakes, lesson
from grader.package_load import load_package_dir

ADD_NUMBERS = Path(__file__).resolve().parents[1] / "fixtures" / "packages" / "demo" / "add-numbers"


def test_every_wrong_solution_comes_with_its_why_and_only_the_lines_it_changes(tmp_path: Path) -> None:
    folder = tmp_path / "demo" / "add-numbers"
    shutil.copytree(ADD_NUMBERS, folder)
    package = load_package_dir(folder)
    mistakes = common_mistakes(package)
    expected = [s for s in package.solutions if s.verdict != "accepted"]
    assert [m.name for m in mistakes] == [s.name for s in expected] and mistakes
    for mistake, entry in zip(mistakes, expected, strict=True):
        assert mistake.why == entry.why.strip() and mistake.verdict == entry.verdict
        assert not any(line.startswith(("---", "+++")) for line in mistake.diff)
        assert mistake.changed_lines == sum(1 for line in mistake.diff if line[:1] in "+-") or not mistake.diff
    assert lesson(package).text is None  # no learn.md yet


def test_a_rewrite_too_long_to_read_as_a_diff_is_left_out_and_a_lesson_is_read(tmp_path: Path) -> None:
    folder = tmp_path / "demo" / "add-numbers"
    shutil.copytree(ADD_NUMBERS, folder)
    (folder / "learn.md").write_text("# The idea\n")
    name = next(s.name for s in load_package_dir(folder).solutions if s.verdict != "accepted")
    (folder / "solutions" / f"{name}.py").write_text("".join(f"x{i} = {i}\n" for i in range(MAX_DIFF_LINES)))
    package = load_package_dir(folder)
    rewritten = next(m for m in common_mistakes(package) if m.name == name)
    assert rewritten.diff == () and rewritten.changed_lines > MAX_DIFF_LINES
    assert lesson(package).text == "# The idea\n"
