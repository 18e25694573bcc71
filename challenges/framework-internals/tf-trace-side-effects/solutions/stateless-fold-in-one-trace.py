"""RIGHT (red team round 1; alternative): counter-based stateless randomness and a single trace.

- One trace for all shapes and ranks: ``input_signature=[TensorSpec(None)]``.
- The counter is an int64 variable; the delta of call n is
  ``stateless_uniform(seed=fold_in(key, n))`` where ``key`` is derived from the
  Python int seed by ``random.Random(seed)`` (so any Python int works). The
  delta depends only on (seed, n); no generator state to restart.
- History is a variable of unknown length grown with ``tf.concat``.
- The log line is built with ``tf.strings.format`` and printed with ``tf.print``
  to stderr.
"""

from __future__ import annotations

import random

import tensorflow as tf


class Augmenter(tf.Module):
    def __init__(self, seed: int, max_delta: float = 0.1) -> None:
        super().__init__()
        self.max_delta = float(max_delta)
        r = random.Random(seed)
        self._key = tf.constant([r.getrandbits(63), r.getrandbits(63)], tf.int64)
        self.calls = tf.Variable(tf.constant(0, tf.int64), trainable=False)
        self.history = tf.Variable(
            tf.zeros([0], tf.float32), shape=[None], trainable=False
        )

    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
    def __call__(self, images):
        n = self.calls.assign_add(1)
        u = tf.random.stateless_uniform(
            [], seed=tf.random.experimental.stateless_fold_in(self._key, n), dtype=tf.float32
        )
        delta = tf.constant(self.max_delta, tf.float32) * (2.0 * u - 1.0)
        out = tf.add(images, delta)
        mean = tf.reduce_mean(out)
        self.history.assign(tf.concat([self.history, tf.reshape(mean, [1])], 0))
        tf.print(tf.strings.format("batch {}: delta={}", (n, delta)))
        return out
