"""Input signatures with a free batch dimension; logits and loss in float64 for raw pixel features.

A tf.function looks up a traced graph by a key built from its arguments:
a tensor contributes its dtype and shape, a Python number or a list of them
contributes its *value*. So a learning rate that changes every step, labels
passed as a Python list, and every new batch size each trace a new graph.

An ``input_signature`` fixes the key. Every argument is converted to a
tensor of the declared dtype before the lookup (Python floats, lists and
NumPy arrays alike), and a ``None`` dimension matches any size. Each method
then traces exactly once per model. ``fit`` needs no change.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

TRAIN_SIGNATURE = [
    tf.TensorSpec([None, None], tf.float32, name="x"),  # any batch size
    tf.TensorSpec([None], tf.int32, name="labels"),  # Python lists and int64 arrays become int32
    tf.TensorSpec([], tf.float32, name="learning_rate"),  # a Python float becomes a 0-d tensor
    tf.TensorSpec([None], tf.float32, name="class_weights"),
]
EVAL_SIGNATURE = TRAIN_SIGNATURE[:2]


class SoftmaxClassifier(tf.Module):
    """Multinomial logistic regression, ``logits = x @ w + b``, trained by plain SGD."""

    def __init__(self, num_features: int, num_classes: int, seed: int = 0) -> None:
        super().__init__()
        init = np.random.default_rng(seed).normal(0.0, 0.1, size=(num_features, num_classes))
        self.w = tf.Variable(init.astype(np.float32), name="w")
        self.b = tf.Variable(tf.zeros([num_classes]), name="b")

    @tf.function(input_signature=TRAIN_SIGNATURE)
    def train_step(self, x, labels, learning_rate, class_weights):
        """One SGD step on the class-weighted cross-entropy; returns the loss before the step."""
        with tf.GradientTape() as tape:
            # float64 so that features up to 255 lose nothing in the sums
            logits = tf.matmul(tf.cast(x, tf.float64), tf.cast(self.w, tf.float64)) + tf.cast(self.b, tf.float64)
            ce = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
            weights = tf.gather(tf.cast(class_weights, tf.float64), labels)
            loss = tf.reduce_sum(weights * ce) / tf.reduce_sum(weights)
        grad_w, grad_b = tape.gradient(loss, [self.w, self.b])
        self.w.assign_sub(learning_rate * tf.cast(grad_w, tf.float32))
        self.b.assign_sub(learning_rate * tf.cast(grad_b, tf.float32))
        return tf.cast(loss, tf.float32)

    @tf.function(input_signature=EVAL_SIGNATURE)
    def evaluate(self, x, labels):
        """(mean cross-entropy, accuracy) on one batch; no update."""
        logits = tf.matmul(tf.cast(x, tf.float64), tf.cast(self.w, tf.float64)) + tf.cast(self.b, tf.float64)
        ce = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        correct = tf.equal(tf.argmax(logits, axis=-1), tf.cast(labels, tf.int64))
        accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))
        return tf.cast(tf.reduce_mean(ce), tf.float32), accuracy


def fit(model: SoftmaxClassifier, batches, learning_rates, class_weights) -> list[float]:
    """Train one step per batch; returns the losses."""
    losses = []
    for (x, labels), learning_rate in zip(batches, learning_rates):
        loss = model.train_step(x, labels, learning_rate, class_weights)
        losses.append(float(loss))
    return losses
