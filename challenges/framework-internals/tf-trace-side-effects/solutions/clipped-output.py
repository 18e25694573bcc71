"""Every side effect is right, but the output is clipped to ``[0, 1]``:
``tf.clip_by_value(images + delta, 0.0, 1.0)``.

Plausible: real brightness augmentation usually clips, so that pixels stay
valid. The statement asks for ``images + delta`` exactly, though, and with a
large ``max_delta`` the clipped pixels no longer get the delta that was
drawn and logged: the batch no longer gets one offset.
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
        delta = self._rng.uniform([], -self.max_delta, self.max_delta)
        augmented = tf.clip_by_value(images + delta, 0.0, 1.0)
        self.history.assign(tf.concat([self.history, [tf.reduce_mean(augmented)]], axis=0))
        tf.print("batch ", n, ": delta=", delta, sep="", output_stream=sys.stdout)
        return augmented
