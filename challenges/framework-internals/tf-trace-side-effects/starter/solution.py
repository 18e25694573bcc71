"""Random brightness jitter for image batches, instrumented with Python side effects.

``Augmenter.__call__`` is a ``tf.function``. Its body counts calls in a
Python int, records each batch's mean in a Python list, prints a log line
with ``print`` and draws the jitter from Python's ``random``. Each of those
runs while the function *traces*, which happens once per input shape, not
once per call. Calls that reuse the graph skip them all: the counter stops
at 1, the history holds one symbolic tensor, one line is printed, and every
batch gets the same "random" delta.

Your task: make all four happen on every call, inside the graph. Keep the
class, its constructor, the attribute names and ``__call__`` as a
tf.function.
"""

from __future__ import annotations

import random

import tensorflow as tf


class Augmenter(tf.Module):
    """Adds one random brightness offset ``delta ~ U(-max_delta, max_delta)`` to each batch."""

    def __init__(self, seed: int, max_delta: float = 0.1) -> None:
        super().__init__()
        self.max_delta = max_delta
        self.calls = 0  # batches augmented so far
        self.history = []  # the mean of each augmented batch, in call order
        self._rng = random.Random(seed)

    @tf.function
    def __call__(self, images: tf.Tensor) -> tf.Tensor:
        self.calls += 1
        delta = self._rng.uniform(-self.max_delta, self.max_delta)
        augmented = images + delta
        self.history.append(tf.reduce_mean(augmented))
        print(f"batch {self.calls}: delta={delta:.6f}")
        return augmented
