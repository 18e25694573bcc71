"""A correct alternative (owner, red team round 3): no generator object at all.

The delta of call k is a hash of (seed, k): SplitMix64's finaliser, written in
int64 graph ops (multiplication wraps modulo 2**64), over the key derived from
the seed plus k times the golden-ratio increment. The unit draw takes the top
24 bits of the hash, which are as good as any; the low bits of a hash are too,
but the top ones keep the rule about short cycles obvious. The counter is the
int64 variable the graph increments, so the stream depends on the seed and the
call number only, in any process. The log line is built with tf.strings.format.
"""

from __future__ import annotations

import sys

import tensorflow as tf

_MASK = (1 << 64) - 1


def _signed(x: int) -> int:
    x &= _MASK
    return x - (1 << 64) if x >= 1 << 63 else x


def _mix(z: int) -> int:
    """SplitMix64's finaliser on a Python int: the key of a seed."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def _shift(z: tf.Tensor, bits: int) -> tf.Tensor:
    """A logical right shift of an int64 (tf.bitwise.right_shift is arithmetic on signed types)."""
    return tf.bitwise.bitwise_and(tf.bitwise.right_shift(z, bits), tf.constant((1 << (64 - bits)) - 1, tf.int64))


class Augmenter(tf.Module):
    """Adds one random brightness offset ``delta ~ U(-max_delta, max_delta)`` to each batch."""

    def __init__(self, seed: int, max_delta: float = 0.1) -> None:
        super().__init__()
        self.max_delta = float(max_delta)
        self._key = _signed(_mix(int(seed) & _MASK))
        self.calls = tf.Variable(0, dtype=tf.int64, trainable=False, name="calls")
        self.history = tf.Variable(tf.zeros([0]), shape=tf.TensorShape([None]), trainable=False, name="history")

    @tf.function
    def __call__(self, images: tf.Tensor) -> tf.Tensor:
        n = self.calls.assign_add(1)
        z = tf.constant(self._key, tf.int64) + n * tf.constant(_signed(0x9E3779B97F4A7C15), tf.int64)
        z = tf.bitwise.bitwise_xor(z, _shift(z, 30)) * tf.constant(_signed(0xBF58476D1CE4E5B9), tf.int64)
        z = tf.bitwise.bitwise_xor(z, _shift(z, 27)) * tf.constant(_signed(0x94D049BB133111EB), tf.int64)
        z = tf.bitwise.bitwise_xor(z, _shift(z, 31))
        u = tf.cast(_shift(z, 40), tf.float32) / 16777216.0  # the top 24 bits: u in [0, 1)
        delta = tf.constant(self.max_delta, tf.float32) * (2.0 * u - 1.0)
        augmented = images + delta
        mean = tf.reduce_mean(augmented)
        self.history.assign(tf.concat([self.history, tf.reshape(mean, [1])], axis=0))
        tf.print(tf.strings.format("batch {}: delta={}", (n, delta), summarize=-1), output_stream=sys.stderr)
        return augmented
