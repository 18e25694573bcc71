# WRONG: "even coverage" done with a quasi-random (golden-ratio Weyl) sequence instead of random draws:
# u_k = frac(u_0 + k * 0.6180339887...), with u_0 from Python's random.Random(seed), computed in the
# graph in float64 from the call counter; delta = max_delta * (2 u_k - 1). Every value is new, the range
# is covered evenly (better than random), the stream never repeats and depends only on seed and k; but
# it is not a random draw at all: each delta is the previous one plus a fixed step (mod the interval),
# so consecutive deltas are completely dependent.
# Breaks rule 4 "Every call draws a new delta, uniform over ..." / "The jitter comes from Python's
# random.Random(seed)" (a draw per call, not a deterministic walk).
from __future__ import annotations

import random
import sys

import tensorflow as tf

_PHI = 0.6180339887498949


class Augmenter(tf.Module):
    def __init__(self, seed: int, max_delta: float = 0.1) -> None:
        super().__init__()
        self.max_delta = float(max_delta)
        self.calls = tf.Variable(0, dtype=tf.int64, trainable=False, name="calls")
        self.history = tf.Variable(tf.zeros([0]), shape=tf.TensorShape([None]), trainable=False, name="history")
        self._u0 = random.Random(int(seed)).random()

    @tf.function
    def __call__(self, images):
        n = self.calls.assign_add(1)
        x = self._u0 + tf.cast(n, tf.float64) * _PHI
        u = x - tf.floor(x)
        delta = tf.cast(self.max_delta * (2.0 * u - 1.0), tf.float32)
        augmented = images + delta
        self.history.assign(tf.concat([self.history, [tf.reduce_mean(augmented)]], axis=0))
        tf.print("batch ", n, ": delta=", delta, sep="", output_stream=sys.stdout)
        return augmented
