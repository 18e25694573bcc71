"""WRONG (red team round 1; one mistake): delta comes from ``truncated_normal(stddev=max_delta/2)``,
which stays inside [-max_delta, max_delta] and reaches every quarter of it, but
is not uniform: about 72% of the mass lies in the middle half instead of 50%.
Rule 4 says "uniform over the whole of [-max_delta, max_delta]".
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
        # jitter: bell-shaped, kept inside [-max_delta, max_delta] (2 sigma)
        delta = self._rng.truncated_normal([], stddev=self.max_delta / 2)
        augmented = images + delta
        self.history.assign(tf.concat([self.history, [tf.reduce_mean(augmented)]], axis=0))
        tf.print("batch ", n, ": delta=", delta, sep="", output_stream=sys.stdout)
        return augmented
