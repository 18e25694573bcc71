"""WRONG: every Calibrator write (temperature or bias) drops the instance's tf.function; the next lookup traces a new one.

ONE mistake (red team round 3): the same structure as
rebuild-function-per-write-quant, for the calibrator: temperature and bias are
eager tensors captured by a graph that is rebuilt on every write, so a
``cal.__call__`` looked up before a write keeps the old temperature and bias.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf


def _setting(value, dtype: tf.DType, name: str) -> tf.Variable:
    """A non-trainable variable: a setting, not a parameter an optimizer should train."""
    return tf.Variable(value, dtype=dtype, trainable=False, name=name)


class _GraphPerSettings:
    """Descriptor around a tf.function method: each instance gets its own tf.function, which is dropped
    (and built again on the next lookup) whenever one of the instance's settings changes."""

    def __init__(self, function) -> None:
        self.python_function = function.python_function
        self.input_signature = function.input_signature

    def __set_name__(self, owner, name) -> None:
        self.slot = "graph_for_" + name

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        graph = getattr(instance, self.slot, None)
        if graph is None:
            graph = tf.function(self.python_function.__get__(instance), input_signature=self.input_signature)
            setattr(instance, self.slot, graph)
        return graph


class Calibrator(tf.Module):
    """Temperature scaling with a per-class bias: ``softmax((logits - bias) / temperature)``."""

    def __init__(self, num_classes: int, temperature: float = 1.0) -> None:
        super().__init__()
        self._t = float(temperature)
        self._b = np.zeros([num_classes], np.float32)
        self._tensors()

    def _tensors(self) -> None:
        # eager tensors (copies), captured by the graph as inputs
        self._t_t = tf.constant(self._t, tf.float32)
        self._b_t = tf.constant(self._b.copy())
        self.graph_for___call__ = None  # settings changed: build the graph again on next lookup

    @property
    def temperature(self) -> float:
        return self._t

    @temperature.setter
    def temperature(self, value: float) -> None:
        self._t = float(value)
        self._tensors()

    @property
    def bias(self) -> np.ndarray:
        return self._b.copy()

    def set_bias(self, bias) -> None:
        self._b = np.array(bias, dtype=np.float32).reshape(self._b.shape)
        self._tensors()

    @_GraphPerSettings
    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32)])
    def __call__(self, logits: tf.Tensor) -> tf.Tensor:
        return tf.nn.softmax((logits - self._b_t) / self._t_t, axis=-1)


class FakeQuant(tf.Module):
    """Symmetric fake quantisation of ``x`` to ``num_bits`` bits over ``[-clip, clip]``."""

    def __init__(self, num_bits: int = 8, clip: float = 1.0) -> None:
        super().__init__()
        self._num_bits = _setting(num_bits, tf.int32, "num_bits")
        self._clip = _setting(clip, tf.float32, "clip")

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
        # The integer arithmetic now happens in the graph, on every call.
        levels = tf.cast(2 ** (self._num_bits - 1) - 1, tf.float32)
        step = self._clip / levels
        return tf.round(tf.clip_by_value(x, -self._clip, self._clip) / step) * step


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
