"""WRONG (red team round 1; one mistake): the jitter comes from an op-level-seeded stateful op,
``tf.random.uniform(..., seed=seed)``, so each delta depends on TensorFlow's
*global* seed as well as on ``seed`` and the call number k.

The candidate saw that a retrace creates a fresh random op that restarts the
sequence, so they pinned the signature (``TensorSpec(None)``): one trace for all
shapes, one op per augmenter, whose kernel state advances on every call.
Everything the probes look at holds under the fixed global seed 0, but the
stream changes whenever ``tf.random.set_seed`` was called with another value
before the first call: it does not "depend only on seed and k".
"""

from __future__ import annotations

import sys

import tensorflow as tf


class Augmenter(tf.Module):
    def __init__(self, seed: int, max_delta: float = 0.1) -> None:
        super().__init__()
        self.seed = seed
        self.max_delta = float(max_delta)
        self.calls = tf.Variable(0, dtype=tf.int64, trainable=False, name="calls")
        self.history = tf.Variable(
            tf.zeros([0]), shape=tf.TensorShape([None]), trainable=False, name="history"
        )

    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
    def __call__(self, images: tf.Tensor) -> tf.Tensor:
        n = self.calls.assign_add(1)
        delta = tf.random.uniform([], -self.max_delta, self.max_delta, seed=self.seed)
        augmented = images + delta
        self.history.assign(tf.concat([self.history, [tf.reduce_mean(augmented)]], axis=0))
        tf.print("batch ", n, ": delta=", delta, sep="", output_stream=sys.stdout)
        return augmented
