"""Shipped solutions stored as edits of the reference: ``solutions/<name>.patch`` (issue 30).

A wrong solution is usually the reference with one mistake in it. Kept as a
whole copy, a fix to the reference had to be repeated in every copy, and a
reader had to diff by hand to find the mistake. Kept as a unified diff
against ``reference/<entry>``, the file is the mistake; it is materialised
(:func:`apply_edit`) when the package is loaded, and every caller reads the
result through ``Package.solution_code``. A hunk is placed where its context
and removed lines are found, nearest the line it names, so an edit of the
reference above or below it needs no change to the patch; one whose lines are
gone no longer applies, and the package is refused with the hunk named.

An edit may also be made against another shipped solution: a diff whose
header reads ``--- solutions/<base>.py`` applies to that solution's code (a
wrong variant of a correct alternative written from scratch is, as an edit of
that alternative, exactly its mistake). Solutions that are variations of
nothing shipped (a different algorithm) stay whole ``.py`` files. ``python -m
grader solutions PACKAGE --as-edits`` turns each mostly-copied ``.py`` into a
``.patch`` of whichever base gives the smallest edit, checking that the patch
gives back the file byte for byte (:func:`edit_of`).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass

from grader.errors import PackageError

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
#: The header of an edit made against another shipped solution rather than the reference.
_SOLUTION_BASE = re.compile(r"--- solutions/([A-Za-z0-9][A-Za-z0-9_.-]*)\.py")
_NO_NEWLINE = "\\ No newline at end of file"


@dataclass(frozen=True)
class _Hunk:
    start: int  # the 1-based line of the reference where the hunk's old lines began
    old: list[str]
    new: list[str]
    header_line: int  # the hunk's line in the patch, for messages


def edit_of(reference: str, solution: str, *, reference_path: str, solution_path: str) -> str:
    """The unified diff that turns ``reference`` into ``solution`` (3 lines of context); checked to apply back exactly."""
    old, new = reference.splitlines(keepends=True), solution.splitlines(keepends=True)
    lines = []
    for line in difflib.unified_diff(old, new, fromfile=reference_path, tofile=solution_path, n=3):
        lines.append(line if line.endswith("\n") else line + "\n" + _NO_NEWLINE + "\n")
    patch = "".join(lines)
    if apply_edit(reference, patch, origin=solution_path) != solution:
        raise PackageError("the edit does not give back the file (a line ending the diff cannot express?)", path=solution_path)
    return patch


def base_of(patch: str) -> str | None:
    """The shipped solution an edit was made against (its header ``--- solutions/<name>.py``); None: the reference."""
    found = _SOLUTION_BASE.fullmatch(patch.split("\n", 1)[0].rstrip())
    return found.group(1) if found else None


def materialise(patch: str, *, reference: str, solution_code: Callable[[str], str], origin: str) -> str:
    """The file an edit makes: ``patch`` applied to the reference, or to the shipped solution its header names.

    ``solution_code(name)`` gives that solution's code, or raises PackageError
    when the package has no such solution (or reaching it goes round a circle).
    """
    base = base_of(patch)
    if base is None:
        return apply_edit(reference, patch, origin=origin)
    return apply_edit(solution_code(base), patch, origin=origin, base=f"solutions/{base}.py")


def _hunks(patch: str, origin: str) -> list[_Hunk]:
    hunks: list[_Hunk] = []
    lines = patch.splitlines(keepends=True)
    i = 0
    while i < len(lines) and not lines[i].startswith("@@"):
        i += 1  # the ---/+++ header
    while i < len(lines):
        found = _HUNK.match(lines[i])
        if not found:
            raise PackageError(f"line {i + 1}: expected a hunk header '@@ -a,b +c,d @@'", path=origin)
        hunk = _Hunk(int(found.group(1)), [], [], i + 1)
        i += 1
        while i < len(lines) and not lines[i].startswith("@@"):
            line = lines[i]
            if line.rstrip("\n") == _NO_NEWLINE:
                target = hunk.new if lines[i - 1].startswith("+") else hunk.old if lines[i - 1].startswith("-") else None
                for side in (hunk.old, hunk.new) if target is None else (target,):
                    if side:
                        side[-1] = side[-1].removesuffix("\n")
            elif line[:1] == " ":
                hunk.old.append(line[1:])
                hunk.new.append(line[1:])
            elif line[:1] == "-":
                hunk.old.append(line[1:])
            elif line[:1] == "+":
                hunk.new.append(line[1:])
            elif line.strip() == "":
                hunk.old.append("\n")  # an empty context line whose space an editor trimmed
                hunk.new.append("\n")
            else:
                raise PackageError(f"line {i + 1}: a hunk line starts with ' ', '-' or '+'", path=origin)
            i += 1
        hunks.append(hunk)
    if not hunks:
        raise PackageError("holds no hunk: an edit that changes nothing is the reference itself", path=origin)
    return hunks


def apply_edit(reference: str, patch: str, *, origin: str, base: str | None = None) -> str:
    """``reference`` (or the solution file ``base`` names, whose code it then is) with ``patch`` applied, each hunk
    where its old lines are, nearest the line it names.

    PackageError naming the hunk when its old lines are found nowhere after
    the previous hunk: the base changed there, and the edit must too.
    """
    against, line = ("the reference", "reference") if base is None else (base, "base")
    text = reference.splitlines(keepends=True)
    out: list[str] = []
    at = 0  # how much of ``text`` is already in ``out``
    for number, hunk in enumerate(_hunks(patch, origin), start=1):
        where = _find(text, hunk.old, at, max(at, hunk.start - 1))
        if where is None:
            raise PackageError(
                f"hunk {number} (patch line {hunk.header_line}, {line} line {hunk.start}) "
                f"no longer applies: its lines are not in {against} any more; make the edit again against {against}",
                path=origin,
            )
        out += text[at:where] + hunk.new
        at = where + len(hunk.old)
    return "".join(out + text[at:])


def _find(text: list[str], block: list[str], low: int, near: int) -> int | None:
    """Where ``block`` starts in ``text[low:]``, the match nearest ``near`` (ties: the earlier)."""
    if not block:
        return min(max(near, low), len(text))
    candidates = [i for i in range(low, len(text) - len(block) + 1) if text[i : i + len(block)] == block]
    return min(candidates, key=lambda i: (abs(i - near), i)) if candidates else None


def worth_an_edit(reference: str, solution: str) -> bool:
    """Whether ``solution`` is mostly the reference: its edit is less than half its length (else it stays whole)."""
    patch_lines = sum(1 for line in difflib.unified_diff(reference.splitlines(), solution.splitlines(), n=3, lineterm=""))
    return patch_lines < 0.5 * max(1, len(solution.splitlines()))
