"""Reference-like fix, but the log writes the delta with 3 significant digits.

Mistake: ``{:.3g}`` is exact enough for max_delta <= 0.1 (error < 5e-5) but
for |delta| in [0.1, 1) its error reaches 5e-4 > 1e-4 + 1e-3*|delta|.
"""
from __future__ import annotations

import tensorflow as tf


class Augmenter(tf.Module):
    """Adds one random brightness offset ``delta ~ U(-max_delta, max_delta)`` to each batch."""

    def __init__(self, seed: int, max_delta: float = 0.1) -> None:
        super().__init__()
        self.max_delta = max_delta
        self._m = float(max_delta)
        self.calls = tf.Variable(0, dtype=tf.int64, trainable=False, name="calls")
        self.history = tf.Variable(tf.zeros([0]), shape=tf.TensorShape([None]), trainable=False)
        self._rng = tf.random.Generator.from_seed(seed)

    @staticmethod
    def _log(n, delta):
        print(f"batch {int(n.numpy())}: delta={float(delta.numpy()):.3g}", flush=True)
        return 0

    @tf.function
    def __call__(self, images: tf.Tensor) -> tf.Tensor:
        n = self.calls.assign_add(1)
        delta = self._rng.uniform([], -self._m, self._m)
        out = images + delta
        self.history.assign(tf.concat([self.history, [tf.reduce_mean(out)]], 0))
        tf.py_function(self._log, [n, delta], Tout=tf.int32)
        return out
