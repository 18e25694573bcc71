"""Settings in tf.Variables declared on the class: one variable per class, not per instance.

Updates reach the graph, and nothing retraces, but every Calibrator shares
one temperature and one bias (every FakeQuant one bit width, and so on): the
constructor of a second instance, or a write through it, changes the first.
"""

from __future__ import annotations

import tensorflow as tf


class Calibrator(tf.Module):
    _temperature = tf.Variable(1.0, trainable=False)
    _bias = tf.Variable(tf.zeros([0]), shape=tf.TensorShape([None]), trainable=False)

    def __init__(self, num_classes: int, temperature: float = 1.0) -> None:
        super().__init__()
        self._temperature.assign(temperature)
        self._bias.assign(tf.zeros([num_classes]))

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
        self._bias.assign(tf.convert_to_tensor(bias, dtype=tf.float32))

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32)])
    def __call__(self, logits: tf.Tensor) -> tf.Tensor:
        return tf.nn.softmax((logits - self._bias) / self._temperature, axis=-1)


class FakeQuant(tf.Module):
    _num_bits = tf.Variable(8, trainable=False)
    _clip = tf.Variable(1.0, trainable=False)

    def __init__(self, num_bits: int = 8, clip: float = 1.0) -> None:
        super().__init__()
        self._num_bits.assign(num_bits)
        self._clip.assign(clip)

    @property
    def num_bits(self) -> int:
        return int(self._num_bits.numpy())

    @num_bits.setter
    def num_bits(self, value: int) -> None:
        self._num_bits.assign(value)

    @property
    def clip(self) -> float:
        return float(self._clip.numpy())

    @clip.setter
    def clip(self, value: float) -> None:
        self._clip.assign(value)

    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
    def __call__(self, x: tf.Tensor) -> tf.Tensor:
        levels = tf.cast(2 ** (self._num_bits - 1) - 1, tf.float32)
        step = self._clip / levels
        return tf.round(tf.clip_by_value(x, -self._clip, self._clip) / step) * step


class LinearRegressor(tf.Module):
    _learning_rate = tf.Variable(0.1, trainable=False)
    _l2 = tf.Variable(0.0, trainable=False)

    def __init__(self, num_features: int, learning_rate: float = 0.1, l2: float = 0.0) -> None:
        super().__init__()
        self.w = tf.Variable(tf.zeros([num_features]), name="w")
        self.b = tf.Variable(0.0, name="b")
        self._learning_rate.assign(learning_rate)
        self._l2.assign(l2)

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
        with tf.GradientTape() as tape:
            pred = tf.linalg.matvec(x, self.w) + self.b
            loss = tf.reduce_mean(tf.square(pred - y)) + self._l2 * tf.reduce_sum(tf.square(self.w))
        grad_w, grad_b = tape.gradient(loss, [self.w, self.b])
        self.w.assign_sub(self._learning_rate * grad_w)
        self.b.assign_sub(self._learning_rate * grad_b)
        return loss
