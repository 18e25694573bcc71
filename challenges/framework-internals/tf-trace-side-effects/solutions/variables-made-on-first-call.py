# WRONG: Keras-style lazy build: the counter, history and generator are created on the first call, inside
# the traced body (guarded so that only the first trace creates them, which tf.function allows). But a
# tf.function that creates variables traces its first input shape TWICE (once to lift the variable
# initializers, once more for the variable-free version), so one input shape costs two traces.
# Breaks rule 6: "__call__ remains a tf.function that traces at least once, and at most once per
# distinct input shape: aug.__call__.experimental_get_tracing_count() is checked."
from __future__ import annotations

import sys

import tensorflow as tf


class Augmenter(tf.Module):
    def __init__(self, seed: int, max_delta: float = 0.1) -> None:
        super().__init__()
        self.max_delta = float(max_delta)
        self._seed = int(seed)
        self.calls = None
        self.history = None
        self._rng = None

    def _build(self):
        self.calls = tf.Variable(0, dtype=tf.int64, trainable=False, name="calls")
        self.history = tf.Variable(tf.zeros([0]), shape=tf.TensorShape([None]), trainable=False, name="history")
        self._rng = tf.random.Generator.from_seed(self._seed)

    @tf.function
    def __call__(self, images):
        if self.calls is None:
            self._build()
        n = self.calls.assign_add(1)
        delta = self._rng.uniform([], -self.max_delta, self.max_delta)
        augmented = images + delta
        self.history.assign(tf.concat([self.history, [tf.reduce_mean(augmented)]], axis=0))
        tf.print("batch ", n, ": delta=", delta, sep="", output_stream=sys.stdout)
        return augmented
