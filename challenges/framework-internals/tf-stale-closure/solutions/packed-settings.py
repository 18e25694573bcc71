"""RIGHT (alternative, red team round 2): each module's settings packed into one vector variable.

All of a module's settings sit in one non-trainable float32 vector variable
(``num_bits`` stored as a float); writes update one slot in place, and the
graph slices the slots it needs.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf


class Calibrator(tf.Module):
    # slot 0: temperature, slots 1..: bias
    def __init__(self, num_classes: int, temperature: float = 1.0) -> None:
        super().__init__()
        init = np.zeros([1 + num_classes], dtype=np.float32)
        init[0] = temperature
        self._packed = tf.Variable(init, trainable=False, name="settings")

    @property
    def temperature(self) -> float:
        return float(self._packed[0].numpy())

    @temperature.setter
    def temperature(self, value: float) -> None:
        self._packed[0].assign(np.float32(value))

    @property
    def bias(self):
        return self._packed[1:].numpy().copy()

    def set_bias(self, bias) -> None:
        self._packed[1:].assign(np.asarray(bias, dtype=np.float32).reshape([-1]))

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32)])
    def __call__(self, logits: tf.Tensor) -> tf.Tensor:
        s = self._packed.read_value()
        return tf.nn.softmax((logits - s[1:]) / s[0], axis=-1)


class FakeQuant(tf.Module):
    # slot 0: num_bits (exact in float32), slot 1: clip
    def __init__(self, num_bits: int = 8, clip: float = 1.0) -> None:
        super().__init__()
        self._packed = tf.Variable(np.array([num_bits, clip], dtype=np.float32), trainable=False, name="settings")

    @property
    def num_bits(self) -> int:
        return round(float(self._packed[0].numpy()))

    @num_bits.setter
    def num_bits(self, value: int) -> None:
        self._packed[0].assign(np.float32(value))

    @property
    def clip(self) -> float:
        return float(self._packed[1].numpy())

    @clip.setter
    def clip(self, value: float) -> None:
        self._packed[1].assign(np.float32(value))

    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
    def __call__(self, x: tf.Tensor) -> tf.Tensor:
        s = self._packed.read_value()
        levels = tf.pow(2.0, s[0] - 1.0) - 1.0
        clip = s[1]
        step = clip / levels
        return tf.round(tf.clip_by_value(x, -clip, clip) / step) * step


class LinearRegressor(tf.Module):
    def __init__(self, num_features: int, learning_rate: float = 0.1, l2: float = 0.0) -> None:
        super().__init__()
        self.w = tf.Variable(tf.zeros([num_features]), name="w")
        self.b = tf.Variable(0.0, name="b")
        self._packed = tf.Variable(np.array([learning_rate, l2], dtype=np.float32), trainable=False, name="settings")

    @property
    def learning_rate(self) -> float:
        return float(self._packed[0].numpy())

    @learning_rate.setter
    def learning_rate(self, value: float) -> None:
        self._packed[0].assign(np.float32(value))

    @property
    def l2(self) -> float:
        return float(self._packed[1].numpy())

    @l2.setter
    def l2(self, value: float) -> None:
        self._packed[1].assign(np.float32(value))

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32), tf.TensorSpec([None], tf.float32)])
    def train_step(self, x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:
        """One SGD step; returns the loss before the update."""
        s = self._packed.read_value()
        lr, l2 = s[0], s[1]
        with tf.GradientTape() as tape:
            pred = tf.linalg.matvec(x, self.w) + self.b
            loss = tf.reduce_mean(tf.square(pred - y)) + l2 * tf.reduce_sum(tf.square(self.w))
        grad_w, grad_b = tape.gradient(loss, [self.w, self.b])
        self.w.assign_sub(lr * grad_w)
        self.b.assign_sub(lr * grad_b)
        return loss
