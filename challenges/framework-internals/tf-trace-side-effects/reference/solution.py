"""Reference: every side effect is a stateful TensorFlow op that runs on each call.

Python code in a tf.function body runs once per trace, so anything that
must happen per call has to be an op in the graph:

- the counter is a tf.Variable incremented with ``assign_add``;
- the history is a tf.Variable with an unknown length (``shape=[None]``)
  that each call re-assigns with one more element;
- the log line is ``tf.print``, which is an op (Python's ``print`` is not);
- the jitter comes from a ``tf.random.Generator``, whose state is a variable:
  each draw advances it, so every call gets a new value, and the stream
  depends only on the seed and on how many draws came before. It does not
  restart when the function traces again for a new input shape.

Automatic control dependencies run these stateful ops in program order.
"""

from __future__ import annotations

import sys

import tensorflow as tf


class Augmenter(tf.Module):
    """Adds one random brightness offset ``delta ~ U(-max_delta, max_delta)`` to each batch."""

    def __init__(self, seed: int, max_delta: float = 0.1) -> None:
        super().__init__()
        # A Python float: fixed for the augmenter's life, so a constant is fine. float() also
        # makes -max_delta safe for an unsigned NumPy scalar (-np.uint8(2) wraps to 254).
        self.max_delta = float(max_delta)
        self.calls = tf.Variable(0, dtype=tf.int64, trainable=False, name="calls")
        self.history = tf.Variable(
            tf.zeros([0]), shape=tf.TensorShape([None]), trainable=False, name="history"
        )
        self._rng = tf.random.Generator.from_seed(seed)

    @tf.function
    def __call__(self, images: tf.Tensor) -> tf.Tensor:
        n = self.calls.assign_add(1)
        delta = self._rng.uniform([], -self.max_delta, self.max_delta)
        augmented = images + delta
        self.history.assign(tf.concat([self.history, [tf.reduce_mean(augmented)]], axis=0))
        tf.print("batch ", n, ": delta=", delta, sep="", output_stream=sys.stdout)
        return augmented
