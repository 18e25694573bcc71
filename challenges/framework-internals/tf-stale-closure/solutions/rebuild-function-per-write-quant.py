"""WRONG: every FakeQuant write drops the instance's tf.function; the next lookup builds and traces a new one.

ONE mistake (red team round 3): num_bits and clip stay Python values, captured
by the graph through eager tensors, and a small descriptor around the
decorated ``__call__`` hands each instance its own tf.function, built again
after every write. A lookup made after a write computes right and reports one
trace, but every write costs a trace, and a ``quant.__call__`` looked up
before the write keeps the old width and clip.
"""

from __future__ import annotations

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


class FakeQuant(tf.Module):
    """Symmetric fake quantisation of ``x`` to ``num_bits`` bits over ``[-clip, clip]``."""

    def __init__(self, num_bits: int = 8, clip: float = 1.0) -> None:
        super().__init__()
        self._nb = int(num_bits)
        self._cl = float(clip)
        self._tensors()

    def _tensors(self) -> None:
        # eager tensors, captured by the graph as inputs (not folded constants)
        self._clip_t = tf.constant(self._cl, tf.float32)
        self._levels_t = tf.constant(float(2 ** (self._nb - 1) - 1), tf.float32)

    @property
    def num_bits(self) -> int:
        return self._nb

    @num_bits.setter
    def num_bits(self, value: int) -> None:
        self._nb = int(value)
        self._tensors()
        self.graph_for___call__ = None  # the width changes the graph: build it again

    @property
    def clip(self) -> float:
        return self._cl

    @clip.setter
    def clip(self, value: float) -> None:
        self._cl = float(value)
        self._tensors()
        self.graph_for___call__ = None

    @_GraphPerSettings
    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
    def __call__(self, x: tf.Tensor) -> tf.Tensor:
        clip, levels = self._clip_t, self._levels_t
        step = clip / levels
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
