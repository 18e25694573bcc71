"""WRONG (red team round 1; one mistake): the seed is folded into int32 range (``seed % 2**31``)
because the candidate believed stateless seeds must be int32 pairs. Seeds that
differ by a multiple of 2**31 (e.g. 1 and 2**31 + 1, or -1 and 2**31 - 1) give
identical streams, breaking "Different seeds give different streams" for
perfectly valid Python int seeds (``random.Random`` accepts any int).

Otherwise a clean stateless design: delta of call n = stateless_uniform(seed=[s, n]).
"""

from __future__ import annotations

import sys

import tensorflow as tf


class Augmenter(tf.Module):
    def __init__(self, seed: int, max_delta: float = 0.1) -> None:
        super().__init__()
        self.max_delta = float(max_delta)
        self._seed = tf.constant(seed % 2**31, tf.int32)  # stateless seeds: int32 pair
        self.calls = tf.Variable(0, dtype=tf.int32, trainable=False, name="calls")
        self.history = tf.Variable(
            tf.zeros([0]), shape=tf.TensorShape([None]), trainable=False, name="history"
        )

    @tf.function
    def __call__(self, images: tf.Tensor) -> tf.Tensor:
        n = self.calls.assign_add(1)
        delta = tf.random.stateless_uniform(
            [], seed=tf.stack([self._seed, n]), minval=-self.max_delta, maxval=self.max_delta
        )
        augmented = images + delta
        self.history.assign(tf.concat([self.history, [tf.reduce_mean(augmented)]], axis=0))
        tf.print("batch ", n, ": delta=", delta, sep="", output_stream=sys.stdout)
        return augmented
