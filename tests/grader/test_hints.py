"""grader.hints: which hints a failed run unlocks, and which may be revealed."""

from __future__ import annotations

from grader.hints import may_reveal, unlocked_hints
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


def test_a_hint_that_is_not_unlocked_may_not_be_revealed():
    unlocked = unlocked_hints(HINTS, ["values"])
    assert not may_reveal(NEAR, unlocked, [])
    assert not may_reveal(NEAR, unlocked, ["concept", "nudge"])


def test_tiers_1_and_2_may_be_revealed_as_soon_as_unlocked():
    unlocked = unlocked_hints(HINTS, ["values"])
    assert may_reveal(NUDGE, unlocked, [])
    assert may_reveal(CONCEPT, unlocked, [])


def test_tier_3_needs_a_revealed_tier_2_hint_sharing_a_tag():
    unlocked = unlocked_hints(HINTS, ["dtype"])
    assert not may_reveal(NEAR, unlocked, [])
    assert not may_reveal(NEAR, unlocked, ["nudge"])  # a revealed hint without a common tag does not count
    assert may_reveal(NEAR, unlocked, ["concept"])


def test_tier_3_without_an_unlocked_tier_2_sibling_is_revealable():
    unlocked = unlocked_hints(HINTS, ["shape"])
    assert may_reveal(LONE_NEAR, unlocked, [])


def test_revealed_ids_may_be_any_iterable():
    unlocked = unlocked_hints(HINTS, ["dtype"])
    assert may_reveal(NEAR, unlocked, iter(["concept"]))
    assert may_reveal(NEAR, unlocked, {"concept"})
