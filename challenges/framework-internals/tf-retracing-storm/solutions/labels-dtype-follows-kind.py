"""`reduce_retracing=True` on train_step with fit converting the Python
scalars/lists to tensors, but labels via np.asarray(labels) (no dtype): lists
become int64, int32 arrays stay int32, so alternating label kinds with ragged
batch sizes trace 3-4 times (dtype is not relaxed, only shapes).
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf


class SoftmaxClassifier(tf.Module):
    def __init__(self, num_features: int, num_classes: int, seed: int = 0) -> None:
        super().__init__()
        init = np.random.default_rng(seed).normal(0.0, 0.1, size=(num_features, num_classes))
        self.w = tf.Variable(init.astype(np.float32), name="w")
        self.b = tf.Variable(tf.zeros([num_classes]), name="b")

    @tf.function(reduce_retracing=True)
    def train_step(self, x, labels, learning_rate, class_weights):
        with tf.GradientTape() as tape:
            logits = tf.matmul(x, self.w) + self.b
            ce = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
            weights = tf.gather(class_weights, labels)
            loss = tf.reduce_sum(weights * ce) / tf.reduce_sum(weights)
        grad_w, grad_b = tape.gradient(loss, [self.w, self.b])
        self.w.assign_sub(learning_rate * grad_w)
        self.b.assign_sub(learning_rate * grad_b)
        return loss

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32), tf.TensorSpec([None], tf.int32)])
    def evaluate(self, x, labels):
        logits = tf.matmul(x, self.w) + self.b
        ce = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        correct = tf.equal(tf.argmax(logits, axis=-1), tf.cast(labels, tf.int64))
        accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))
        return tf.reduce_mean(ce), accuracy


def fit(model: SoftmaxClassifier, batches, learning_rates, class_weights) -> list[float]:
    cw = tf.constant(class_weights, tf.float32)
    losses = []
    for (x, labels), learning_rate in zip(batches, learning_rates):
        loss = model.train_step(
            tf.convert_to_tensor(x, tf.float32),
            tf.convert_to_tensor(np.asarray(labels)),
            tf.constant(learning_rate, tf.float32),
            cw,
        )
        losses.append(float(loss))
    return losses
