"""WRONG: the read-back shadows live in a dict that is a class attribute.

The graph reads per-instance tf.Variables (outputs are right and independent),
but ONE mistake: the Python values returned by the property getters are kept
in ``_values = {}`` declared on a shared base class, keyed by setting name, so
all instances share one read cache. After ``a.temperature = 2.0; b.temperature
= 3.0``, ``a.temperature`` reads 3.0 while ``a`` still computes with 2.0
(statement rule 4: instances are independent; rule 3: reads give the value last
written).
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf


def _setting(value, dtype, name):
    return tf.Variable(value, dtype=dtype, trainable=False, name=name)


class _SettingsModule(tf.Module):
    """Base class: Python copies of the settings for cheap reads (no device round trip)."""

    _values: dict = {}  # BUG: one dict shared by every instance of every subclass


class Calibrator(_SettingsModule):
    def __init__(self, num_classes: int, temperature: float = 1.0) -> None:
        super().__init__()
        self._values["temperature"] = float(temperature)
        self._temperature = _setting(self._values["temperature"], tf.float32, "temperature")
        self._bias_value = np.zeros([num_classes], np.float32)
        self._bias = _setting(self._bias_value, tf.float32, "bias")

    @property
    def temperature(self) -> float:
        return self._values["temperature"]

    @temperature.setter
    def temperature(self, value: float) -> None:
        self._temperature.assign(float(value))
        self._values["temperature"] = float(value)

    @property
    def bias(self):
        return self._bias_value.copy()

    def set_bias(self, bias) -> None:
        value = np.array(bias, dtype=np.float32)  # a copy, never the caller's array
        self._bias.assign(value)
        self._bias_value = value

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32)])
    def __call__(self, logits):
        return tf.nn.softmax((logits - self._bias) / self._temperature, axis=-1)


class FakeQuant(_SettingsModule):
    def __init__(self, num_bits: int = 8, clip: float = 1.0) -> None:
        super().__init__()
        self._values["num_bits"] = int(num_bits)
        self._values["clip"] = float(clip)
        self._num_bits = _setting(self._values["num_bits"], tf.int32, "num_bits")
        self._clip = _setting(self._values["clip"], tf.float32, "clip")

    @property
    def num_bits(self) -> int:
        return self._values["num_bits"]

    @num_bits.setter
    def num_bits(self, value: int) -> None:
        self._num_bits.assign(int(value))
        self._values["num_bits"] = int(value)

    @property
    def clip(self) -> float:
        return self._values["clip"]

    @clip.setter
    def clip(self, value: float) -> None:
        self._clip.assign(float(value))
        self._values["clip"] = float(value)

    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
    def __call__(self, x):
        levels = tf.cast(tf.bitwise.left_shift(1, self._num_bits - 1) - 1, tf.float32)
        step = self._clip / levels
        return tf.round(tf.clip_by_value(x, -self._clip, self._clip) / step) * step


class LinearRegressor(_SettingsModule):
    def __init__(self, num_features: int, learning_rate: float = 0.1, l2: float = 0.0) -> None:
        super().__init__()
        self.w = tf.Variable(tf.zeros([num_features]), name="w")
        self.b = tf.Variable(0.0, name="b")
        self._values["learning_rate"] = float(learning_rate)
        self._values["l2"] = float(l2)
        self._learning_rate = _setting(self._values["learning_rate"], tf.float32, "learning_rate")
        self._l2 = _setting(self._values["l2"], tf.float32, "l2")

    @property
    def learning_rate(self) -> float:
        return self._values["learning_rate"]

    @learning_rate.setter
    def learning_rate(self, value: float) -> None:
        self._learning_rate.assign(float(value))
        self._values["learning_rate"] = float(value)

    @property
    def l2(self) -> float:
        return self._values["l2"]

    @l2.setter
    def l2(self, value: float) -> None:
        self._l2.assign(float(value))
        self._values["l2"] = float(value)

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32), tf.TensorSpec([None], tf.float32)])
    def train_step(self, x, y):
        with tf.GradientTape() as tape:
            pred = tf.linalg.matvec(x, self.w) + self.b
            loss = tf.reduce_mean(tf.square(pred - y)) + self._l2 * tf.reduce_sum(tf.square(self.w))
        grad_w, grad_b = tape.gradient(loss, [self.w, self.b])
        self.w.assign_sub(self._learning_rate * grad_w)
        self.b.assign_sub(self._learning_rate * grad_b)
        return loss
