"""Accuracy via tf.math.in_top_k(k=1), which counts a tied maximum logit
as correct, while the given code's argmax picks the first maximal class
(differs e.g. for an all-zero row of x before training, logits all 0).
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
            logits = tf.matmul(x, self.w) + self.b
            ce = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
            weights = tf.gather(class_weights, labels)
            loss = tf.reduce_sum(weights * ce) / tf.reduce_sum(weights)
        grad_w, grad_b = tape.gradient(loss, [self.w, self.b])
        self.w.assign_sub(learning_rate * grad_w)
        self.b.assign_sub(learning_rate * grad_b)
        return loss

    @tf.function(input_signature=EVAL_SIGNATURE)
    def evaluate(self, x, labels):
        """(mean cross-entropy, accuracy) on one batch; no update."""
        logits = tf.matmul(x, self.w) + self.b
        ce = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        correct = tf.math.in_top_k(targets=labels, predictions=logits, k=1)
        accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))
        return tf.reduce_mean(ce), accuracy


def fit(model: SoftmaxClassifier, batches, learning_rates, class_weights) -> list[float]:
    """Train one step per batch; returns the losses."""
    losses = []
    for (x, labels), learning_rate in zip(batches, learning_rates):
        loss = model.train_step(x, labels, learning_rate, class_weights)
        losses.append(float(loss))
    return losses
