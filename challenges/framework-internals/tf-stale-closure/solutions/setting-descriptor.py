"""A different correct solution: one reusable descriptor for every setting.

``Setting`` is a data descriptor. The first write (in ``__init__``) creates a
non-trainable per-instance tf.Variable; every later write assigns to it in
place; a read returns the current Python value. Inside the traced methods the
code reads the variable itself (``Setting.var(self, name)``), so the graph
captures the variable's handle and sees each new value without retracing.
"""

from __future__ import annotations

import tensorflow as tf


class Setting:
    def __init__(self, dtype: tf.DType, cast: type) -> None:
        self.dtype, self.cast = dtype, cast

    def __set_name__(self, owner: type, name: str) -> None:
        self.slot = f"_{name}_var"

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        var = obj.__dict__.get(self.slot)
        if var is None:  # tf.Module's __setattr__ reads the old value first
            raise AttributeError(self.slot)
        return self.cast(var.numpy())

    def __set__(self, obj, value) -> None:
        var = obj.__dict__.get(self.slot)
        if var is None:
            # Kept out of the tracked attributes: never in trainable_variables.
            obj.__dict__[self.slot] = tf.Variable(value, dtype=self.dtype, trainable=False)
        else:
            var.assign(tf.cast(value, self.dtype))

    @staticmethod
    def var(obj, name: str) -> tf.Variable:
        return obj.__dict__[f"_{name}_var"]


class Calibrator(tf.Module):
    temperature = Setting(tf.float32, float)

    def __init__(self, num_classes: int, temperature: float = 1.0) -> None:
        super().__init__()
        self.temperature = temperature
        self._bias = tf.Variable(tf.zeros([num_classes]), trainable=False)

    @property
    def bias(self) -> tf.Tensor:
        return self._bias.read_value()

    def set_bias(self, bias) -> None:
        self._bias.assign(tf.cast(bias, tf.float32))

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32)])
    def __call__(self, logits: tf.Tensor) -> tf.Tensor:
        return tf.nn.softmax((logits - self._bias) / Setting.var(self, "temperature"), axis=-1)


class FakeQuant(tf.Module):
    num_bits = Setting(tf.int64, int)
    clip = Setting(tf.float32, float)

    def __init__(self, num_bits: int = 8, clip: float = 1.0) -> None:
        super().__init__()
        self.num_bits = num_bits
        self.clip = clip

    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
    def __call__(self, x: tf.Tensor) -> tf.Tensor:
        bits = Setting.var(self, "num_bits")
        clip = Setting.var(self, "clip")
        levels = tf.cast(tf.bitwise.left_shift(tf.constant(1, tf.int64), bits - 1) - 1, tf.float32)
        step = clip / levels
        return tf.round(tf.clip_by_value(x, -clip, clip) / step) * step


class LinearRegressor(tf.Module):
    learning_rate = Setting(tf.float32, float)
    l2 = Setting(tf.float32, float)

    def __init__(self, num_features: int, learning_rate: float = 0.1, l2: float = 0.0) -> None:
        super().__init__()
        self.w = tf.Variable(tf.zeros([num_features]), name="w")
        self.b = tf.Variable(0.0, name="b")
        self.learning_rate = learning_rate
        self.l2 = l2

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32), tf.TensorSpec([None], tf.float32)])
    def train_step(self, x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:
        lr = Setting.var(self, "learning_rate")
        with tf.GradientTape() as tape:
            pred = tf.linalg.matvec(x, self.w) + self.b
            loss = tf.reduce_mean(tf.square(pred - y)) + Setting.var(self, "l2") * tf.reduce_sum(tf.square(self.w))
        grad_w, grad_b = tape.gradient(loss, [self.w, self.b])
        self.w.assign_sub(lr * grad_w)
        self.b.assign_sub(lr * grad_b)
        return loss
