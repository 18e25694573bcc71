"""WRONG: (py_function design) set_bias keeps the caller's NumPy array itself.

Settings are plain Python attributes read by the graph through tf.py_function
(as in right-py-function.py). ONE mistake: ``set_bias`` stores
``np.asarray(bias, np.float32)``, which for a float32 array is the caller's own
array, not a copy. When the caller later reuses/modifies that buffer, the
module's bias (both ``cal.bias`` and what ``cal(logits)`` computes with)
silently changes although ``set_bias`` was never called again: the setting is
no longer "the value last written".
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf


def _live(getter, dtype):
    """A graph node whose value is ``getter()`` at run time (not at trace time)."""
    return tf.py_function(lambda: tf.constant(getter(), dtype), [], dtype)


class Calibrator(tf.Module):
    def __init__(self, num_classes: int, temperature: float = 1.0) -> None:
        super().__init__()
        self.temperature = float(temperature)
        self._bias_value = np.zeros([num_classes], np.float32)

    @property
    def bias(self):
        return self._bias_value.copy()

    def set_bias(self, bias) -> None:
        self._bias_value = np.asarray(bias, dtype=np.float32)  # BUG: aliases a float32 input

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32)])
    def __call__(self, logits):
        temperature = _live(lambda: float(self.temperature), tf.float32)
        bias = _live(lambda: self._bias_value, tf.float32)
        return tf.nn.softmax((logits - bias) / temperature, axis=-1)


class FakeQuant(tf.Module):
    def __init__(self, num_bits: int = 8, clip: float = 1.0) -> None:
        super().__init__()
        self.num_bits = num_bits
        self.clip = float(clip)

    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
    def __call__(self, x):
        num_bits = _live(lambda: int(self.num_bits), tf.int32)
        clip = _live(lambda: float(self.clip), tf.float32)
        levels = tf.cast(2 ** (num_bits - 1) - 1, tf.float32)
        step = clip / levels
        return tf.round(tf.clip_by_value(x, -clip, clip) / step) * step


class LinearRegressor(tf.Module):
    def __init__(self, num_features: int, learning_rate: float = 0.1, l2: float = 0.0) -> None:
        super().__init__()
        self.w = tf.Variable(tf.zeros([num_features]), name="w")
        self.b = tf.Variable(0.0, name="b")
        self.learning_rate = float(learning_rate)
        self.l2 = float(l2)

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32), tf.TensorSpec([None], tf.float32)])
    def train_step(self, x, y):
        learning_rate = _live(lambda: float(self.learning_rate), tf.float32)
        l2 = _live(lambda: float(self.l2), tf.float32)
        with tf.GradientTape() as tape:
            pred = tf.linalg.matvec(x, self.w) + self.b
            loss = tf.reduce_mean(tf.square(pred - y)) + l2 * tf.reduce_sum(tf.square(self.w))
        grad_w, grad_b = tape.gradient(loss, [self.w, self.b])
        self.w.assign_sub(learning_rate * grad_w)
        self.b.assign_sub(learning_rate * grad_b)
        return loss
