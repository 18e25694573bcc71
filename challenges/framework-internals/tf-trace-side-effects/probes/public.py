"""Public probes for tf-trace-side-effects: shown on "Run", inputs and all.

Each probe calls one or more Augmenters on float32 image batches, captures
what they print (file descriptors 1 and 2), and records for each call the
delta actually applied (recovered from the output), ``int(aug.calls)``,
the batch mean and, at the end, ``aug.history`` and the trace count. The
check (``side_effects`` in checks.py) tests properties of that record, not
the reference's random numbers: see the statement.
"""

from __future__ import annotations

from typing import Any

from probe_common import Session
from probekit import probe


@probe(category="counter", check="side_effects", hints=["counter"])
def counter_counts_calls(solution: Any) -> dict[str, Any]:
    """Three calls on (2, 4, 4) batches: int(aug.calls) reads 1, 2, 3."""
    s = Session(solution, ["traces", "calls"])
    s.augmenter("a", seed=1)
    for k in range(3):
        s.call("a", (2, 4, 4), 10 + k)
    return s.observation()


@probe(category="log", check="side_effects", hints=["print", "history"])
def one_log_line_per_call(solution: Any) -> dict[str, Any]:
    """Three calls: three 'batch <n>: delta=<value>' lines, and a history of three batch means."""
    s = Session(solution, ["traces", "log", "history"])
    s.augmenter("a", seed=2)
    for k in range(3):
        s.call("a", (2, 4, 4), 20 + k)
    return s.observation()


@probe(category="randomness", check="side_effects", hints=["random"])
def new_delta_each_call(solution: Any) -> dict[str, Any]:
    """Four calls: four different deltas, each within [-0.1, 0.1]."""
    s = Session(solution, ["traces", "fresh"])
    s.augmenter("a", seed=3)
    for k in range(4):
        s.call("a", (2, 4, 4), 30 + k)
    return s.observation()
