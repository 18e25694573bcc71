"""The hint ladder's rule, as pure functions shared by the service and the page.

A failed probe unlocks every hint tagged with one of its tags, all tiers at
once; what is *shown* is gated. Nothing is shown unasked: a hint is shown
once the candidate revealed it. A tier-1 hint may be revealed at once; a hint
of tier n > 1 once a tier n-1 hint that shares a tag with it and is unlocked
by the same submission has been shown (when no such hint exists, nothing
stands in its way). The hint offered first is the first revealable one in
the order the grader stored (tier, then the probe to fix first).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

HintData = Mapping[str, Any]  # {"id", "tier", "tags", "text"} as stored on a Submission


def hint_is_shown(hint: HintData, revealed_ids: set[str]) -> bool:
    return str(hint["id"]) in revealed_ids


def hint_prerequisites(hint: HintData, unlocked: Iterable[HintData]) -> list[HintData]:
    tier = int(hint["tier"])
    tags = set(hint.get("tags") or [])
    return [h for h in unlocked if int(h["tier"]) == tier - 1 and tags & set(h.get("tags") or [])]


def hint_can_reveal(hint: HintData, unlocked: Iterable[HintData], revealed_ids: set[str]) -> bool:
    """True if the hint is not shown yet and its ladder allows showing it now."""
    if hint_is_shown(hint, revealed_ids):
        return False
    prerequisites = hint_prerequisites(hint, unlocked)
    return not prerequisites or any(hint_is_shown(p, revealed_ids) for p in prerequisites)


def offered_hint(unlocked: list[HintData], revealed_ids: set[str]) -> HintData | None:
    """The hint a "show a hint" button reveals next: the first revealable one in the stored order, or None."""
    return next((h for h in unlocked if hint_can_reveal(h, unlocked, revealed_ids)), None)
