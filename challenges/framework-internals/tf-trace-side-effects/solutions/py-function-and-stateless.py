"""A different correct solution: stateless randomness keyed by the call number, Python at run time.

The call number comes from a tf.Variable counter, and the delta from
``tf.random.stateless_uniform`` seeded with ``[seed, call number]``: a pure
function of the seed and the call's position, so any graph, traced for any
shape, draws the same stream. The history and the log line are Python side
effects made to run on every call with ``tf.py_function``, which wraps
Python code as an op of the graph (at the price of a graph that cannot be
serialised or run without this Python process).
"""

from __future__ import annotations

import tensorflow as tf


class Augmenter(tf.Module):
    """Adds one random brightness offset ``delta ~ U(-max_delta, max_delta)`` to each batch."""

    def __init__(self, seed: int, max_delta: float = 0.1) -> None:
        super().__init__()
        self.max_delta = float(max_delta)  # -max_delta of an unsigned NumPy scalar would wrap
        self.calls = tf.Variable(0, dtype=tf.int64, trainable=False)
        self.history: list[float] = []
        self._seed = tf.constant(seed, tf.int64)

    def _record(self, n: tf.Tensor, delta: tf.Tensor, mean: tf.Tensor) -> tf.Tensor:
        """Runs as Python on every call: by then the tensors hold values."""
        self.history.append(float(mean))
        print(f"batch {int(n)}: delta={float(delta):.6f}", flush=True)
        return n

    @tf.function
    def __call__(self, images: tf.Tensor) -> tf.Tensor:
        n = self.calls.assign_add(1)
        delta = tf.random.stateless_uniform(
            [], seed=tf.stack([self._seed, n]), minval=-self.max_delta, maxval=self.max_delta
        )
        augmented = images + delta
        tf.py_function(self._record, [n, delta, tf.reduce_mean(augmented)], Tout=tf.int64)
        return augmented
