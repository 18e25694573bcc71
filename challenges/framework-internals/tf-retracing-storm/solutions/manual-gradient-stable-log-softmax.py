"""Bounded tracing with a closed-form gradient instead of GradientTape.

Both methods get an input signature with free dimensions, so every call -- Python floats,
lists, int32/int64 arrays, any batch size -- is converted to the same tensor
types and each method traces once. The SGD step uses the analytic gradient of
the class-weighted softmax cross-entropy:

    d loss / d logits = (softmax(logits) - onehot(labels)) * cw[labels] / sum(cw[labels])

A batch whose labels all carry weight 0 divides 0 by 0, so the step is NaN
exactly as in the given code.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

TRAIN_SIGNATURE = [
    tf.TensorSpec([None, None], tf.float32, name="x"),
    tf.TensorSpec([None], tf.int64, name="labels"),
    tf.TensorSpec([], tf.float32, name="learning_rate"),
    tf.TensorSpec([None], tf.float32, name="class_weights"),
]


class SoftmaxClassifier(tf.Module):
    """Multinomial logistic regression, ``logits = x @ w + b``, trained by plain SGD."""

    def __init__(self, num_features: int, num_classes: int, seed: int = 0) -> None:
        super().__init__()
        init = np.random.default_rng(seed).normal(0.0, 0.1, size=(num_features, num_classes))
        self.w = tf.Variable(init.astype(np.float32), name="w")
        self.b = tf.Variable(tf.zeros([num_classes]), name="b")

    @tf.function(input_signature=TRAIN_SIGNATURE)
    def train_step(self, x, labels, learning_rate, class_weights):
        logits = tf.matmul(x, self.w) + self.b
        log_p = tf.nn.log_softmax(logits)
        onehot = tf.one_hot(labels, tf.shape(logits)[-1], dtype=logits.dtype)
        ce = -tf.reduce_sum(onehot * log_p, axis=-1)
        weights = tf.gather(class_weights, labels)
        total = tf.reduce_sum(weights)
        loss = tf.reduce_sum(weights * ce) / total
        dlogits = (tf.exp(log_p) - onehot) * (weights / total)[:, None]
        grad_w = tf.matmul(x, dlogits, transpose_a=True)
        grad_b = tf.reduce_sum(dlogits, axis=0)
        self.w.assign_sub(learning_rate * grad_w)
        self.b.assign_sub(learning_rate * grad_b)
        return loss

    @tf.function(input_signature=TRAIN_SIGNATURE[:2])
    def evaluate(self, x, labels):
        logits = tf.matmul(x, self.w) + self.b
        log_p = tf.nn.log_softmax(logits)
        ce = -tf.gather(log_p, labels, batch_dims=1)
        pred = tf.argmax(logits, axis=-1)
        accuracy = tf.reduce_mean(tf.cast(tf.equal(pred, labels), tf.float32))
        return tf.reduce_mean(ce), accuracy


def fit(model: SoftmaxClassifier, batches, learning_rates, class_weights) -> list[float]:
    """Train one step per batch; returns the losses."""
    losses = []
    for (x, labels), learning_rate in zip(batches, learning_rates):
        losses.append(float(model.train_step(x, labels, learning_rate, class_weights)))
    return losses
