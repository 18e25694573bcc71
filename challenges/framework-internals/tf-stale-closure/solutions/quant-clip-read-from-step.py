"""WRONG: FakeQuant keeps only ``step`` and reads ``clip`` back as ``step * levels``.

ONE mistake (red team round 2): the quantised outputs match, but the clip
read back drifts by a float32 ulp for values such as 0.123456789, above all
after ``num_bits`` changes (the step is recomputed from the drifted clip).
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf


def _setting(value, dtype: tf.DType, name: str) -> tf.Variable:
    """A non-trainable variable: a setting, not a parameter an optimizer should train."""
    return tf.Variable(value, dtype=dtype, trainable=False, name=name)


class Calibrator(tf.Module):
    """Temperature scaling with a per-class bias: ``softmax((logits - bias) / temperature)``."""

    def __init__(self, num_classes: int, temperature: float = 1.0) -> None:
        super().__init__()
        self._temperature = _setting(temperature, tf.float32, "temperature")
        self._bias = _setting(tf.zeros([num_classes]), tf.float32, "bias")

    @property
    def temperature(self) -> float:
        return float(self._temperature.numpy())

    @temperature.setter
    def temperature(self, value: float) -> None:
        self._temperature.assign(value)

    @property
    def bias(self) -> tf.Tensor:
        return tf.identity(self._bias)

    def set_bias(self, bias) -> None:
        # In place: the traced graph holds this variable's handle.
        self._bias.assign(tf.convert_to_tensor(bias, dtype=tf.float32))

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32)])
    def __call__(self, logits: tf.Tensor) -> tf.Tensor:
        return tf.nn.softmax((logits - self._bias) / self._temperature, axis=-1)


class FakeQuant(tf.Module):
    """Symmetric fake quantisation of ``x`` to ``num_bits`` bits over ``[-clip, clip]``."""

    def __init__(self, num_bits: int = 8, clip: float = 1.0) -> None:
        super().__init__()
        self._num_bits = _setting(num_bits, tf.int32, "num_bits")
        # keep step (what the graph divides by); clip is recovered as step * levels
        self._step = _setting(self._f32_step(clip, num_bits), tf.float32, "step")

    @staticmethod
    def _f32_step(clip, num_bits):
        return np.float32(clip) / np.float32(2 ** (num_bits - 1) - 1)

    @property
    def num_bits(self) -> int:
        return int(self._num_bits.numpy())

    @num_bits.setter
    def num_bits(self, value: int) -> None:
        clip = self.clip
        self._num_bits.assign(value)
        self._step.assign(self._f32_step(clip, value))

    @property
    def clip(self) -> float:
        levels = 2 ** (self.num_bits - 1) - 1
        return float(self._step.numpy()) * levels

    @clip.setter
    def clip(self, value: float) -> None:
        self._step.assign(self._f32_step(value, self.num_bits))

    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
    def __call__(self, x: tf.Tensor) -> tf.Tensor:
        # The integer arithmetic now happens in the graph, on every call.
        levels = tf.cast(2 ** (self._num_bits - 1) - 1, tf.float32)
        step = self._step
        clip = step * levels
        return tf.round(tf.clip_by_value(x, -clip, clip) / step) * step


class LinearRegressor(tf.Module):
    """``pred = x @ w + b``, trained by plain SGD on the mean squared error plus ``l2 * sum(w**2)``."""

    def __init__(self, num_features: int, learning_rate: float = 0.1, l2: float = 0.0) -> None:
        super().__init__()
        self.w = tf.Variable(tf.zeros([num_features]), name="w")
        self.b = tf.Variable(0.0, name="b")
        self._learning_rate = _setting(learning_rate, tf.float32, "learning_rate")
        self._l2 = _setting(l2, tf.float32, "l2")

    @property
    def learning_rate(self) -> float:
        return float(self._learning_rate.numpy())

    @learning_rate.setter
    def learning_rate(self, value: float) -> None:
        self._learning_rate.assign(value)

    @property
    def l2(self) -> float:
        return float(self._l2.numpy())

    @l2.setter
    def l2(self, value: float) -> None:
        self._l2.assign(value)

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32), tf.TensorSpec([None], tf.float32)])
    def train_step(self, x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:
        """One SGD step; returns the loss before the update."""
        with tf.GradientTape() as tape:
            pred = tf.linalg.matvec(x, self.w) + self.b
            loss = tf.reduce_mean(tf.square(pred - y)) + self._l2 * tf.reduce_sum(tf.square(self.w))
        grad_w, grad_b = tape.gradient(loss, [self.w, self.b])
        self.w.assign_sub(self._learning_rate * grad_w)
        self.b.assign_sub(self._learning_rate * grad_b)
        return loss
