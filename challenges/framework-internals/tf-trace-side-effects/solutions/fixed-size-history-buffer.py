"""WRONG (red team round 1; one mistake): the history lives in a preallocated float32 buffer of
1024 entries (to avoid re-allocating a growing variable every call); ``history``
is a property returning ``buffer[:calls]``. After 1024 calls the
``scatter_nd_update`` index runs past the buffer and call 1025 raises
InvalidArgumentError: "the history grows ... one entry per call" fails for
long-running pipelines.
"""

from __future__ import annotations

import sys

import tensorflow as tf

_CAPACITY = 1024


class Augmenter(tf.Module):
    def __init__(self, seed: int, max_delta: float = 0.1) -> None:
        super().__init__()
        self.max_delta = float(max_delta)
        self.calls = tf.Variable(0, dtype=tf.int64, trainable=False, name="calls")
        self._buffer = tf.Variable(tf.zeros([_CAPACITY]), trainable=False, name="history_buffer")
        self._rng = tf.random.Generator.from_seed(seed)

    @property
    def history(self) -> tf.Tensor:
        return self._buffer[: int(self.calls)]

    @tf.function
    def __call__(self, images: tf.Tensor) -> tf.Tensor:
        n = self.calls.assign_add(1)
        delta = self._rng.uniform([], -self.max_delta, self.max_delta)
        augmented = images + delta
        self._buffer.scatter_nd_update([[n - 1]], [tf.reduce_mean(augmented)])
        tf.print("batch ", n, ": delta=", delta, sep="", output_stream=sys.stdout)
        return augmented
