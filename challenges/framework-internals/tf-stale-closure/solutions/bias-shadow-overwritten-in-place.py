"""WRONG: the bias read returns the internal shadow array, which set_bias overwrites in place.

ONE mistake: ``cal.bias`` returns the module's own float32 shadow array and
``set_bias`` writes the new values into that same array (``[...] = ``), so a
value read before an update changes with it. ``old_bias = cal.bias``, a
temporary ``set_bias``, then ``cal.set_bias(np.asarray(old_bias))`` does NOT
restore the old bias (statement rule 3: "a read is a snapshot").
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf


def _setting(value, dtype, name):
    return tf.Variable(value, dtype=dtype, trainable=False, name=name)


class Calibrator(tf.Module):
    def __init__(self, num_classes: int, temperature: float = 1.0) -> None:
        super().__init__()
        self._temperature_value = float(temperature)
        self._temperature = _setting(self._temperature_value, tf.float32, "temperature")
        self._bias_value = np.zeros([num_classes], np.float32)
        self._bias = _setting(self._bias_value, tf.float32, "bias")

    @property
    def temperature(self) -> float:
        return self._temperature_value

    @temperature.setter
    def temperature(self, value: float) -> None:
        self._temperature.assign(float(value))
        self._temperature_value = float(value)

    @property
    def bias(self):
        return self._bias_value

    def set_bias(self, bias) -> None:
        self._bias_value[...] = np.asarray(bias, dtype=np.float32)
        self._bias.assign(self._bias_value)

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32)])
    def __call__(self, logits):
        return tf.nn.softmax((logits - self._bias) / self._temperature, axis=-1)


class FakeQuant(tf.Module):
    def __init__(self, num_bits: int = 8, clip: float = 1.0) -> None:
        super().__init__()
        self._num_bits_value = int(num_bits)
        self._clip_value = float(clip)
        self._num_bits = _setting(self._num_bits_value, tf.int32, "num_bits")
        self._clip = _setting(self._clip_value, tf.float32, "clip")

    @property
    def num_bits(self) -> int:
        return self._num_bits_value

    @num_bits.setter
    def num_bits(self, value: int) -> None:
        self._num_bits.assign(int(value))
        self._num_bits_value = int(value)

    @property
    def clip(self) -> float:
        return self._clip_value

    @clip.setter
    def clip(self, value: float) -> None:
        self._clip.assign(float(value))
        self._clip_value = float(value)

    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
    def __call__(self, x):
        levels = tf.cast(tf.bitwise.left_shift(1, self._num_bits - 1) - 1, tf.float32)
        step = self._clip / levels
        return tf.round(tf.clip_by_value(x, -self._clip, self._clip) / step) * step


class LinearRegressor(tf.Module):
    def __init__(self, num_features: int, learning_rate: float = 0.1, l2: float = 0.0) -> None:
        super().__init__()
        self.w = tf.Variable(tf.zeros([num_features]), name="w")
        self.b = tf.Variable(0.0, name="b")
        self._learning_rate_value = float(learning_rate)
        self._l2_value = float(l2)
        self._learning_rate = _setting(self._learning_rate_value, tf.float32, "learning_rate")
        self._l2 = _setting(self._l2_value, tf.float32, "l2")

    @property
    def learning_rate(self) -> float:
        return self._learning_rate_value

    @learning_rate.setter
    def learning_rate(self, value: float) -> None:
        self._learning_rate.assign(float(value))
        self._learning_rate_value = float(value)

    @property
    def l2(self) -> float:
        return self._l2_value

    @l2.setter
    def l2(self, value: float) -> None:
        self._l2.assign(float(value))
        self._l2_value = float(value)

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32), tf.TensorSpec([None], tf.float32)])
    def train_step(self, x, y):
        with tf.GradientTape() as tape:
            pred = tf.linalg.matvec(x, self.w) + self.b
            loss = tf.reduce_mean(tf.square(pred - y)) + self._l2 * tf.reduce_sum(tf.square(self.w))
        grad_w, grad_b = tape.gradient(loss, [self.w, self.b])
        self.w.assign_sub(self._learning_rate * grad_w)
        self.b.assign_sub(self._learning_rate * grad_b)
        return loss
