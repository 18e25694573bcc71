"""Public probes for tf-retracing-storm: shown on "Run", inputs and all.

Each probe drives ``fit`` or ``evaluate`` with a sequence of calls, then
records the results and ``experimental_get_tracing_count()`` of the methods
it called. Each method may trace at most twice (and at least once); the
values must match the reference's to rtol=1e-5, atol=1e-6.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from probekit import probe

NUM_FEATURES, NUM_CLASSES = 6, 3
TRUE_W = np.array(
    [[1.0, -1.0, 0.0], [0.5, 0.5, -1.0], [-1.0, 0.0, 1.0], [0.0, 1.0, 0.5], [0.3, -0.2, 0.1], [-0.5, 0.8, 0.2]]
)


def batch(seed: int, size: int, labels_as: str = "list") -> tuple[np.ndarray, Any]:
    """float32 features (size, 6) and labels in {0, 1, 2}: a Python list, or an int32/int64 array."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(size, NUM_FEATURES)).astype(np.float32)
    labels = np.argmax(x @ TRUE_W + 0.5 * rng.normal(size=(size, NUM_CLASSES)), axis=1)
    if labels_as == "list":
        return x, [int(v) for v in labels]
    return x, labels.astype(labels_as)


def tracing_count(fn: Any) -> int | str:
    count = getattr(fn, "experimental_get_tracing_count", None)
    return int(count()) if callable(count) else "not a tf.function"


@probe(category="python-scalars", check="bounded_traces", hints=["python-scalars"])
def learning_rate_schedule(solution: Any) -> dict[str, Any]:
    """fit: four batches of 8, a Python-float learning rate that halves every step."""
    model = solution.SoftmaxClassifier(NUM_FEATURES, NUM_CLASSES, seed=1)
    batches = [batch(100 + k, 8, "int32") for k in range(4)]
    losses = solution.fit(model, batches, [0.8, 0.4, 0.2, 0.1], [1.0, 1.0, 1.0])
    return {
        "losses": losses,
        "w": np.array(model.w.numpy()),
        "calls": {"train_step": 4},
        "traces": {"train_step": tracing_count(model.train_step)},
    }


@probe(category="python-lists", check="bounded_traces", hints=["python-lists"])
def labels_as_python_lists(solution: Any) -> dict[str, Any]:
    """fit: three batches of 8 whose labels are Python lists, constant learning rate 0.5."""
    model = solution.SoftmaxClassifier(NUM_FEATURES, NUM_CLASSES, seed=2)
    batches = [batch(200 + k, 8, "list") for k in range(3)]
    losses = solution.fit(model, batches, [0.5] * 3, [1.0, 2.0, 1.0])
    return {
        "losses": losses,
        "w": np.array(model.w.numpy()),
        "calls": {"train_step": 3},
        "traces": {"train_step": tracing_count(model.train_step)},
    }


@probe(category="shapes", check="bounded_traces", hints=["shapes"])
def evaluate_two_batch_sizes(solution: Any) -> dict[str, Any]:
    """evaluate: batches of 8, 3 and 5 examples, int64 label arrays."""
    model = solution.SoftmaxClassifier(NUM_FEATURES, NUM_CLASSES, seed=3)
    metrics = [model.evaluate(*batch(300 + k, size, "int64")) for k, size in enumerate((8, 3, 5))]
    return {
        "metrics": [[loss, accuracy] for loss, accuracy in metrics],
        "calls": {"evaluate": 3},
        "traces": {"evaluate": tracing_count(model.evaluate)},
    }
