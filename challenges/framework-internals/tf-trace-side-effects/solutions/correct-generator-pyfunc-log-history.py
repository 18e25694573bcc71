"""Correct alternative: Generator for the draw, one py_function for log + history.

The statement allows the log line and the history to be written from a
tf.py_function. The history is a plain Python list of floats.
"""
from __future__ import annotations

import tensorflow as tf


class Augmenter(tf.Module):
    """Adds one random brightness offset ``delta ~ U(-max_delta, max_delta)`` to each batch."""

    def __init__(self, seed: int, max_delta: float = 0.1) -> None:
        super().__init__()
        self.max_delta = max_delta
        self._m = float(max_delta)
        self.calls = tf.Variable(0, dtype=tf.int64, trainable=False, name="calls")
        self._hist = []
        self._rng = tf.random.Generator.from_seed(seed)

    @property
    def history(self):
        return list(self._hist)

    def _record(self, n, delta, mean):
        self._hist.append(float(mean.numpy()))
        print(f"batch {int(n.numpy())}: delta={float(delta.numpy()):.6f}")
        return 0

    @tf.function
    def __call__(self, images: tf.Tensor) -> tf.Tensor:
        n = self.calls.assign_add(1)
        delta = self._rng.uniform([], -self._m, self._m, dtype=tf.float32)
        out = images + delta
        tf.py_function(self._record, [n, delta, tf.reduce_mean(out)], Tout=tf.int32)
        return out
