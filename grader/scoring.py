"""Score: the weighted share of probes passed, overall and per category.

Scores are percentages rounded to two decimals, so that "100" means every
probe passed and nothing else does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Scored:
    category: str
    weight: float
    passed: bool


@dataclass(frozen=True)
class CategoryScore:
    score: float
    passed: int
    total: int


def _percent(earned: float, possible: float, all_passed: bool) -> float:
    value = round(100.0 * earned / possible, 2) if possible > 0 else 0.0
    # Neither rounding nor a zero-weight failure may turn an imperfect run into 100.
    return 99.99 if value == 100.0 and not all_passed else value


def score(results: Sequence[Scored]) -> tuple[float, dict[str, CategoryScore]]:
    """Return (overall score, {category: CategoryScore}) in declaration order of categories."""
    total = sum(r.weight for r in results)
    earned = sum(r.weight for r in results if r.passed)
    categories: dict[str, CategoryScore] = {}
    for name in dict.fromkeys(r.category for r in results):
        members = [r for r in results if r.category == name]
        categories[name] = CategoryScore(
            score=_percent(
                sum(r.weight for r in members if r.passed), sum(r.weight for r in members), all(r.passed for r in members)
            ),
            passed=sum(1 for r in members if r.passed),
            total=len(members),
        )
    return _percent(earned, total, all(r.passed for r in results)), categories
