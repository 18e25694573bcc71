"""WRONG (red team round 1; one mistake): instead of turning the side effects into graph ops, the
candidate wraps the starter's whole Python body in one ``tf.py_function``.
``__call__`` is still a ``tf.function`` that traces once per shape, and every
visible property holds (the Python body now runs on every call), but the work
runs *eagerly* inside a Python callback: the graph contains no counter, history,
print or RNG op -- only ``EagerPyFunc``. The statement says "make each of these
effects happen on every call, inside the graph" and "Running it eagerly is not
a fix"; the function cannot be exported (``tf.saved_model.save`` + load in a
fresh process fails: the callback is not serialisable).
"""

from __future__ import annotations

import random

import tensorflow as tf


class Augmenter(tf.Module):
    def __init__(self, seed: int, max_delta: float = 0.1) -> None:
        super().__init__()
        self.max_delta = float(max_delta)
        self.calls = 0
        self.history = []
        self._rng = random.Random(seed)

    def _body(self, images):
        self.calls += 1
        delta = self._rng.uniform(-self.max_delta, self.max_delta)
        augmented = images + tf.constant(delta, tf.float32)
        self.history.append(float(tf.reduce_mean(augmented)))
        print(f"batch {self.calls}: delta={delta:.6f}", flush=True)
        return augmented

    @tf.function
    def __call__(self, images: tf.Tensor) -> tf.Tensor:
        out = tf.py_function(self._body, [images], Tout=tf.float32)
        out.set_shape(images.shape)
        return out
