# WRONG: a hand-written generator in graph ops: a 64-bit LCG (Knuth's MMIX constants) in an int64
# variable, seeded by a one-to-one SplitMix64 mix of `seed`, stepped once per call by the graph. The
# mistake: the unit draw uses the LOW 24 bits of the state. The low k bits of an LCG mod 2^64 form an
# LCG mod 2^k, so u (and delta) repeats with period exactly 2^24 = 16,777,216 calls.
# Breaks rule 5: "however many calls are made, the stream never starts repeating itself".
from __future__ import annotations

import sys

import tensorflow as tf

_MASK = (1 << 64) - 1


def _splitmix64(x: int) -> int:
    z = (x + 0x9E3779B97F4A7C15) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def _signed(x: int) -> int:
    return x - (1 << 64) if x >= (1 << 63) else x


A = _signed(6364136223846793005)
C = _signed(1442695040888963407)


class Augmenter(tf.Module):
    def __init__(self, seed: int, max_delta: float = 0.1) -> None:
        super().__init__()
        self.max_delta = float(max_delta)
        self.calls = tf.Variable(0, dtype=tf.int64, trainable=False, name="calls")
        self.history = tf.Variable(tf.zeros([0]), shape=tf.TensorShape([None]), trainable=False, name="history")
        self._state = tf.Variable(_signed(_splitmix64(int(seed) & _MASK)), dtype=tf.int64, trainable=False)

    @tf.function
    def __call__(self, images):
        n = self.calls.assign_add(1)
        s = self._state.assign(self._state * A + C)  # int64 multiply wraps mod 2^64
        low = tf.bitwise.bitwise_and(s, tf.constant(0xFFFFFF, tf.int64))
        u = tf.cast(low, tf.float32) / 16777216.0
        delta = self.max_delta * (2.0 * u - 1.0)
        augmented = images + delta
        self.history.assign(tf.concat([self.history, [tf.reduce_mean(augmented)]], axis=0))
        tf.print("batch ", n, ": delta=", delta, sep="", output_stream=sys.stdout)
        return augmented
