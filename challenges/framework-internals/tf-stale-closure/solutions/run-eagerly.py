"""The starter with ``tf.config.run_functions_eagerly(True)``: the debugging switch.

Every value is right, because nothing is traced any more: each call runs the
Python body and reads the attributes afresh. But the methods never build a
graph (experimental_get_tracing_count() stays 0), so the modules lose what
tf.function was for.
"""

from __future__ import annotations

import tensorflow as tf

tf.config.run_functions_eagerly(True)


class Calibrator(tf.Module):
    """Temperature scaling with a per-class bias: ``softmax((logits - bias) / temperature)``.

    ``temperature`` is a float that calibration code reads and writes as a
    plain attribute; ``set_bias`` replaces the bias (one value per class).
    """

    def __init__(self, num_classes: int, temperature: float = 1.0) -> None:
        super().__init__()
        self.temperature = temperature
        self.bias = tf.zeros([num_classes])

    def set_bias(self, bias) -> None:
        self.bias = tf.constant(bias, dtype=tf.float32)

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32)])
    def __call__(self, logits: tf.Tensor) -> tf.Tensor:
        return tf.nn.softmax((logits - self.bias) / self.temperature, axis=-1)


class FakeQuant(tf.Module):
    """Symmetric fake quantisation of ``x`` to ``num_bits`` bits over ``[-clip, clip]``.

    With ``levels = 2 ** (num_bits - 1) - 1`` and ``step = clip / levels``, the
    output is ``round(clip_by_value(x, -clip, clip) / step) * step``.
    """

    def __init__(self, num_bits: int = 8, clip: float = 1.0) -> None:
        super().__init__()
        self.num_bits = num_bits
        self.clip = clip

    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
    def __call__(self, x: tf.Tensor) -> tf.Tensor:
        levels = 2 ** (self.num_bits - 1) - 1
        step = self.clip / levels
        return tf.round(tf.clip_by_value(x, -self.clip, self.clip) / step) * step


class LinearRegressor(tf.Module):
    """``pred = x @ w + b``, trained by plain SGD on the mean squared error plus ``l2 * sum(w**2)``.

    A learning-rate schedule sets ``learning_rate`` (and sometimes ``l2``)
    between steps.
    """

    def __init__(self, num_features: int, learning_rate: float = 0.1, l2: float = 0.0) -> None:
        super().__init__()
        self.w = tf.Variable(tf.zeros([num_features]), name="w")
        self.b = tf.Variable(0.0, name="b")
        self.learning_rate = learning_rate
        self.l2 = l2

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32), tf.TensorSpec([None], tf.float32)])
    def train_step(self, x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:
        """One SGD step; returns the loss before the update."""
        with tf.GradientTape() as tape:
            pred = tf.linalg.matvec(x, self.w) + self.b
            loss = tf.reduce_mean(tf.square(pred - y)) + self.l2 * tf.reduce_sum(tf.square(self.w))
        grad_w, grad_b = tape.gradient(loss, [self.w, self.b])
        self.w.assign_sub(self.learning_rate * grad_w)
        self.b.assign_sub(self.learning_rate * grad_b)
        return loss
