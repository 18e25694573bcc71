"""A different correct solution (red team round 1): per-instance tf.functions built in __init__.

train_step uses reduce_retracing=True (first trace exact, second with a free
batch dimension), fed by fit with canonical tensors: x float32, labels int32,
learning rate float32 0-d, class weights float32 of length num_classes.
evaluate is called directly with raw lists/arrays, so it gets an input
signature built per instance ([None, num_features], int64 labels).
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
        self.train_step = tf.function(self._train_step, reduce_retracing=True)
        self.evaluate = tf.function(
            self._evaluate,
            input_signature=[
                tf.TensorSpec([None, num_features], tf.float32),
                tf.TensorSpec([None], tf.int64),
            ],
        )

    def _train_step(self, x, labels, learning_rate, class_weights):
        x = tf.convert_to_tensor(x, tf.float32)
        labels = tf.convert_to_tensor(labels, tf.int32)
        learning_rate = tf.convert_to_tensor(learning_rate, tf.float32)
        class_weights = tf.convert_to_tensor(class_weights, tf.float32)
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
        logits = tf.matmul(x, self.w) + self.b
        ce = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        correct = tf.equal(tf.argmax(logits, axis=-1), labels)
        accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))
        return tf.reduce_mean(ce), accuracy


def _canon(x, labels, learning_rate, class_weights):
    return (
        tf.convert_to_tensor(np.asarray(x, np.float32)),
        tf.convert_to_tensor(np.asarray(labels, np.int32)),
        tf.constant(np.float32(learning_rate)),
        class_weights,
    )


def fit(model: SoftmaxClassifier, batches, learning_rates, class_weights) -> list[float]:
    cw = tf.constant(np.asarray(class_weights, np.float32))
    losses = []
    for (x, labels), learning_rate in zip(batches, learning_rates):
        loss = model.train_step(*_canon(x, labels, learning_rate, cw))
        losses.append(float(loss))
    return losses
