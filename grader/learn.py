"""What a candidate reads once a challenge is behind them: the package's lesson and its common mistakes.

Place in the flow: the web's Learn page (web/challenges/learn.py), open after
an accepted submission or after giving up, is built from a package by
:func:`lesson`. The lesson's text is the package's ``learn.md``, written by
its author: the idea, the reference walked through, what an interviewer would
ask next, links to the real documentation. The common mistakes are the
package's own shipped wrong solutions (solutions/expected.toml): each one's
``why`` and the lines where it differs from the reference, as a unified
diff, so the reader sees the one mistake without diffing by hand.
No Django here: the grader's CLI could print the same.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from grader.package import Package

LESSON_FILE = "learn.md"
# Lines of unchanged code shown around each change, and the most lines one mistake's diff may take on the page
# (a solution rewritten from scratch says so instead of printing itself).
DIFF_CONTEXT = 2
MAX_DIFF_LINES = 60


@dataclass(frozen=True)
class Mistake:
    """One shipped wrong solution, as the Learn page shows it."""

    name: str  # the solution's file stem, e.g. "saves-softmax"
    verdict: str  # the verdict it gets on the hidden probes
    why: str  # the author's sentence: the mistake and what catches it
    diff: tuple[str, ...]  # its unified diff against the reference, without the file headers; () when too long
    changed_lines: int  # lines added or removed


@dataclass(frozen=True)
class Lesson:
    text: str | None  # learn.md (Markdown), None when the package has none yet
    mistakes: tuple[Mistake, ...]
    reference: str  # the reference solution, walked through by the text


def lesson(package: Package) -> Lesson:
    """The Learn page's content for ``package``."""
    raw = package.files.get(LESSON_FILE)
    text = raw.decode("utf-8") if raw is not None else None
    return Lesson(text=text, mistakes=common_mistakes(package), reference=package.reference_code)


def common_mistakes(package: Package) -> tuple[Mistake, ...]:
    """Every shipped solution that is not accepted, in expected.toml's order, with its diff against the reference."""
    reference = package.reference_code.splitlines()
    mistakes = []
    for expected in package.solutions:
        if expected.verdict == "accepted":
            continue
        source = package.solution_code(expected.name).decode("utf-8").splitlines()
        lines = list(difflib.unified_diff(reference, source, lineterm="", n=DIFF_CONTEXT))[2:]  # no ---/+++ headers
        changed = sum(1 for line in lines if line[:1] in "+-")
        shown = tuple(lines) if len(lines) <= MAX_DIFF_LINES else ()
        mistakes.append(Mistake(expected.name, expected.verdict, expected.why.strip(), shown, changed))
    return tuple(mistakes)
