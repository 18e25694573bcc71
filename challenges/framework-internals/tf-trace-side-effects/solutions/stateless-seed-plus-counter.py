"""Stateless draws keyed by [seed + k, 0] for the k-th call.

Arguable mistake: seed s+1's stream is seed s's stream shifted by one call
(call k of seed s+1 == call k+1 of seed s). Call by call the streams differ.
(The reference has the same property with a shift of 256: seed s+256*j.)
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
        self._key = tf.constant(seed, tf.int64)
        self.calls = tf.Variable(0, dtype=tf.int64, trainable=False, name="calls")
        self.history = tf.Variable(tf.zeros([0]), shape=tf.TensorShape([None]), trainable=False)

    @tf.function
    def __call__(self, images: tf.Tensor) -> tf.Tensor:
        n = self.calls.assign_add(1)
        delta = tf.random.stateless_uniform([], seed=tf.stack([self._key + n, tf.constant(0, tf.int64)]),
                                            minval=-self._m, maxval=self._m)
        out = images + delta
        self.history.assign(tf.concat([self.history, [tf.reduce_mean(out)]], 0))
        tf.print("batch ", n, ": delta=", delta, sep="", output_stream=sys.stdout)
        return out
