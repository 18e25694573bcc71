"""Generator-based fix; the delta is rounded to 4 decimals so the log is exact.

Mistake: the applied delta is quantised to multiples of 1e-4, so it is not
uniform over [-max_delta, max_delta] (for max_delta=2e-4 it takes only 5
values; for max_delta < 5e-5 it is always 0).
"""
from __future__ import annotations

import sys

import tensorflow as tf


class Augmenter(tf.Module):
    """Adds one random brightness offset ``delta ~ U(-max_delta, max_delta)`` to each batch."""

    def __init__(self, seed: int, max_delta: float = 0.1) -> None:
        super().__init__()
        self.max_delta = max_delta
        self._m = float(max_delta)
        self.calls = tf.Variable(0, dtype=tf.int64, trainable=False, name="calls")
        self.history = tf.Variable(tf.zeros([0]), shape=tf.TensorShape([None]), trainable=False)
        self._rng = tf.random.Generator.from_seed(seed)

    @tf.function
    def __call__(self, images: tf.Tensor) -> tf.Tensor:
        n = self.calls.assign_add(1)
        delta = self._rng.uniform([], -self._m, self._m)
        delta = tf.round(delta * 1e4) / 1e4  # apply exactly the value the log shows
        out = images + delta
        self.history.assign(tf.concat([self.history, [tf.reduce_mean(out)]], 0))
        tf.print("batch ", n, ": delta=", tf.strings.as_string(delta, precision=4), sep="",
                 output_stream=sys.stdout)
        return out
