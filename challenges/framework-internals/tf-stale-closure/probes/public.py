"""Public probes for tf-stale-closure: shown on "Run", inputs and all.

Each probe changes a setting between calls of a traced method and records
the outputs, plus how many times the method traced
(``experimental_get_tracing_count()``), which must stay 1.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from probekit import probe


def tracing_count(fn: Any) -> int | str:
    """How many times ``fn`` traced, or a note when it is not a tf.function."""
    count = getattr(fn, "experimental_get_tracing_count", None)
    return int(count()) if callable(count) else "not a tf.function"


@probe(category="calibration", hints=["stale-float"])
def temperature_update(solution: Any) -> dict[str, Any]:
    """Calibrator(3): call, set temperature = 2.0, call again."""
    cal = solution.Calibrator(3)
    logits = np.array([[1.0, 2.0, 3.0], [0.5, -0.5, 0.0]], dtype=np.float32)
    before = cal(logits)
    cal.temperature = 2.0
    after = cal(logits)
    return {"before": before, "after": after, "traces": tracing_count(cal.__call__)}


@probe(category="quantization", hints=["stale-int"])
def num_bits_update(solution: Any) -> dict[str, Any]:
    """FakeQuant(8, 1.0): call, set num_bits = 3, call again."""
    quant = solution.FakeQuant(8, 1.0)
    x = np.array([-1.2, -0.4, -0.05, 0.1, 0.33, 0.8], dtype=np.float32)
    before = quant(x)
    quant.num_bits = 3
    after = quant(x)
    return {"before": before, "after": after, "traces": tracing_count(quant.__call__)}


@probe(category="training", rtol=1e-5, atol=1e-6, hints=["stale-float"])
def learning_rate_update(solution: Any) -> dict[str, Any]:
    """LinearRegressor(2, learning_rate=0.1): one step, set learning_rate = 0.5, one more step."""
    reg = solution.LinearRegressor(2, learning_rate=0.1)
    x = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], dtype=np.float32)
    y = np.array([1.0, -1.0, 0.5], dtype=np.float32)
    first = reg.train_step(x, y)
    w_after_first = np.array(reg.w.numpy())
    reg.learning_rate = 0.5
    second = reg.train_step(x, y)
    return {
        "losses": [first, second],
        "w after step 1": w_after_first,
        "w after step 2": np.array(reg.w.numpy()),
        "traces": tracing_count(reg.train_step),
    }
