"""A different correct solution: tensors at the call site, relaxed shapes, per-instance signature.

``fit`` converts every argument to a tensor of a fixed dtype before calling
``train_step``, so no Python value ever reaches the trace key; the label
dtype is the same whether the labels came as a list or an int64 array.
``reduce_retracing=True`` then costs one extra trace when the first ragged
batch arrives and generalises the batch dimension to None (two traces at
most). ``evaluate`` is called directly with Python lists, so it needs a
signature: built per instance in ``__init__``, where the feature count is
known.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf


class SoftmaxClassifier(tf.Module):
    """Multinomial logistic regression, ``logits = x @ w + b``, trained by plain SGD."""

    def __init__(self, num_features: int, num_classes: int, seed: int = 0) -> None:
        super().__init__()
        init = np.random.default_rng(seed).normal(0.0, 0.1, size=(num_features, num_classes))
        self.w = tf.Variable(init.astype(np.float32), name="w")
        self.b = tf.Variable(tf.zeros([num_classes]), name="b")
        self.evaluate = tf.function(
            self._evaluate,
            input_signature=[tf.TensorSpec([None, num_features], tf.float32), tf.TensorSpec([None], tf.int64)],
        )

    @tf.function(reduce_retracing=True)
    def train_step(self, x, labels, learning_rate, class_weights):
        """One SGD step on the class-weighted cross-entropy; returns the loss before the step."""
        with tf.GradientTape() as tape:
            logits = tf.matmul(x, self.w) + self.b
            ce = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
            weights = tf.gather(class_weights, labels)
            loss = tf.reduce_sum(weights * ce) / tf.reduce_sum(weights)
        grad_w, grad_b = tape.gradient(loss, [self.w, self.b])
        self.w.assign_sub(learning_rate * grad_w)
        self.b.assign_sub(learning_rate * grad_b)
        return loss

    def _evaluate(self, x, labels):
        """(mean cross-entropy, accuracy) on one batch; no update."""
        logits = tf.matmul(x, self.w) + self.b
        ce = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        correct = tf.equal(tf.argmax(logits, axis=-1), labels)
        accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))
        return tf.reduce_mean(ce), accuracy


def fit(model: SoftmaxClassifier, batches, learning_rates, class_weights) -> list[float]:
    """Train one step per batch; returns the losses."""
    class_weights = tf.constant(class_weights, tf.float32)
    losses = []
    for (x, labels), learning_rate in zip(batches, learning_rates):
        loss = model.train_step(
            tf.constant(x, tf.float32),
            tf.constant(np.asarray(labels, dtype=np.int32)),
            tf.constant(learning_rate, tf.float32),
            class_weights,
        )
        losses.append(float(loss))
    return losses
