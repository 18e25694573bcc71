"""RIGHT (red team round 1; alternative): the log line is written by Python ``print`` inside a
``tf.py_function`` -- an op in the graph that runs on every call -- and the
randomness is a ``tf.random.Generator`` (explicit Philox) seeded per augmenter and
scaled from U[0, 1) by hand.
Counter and history are variables updated with ``assign_add`` / ``assign``.
"""

from __future__ import annotations

import sys

import tensorflow as tf


def _log(n, delta):
    print(f"batch {int(n)}: delta={float(delta):.6f}", flush=True)
    return 0


class Augmenter(tf.Module):
    def __init__(self, seed: int, max_delta: float = 0.1) -> None:
        super().__init__()
        self.max_delta = max_delta
        self.calls = tf.Variable(0, dtype=tf.int32, trainable=False)
        self.history = tf.Variable(tf.zeros([0]), shape=[None], trainable=False)
        self._gen = tf.random.Generator.from_seed(seed, alg="philox")

    @tf.function
    def __call__(self, images):
        n = self.calls.assign_add(1)
        u = self._gen.uniform([], 0.0, 1.0)
        delta = (2.0 * u - 1.0) * self.max_delta
        out = images + delta
        self.history.assign(tf.concat([self.history, [tf.reduce_mean(out)]], axis=0))
        tf.py_function(_log, [n, delta], Tout=tf.int32)
        return out
