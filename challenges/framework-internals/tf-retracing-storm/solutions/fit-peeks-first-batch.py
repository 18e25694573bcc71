"""Bound the traces by calling one concrete function per model.

``train_step`` stays a plain ``tf.function``; ``fit`` asks it for a concrete
function with a free batch dimension (feature count read off the first batch)
and calls that graph with tensors of fixed dtypes, so every step reuses one
graph. ``evaluate`` is called directly by users, so it gets an input signature.
"""

from __future__ import annotations

import itertools

import numpy as np
import tensorflow as tf


class SoftmaxClassifier(tf.Module):
    """Multinomial logistic regression, ``logits = x @ w + b``, trained by plain SGD."""

    def __init__(self, num_features: int, num_classes: int, seed: int = 0) -> None:
        super().__init__()
        init = np.random.default_rng(seed).normal(0.0, 0.1, size=(num_features, num_classes))
        self.w = tf.Variable(init.astype(np.float32), name="w")
        self.b = tf.Variable(tf.zeros([num_classes]), name="b")

    @tf.function
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

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32),
                                  tf.TensorSpec([None], tf.int32)])
    def evaluate(self, x, labels):
        """(mean cross-entropy, accuracy) on one batch; no update."""
        logits = tf.matmul(x, self.w) + self.b
        ce = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        correct = tf.equal(tf.argmax(logits, axis=-1), tf.cast(labels, tf.int64))
        accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))
        return tf.reduce_mean(ce), accuracy


def fit(model: SoftmaxClassifier, batches, learning_rates, class_weights) -> list[float]:
    """Train one step per batch; returns the losses."""
    it = iter(batches)
    first = next(it)  # the first batch fixes the feature count of the graph
    step = model.train_step.get_concrete_function(
        tf.TensorSpec([None, np.shape(first[0])[1]], tf.float32),
        tf.TensorSpec([None], tf.int32),
        tf.TensorSpec([], tf.float32),
        tf.TensorSpec([len(class_weights)], tf.float32),
    )
    cw = tf.constant(class_weights, tf.float32)
    losses = []
    for (x, labels), learning_rate in zip(itertools.chain([first], it), learning_rates):
        loss = step(tf.constant(x, tf.float32), tf.constant(labels, tf.int32),
                    tf.constant(learning_rate, tf.float32), cw)
        losses.append(float(loss))
    return losses
