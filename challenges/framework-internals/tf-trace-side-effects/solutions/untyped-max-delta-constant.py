"""WRONG (red team round 1; one mistake): ``max_delta`` is stored as ``tf.constant(max_delta)``
without a dtype, then multiplied by a float32 uniform draw. A float max_delta
works; an int one (``Augmenter(0, max_delta=1)``, a valid Python number for the
parameter) makes an int32 constant and the first call fails with a dtype error.
"""

from __future__ import annotations

import sys

import tensorflow as tf


class Augmenter(tf.Module):
    """Adds one random brightness offset ``delta ~ U(-max_delta, max_delta)`` to each batch."""

    def __init__(self, seed: int, max_delta: float = 0.1) -> None:
        super().__init__()
        self.max_delta = tf.constant(max_delta)  # graph constant
        self.calls = tf.Variable(0, dtype=tf.int64, trainable=False, name="calls")
        self.history = tf.Variable(
            tf.zeros([0]), shape=tf.TensorShape([None]), trainable=False, name="history"
        )
        self._rng = tf.random.Generator.from_seed(seed)

    @tf.function
    def __call__(self, images: tf.Tensor) -> tf.Tensor:
        n = self.calls.assign_add(1)
        delta = self.max_delta * (2.0 * self._rng.uniform([]) - 1.0)
        augmented = images + delta
        self.history.assign(tf.concat([self.history, [tf.reduce_mean(augmented)]], axis=0))
        tf.print("batch ", n, ": delta=", delta, sep="", output_stream=sys.stdout)
        return augmented
