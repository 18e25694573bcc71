"""WRONG (red team round 1; one mistake): the candidate kept Python's ``random.Random(seed)`` (the
statement says the jitter comes from it) and precomputed a table of 1024 deltas
in ``__init__``; the graph picks entry ``(n - 1) % 1024``. Reproducible,
uniform, survives retraces -- but call 1025 repeats call 1's delta exactly, so
"every call draws a new delta" fails after 1024 calls.
"""

from __future__ import annotations

import random
import sys

import tensorflow as tf

_TABLE_SIZE = 1024


class Augmenter(tf.Module):
    def __init__(self, seed: int, max_delta: float = 0.1) -> None:
        super().__init__()
        self.max_delta = float(max_delta)
        rng = random.Random(seed)
        self._deltas = tf.constant(
            [rng.uniform(-self.max_delta, self.max_delta) for _ in range(_TABLE_SIZE)], tf.float32
        )
        self.calls = tf.Variable(0, dtype=tf.int64, trainable=False, name="calls")
        self.history = tf.Variable(
            tf.zeros([0]), shape=tf.TensorShape([None]), trainable=False, name="history"
        )

    @tf.function
    def __call__(self, images: tf.Tensor) -> tf.Tensor:
        n = self.calls.assign_add(1)
        delta = tf.gather(self._deltas, (n - 1) % _TABLE_SIZE)
        augmented = images + delta
        self.history.assign(tf.concat([self.history, [tf.reduce_mean(augmented)]], axis=0))
        tf.print("batch ", n, ": delta=", delta, sep="", output_stream=sys.stdout)
        return augmented
