"""Counter, history, log and generator are right, but the draw is
``self._rng.uniform([], maxval=self.max_delta)``: ``minval`` was left at its
default, 0, so every delta lies in ``[0, max_delta)`` instead of
``[-max_delta, max_delta]``.

Plausible: ``uniform`` reads like ``uniform(shape, max)``, and every delta
is still fresh, reproducible and inside the allowed range. Only the
distribution is wrong: half of it is never reached, and the images only
ever get brighter.
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
        delta = self._rng.uniform([], maxval=self.max_delta)
        augmented = images + delta
        self.history.assign(tf.concat([self.history, [tf.reduce_mean(augmented)]], axis=0))
        tf.print("batch ", n, ": delta=", delta, sep="", output_stream=sys.stdout)
        return augmented
