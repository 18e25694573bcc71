"""Generator-based fix that draws and adds in float64 "for precision".

Mistake (arguable): the batch comes back as float64, not as the float32
`images + delta` the statement describes; the values are not rounded to float32.
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
        delta = self._rng.uniform([], -self._m, self._m, dtype=tf.float64)
        out = tf.cast(images, tf.float64) + delta  # add in double precision
        self.history.assign(tf.concat([self.history, [tf.cast(tf.reduce_mean(out), tf.float32)]], 0))
        tf.print("batch ", n, ": delta=", delta, sep="", output_stream=sys.stdout)
        return out
