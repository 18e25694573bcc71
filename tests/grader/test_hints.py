"""grader.hints: which hints a failed run unlocks (the reveal ladder is web/submissions/hints.py)."""

from __future__ import annotations

from grader.hints import unlocked_hints
from grader.package import Hint

NUDGE = Hint("nudge", 1, ("values",), "Look at the values.")
CONCEPT = Hint("concept", 2, ("values", "dtype"), "Keep the dtype.")
NEAR = Hint("near", 3, ("dtype",), "np.add keeps the dtype.")
OTHER_NUDGE = Hint("other", 1, ("shape",), "Check the shape.")
LONE_NEAR = Hint("lone", 3, ("shape",), "Return a.shape.")
HINTS = (NEAR, CONCEPT, NUDGE, OTHER_NUDGE, LONE_NEAR)  # deliberately not in tier order


def ids(hints: list[Hint]) -> list[str]:
    return [h.id for h in hints]


def test_a_failed_tag_unlocks_every_hint_sharing_it():
    assert ids(unlocked_hints(HINTS, ["dtype"])) == ["concept", "near"]
    assert ids(unlocked_hints(HINTS, ["values"])) == ["nudge", "concept"]


def test_no_failed_tags_or_unknown_tags_unlock_nothing():
    assert unlocked_hints(HINTS, []) == []
    assert unlocked_hints(HINTS, ["nothing-matches"]) == []


def test_unlocked_hints_are_ordered_by_tier_then_declaration():
    result = unlocked_hints(HINTS, ["values", "dtype", "shape"])
    assert ids(result) == ["nudge", "other", "concept", "near", "lone"]
    assert [h.tier for h in result] == sorted(h.tier for h in result)


def test_repeated_tags_do_not_duplicate_hints():
    assert ids(unlocked_hints(HINTS, ["values", "values", "dtype"])) == ["nudge", "concept", "near"]


def test_failed_tags_may_be_any_iterable():
    assert ids(unlocked_hints(HINTS, iter(["shape"]))) == ["other", "lone"]


def test_within_a_tier_the_hint_of_the_first_failed_tag_comes_first():
    # The grader lists the tags of the probe to fix first (heaviest, then earliest) first.
    assert ids(unlocked_hints(HINTS, ["shape", "values"])) == ["other", "nudge", "concept", "lone"]
    assert ids(unlocked_hints(HINTS, ["values", "shape"])) == ["nudge", "other", "concept", "lone"]
