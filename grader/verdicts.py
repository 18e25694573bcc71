"""Verdicts: an ordered enumeration with a display priority.

A probe gets a status (one of the verdicts other than ``partial``); a whole
run gets a verdict. When no probe passed, the run's verdict is the most
severe status among its probes, in the order below (most severe first), so a
candidate whose code hangs on every probe sees ``time_limit`` rather than a
bland ``wrong_answer``.
"""

from __future__ import annotations

from enum import StrEnum


class Verdict(StrEnum):
    ACCEPTED = "accepted"
    PARTIAL = "partial"
    WRONG_ANSWER = "wrong_answer"
    SYNTAX_ERROR = "syntax_error"
    RULE_VIOLATION = "rule_violation"
    RUNTIME_ERROR = "runtime_error"
    TIME_LIMIT = "time_limit"
    MEMORY_LIMIT = "memory_limit"
    OUTPUT_LIMIT = "output_limit"
    INTERNAL_ERROR = "internal_error"

    @property
    def label(self) -> str:
        return _LABELS[self]


_LABELS = {
    Verdict.ACCEPTED: "Accepted",
    Verdict.PARTIAL: "Partially correct",
    Verdict.WRONG_ANSWER: "Wrong answer",
    Verdict.SYNTAX_ERROR: "Syntax error",
    Verdict.RULE_VIOLATION: "Breaks a rule",
    Verdict.RUNTIME_ERROR: "Runtime error",
    Verdict.TIME_LIMIT: "Time limit exceeded",
    Verdict.MEMORY_LIMIT: "Memory limit exceeded",
    Verdict.OUTPUT_LIMIT: "Output limit exceeded",
    Verdict.INTERNAL_ERROR: "Internal error",
}

# Most severe first: the run verdict when no probe passed.
SEVERITY = [
    Verdict.INTERNAL_ERROR,
    Verdict.SYNTAX_ERROR,
    Verdict.RULE_VIOLATION,
    Verdict.TIME_LIMIT,
    Verdict.MEMORY_LIMIT,
    Verdict.OUTPUT_LIMIT,
    Verdict.RUNTIME_ERROR,
    Verdict.WRONG_ANSWER,
]


def most_severe(statuses: list[Verdict]) -> Verdict:
    """The most severe of the given failure statuses (wrong_answer if none)."""
    for verdict in SEVERITY:
        if verdict in statuses:
            return verdict
    return Verdict.WRONG_ANSWER
