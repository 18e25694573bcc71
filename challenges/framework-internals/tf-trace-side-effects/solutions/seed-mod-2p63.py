"""Stateless draws keyed by (seed, k), with the seed mapped into [0, 2**63).

Mistake: ``seed % 2**63`` to get a "non-negative int64" key makes seed s and
s - 2**63 (e.g. -1 and 2**63 - 1) share one stream.
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
        self._key = tf.constant(seed % 2**63, tf.int64)
        self.calls = tf.Variable(0, dtype=tf.int64, trainable=False, name="calls")
        self.history = tf.Variable(tf.zeros([0]), shape=tf.TensorShape([None]), trainable=False)

    @tf.function
    def __call__(self, images: tf.Tensor) -> tf.Tensor:
        n = self.calls.assign_add(1)
        delta = tf.random.stateless_uniform([], seed=tf.stack([self._key, n]),
                                            minval=-self._m, maxval=self._m)
        out = images + delta
        self.history.assign(tf.concat([self.history, [tf.reduce_mean(out)]], 0))
        tf.print("batch ", n, ": delta=", delta, sep="", output_stream=sys.stdout)
        return out
