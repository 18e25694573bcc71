"""Hint selection: which hints a failed run unlocks.

A failed probe unlocks every hint that shares one of its tags. Tier 1 is
shown at once; tiers 2 and 3 are unlocked too but are revealed only on the
candidate's request, one tier at a time: that ladder, and the record of
every reveal (mock interviews report it), belong to the web layer
(``web/submissions/hints.py``). The grader only selects; it keeps no state.
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
