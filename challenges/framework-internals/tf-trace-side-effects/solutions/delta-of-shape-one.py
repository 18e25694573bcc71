"""WRONG (red team round 1; one mistake): the single offset is drawn with shape [1] instead of
shape [] (a scalar). For every input of rank >= 1 broadcasting hides it, but a
rank-0 input (a scalar "batch", allowed: "any shape and any rank") comes back
with shape (1,) instead of (): the output is not ``images + delta``.
"""

from __future__ import annotations

import sys

import tensorflow as tf


class Augmenter(tf.Module):
    """Adds one random brightness offset ``delta ~ U(-max_delta, max_delta)`` to each batch."""

    def __init__(self, seed: int, max_delta: float = 0.1) -> None:
        super().__init__()
        self.max_delta = float(max_delta)  # fixed for the augmenter's life: a constant is fine
        self.calls = tf.Variable(0, dtype=tf.int64, trainable=False, name="calls")
        self.history = tf.Variable(
            tf.zeros([0]), shape=tf.TensorShape([None]), trainable=False, name="history"
        )
        self._rng = tf.random.Generator.from_seed(seed)

    @tf.function
    def __call__(self, images: tf.Tensor) -> tf.Tensor:
        n = self.calls.assign_add(1)
        delta = self._rng.uniform([1], -self.max_delta, self.max_delta)  # one offset, shape [1]
        augmented = images + delta
        self.history.assign(tf.concat([self.history, tf.reshape(tf.reduce_mean(augmented), [1])], axis=0))
        tf.print("batch ", n, ": delta=", delta[0], sep="", output_stream=sys.stdout)
        return augmented
