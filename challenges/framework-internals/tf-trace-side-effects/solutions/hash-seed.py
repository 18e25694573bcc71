"""Generator seeded from Python's hash(seed), "to mix the bits".

Mistake: CPython's int hash is not injective on the int64 range: hash(-1) ==
hash(-2) == -2, and hash(s) == hash(s + (2**61 - 1)), so those seeds share a stream.
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
        self._rng = tf.random.Generator.from_seed(hash(seed) & (2**64 - 1))  # hash() mixes the bits

    @tf.function
    def __call__(self, images: tf.Tensor) -> tf.Tensor:
        n = self.calls.assign_add(1)
        delta = self._rng.uniform([], -self._m, self._m)
        out = images + delta
        self.history.assign(tf.concat([self.history, [tf.reduce_mean(out)]], 0))
        tf.print("batch ", n, ": delta=", delta, sep="", output_stream=sys.stdout)
        return out
