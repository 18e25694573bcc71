"""The jitter keeps coming from Python's random.Random(seed), as the statement says.

Mistake: the draw runs in a py_function (together with the log), which stores
the delta in a tf.Variable; the graph then reads the variable and adds it.
The statement requires the draw to be computed by TensorFlow ops.
"""
from __future__ import annotations

import random

import tensorflow as tf


class Augmenter(tf.Module):
    """Adds one random brightness offset ``delta ~ U(-max_delta, max_delta)`` to each batch."""

    def __init__(self, seed: int, max_delta: float = 0.1) -> None:
        super().__init__()
        self.max_delta = max_delta
        self._m = float(max_delta)
        self.calls = tf.Variable(0, dtype=tf.int64, trainable=False, name="calls")
        self.history = tf.Variable(tf.zeros([0]), shape=tf.TensorShape([None]), trainable=False)
        self._delta = tf.Variable(0.0, trainable=False)
        self._rng = random.Random(seed)

    def _draw_and_log(self, n):
        d = self._rng.uniform(-self._m, self._m)
        self._delta.assign(d)
        print(f"batch {int(n.numpy())}: delta={d:.6f}", flush=True)
        return 0

    @tf.function
    def __call__(self, images: tf.Tensor) -> tf.Tensor:
        n = self.calls.assign_add(1)
        token = tf.py_function(self._draw_and_log, [n], Tout=tf.int32)
        with tf.control_dependencies([token]):
            delta = self._delta.read_value()
        out = images + delta
        self.history.assign(tf.concat([self.history, [tf.reduce_mean(out)]], 0))
        return out
