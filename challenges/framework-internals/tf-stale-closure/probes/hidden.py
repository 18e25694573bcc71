"""Hidden probes for tf-stale-closure: they make the score.

Four categories: ``calibration`` (a float and a tensor setting of
Calibrator), ``quantization`` (an int and a float setting of FakeQuant),
``training`` (LinearRegressor's learning rate and L2 weight changed between
SGD steps) and ``settings`` (reading settings back, the constructors'
defaults, keeping them out of ``trainable_variables``, and many updates
without a retrace).

Every probe that calls a traced method also records its
``experimental_get_tracing_count()``: the reference traces each method once
per instance, whatever the updates, and so must the candidate (0 means the
method ran eagerly, more means an update retraced it). Values are float32
and compared with the default float32 tolerance, or rtol=1e-5, atol=1e-6
after several SGD steps.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from probekit import probe


def tracing_count(fn: Any) -> int | str:
    """How many times ``fn`` traced, or a note when it is not a tf.function."""
    count = getattr(fn, "experimental_get_tracing_count", None)
    return int(count()) if callable(count) else "not a tf.function"


def randn(*shape: int, seed: int, scale: float = 1.0) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def snapshot(v: Any) -> np.ndarray:
    """A copy of a variable's current value (later steps must not change it)."""
    return np.array(v.numpy())


def read32(value: Any) -> np.float32:
    """A float setting read back, as the float32 number the statement compares exactly."""
    return np.float32(float(value))


def bias32(cal: Any) -> np.ndarray:
    """The bias read back, as a float32 array (compared exactly)."""
    return np.asarray(cal.bias, dtype=np.float32)


def scribble(value: Any, fill: float) -> None:
    """Write over a value read from a module, in place, where the value allows it.

    A read is a snapshot the caller owns: a NumPy array or a list it got may be
    changed in place. Floats, ints and tensors cannot be (``np.asarray`` of an
    eager tensor is read-only), so nothing happens to them.
    """
    if isinstance(value, list):
        value[:] = [fill] * len(value)
        return
    if isinstance(value, np.ndarray) and value.flags.writeable and value.size:
        value[...] = fill


def regression_data(seed: int, n: int = 16, d: int = 3) -> tuple[np.ndarray, np.ndarray]:
    x = randn(n, d, seed=seed)
    true_w = np.array([1.5, -2.0, 0.5][:d], dtype=np.float32)
    y = (x @ true_w + 0.3 + randn(n, seed=seed + 1, scale=0.1)).astype(np.float32)
    return x, y


# ---------------------------------------------------------------- calibration


@probe(category="calibration", weight=2, hints=["stale-float"])
def temperature_schedule(solution: Any) -> dict[str, Any]:
    """Calibrator(4): five calls with the temperature changed before each (one of them set to an int)."""
    cal = solution.Calibrator(4)
    logits = randn(3, 4, seed=1, scale=2.0)
    out = []
    for temperature in (1.0, 2.0, 0.5, 4, 1.0):
        cal.temperature = temperature
        out.append(cal(logits))
    return {"probs": out, "traces": tracing_count(cal.__call__)}


@probe(category="calibration", weight=2, check="reads_exact", hints=["stale-tensor", "rebind", "dtypes"])
def bias_updates(solution: Any) -> dict[str, Any]:
    """Calibrator(3): set_bias with a list, a float32 and a float64 NumPy array between calls, then zeros; the bias reads back."""
    cal = solution.Calibrator(3, temperature=1.5)
    logits = randn(2, 3, seed=2)
    out = [cal(logits)]
    cal.set_bias([1.0, -0.5, 0.0])
    out.append(cal(logits))
    cal.set_bias(np.array([0.0, 2.0, -1.0], dtype=np.float32))
    out.append(cal(logits))
    read_back = bias32(cal)
    cal.set_bias(np.array([-1.0, 0.5, 0.25]))  # float64, NumPy's default
    out.append(cal(logits))
    cal.set_bias([0.0, 0.0, 0.0])
    out.append(cal(logits))
    return {"probs": out, "bias read back": read_back, "traces": tracing_count(cal.__call__)}


@probe(category="calibration", hints=["stale-float"])
def settings_before_first_call(solution: Any) -> dict[str, Any]:
    """Settings given to the constructor, or changed before the first call, are used."""
    logits = randn(2, 5, seed=3)
    warm = solution.Calibrator(5, temperature=3.0)
    cold = solution.Calibrator(5)
    cold.temperature = 0.25
    cold.set_bias([0.5, 0.0, 0.0, 0.0, -0.5])
    return {"warm": warm(logits), "cold": cold(logits)}


@probe(category="calibration", hints=["per-instance", "stale-float", "stale-tensor"])
def two_calibrators(solution: Any) -> dict[str, Any]:
    """Two Calibrators with different settings, updated and called in turn: each keeps its own."""
    a = solution.Calibrator(3, temperature=1.0)
    b = solution.Calibrator(3, temperature=2.0)
    logits = randn(2, 3, seed=4)
    out = [a(logits), b(logits)]
    a.temperature = 0.5
    out += [a(logits), b(logits)]
    b.set_bias([0.0, 1.0, 0.0])
    out += [a(logits), b(logits)]
    return {"probs": out, "traces": [tracing_count(a.__call__), tracing_count(b.__call__)]}


@probe(category="calibration", check="reads_exact", hints=["bias-copy", "stale-tensor"])
def bias_buffer_reused(solution: Any) -> dict[str, Any]:
    """The caller changes the list or array it gave to set_bias: the module keeps the values it was given.

    A float32 array, a float64 array and a list, each changed in place after
    ``set_bias`` (a reused buffer), then given to ``set_bias`` again with its
    new contents. Reads and outputs follow the ``set_bias`` calls only.
    """
    cal = solution.Calibrator(3, temperature=1.5)
    logits = randn(2, 3, seed=5)
    probs, reads = [], []
    buffers = [
        np.array([0.5, 0.0, -0.25], dtype=np.float32),
        np.array([-1.0, 0.75, 0.0]),  # float64
        [0.25, -0.5, 1.0],
    ]
    for k, buf in enumerate(buffers):
        cal.set_bias(buf)
        probs.append(cal(logits))
        buf[:] = [2.0 + k, -3.0, 1.5 * k]  # no set_bias: the module must not see this
        probs.append(cal(logits))
        reads.append(bias32(cal))
        cal.set_bias(buf)  # now it must
        probs.append(cal(logits))
        reads.append(bias32(cal))
        buf[0] = -4.0
        reads.append(bias32(cal))
    return {"probs": probs, "bias read back": reads, "traces": tracing_count(cal.__call__)}


@probe(category="calibration", check="reads_exact", hints=["dtypes", "stale-tensor"])
def single_class(solution: Any) -> dict[str, Any]:
    """Calibrator(1): a bias of one value, as a list, a float32 and a float64 array, read back between calls."""
    cal = solution.Calibrator(1, temperature=2)
    logits = randn(4, 1, seed=6)
    probs, reads = [cal(logits)], [bias32(cal)]
    for bias in ([0.5], np.array([-1.25], dtype=np.float32), np.array([3.0]), [0.0]):
        cal.set_bias(bias)
        cal.temperature = 0.5
        probs.append(cal(logits))
        reads.append(bias32(cal))
    return {"probs": probs, "bias read back": reads, "temperature read back": read32(cal.temperature), "traces": tracing_count(cal.__call__)}


# ---------------------------------------------------------------- quantization


@probe(category="quantization", weight=2, hints=["stale-int"])
def num_bits_sweep(solution: Any) -> dict[str, Any]:
    """FakeQuant(): num_bits set to 8, 4, 2, 6 and 8 again between calls."""
    quant = solution.FakeQuant()
    x = randn(64, seed=10, scale=0.7)
    out = []
    for bits in (8, 4, 2, 6, 8):
        quant.num_bits = bits
        out.append(quant(x))
    return {"outputs": out, "traces": tracing_count(quant.__call__)}


@probe(category="quantization", weight=2, hints=["stale-float"])
def clip_changes(solution: Any) -> dict[str, Any]:
    """FakeQuant(4, 1.0) on a (4, 5) input: clip set to 0.5, 2.0 and 0.25 between calls."""
    quant = solution.FakeQuant(4, 1.0)
    x = randn(4, 5, seed=11)
    out = [quant(x)]
    for clip in (0.5, 2.0, 0.25):
        quant.clip = clip
        out.append(quant(x))
    return {"outputs": out, "traces": tracing_count(quant.__call__)}


@probe(category="quantization", hints=["per-instance", "stale-int"])
def two_quantizers(solution: Any) -> dict[str, Any]:
    """An 8-bit and a 3-bit FakeQuant, updated in turn: each keeps its own settings."""
    q8 = solution.FakeQuant(8, 1.0)
    q3 = solution.FakeQuant(3, 2.0)
    x = randn(32, seed=12)
    out = [q8(x), q3(x)]
    q8.num_bits = 5
    q3.clip = 0.5
    out += [q8(x), q3(x)]
    return {"outputs": out, "traces": [tracing_count(q8.__call__), tracing_count(q3.__call__)]}


# Every bit width the statement allows, in an order that jumps across the range.
ALL_NUM_BITS = (9, 2, 16, 3, 12, 4, 15, 5, 10, 6, 14, 7, 11, 8, 13)


def off_tie_inputs(seed: int, n: int, clip: float) -> np.ndarray:
    """float32 values in about [-1.25 clip, 1.25 clip] whose x / step is far from a rounding tie at every bit width.

    Ties have a probe of their own; here a value near a tie could round either
    way in a computation as exact as the reference's, so the values are drawn
    again until every one is at least 0.01 of a step from the nearest tie.
    """
    rng = np.random.default_rng(seed)
    x = (rng.uniform(-1.25, 1.25, n) * clip).astype(np.float32)
    for _ in range(100):
        bad = np.zeros(n, dtype=bool)
        for bits in ALL_NUM_BITS:
            levels = 2 ** (bits - 1) - 1
            v = np.clip(x.astype(np.float64), -clip, clip) * levels / clip
            bad |= np.abs(np.abs(v - np.floor(v) - 0.5)) < 0.01
        if not bad.any():
            return x
        x[bad] = (rng.uniform(-1.25, 1.25, int(bad.sum())) * clip).astype(np.float32)
    raise AssertionError("no inputs away from ties")


@probe(category="quantization", check="reads_exact", hints=["stale-int"])
def num_bits_full_range(solution: Any) -> dict[str, Any]:
    """FakeQuant(clip=3.0): num_bits set to every width from 2 to 16 between calls; FakeQuant(16) and FakeQuant(9) built so."""
    quant = solution.FakeQuant(clip=3.0)
    x = off_tie_inputs(13, 48, 3.0)
    out, reads = [quant(x)], []
    for bits in ALL_NUM_BITS:
        quant.num_bits = bits
        out.append(quant(x))
        reads.append(int(quant.num_bits))
    wide = solution.FakeQuant(16, 3.0)
    nine = solution.FakeQuant(9, 3.0)
    return {
        "outputs": out,
        "num_bits read back": reads,
        "built with 16 and 9 bits": [wide(x), nine(x)],
        "constructor num_bits read back": [int(wide.num_bits), int(nine.num_bits)],
        "traces": [tracing_count(quant.__call__), tracing_count(wide.__call__), tracing_count(nine.__call__)],
    }


@probe(category="quantization", hints=["rounding"])
def rounding_ties(solution: Any) -> dict[str, Any]:
    """Inputs exactly halfway between two steps, at every bit width: halves round to the even step, as tf.round does.

    With ``clip = levels * s`` for a power of two ``s``, the step is exactly
    ``s``, and ``x = (k + 0.5) * s`` lands exactly on a tie, positive and
    negative, even and odd ``k``, on a (2, n) input.
    """
    quant = solution.FakeQuant()
    out = []
    for bits, s in zip(ALL_NUM_BITS, (0.5, 0.25, 0.125, 1.0, 0.0625) * 3, strict=True):
        levels = 2 ** (bits - 1) - 1
        quant.num_bits = bits
        quant.clip = levels * s
        k = np.arange(-min(levels, 4), min(levels, 4), dtype=np.float32)
        ties = ((k + 0.5) * np.float32(s)).astype(np.float32)
        out.append(quant(np.stack([ties, -ties])))
    return {"outputs": out, "traces": tracing_count(quant.__call__)}


def near_tie_inputs(bits: int, clip: float, n: int = 12) -> np.ndarray:
    """float32 inputs at and next to the halfway points of ``n`` steps spread over the range.

    ``step`` is the float32 quotient of the float32 ``clip`` by ``levels``;
    ``x = (k + 0.5) * step`` is rounded to float32, and its two float32
    neighbours follow. Whether ``x / step`` lands on, above or below the
    halfway point depends on float32 rounding, so only the formula computed
    in float32 as written gives the expected step for all of them.
    """
    levels = 2 ** (bits - 1) - 1
    step = np.float32(np.float32(clip) / np.float32(levels))
    k = np.unique(np.round(np.linspace(-levels, levels - 1, n)).astype(np.int64)).astype(np.float32)
    ties = ((k + np.float32(0.5)) * step).astype(np.float32)
    up = np.nextafter(ties, np.float32(np.inf))
    down = np.nextafter(ties, np.float32(-np.inf))
    return np.stack([ties, up, down]).astype(np.float32)


@probe(category="quantization", hints=["float32-formula"])
def near_ties_float32(solution: Any) -> dict[str, Any]:
    """Inputs at and next to halfway points, for steps that are not powers of two: the formula in float32, as written.

    Every bit width with clips of 1.0, 0.3 and 0.7654321 (the last two are not
    float32 numbers, so the setting is their float32 value). The statement
    fixes the arithmetic: float32 ``clip / levels``, then ``x / step``,
    ``tf.round`` and ``* step`` in float32. Multiplying by ``levels / clip``,
    computing the step from the Python float, or computing in float64 rounds
    some of these inputs to the neighbouring step.
    """
    quant = solution.FakeQuant()
    out = []
    for bits in ALL_NUM_BITS:
        for clip in (1.0, 0.3, 0.7654321):
            quant.num_bits = bits
            quant.clip = clip
            out.append(quant(near_tie_inputs(bits, clip)))
    return {"outputs": out, "traces": tracing_count(quant.__call__)}


# ---------------------------------------------------------------- training


@probe(category="training", weight=2, rtol=1e-5, atol=1e-6, hints=["stale-float"])
def learning_rate_schedule(solution: Any) -> dict[str, Any]:
    """LinearRegressor(3): eight SGD steps with a decaying learning rate set before each."""
    reg = solution.LinearRegressor(3, learning_rate=0.2)
    x, y = regression_data(20)
    losses = []
    for k in range(8):
        reg.learning_rate = 0.2 * 0.6**k
        losses.append(reg.train_step(x, y))
    return {"losses": losses, "w": snapshot(reg.w), "b": snapshot(reg.b), "traces": tracing_count(reg.train_step)}


@probe(category="training", weight=2, rtol=1e-5, atol=1e-6, hints=["stale-float"])
def l2_switched_on_and_off(solution: Any) -> dict[str, Any]:
    """LinearRegressor(3): l2 = 0 for three steps, 0.5 for three, then 0 again."""
    reg = solution.LinearRegressor(3, learning_rate=0.1)
    x, y = regression_data(21)
    losses, ws = [], []
    for l2 in (0.0, 0.0, 0.0, 0.5, 0.5, 0.5, 0.0, 0.0):
        reg.l2 = l2
        losses.append(reg.train_step(x, y))
        ws.append(snapshot(reg.w))
    return {"losses": losses, "w": ws, "b": snapshot(reg.b), "traces": tracing_count(reg.train_step)}


@probe(category="training", rtol=1e-5, atol=1e-6, hints=["stale-float"])
def cached_train_step(solution: Any) -> dict[str, Any]:
    """A training loop that looks up reg.train_step once, then changes the learning rate between steps."""
    reg = solution.LinearRegressor(2, learning_rate=0.05)
    x, y = regression_data(22, n=12, d=2)
    step = reg.train_step
    losses = []
    for lr in (0.05, 0.3, 0.3, 0.01):
        reg.learning_rate = lr
        losses.append(step(x, y))
    return {"losses": losses, "w": snapshot(reg.w), "b": snapshot(reg.b), "traces": tracing_count(step)}


@probe(category="training", rtol=1e-5, atol=1e-6, hints=["per-instance", "stale-float"])
def two_regressors(solution: Any) -> dict[str, Any]:
    """Two LinearRegressors trained in turn with different learning rates and L2 weights."""
    fast = solution.LinearRegressor(3, learning_rate=0.3)
    slow = solution.LinearRegressor(3, learning_rate=0.01, l2=0.1)
    x, y = regression_data(23)
    losses = []
    for k in range(3):
        losses.append([fast.train_step(x, y), slow.train_step(x, y)])
        fast.learning_rate = 0.3 / (k + 2)
        slow.l2 = 0.0
    return {
        "losses": losses,
        "fast w": snapshot(fast.w),
        "slow w": snapshot(slow.w),
        "traces": [tracing_count(fast.train_step), tracing_count(slow.train_step)],
    }


# ---------------------------------------------------------------- settings


@probe(category="settings", check="exact", hints=["readback"])
def settings_read_back(solution: Any) -> dict[str, Any]:
    """After updates, every setting reads back as the number last written (floats compared exactly as float32)."""
    cal = solution.Calibrator(2)
    quant = solution.FakeQuant()
    reg = solution.LinearRegressor(2)
    cal(np.zeros((1, 2), np.float32))
    quant(np.zeros(3, np.float32))
    reg.train_step(np.ones((2, 2), np.float32), np.ones(2, np.float32))
    cal.temperature = 0.75
    quant.num_bits = 5
    quant.clip = 1.5
    reg.learning_rate = 0.125
    reg.l2 = 0.25
    return {
        "temperature": read32(cal.temperature),
        "num_bits": int(quant.num_bits),
        "clip": read32(quant.clip),
        "learning_rate": read32(reg.learning_rate),
        "l2": read32(reg.l2),
    }


@probe(category="settings", hints=["trainable"])
def settings_are_not_trainable(solution: Any) -> dict[str, Any]:
    """Settings are not trainable parameters: trainable_variables holds only w and b."""
    cal = solution.Calibrator(3, temperature=2.0)
    quant = solution.FakeQuant(6, 0.5)
    reg = solution.LinearRegressor(2, learning_rate=0.1, l2=0.01)
    return {
        "Calibrator": len(cal.trainable_variables),
        "FakeQuant": len(quant.trainable_variables),
        "LinearRegressor": sorted(v.shape.rank for v in reg.trainable_variables),
    }


@probe(category="settings", weight=2, rtol=1e-5, atol=1e-6, hints=["stale-float", "stale-int", "retrace"])
def many_updates_one_trace(solution: Any) -> dict[str, Any]:
    """Twenty updates of every setting: the outputs follow them and nothing retraces."""
    cal = solution.Calibrator(3)
    quant = solution.FakeQuant()
    reg = solution.LinearRegressor(2, learning_rate=0.01)
    logits = randn(1, 3, seed=30)
    x = randn(8, seed=31)
    rx, ry = regression_data(32, n=8, d=2)
    probs, quantised, losses = [], [], []
    for k in range(20):
        cal.temperature = 0.5 + 0.25 * k
        quant.num_bits = 2 + k % 7
        quant.clip = 0.5 + 0.1 * k
        reg.learning_rate = 0.01 * (k + 1)
        probs.append(cal(logits))
        quantised.append(quant(x))
        losses.append(reg.train_step(rx, ry))
    return {
        "probs": probs,
        "quantised": quantised,
        "losses": losses,
        "traces": [tracing_count(cal.__call__), tracing_count(quant.__call__), tracing_count(reg.train_step)],
    }


@probe(category="settings", check="reads_exact_sgd", hints=["readback", "module"])
def constructor_defaults(solution: Any) -> dict[str, Any]:
    """Modules built with their default settings compute with them, read them back and keep their tf.Module name.

    No setting is written: the first calls use temperature 1.0, 8 bits with
    clip 1.0, and learning rate 0.1 with l2 0.0, the constructors' defaults.
    Each class also stays a ``tf.Module`` whose constructor runs
    ``tf.Module.__init__``, which gives the module its ``name``.
    """
    cal = solution.Calibrator(4)
    quant = solution.FakeQuant()
    reg = solution.LinearRegressor(3)
    logits = randn(3, 4, seed=50, scale=2.0)
    x = randn(16, seed=51, scale=0.7)
    rx, ry = regression_data(52, n=10)
    return {
        "probs": cal(logits),
        "quantised": quant(x),
        "losses": [reg.train_step(rx, ry), reg.train_step(rx, ry)],
        "w": snapshot(reg.w),
        "read back": [read32(cal.temperature), int(quant.num_bits), read32(quant.clip), read32(reg.learning_rate), read32(reg.l2)],
        "names": [cal.name, quant.name, reg.name],
        "traces": [tracing_count(cal.__call__), tracing_count(quant.__call__), tracing_count(reg.train_step)],
    }


@probe(category="settings", check="reads_exact_sgd", hints=["dtypes", "stale-float"])
def int_constructor_arguments(solution: Any) -> dict[str, Any]:
    """Float settings given to the constructors as ints work, can be set to fractions afterwards, and then to ints again.

    The last writes give an int to every float setting (temperature, clip,
    learning rate, L2 weight), as the statement allows for any of them.
    """
    cal = solution.Calibrator(3, temperature=2)
    quant = solution.FakeQuant(4, clip=1)
    reg = solution.LinearRegressor(2, learning_rate=0.1, l2=0)
    logits = randn(2, 3, seed=40)
    x = randn(6, seed=41)
    rx, ry = regression_data(42, n=8, d=2)
    out: dict[str, Any] = {"probs": [cal(logits)], "quantised": [quant(x)], "losses": [reg.train_step(rx, ry)]}
    cal.temperature = 0.75
    quant.clip = 0.5
    reg.l2 = 0.25
    out["probs"].append(cal(logits))
    out["quantised"].append(quant(x))
    out["losses"].append(reg.train_step(rx, ry))
    out["read back"] = [read32(cal.temperature), read32(quant.clip), read32(reg.l2)]
    # Ints written to every float setting: a frozen learning rate with an L2 weight of 1...
    cal.temperature = 3
    quant.clip = 2
    reg.learning_rate = 0
    reg.l2 = 1
    out["probs"].append(cal(logits))
    out["quantised"].append(quant(x))
    out["losses"].append(reg.train_step(rx, ry))
    # ...then a rate of 1 without L2, and a clip of 1 again.
    quant.clip = 1
    reg.learning_rate = 1
    reg.l2 = 0
    out["quantised"].append(quant(x))
    out["losses"].append(reg.train_step(rx, ry))
    out["losses"].append(reg.train_step(rx, ry))
    out["ints read back"] = [read32(cal.temperature), read32(quant.clip), read32(reg.learning_rate), read32(reg.l2)]
    out["traces"] = [tracing_count(cal.__call__), tracing_count(quant.__call__), tracing_count(reg.train_step)]
    return out


@probe(category="settings", check="reads_exact_sgd", hints=["readback"])
def save_and_restore(solution: Any) -> dict[str, Any]:
    """Settings read before an update keep their values, so writing them back restores the old behaviour."""
    cal = solution.Calibrator(3, temperature=1.5)
    quant = solution.FakeQuant(6, 0.8)
    reg = solution.LinearRegressor(2, learning_rate=0.1, l2=0.05)
    cal.set_bias([0.5, 0.0, -0.5])
    logits = randn(2, 3, seed=43)
    x = randn(6, seed=44)
    rx, ry = regression_data(45, n=8, d=2)
    saved = {
        "temperature": cal.temperature,
        "bias": cal.bias,
        "num_bits": quant.num_bits,
        "clip": quant.clip,
        "learning_rate": reg.learning_rate,
        "l2": reg.l2,
    }
    first = [cal(logits), quant(x), reg.train_step(rx, ry)]
    # A temporary change, as an evaluation pass or a warm-up schedule makes...
    cal.temperature = 4.0
    cal.set_bias([0.0, 0.0, 0.0])
    quant.num_bits = 3
    quant.clip = 2.0
    reg.learning_rate = 0.0
    reg.l2 = 1.0
    changed = [cal(logits), quant(x), reg.train_step(rx, ry)]
    saved_now = {key: np.asarray(value, dtype=np.float32) for key, value in saved.items()}
    # ...then undone with the values read before it.
    cal.temperature = saved["temperature"]
    cal.set_bias(np.asarray(saved["bias"], dtype=np.float32))
    quant.num_bits = saved["num_bits"]
    quant.clip = saved["clip"]
    reg.learning_rate = saved["learning_rate"]
    reg.l2 = saved["l2"]
    restored = [cal(logits), quant(x), reg.train_step(rx, ry)]
    return {"first": first, "changed": changed, "saved values read back after the change": saved_now, "restored": restored}


@probe(category="settings", check="reads_exact", hints=["readback-copy", "readback"])
def reads_changed_in_place(solution: Any) -> dict[str, Any]:
    """Changing a value read from a module, in place, changes nothing in the module.

    Every read (the bias above all, but any setting whose read is a mutable
    array or list) is written over where it can be; the module's reads and
    outputs stay as they were.
    """
    cal = solution.Calibrator(3, temperature=0.75)
    quant = solution.FakeQuant(5, 1.5)
    cal.set_bias([0.5, 0.0, -1.0])
    logits = randn(2, 3, seed=46)
    x = randn(6, seed=47)
    before = [cal(logits), quant(x)]
    for k, value in enumerate([cal.bias, cal.bias, cal.temperature, quant.num_bits, quant.clip]):
        scribble(value, 3.0 + k)
    after = [cal(logits), quant(x)]
    return {
        "before": before,
        "after": after,
        "read back": [bias32(cal), read32(cal.temperature), int(quant.num_bits), read32(quant.clip)],
        "traces": [tracing_count(cal.__call__), tracing_count(quant.__call__)],
    }


@probe(category="settings", check="reads_exact_sgd", hints=["per-instance", "readback"])
def two_instances_read_back(solution: Any) -> dict[str, Any]:
    """Two live instances of each class, built and written differently: each reads back its own settings."""
    cal_a = solution.Calibrator(3)
    cal_b = solution.Calibrator(3, temperature=2)
    quant_a = solution.FakeQuant()
    quant_b = solution.FakeQuant(12, 0.5)
    reg_a = solution.LinearRegressor(2)
    reg_b = solution.LinearRegressor(2, learning_rate=0.5, l2=0.01)
    logits = randn(2, 3, seed=48)
    x = randn(6, seed=49)
    rx, ry = regression_data(53, n=8, d=2)
    out = [cal_a(logits), cal_b(logits), quant_a(x), quant_b(x), reg_a.train_step(rx, ry), reg_b.train_step(rx, ry)]

    def reads() -> list[Any]:
        return [
            [read32(cal_a.temperature), read32(cal_b.temperature)],
            [bias32(cal_a), bias32(cal_b)],
            [int(quant_a.num_bits), int(quant_b.num_bits)],
            [read32(quant_a.clip), read32(quant_b.clip)],
            [read32(reg_a.learning_rate), read32(reg_b.learning_rate)],
            [read32(reg_a.l2), read32(reg_b.l2)],
        ]

    built = reads()
    cal_a.temperature = 0.75
    cal_b.temperature = 3
    cal_b.set_bias([0.0, 1.0, -0.5])
    cal_a.set_bias([-0.25, 0.0, 0.5])
    quant_a.num_bits = 4
    quant_b.clip = 2.5
    reg_b.learning_rate = 0.03
    reg_a.l2 = 0.25
    written = reads()
    reg_c = solution.LinearRegressor(2)  # a third one, left at its defaults
    out += [cal_a(logits), cal_b(logits), quant_a(x), quant_b(x), reg_a.train_step(rx, ry), reg_b.train_step(rx, ry)]
    return {
        "outputs": out,
        "read back as built": built,
        "read back after the writes": written,
        "read back after a third instance": [reads(), [read32(reg_c.learning_rate), read32(reg_c.l2)]],
    }


def many_digit_values(seed: int, n: int) -> list[float]:
    """``n`` Python floats from 1e-8 to 1e3 (log-uniform), each with 9 significant digits, plus a few short decimals.

    Written to a setting one after another and read back after each write:
    a setting stored as something derived from it (its reciprocal, its log,
    the quantiser's step) comes back from many of them one float32 ulp off.
    """
    rng = np.random.default_rng(seed)
    drawn = [float(f"{v:.9g}") for v in 10.0 ** rng.uniform(-8.0, 3.0, n)]
    return [1.7, 0.3, 1.1, 2.2, 0.7654321, 0.123456789, *drawn]


@probe(category="settings", check="exact", hints=["readback"])
def tiny_and_long_values_read_back(solution: Any) -> dict[str, Any]:
    """Tiny settings and ones with many digits read back exactly as float32; save/restore keeps them.

    Tiny: 1e-7, 1e-8, a learning rate halved 20 times; many digits: more
    than 6 significant ones. Then many values are written in turn to every float setting, each read
    back right after its write; the clip is also read back after the bit
    width changes (it stays the clip written, whatever ``num_bits`` is).
    """
    cal = solution.Calibrator(3, temperature=1.2345678)
    quant = solution.FakeQuant(11, clip=0.123456789)
    reg = solution.LinearRegressor(2, learning_rate=0.1 * 0.5**20, l2=1e-8)
    cal(np.zeros((1, 3), np.float32))
    quant(np.zeros(2, np.float32))
    reg.train_step(np.ones((2, 2), np.float32), np.ones(2, np.float32))

    def reads() -> list[Any]:
        return [read32(cal.temperature), bias32(cal), read32(quant.clip), read32(reg.learning_rate), read32(reg.l2)]

    built = reads()
    cal.temperature = 3.14159265
    cal.set_bias(np.array([0.1234567, 1e-7, -3.3333333]))
    quant.clip = 2.7182818
    reg.learning_rate = 1e-7
    reg.l2 = 0.1234567
    written = reads()
    saved = [cal.temperature, cal.bias, quant.clip, reg.learning_rate, reg.l2]
    cal.temperature = 1.0
    cal.set_bias([0.0, 0.0, 0.0])
    quant.clip = 1.0
    reg.learning_rate = 1.0
    reg.l2 = 0.0
    cal.temperature = saved[0]
    cal.set_bias(np.asarray(saved[1], dtype=np.float32))
    quant.clip = saved[2]
    reg.learning_rate = saved[3]
    reg.l2 = saved[4]
    restored = reads()
    reg.learning_rate = 1e-8
    tiny_rate = read32(reg.learning_rate)

    sweep: dict[str, list[Any]] = {"temperature": [], "clip": [], "learning_rate": [], "l2": []}
    for value in many_digit_values(60, 24):
        cal.temperature = value
        quant.clip = value
        reg.learning_rate = value
        reg.l2 = value
        sweep["temperature"].append(read32(cal.temperature))
        sweep["clip"].append(read32(quant.clip))
        sweep["learning_rate"].append(read32(reg.learning_rate))
        sweep["l2"].append(read32(reg.l2))
    clip_across_widths = []
    for value in many_digit_values(62, 12):
        quant.clip = value
        reads_at_widths = []
        for bits in ALL_NUM_BITS:
            quant.num_bits = bits
            reads_at_widths.append(read32(quant.clip))
        clip_across_widths.append(reads_at_widths)
    return {
        "as built": built,
        "after the writes": written,
        "restored": restored,
        "learning rate 1e-8": tiny_rate,
        "many values, each read back after its write": sweep,
        "clip read back after each num_bits change": clip_across_widths,
    }


# ---------------------------------------------------------------- red team round 3


@probe(category="settings", weight=2, rtol=1e-5, atol=1e-6, hints=["looked-up-before", "stale-float", "stale-int", "stale-tensor"])
def methods_looked_up_before_writes(solution: Any) -> dict[str, Any]:
    """Every traced method looked up once, before its first call: calls through it follow later writes of every setting, with one trace.

    ``f = cal.__call__``, ``q = quant.__call__`` and ``step = reg.train_step``
    are taken right after construction; every setting is then written twice
    over (an int among the values), and the held methods are called after each
    round, beside calls looked up afresh. A method looked up before a write
    must not keep the settings it had then; the held methods and the fresh
    lookups each report one trace.
    """
    cal = solution.Calibrator(3, temperature=1.5)
    quant = solution.FakeQuant(8, 1.0)
    reg = solution.LinearRegressor(2, learning_rate=0.05)
    f, q, step = cal.__call__, quant.__call__, reg.train_step
    logits = randn(2, 3, seed=70, scale=2.0)
    x = randn(3, 5, seed=71, scale=0.8)
    rx, ry = regression_data(72, n=10, d=2)
    held: list[Any] = [f(logits), q(x), step(rx, ry)]
    cal.temperature = 0.5
    cal.set_bias([0.75, -0.25, 0.0])
    quant.num_bits = 3
    quant.clip = 0.5
    reg.learning_rate = 0.3
    reg.l2 = 0.2
    held += [f(logits), q(x), step(rx, ry)]
    fresh: list[Any] = [cal(logits), quant(x), reg.train_step(rx, ry)]
    cal.temperature = 4
    cal.set_bias(np.array([-1.0, 0.5, 2.0]))
    quant.num_bits = 12
    quant.clip = 2
    reg.learning_rate = 0.01
    reg.l2 = 0
    held += [f(logits), q(x), step(rx, ry)]
    fresh += [cal(logits), quant(x), reg.train_step(rx, ry)]
    return {
        "held": held,
        "fresh": fresh,
        "w": snapshot(reg.w),
        "held traces": [tracing_count(f), tracing_count(q), tracing_count(step)],
        "fresh traces": [tracing_count(cal.__call__), tracing_count(quant.__call__), tracing_count(reg.train_step)],
    }


@probe(category="settings", rtol=1e-5, atol=1e-6, hints=["looked-up-before", "retrace", "stale-float", "stale-int"])
def held_methods_many_updates(solution: Any) -> dict[str, Any]:
    """Methods looked up before many updates of every setting: every call through them uses the current settings, with one trace.

    Each round writes the temperature, the bias, the bit width, the clip, the
    learning rate and the L2 weight, then calls the three methods held since
    before the first write; a second quantiser's method, looked up before it
    was ever called, is used the same way.
    """
    cal = solution.Calibrator(2)
    quant = solution.FakeQuant(5, 1.5)
    other = solution.FakeQuant(16, 0.25)
    reg = solution.LinearRegressor(3, learning_rate=0.02)
    logits = randn(3, 2, seed=73, scale=1.5)
    x = randn(12, seed=74)
    rx, ry = regression_data(75, n=9)
    f, q, step = cal.__call__, quant.__call__, reg.train_step
    first = [f(logits), q(x), step(rx, ry)]
    q_other = other.__call__
    probs, quantised, others, losses = [], [], [], []
    for k in range(15):
        cal.temperature = 0.25 + 0.5 * k
        cal.set_bias([0.1 * k, -0.05 * k])
        quant.num_bits = 2 + (5 * k) % 15
        quant.clip = 0.3 + 0.2 * k
        other.num_bits = 16 - k
        other.clip = 0.25 * (k + 1)
        reg.learning_rate = 0.02 + 0.01 * k
        reg.l2 = 0.05 * (k % 3)
        probs.append(f(logits))
        quantised.append(q(x))
        others.append(q_other(x))
        losses.append(step(rx, ry))
    return {
        "first": first,
        "probs": probs,
        "quantised": quantised,
        "second quantiser": others,
        "losses": losses,
        "w": snapshot(reg.w),
        "traces": [tracing_count(f), tracing_count(q), tracing_count(q_other), tracing_count(step)],
    }


def shape_and_dtype(value: Any) -> list[Any]:
    """The output's shape and dtype name, compared exactly (a 0-d result is not a shape-(1,) one)."""
    arr = np.asarray(value)
    return [list(arr.shape), str(arr.dtype)]


@probe(category="quantization", hints=["any-shape"])
def quant_inputs_of_every_rank(solution: Any) -> dict[str, Any]:
    """FakeQuant on inputs of rank 0 to 4 and empty ones: each output has exactly its input's shape and dtype float32.

    A NumPy float32 scalar, a 0-d array, a 0-d tensor, shapes (2, 3, 4),
    (2, 1, 3, 2), (0,) and (3, 0, 2), before and after a change of both
    settings. Shapes and dtypes are recorded next to the values and compared
    exactly.
    """
    import tensorflow as tf

    quant = solution.FakeQuant(4, 0.5)
    inputs = [
        np.float32(0.3),
        np.array(-0.7, dtype=np.float32),
        tf.constant(0.11, dtype=tf.float32),
        randn(2, 3, 4, seed=76, scale=0.6),
        randn(2, 1, 3, 2, seed=77, scale=0.6),
        np.zeros((0,), np.float32),
        np.zeros((3, 0, 2), np.float32),
    ]
    out, shapes = [], []
    for bits, clip in ((4, 0.5), (7, 2)):
        quant.num_bits = bits
        quant.clip = clip
        for value in inputs:
            y = quant(value)
            out.append(y)
            shapes.append(shape_and_dtype(y))
    return {"outputs": out, "shapes and dtypes": shapes, "traces": tracing_count(quant.__call__)}


@probe(category="quantization", hints=["any-shape", "stale-int"])
def quant_scalar_every_width(solution: Any) -> dict[str, Any]:
    """Scalar inputs at every bit width: each output is a float32 scalar with the formula's value.

    Two quantisers, one built with a clip of 0.3 and one left at its
    defaults, each given 0-d inputs inside and outside the clip.
    """
    a = solution.FakeQuant(clip=0.3)
    b = solution.FakeQuant()
    # At least 0.01 of a step from every rounding tie at these widths and clips (ties have probes of their own).
    scalars = [np.array(v, dtype=np.float32) for v in (0.2222, -0.5531, 0.813, -5.0)]
    out, shapes = [], []
    for k, bits in enumerate(ALL_NUM_BITS):
        a.num_bits = bits
        b.num_bits = bits
        b.clip = (0.75, 1.0, 3)[k % 3]
        for s in scalars:
            for y in (a(s), b(s)):
                out.append(y)
                shapes.append(shape_and_dtype(y))
    return {"outputs": out, "shapes and dtypes": shapes, "traces": [tracing_count(a.__call__), tracing_count(b.__call__)]}


def scaled_logits(temperature: float, rows: list[list[float]]) -> np.ndarray:
    """Logits of the order of ``temperature``, so that the output depends on its exact value."""
    return (np.array(rows, dtype=np.float64) * temperature).astype(np.float32)


@probe(category="calibration", hints=["no-clamp", "stale-float"])
def tiny_and_huge_temperatures(solution: Any) -> dict[str, Any]:
    """Very small and very large temperatures, on logits of their own size: the output uses the temperature written.

    Temperatures from 1e-8 down to 1e-37 and up to 3e37.

    No lower (or upper) bound may be put on the temperature: dividing by a
    clamped value turns these logits into a near-uniform (or one-hot) output.
    """
    cal = solution.Calibrator(3)
    rows = [[0.0, 1.0, 2.0], [2.0, -1.0, 0.5], [-3.0, 0.0, 3.0]]
    out = []
    for temperature in (1e-8, 3e-8, 1e-7, 1e-12, 1e-20, 1e-30, 1e-37, 1e20, 3e37, 1.0):
        cal.temperature = temperature
        out.append(cal(scaled_logits(temperature, rows)))
    return {"probs": out, "temperature read back": read32(cal.temperature), "traces": tracing_count(cal.__call__)}


@probe(category="calibration", check="reads_exact", hints=["no-clamp", "stale-tensor"])
def tiny_temperature_with_bias(solution: Any) -> dict[str, Any]:
    """A tiny temperature from the constructor, then biases and temperatures of the same size: the outputs follow them.

    ``Calibrator(4, temperature=3e-8)`` on logits of the order of 1e-8, then
    ``set_bias`` with values of that size and temperatures 1e-9 and 5e-11.
    """
    cal = solution.Calibrator(4, temperature=3e-8)
    base = [[0.0, 1.0, 2.0, -1.0], [0.5, 0.5, -2.0, 1.5]]
    probs = [cal(scaled_logits(3e-8, base))]
    for temperature, bias in ((3e-8, [1.0, 0.0, -1.0, 0.5]), (1e-9, [0.0, 2.0, 0.0, -2.0]), (5e-11, [-1.0, 0.0, 1.0, 0.0])):
        cal.temperature = temperature
        cal.set_bias(np.asarray(bias) * temperature)
        probs.append(cal(scaled_logits(temperature, base)))
    return {"probs": probs, "temperature read back": read32(cal.temperature), "traces": tracing_count(cal.__call__)}
