"""Hint selection: which hints a failed run unlocks.

A failed probe unlocks every hint that shares one of its tags. None is
shown unasked: the candidate reveals them on request, tier by tier. That
ladder, and the record of every reveal (mock interviews report it), belong
to the web layer (``web/submissions/hints.py``). The grader only selects and
orders, so that the hint offered first is the one about the heaviest,
earliest failing probe; it keeps no state.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from grader.package import Hint


def unlocked_hints(hints: Sequence[Hint], failed_tags: Iterable[str]) -> list[Hint]:
    """Hints sharing a tag with a failed probe, ordered by tier, then by the first failed tag they share, then declaration.

    ``failed_tags`` lists the failing probes' tags, the probe to fix first
    (heaviest, then earliest) first: so within a tier, the hint about that
    probe comes first.
    """
    rank: dict[str, int] = {}
    for position, tag in enumerate(failed_tags):
        rank.setdefault(tag, position)
    chosen = [h for h in hints if rank.keys() & set(h.tags)]
    order = {h.id: i for i, h in enumerate(hints)}
    return sorted(chosen, key=lambda h: (h.tier, min(rank[t] for t in h.tags if t in rank), order[h.id]))
