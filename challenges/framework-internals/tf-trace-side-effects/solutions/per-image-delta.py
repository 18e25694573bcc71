"""Every side effect is right, but each *image* gets its own delta: the
draw has shape ``(N, 1, ..., 1)``, and the log and the history report the
mean of those deltas.

Plausible: per-image jitter is what many augmentation pipelines do. The
statement asks for one offset for the whole batch, so every pixel of a call
must get the same delta.
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
        rank = tf.rank(images)
        per_image = tf.concat([tf.shape(images)[:1], tf.ones([rank - 1], tf.int32)], axis=0)
        deltas = self._rng.uniform(per_image, -self.max_delta, self.max_delta)
        augmented = images + deltas
        delta = tf.reduce_mean(deltas)
        self.history.assign(tf.concat([self.history, [tf.reduce_mean(augmented)]], axis=0))
        tf.print("batch ", n, ": delta=", delta, sep="", output_stream=sys.stdout)
        return augmented
