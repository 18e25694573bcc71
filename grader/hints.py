"""Hint selection: which hints a failed run unlocks.

A failed probe unlocks every hint that shares one of its tags. Tier 1 is
shown at once; tiers 2 and 3 are unlocked too but are revealed only on the
candidate's request, one tier at a time, and every reveal is recorded by the
web layer (mock interviews report it). The grader only selects; it keeps no
state.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from grader.package import Hint


def unlocked_hints(hints: Sequence[Hint], failed_tags: Iterable[str]) -> list[Hint]:
    """Hints sharing a tag with a failed probe, ordered by tier then declaration."""
    tags = set(failed_tags)
    chosen = [h for h in hints if tags.intersection(h.tags)]
    order = {h.id: i for i, h in enumerate(hints)}
    return sorted(chosen, key=lambda h: (h.tier, order[h.id]))


def may_reveal(hint: Hint, unlocked: Sequence[Hint], revealed_ids: Iterable[str]) -> bool:
    """A tier-n hint may be revealed once a lower tier sharing one of its tags is shown.

    Tier 1 is always shown, so tier 2 is always revealable when unlocked; tier
    3 needs a tier-2 hint with a common tag to have been revealed (or there to
    be none), so the near-solution never comes before the concept.
    """
    if hint not in unlocked:
        return False
    if hint.tier <= 2:
        return True
    shown = set(revealed_ids)
    lower = [h for h in unlocked if h.tier == hint.tier - 1 and set(h.tags) & set(hint.tags)]
    return not lower or any(h.id in shown for h in lower)
