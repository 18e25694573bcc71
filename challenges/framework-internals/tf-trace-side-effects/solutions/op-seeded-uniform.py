"""Counter, history and tf.print are right, but the jitter comes from
``tf.random.uniform(..., seed=seed)``, a stateful op with an op-level seed.

Its state lives inside the op's kernel in one traced graph. Calls that
reuse that graph get new values, but a retrace for a new input shape builds
a new graph whose op starts the sequence over: the deltas repeat.
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
        self.seed = seed

    @tf.function
    def __call__(self, images: tf.Tensor) -> tf.Tensor:
        n = self.calls.assign_add(1)
        delta = tf.random.uniform([], -self.max_delta, self.max_delta, seed=self.seed)
        augmented = images + delta
        self.history.assign(tf.concat([self.history, [tf.reduce_mean(augmented)]], axis=0))
        tf.print("batch ", n, ": delta=", delta, sep="", output_stream=sys.stdout)
        return augmented
