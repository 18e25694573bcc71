"""Hidden probes for tf-retracing-storm: they make the score.

Each probe drives ``fit`` or ``evaluate`` with a sequence of calls that would
retrace a naive tf.function, then records the results and
``experimental_get_tracing_count()`` of the methods it called. The check
(``bounded_traces_hidden`` in checks.py) allows 1 or 2 traces per method and model,
and compares everything else with the reference: call counts exactly, floats
to rtol=1e-5, atol=1e-6. Each probe repeats its troublemaker at least three
times, so a solution that still retraces for it goes over the bound.

Categories: ``python-scalars`` (learning rates as Python and NumPy floats),
``python-lists`` (labels and class weights as Python lists), ``shapes``
(varying batch sizes) and ``mixed`` (all of it at once, several models).
Some models have other sizes than the public probes' 6 features and 3
classes: the constructor takes both, so a signature that fixes either is
wrong.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any

import numpy as np
from probekit import probe

NUM_FEATURES, NUM_CLASSES = 6, 3
TRUE_W = np.array(
    [[1.0, -1.0, 0.0], [0.5, 0.5, -1.0], [-1.0, 0.0, 1.0], [0.0, 1.0, 0.5], [0.3, -0.2, 0.1], [-0.5, 0.8, 0.2]]
)


def batch(seed: int, size: int, labels_as: str = "list") -> tuple[np.ndarray, Any]:
    """float32 features (size, 6) and labels in {0, 1, 2}: a Python list, or an int32/int64 array."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(size, NUM_FEATURES)).astype(np.float32)
    labels = np.argmax(x @ TRUE_W + 0.5 * rng.normal(size=(size, NUM_CLASSES)), axis=1)
    if labels_as == "list":
        return x, [int(v) for v in labels]
    return x, labels.astype(labels_as)


def sized_batch(seed: int, size: int, features: int, classes: int, labels_as: str = "list") -> tuple[np.ndarray, Any]:
    """Like batch(), for a model with other sizes: labels from a seeded random (features, classes) truth."""
    true_w = np.random.default_rng(1000 * features + classes).normal(size=(features, classes))
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(size, features)).astype(np.float32)
    labels = np.argmax(x @ true_w + 0.5 * rng.normal(size=(size, classes)), axis=1)
    if labels_as == "list":
        return x, [int(v) for v in labels]
    return x, labels.astype(labels_as)


def tracing_count(fn: Any) -> int | str:
    count = getattr(fn, "experimental_get_tracing_count", None)
    return int(count()) if callable(count) else "not a tf.function"


def observe(model: Any, calls: dict[str, int], **values: Any) -> dict[str, Any]:
    """Values, parameters, call counts and trace counts of the methods called."""
    return {
        **values,
        "w": np.array(model.w.numpy()),
        "b": np.array(model.b.numpy()),
        "calls": calls,
        "traces": {name: tracing_count(getattr(model, name)) for name in calls},
    }


def metrics(pairs: list[Any]) -> list[list[Any]]:
    """evaluate's (loss, accuracy) pairs, judged by value: any float type reads as float64 (shapes are kept)."""
    return [[np.asarray(loss, dtype=np.float64), np.asarray(accuracy, dtype=np.float64)] for loss, accuracy in pairs]


# ---------------------------------------------------------------- python-scalars


@probe(category="python-scalars", weight=2, check="bounded_traces_hidden", hints=["python-scalars"])
def exponential_decay_python_floats(solution: Any) -> dict[str, Any]:
    """fit: ten batches of 16 with int32 labels, a Python-float learning rate decaying every step."""
    model = solution.SoftmaxClassifier(NUM_FEATURES, NUM_CLASSES, seed=11)
    batches = [batch(1100 + k, 16, "int32") for k in range(10)]
    rates = [0.5 * 0.8**k for k in range(10)]
    losses = solution.fit(model, batches, rates, [1.0, 1.0, 1.0])
    return observe(model, {"train_step": 10}, losses=losses)


@probe(category="python-scalars", check="bounded_traces_hidden", hints=["python-scalars", "dtypes"])
def schedule_of_numpy_floats(solution: Any) -> dict[str, Any]:
    """fit: a schedule from np.geomspace (NumPy float64 scalars), int64 labels, batches of 12."""
    model = solution.SoftmaxClassifier(NUM_FEATURES, NUM_CLASSES, seed=12)
    batches = [batch(1200 + k, 12, "int64") for k in range(6)]
    rates = list(np.geomspace(0.6, 0.05, 6))
    losses = solution.fit(model, batches, rates, [1.0, 0.5, 2.0])
    return observe(model, {"train_step": 6}, losses=losses)


@probe(category="python-scalars", check="bounded_traces_hidden", hints=["python-scalars"])
def warmup_then_constant(solution: Any) -> dict[str, Any]:
    """fit: a linear warm-up over four steps (Python floats), then a constant rate; ints among the rates."""
    model = solution.SoftmaxClassifier(NUM_FEATURES, NUM_CLASSES, seed=13)
    batches = [batch(1300 + k, 10, "int32") for k in range(8)]
    rates = [0.1, 0.2, 0.3, 0.4, 1, 1, 1, 1]
    losses = solution.fit(model, batches, rates, [1.0, 1.0, 1.0])
    return observe(model, {"train_step": 8}, losses=losses)


# ---------------------------------------------------------------- python-lists


@probe(category="python-lists", weight=2, check="bounded_traces_hidden", hints=["python-lists"])
def labels_as_python_lists(solution: Any) -> dict[str, Any]:
    """fit: eight batches of 12 whose labels are Python lists, constant learning rate 0.3."""
    model = solution.SoftmaxClassifier(NUM_FEATURES, NUM_CLASSES, seed=21)
    batches = [batch(2100 + k, 12, "list") for k in range(8)]
    losses = solution.fit(model, batches, [0.3] * 8, [1.0, 1.0, 1.0])
    return observe(model, {"train_step": 8}, losses=losses)


@probe(category="python-lists", weight=2, check="bounded_traces_hidden", hints=["python-lists"])
def class_weights_change_between_fits(solution: Any) -> dict[str, Any]:
    """Three fit calls of two steps each, with different class-weight lists, int32 labels."""
    model = solution.SoftmaxClassifier(NUM_FEATURES, NUM_CLASSES, seed=22)
    losses = []
    for phase, weights in enumerate(([1.0, 1.0, 1.0], [3.0, 1.0, 1.0], [1.0, 0.5, 4.0])):
        batches = [batch(2200 + 10 * phase + k, 16, "int32") for k in range(2)]
        losses.append(solution.fit(model, batches, [0.4, 0.4], weights))
    return observe(model, {"train_step": 6}, losses=losses)


@probe(category="python-lists", check="bounded_traces_hidden", hints=["python-lists"])
def evaluate_with_list_labels(solution: Any) -> dict[str, Any]:
    """evaluate: four batches of 10 whose labels are Python lists; and a model built without a seed.

    The class is part of what a fix keeps: a ``tf.Module`` (its constructor
    calls ``tf.Module.__init__``, which gives it its ``name``) whose ``seed``
    defaults to 0. Only that model's name and initial parameters are read, so
    this adds no call and no trace.
    """
    model = solution.SoftmaxClassifier(NUM_FEATURES, NUM_CLASSES, seed=23)
    results = [model.evaluate(*batch(2300 + k, 10, "list")) for k in range(4)]
    default = solution.SoftmaxClassifier(NUM_FEATURES, NUM_CLASSES)
    start = {"name": default.name, "w": np.array(default.w.numpy()), "b": np.array(default.b.numpy())}
    return observe(model, {"evaluate": 4}, metrics=metrics(results), **{"a model built without a seed": start})


@probe(category="python-lists", weight=2, check="bounded_traces_hidden", hints=["python-lists", "shapes"])
def other_class_count(solution: Any) -> dict[str, Any]:
    """Three fit calls with new class-weight lists, then evaluate, on a model whose number of classes is not 3."""
    features, classes = 6, 5
    model = solution.SoftmaxClassifier(features, classes, seed=24)
    losses = []
    for phase, weights in enumerate(([1.0] * 5, [2.0, 1.0, 1.0, 0.5, 1.0], [1.0, 3.0, 0.5, 1.0, 2.0])):
        batches = [sized_batch(2400 + 10 * phase + k, 14, features, classes, "list") for k in range(2)]
        losses.append(solution.fit(model, batches, [0.5, 0.5], weights))
    results = [model.evaluate(*sized_batch(2500 + k, size, features, classes, "int64")) for k, size in enumerate((14, 6, 9))]
    return observe(model, {"train_step": 6, "evaluate": 3}, losses=losses, metrics=metrics(results))


# ---------------------------------------------------------------- shapes


@probe(category="shapes", weight=2, check="bounded_traces_hidden", hints=["shapes"])
def ragged_batch_sizes(solution: Any) -> dict[str, Any]:
    """fit: batches of 16, 16, 5, 16, 9, 1 and 16 examples, int32 labels, constant learning rate."""
    model = solution.SoftmaxClassifier(NUM_FEATURES, NUM_CLASSES, seed=31)
    sizes = (16, 16, 5, 16, 9, 1, 16)
    batches = [batch(3100 + k, size, "int32") for k, size in enumerate(sizes)]
    losses = solution.fit(model, batches, [0.5] * len(sizes), [1.0, 1.0, 1.0])
    return observe(model, {"train_step": len(sizes)}, losses=losses)


@probe(category="shapes", weight=2, check="bounded_traces_hidden", hints=["shapes"])
def evaluate_varying_batch_sizes(solution: Any) -> dict[str, Any]:
    """evaluate: batches of 32, 7, 1, 20 and 7 examples with int64 label arrays."""
    model = solution.SoftmaxClassifier(NUM_FEATURES, NUM_CLASSES, seed=32)
    sizes = (32, 7, 1, 20, 7)
    results = [model.evaluate(*batch(3200 + k, size, "int64")) for k, size in enumerate(sizes)]
    return observe(model, {"evaluate": len(sizes)}, metrics=metrics(results))


@probe(category="shapes", weight=2, check="bounded_traces_hidden", hints=["shapes"])
def other_feature_count(solution: Any) -> dict[str, Any]:
    """fit and evaluate on a model whose number of features is not the public probes' 6."""
    features, classes = 10, 3
    model = solution.SoftmaxClassifier(features, classes, seed=33)
    sizes = (12, 12, 5, 12, 1, 12)
    batches = [sized_batch(3300 + k, size, features, classes, "int32") for k, size in enumerate(sizes)]
    losses = solution.fit(model, batches, [0.4 - 0.05 * k for k in range(len(sizes))], [1.0, 2.0, 1.0])
    results = [model.evaluate(*sized_batch(3400 + k, size, features, classes, "list")) for k, size in enumerate((7, 20, 3))]
    return observe(model, {"train_step": len(sizes), "evaluate": 3}, losses=losses, metrics=metrics(results))


# ---------------------------------------------------------------- mixed


@probe(category="mixed", weight=2, check="bounded_traces_hidden", hints=["python-lists", "dtypes", "shapes"])
def mixed_label_kinds(solution: Any) -> dict[str, Any]:
    """fit: labels as Python lists, int64 and int32 arrays in turn, batch sizes 12, 7 and 3, Python-float rates."""
    model = solution.SoftmaxClassifier(NUM_FEATURES, NUM_CLASSES, seed=41)
    kinds = ("list", "int64", "int32") * 3
    sizes = (12, 12, 12, 7, 7, 7, 3, 3, 3)
    batches = [batch(4100 + k, size, kind) for k, (size, kind) in enumerate(zip(sizes, kinds, strict=True))]
    rates = [0.4 - 0.03 * k for k in range(9)]
    losses = solution.fit(model, batches, rates, [1.0, 2.0, 0.5])
    return observe(model, {"train_step": 9}, losses=losses)


@probe(category="mixed", check="bounded_traces_hidden", hints=["python-scalars", "python-lists", "shapes"])
def two_models_in_turn(solution: Any) -> dict[str, Any]:
    """Two models trained in turn, three fit calls each with new rates, weights and batch sizes."""
    models = [solution.SoftmaxClassifier(NUM_FEATURES, NUM_CLASSES, seed=s) for s in (42, 43)]
    losses = []
    for phase in range(3):
        for m, model in enumerate(models):
            batches = [batch(4200 + 100 * m + 10 * phase + k, 8 + 3 * phase + m, "list") for k in range(2)]
            weights = [1.0 + phase, 1.0, 1.0 + m]
            losses.append(solution.fit(model, batches, [0.3 / (phase + 1), 0.2 / (phase + 1)], weights))
    return {
        "losses": losses,
        "w": [np.array(model.w.numpy()) for model in models],
        "calls": {f"model {m} train_step": 6 for m in range(2)},
        "traces": {f"model {m} train_step": tracing_count(model.train_step) for m, model in enumerate(models)},
    }


@probe(category="mixed", weight=2, check="bounded_traces_hidden", hints=["python-scalars", "python-lists", "shapes"])
def long_run_then_evaluate(solution: Any) -> dict[str, Any]:
    """Thirty steps: cosine schedule, list labels, sizes cycling 16/11/4; then evaluate on batches of 50, 9 and 23."""
    model = solution.SoftmaxClassifier(NUM_FEATURES, NUM_CLASSES, seed=44)
    sizes = [(16, 11, 4)[k % 3] for k in range(30)]
    batches = [batch(4400 + k, size, "list") for k, size in enumerate(sizes)]
    rates = [0.05 + 0.45 * (1 + math.cos(math.pi * k / 30)) / 2 for k in range(30)]
    losses = solution.fit(model, batches, rates, [1.0, 1.5, 1.0])
    results = [model.evaluate(*batch(4500 + k, size, "int32")) for k, size in enumerate((50, 9, 23))]
    return observe(model, {"train_step": 30, "evaluate": 3}, losses=losses, metrics=metrics(results))


@probe(category="mixed", weight=2, check="bounded_traces_hidden", hints=["python-scalars", "python-lists", "shapes", "dtypes"])
def models_of_different_sizes(solution: Any) -> dict[str, Any]:
    """Two models of different sizes, neither of them 6 features by 3 classes, trained and evaluated in turn."""
    shapes = ((1, 2), (13, 7))
    models = [solution.SoftmaxClassifier(f, c, seed=45 + m) for m, (f, c) in enumerate(shapes)]
    losses, results = [], []
    kinds = ("list", "int64", "int32")
    for phase in range(3):
        for m, (model, (features, classes)) in enumerate(zip(models, shapes, strict=True)):
            size = (9, 4, 15)[phase] + m
            batches = [sized_batch(4600 + 100 * m + 10 * phase + k, size, features, classes, kinds[(phase + k) % 3]) for k in range(2)]
            rates = list(np.geomspace(0.5, 0.2, 2) / (phase + 1))
            weights = [1.0 + 0.5 * ((phase + j) % 3) for j in range(classes)]
            losses.append(solution.fit(model, batches, rates, weights))
            results.append(model.evaluate(*sized_batch(4700 + 100 * m + phase, size + 2, features, classes, kinds[phase])))
    return {
        "losses": losses,
        "metrics": metrics(results),
        "w": [np.array(model.w.numpy()) for model in models],
        "b": [np.array(model.b.numpy()) for model in models],
        "calls": {f"model {m} {method}": n for m in range(2) for method, n in (("train_step", 6), ("evaluate", 3))},
        "traces": {
            f"model {m} {method}": tracing_count(getattr(model, method))
            for m, model in enumerate(models)
            for method in ("train_step", "evaluate")
        },
    }


# ---------------------------------------------------------------- contract


@probe(category="contract", weight=2, check="bounded_traces_hidden", hints=["contract"])
def zero_class_weights(solution: Any) -> dict[str, Any]:
    """Class weights with zeros: batches that mix weighted and zero-weight classes, then one batch whose labels all weigh 0.

    The last batch makes the weighted mean 0/0: the given code's loss is NaN
    and the step turns the parameters to NaN. Two models of different sizes,
    so the zero-weight classes are not always class 0.
    """
    losses, params = [], []
    for m, (features, classes, weights, zero_classes) in enumerate(
        ((6, 3, [0.0, 1.0, 2.0], [0]), (5, 4, [1.0, 0.0, 0.0, 3.0], [1, 2]))
    ):
        model = solution.SoftmaxClassifier(features, classes, seed=51 + m)
        kinds = ("list", "int64", "int32", "list")
        batches = [sized_batch(5100 + 100 * m + k, 10, features, classes, kinds[k]) for k in range(3)]
        x, _ = sized_batch(5150 + 100 * m, 6, features, classes)
        doomed = [zero_classes[j % len(zero_classes)] for j in range(6)]
        first = solution.fit(model, batches, [0.4, 0.3, 0.2], weights)
        last = solution.fit(model, [(x, doomed)], [0.2], weights)
        losses.append([first, last])
        params.append({"w": np.array(model.w.numpy()), "b": np.array(model.b.numpy()), "traces": tracing_count(model.train_step)})
    return {
        "losses": losses,
        "w": [p["w"] for p in params],
        "b": [p["b"] for p in params],
        "calls": {f"model {m} train_step": 4 for m in range(2)},
        "traces": {f"model {m} train_step": p["traces"] for m, p in enumerate(params)},
    }


@probe(category="contract", weight=2, check="bounded_traces_hidden", hints=["contract"])
def evaluate_tied_logits(solution: Any) -> dict[str, Any]:
    """evaluate on fresh models (b is zero): some rows of x are all zeros, so every logit of that row ties at 0.

    The given code's accuracy takes argmax, which picks the first of tied
    classes; the labels of the tied rows cover every class.
    """
    results, counts = [], {}
    for m, (features, classes) in enumerate(((6, 3), (4, 5))):
        model = solution.SoftmaxClassifier(features, classes, seed=61 + m)
        for k, (size, kind) in enumerate(((9, "list"), (7, "int64"), (12, "int32"))):
            x, labels = sized_batch(6100 + 100 * m + k, size, features, classes, kind)
            rows = np.random.default_rng(6200 + 100 * m + k).permutation(size)[: size // 2 + 1]
            x[rows] = 0.0
            tied = [int(j % classes) for j in range(len(rows))]
            if kind == "list":
                for r, c in zip(rows, tied, strict=True):
                    labels[int(r)] = c
            else:
                labels[rows] = np.asarray(tied, dtype=labels.dtype)
            results.append(model.evaluate(x, labels))
        counts[f"model {m} evaluate"] = tracing_count(model.evaluate)
    return {"metrics": metrics(results), "calls": {name: 3 for name in counts}, "traces": counts}


@probe(category="contract", weight=2, check="bounded_traces_hidden", hints=["contract"])
def batches_from_a_generator(solution: Any) -> dict[str, Any]:
    """fit with ``batches`` given as one-shot iterators (a generator, then iter() of a list), ragged sizes, list and int64 labels."""
    model = solution.SoftmaxClassifier(NUM_FEATURES, NUM_CLASSES, seed=71)
    sizes = (16, 16, 5, 11)
    first = [batch(7100 + k, size, "list") for k, size in enumerate(sizes)]
    second = [batch(7200 + k, size, "int64") for k, size in enumerate(sizes)]
    losses = [
        solution.fit(model, (pair for pair in first), [0.5, 0.4, 0.3, 0.2], [1.0, 2.0, 1.0]),
        solution.fit(model, iter(second), [0.3, 0.3, 0.3, 0.3], [1.0, 1.0, 0.5]),
    ]
    return observe(model, {"train_step": 8}, losses=losses)


@probe(category="contract", weight=2, check="bounded_traces_hidden", hints=["contract"])
def called_by_keyword(solution: Any) -> dict[str, Any]:
    """The documented names as keywords: the constructor, fit and evaluate; and seed passed positionally."""
    model = solution.SoftmaxClassifier(num_features=5, num_classes=4, seed=81)
    features, classes = 5, 4
    batches = [sized_batch(8100 + k, size, features, classes, "int32") for k, size in enumerate((12, 12, 7))]
    losses = solution.fit(model=model, batches=batches, learning_rates=[0.5, 0.4, 0.3], class_weights=[1.0, 2.0, 1.0, 0.5])
    results = [
        model.evaluate(x=x, labels=labels)
        for x, labels in (sized_batch(8200 + k, size, features, classes, "list") for k, size in enumerate((9, 4, 9)))
    ]
    positional = solution.SoftmaxClassifier(NUM_FEATURES, NUM_CLASSES, 82)
    start = {"w": np.array(positional.w.numpy()), "b": np.array(positional.b.numpy())}
    return observe(
        model, {"train_step": 3, "evaluate": 3}, losses=losses, metrics=metrics(results), **{"a model built with a positional seed": start}
    )


@probe(category="contract", weight=2, check="bounded_traces_hidden", hints=["contract"])
def train_step_called_directly(solution: Any) -> dict[str, Any]:
    """train_step called directly (positionally, then by keyword), with the loss it returns.

    The arguments are the kinds the statement names for direct calls: a
    float32 array, int32 labels, a Python-float learning rate, a list of
    class weights. Only values are compared: the statement bounds the trace
    counts of fit and evaluate sequences, not of direct calls.
    """
    features, classes = 6, 4
    model = solution.SoftmaxClassifier(features, classes, seed=91)
    losses = []
    for k, size in enumerate((10, 10, 6)):
        x, labels = sized_batch(9100 + k, size, features, classes, "int32")
        weights = [1.0, 2.0, 0.5, 1.0]
        if k % 2 == 0:
            loss = model.train_step(x, labels, 0.4, weights)
        else:
            loss = model.train_step(x=x, labels=labels, learning_rate=0.4, class_weights=weights)
        losses.append(float(loss))
    return {"losses": losses, "w": np.array(model.w.numpy()), "b": np.array(model.b.numpy())}


@probe(category="contract", check="bounded_traces_hidden", hints=["contract"])
def a_tf_module(solution: Any) -> dict[str, Any]:
    """SoftmaxClassifier is a tf.Module whose trainable variables are w and b (by shape), read on a model of another size."""
    import tensorflow as tf

    model = solution.SoftmaxClassifier(7, 2, seed=95)
    is_module = isinstance(model, tf.Module)
    shapes = sorted(tuple(v.shape.as_list()) for v in model.trainable_variables) if is_module else "no trainable_variables"
    return {"is a tf.Module": is_module, "trainable variable shapes": [list(s) for s in shapes] if is_module else shapes}


# ---------------------------------------------------------------- red team round 2


@probe(category="contract", weight=2, check="bounded_traces_hidden", hints=["contract"])
def evaluate_near_ties_and_after_nan(solution: Any) -> dict[str, Any]:
    """evaluate on rows whose logits differ by far less than a softmax resolves, then again after a step turned the parameters NaN.

    Fresh models (b is zero); in half the rows a single feature is about
    1e-7 and the rest are zeros, so the logits are distinct in float32 but
    their softmax rounds to a tie. The labels are the argmax of the float32
    logits: only an argmax of the logits themselves gets them right. Then a
    batch that falls entirely on a zero-weight class makes the parameters
    NaN, and ``evaluate`` runs again with labels of every class, class 0 the
    most frequent: the given code's argmax of an all-NaN row is its first class.
    """
    results, nan_losses, counts = [], [], {}
    for m, (features, classes, zero_class) in enumerate(((6, 3, 1), (4, 5, 0))):
        model = solution.SoftmaxClassifier(features, classes, seed=111 + m)
        w = np.array(model.w.numpy(), dtype=np.float32)
        for k, (size, kind) in enumerate(((10, "list"), (9, "int64"))):
            rng = np.random.default_rng(11100 + 100 * m + k)
            x, labels = sized_batch(11200 + 100 * m + k, size, features, classes, "int64")
            rows = rng.permutation(size)[: size // 2 + 1]
            for r in rows:
                x[r] = 0.0
                x[r, rng.integers(features)] = np.float32(rng.choice((1.0, -1.0)) * rng.uniform(0.5, 2.0) * 1e-7)
            labels[rows] = np.argmax(x[rows] @ w, axis=1)
            results.append(model.evaluate(x, [int(v) for v in labels] if kind == "list" else labels))
        weights = [1.0] * classes
        weights[zero_class] = 0.0
        x, _ = sized_batch(11300 + 100 * m, 6, features, classes)
        nan_losses.append(solution.fit(model, [(x, [zero_class] * 6)], [0.3], weights))
        x, _ = sized_batch(11400 + 100 * m, 2 * classes, features, classes)
        # Every class appears, but not equally often: the accuracy tells which class a NaN row predicts.
        results.append(model.evaluate(x, np.array([0] * classes + list(range(classes)), dtype=np.int32)))
        counts[f"model {m} evaluate"] = tracing_count(model.evaluate)
        counts[f"model {m} train_step"] = tracing_count(model.train_step)
    calls = {name: (3 if name.endswith("evaluate") else 1) for name in counts}
    return {"metrics": metrics(results), "losses of the zero-weight batch": nan_losses, "calls": calls, "traces": counts}


@probe(category="mixed", weight=2, check="bounded_traces_hidden", hints=["contract"])
def features_of_large_magnitude(solution: Any) -> dict[str, Any]:
    """fit and evaluate on unnormalised features: raw pixel intensities 0..255, and normal features scaled by 400.

    The logits reach hundreds and more after the first step, far beyond
    where exp() of a float32 overflows or a softmax probability underflows
    to 0; the given code's fused cross-entropy stays finite.
    """
    losses, results, params = [], [], []
    for m, scale in enumerate(("pixels", 400.0)):
        model = solution.SoftmaxClassifier(NUM_FEATURES, NUM_CLASSES, seed=121 + m)
        batches = []
        for k, (size, kind) in enumerate(((8, "list"), (8, "int64"), (5, "int32"))):
            x, labels = batch(12100 + 100 * m + k, size, kind)
            if scale == "pixels":
                x = np.random.default_rng(12200 + 100 * m + k).integers(0, 256, size=x.shape).astype(np.float32)
            else:
                x = (x * np.float32(scale)).astype(np.float32)
            batches.append((x, labels))
        losses.append(solution.fit(model, batches, [0.1, 0.05, 0.01], [1.0, 2.0, 1.0]))
        results.append(model.evaluate(*batches[0]))
        params.append(model)
    return {
        "losses": losses,
        "metrics": metrics(results),
        "w": [np.array(model.w.numpy()) for model in params],
        "b": [np.array(model.b.numpy()) for model in params],
        "calls": {f"model {m} {method}": n for m in range(2) for method, n in (("train_step", 3), ("evaluate", 1))},
        "traces": {
            f"model {m} {method}": tracing_count(getattr(model, method))
            for m, model in enumerate(params)
            for method in ("train_step", "evaluate")
        },
    }


@probe(category="contract", weight=2, check="bounded_traces_hidden", hints=["contract", "python-lists"])
def fit_inputs_reused_or_one_shot(solution: Any) -> dict[str, Any]:
    """What fit gets from its caller: empty batches, schedules as NumPy arrays or one-shot generators, and a class-weight list updated in place.

    The caller keeps one list of class weights and changes an entry of it
    between ``fit`` calls: each call must train with the weights the list
    holds at that call.
    """
    model = solution.SoftmaxClassifier(NUM_FEATURES, NUM_CLASSES, seed=131)
    weights = [1.0, 1.0, 1.0]
    losses = [
        solution.fit(model, [], [], weights),
        solution.fit(model, (pair for pair in []), iter([]), weights),
    ]
    for phase, (update, schedule) in enumerate(
        (
            (None, lambda: (0.4 * 0.8**k for k in range(3))),
            ((0, 3.0), lambda: np.geomspace(0.5, 0.1, 3)),
            ((2, 0.25), lambda: iter([0.3, 0.2, 0.1])),
            ((1, 4.0), lambda: (r for r in [1, 0.5, 0.25])),
        )
    ):
        if update is not None:
            weights[update[0]] = update[1]
        batches = [batch(13100 + 10 * phase + k, size, ("list", "int32", "int64")[k]) for k, size in enumerate((12, 7, 12))]
        losses.append(solution.fit(model, iter(batches), schedule(), weights))
    return observe(model, {"train_step": 12}, losses=losses)


# ---------------------------------------------------------------- red team round 3


def initial_w(features: int, classes: int, seed: int) -> np.ndarray:
    """The constructor's seeded start of ``w``, as the statement gives it (float32); ``b`` starts at zeros."""
    return np.random.default_rng(seed).normal(0.0, 0.1, size=(features, classes)).astype(np.float32)


def exact_sum(a: float, b: float) -> float | None:
    """a + b in float64 when that sum is exact, else None (so rounding it once to float32 is correct rounding)."""
    total = a + b
    return total if Fraction(total) == Fraction(a) + Fraction(b) else None


def float32_only_tie(w: np.ndarray, rng: np.random.Generator, scale: float) -> tuple[np.ndarray, int, int] | None:
    """One row of x whose two largest logits tie in float32 but not in exact arithmetic, or None.

    The row has two nonzero features: ``scale`` (a power of two, so its products
    with w are exact) and one value tuned so that two classes' logits differ by
    less than half a float32 ulp. Every other product is 0, so however a float32
    matmul orders its sum, with or without fused multiply-adds, each logit is one
    of two roundings; the row is kept only when both give the same float32 logits,
    which tie at the top. Exact (float64) logits rank the later class of the pair
    first; float32's argmax picks the earlier one. Returns (row, earlier, later).
    """
    features, classes = w.shape
    m, n = (int(v) for v in rng.choice(features, 2, replace=False))
    i, j = sorted(int(v) for v in rng.choice(classes, 2, replace=False))
    w64 = w.astype(np.float64)
    if w64[n, i] == w64[n, j]:
        return None
    target = -scale * (w64[m, i] - w64[m, j]) / (w64[n, i] - w64[n, j])
    if scale > 1.0 and not 0.0 <= target <= 255.0:  # pixel rows keep pixel values
        return None
    candidate = np.float32(target)
    for _ in range(4):
        candidate = np.nextafter(candidate, np.float32(-np.inf))
    for _ in range(9):
        candidate = np.nextafter(candidate, np.float32(np.inf))
        big = [scale * float(w64[m, c]) for c in range(classes)]
        small = [float(candidate) * float(w64[n, c]) for c in range(classes)]  # exact: 24 x 24 bits
        fused = [exact_sum(p, q) for p, q in zip(big, small, strict=True)]
        if any(v is None for v in fused):
            continue
        unfused = [exact_sum(p, float(np.float32(q))) for p, q in zip(big, small, strict=True)]
        if any(v is None for v in unfused):
            continue
        logits32 = np.array(fused, dtype=np.float64).astype(np.float32)
        if not np.array_equal(logits32, np.array(unfused, dtype=np.float64).astype(np.float32)):
            continue
        others = [logits32[c] for c in range(classes) if c not in (i, j)]
        top = logits32[i]
        if logits32[j] != top or fused[j] <= fused[i] or (others and max(others) >= top - 1e-3 * max(1.0, abs(float(top)))):
            continue
        x = np.zeros(features, dtype=np.float32)
        x[m], x[n] = np.float32(scale), candidate
        return x, i, j
    return None


@probe(category="contract", weight=2, check="bounded_traces_hidden", hints=["contract"])
def evaluate_ties_only_in_float32(solution: Any) -> dict[str, Any]:
    """evaluate on fresh models, on rows whose two largest logits are equal in float32 though not in exact arithmetic.

    The logits are the given code's float32 ``matmul(x, w) + b``; each tied row
    counts as a prediction of the first of the tied classes. Logits computed in
    float64 separate the pair and predict the other one. Models of 6, 4 and 784
    features (the last with pixel values); the rows are built so that every
    float32 evaluation of the matmul, in any order, gives the same logits. Each
    batch mixes labels of the first and of the second tied class, in unequal
    numbers, with ordinary rows.
    """
    results, counts = [], {}
    for m, (features, classes, scale) in enumerate(((6, 3, 1.0), (4, 5, 1.0), (784, 10, 128.0))):
        seed = 141 + m
        model = solution.SoftmaxClassifier(features, classes, seed=seed)
        w = initial_w(features, classes, seed)
        rng = np.random.default_rng(14100 + 100 * m)
        for size, kind in ((11, "list"), (8, "int64"), (13, "int32")):
            rows, labels = [], []
            while len(rows) < size - 3:
                found = float32_only_tie(w, rng, scale)
                if found is not None:
                    row, earlier, later = found
                    rows.append(row)
                    labels.append(earlier if len(rows) % 3 else later)
            for _ in range(3):  # ordinary rows, labelled with a random class
                rows.append((rng.normal(size=features) * scale).astype(np.float32))
                labels.append(int(rng.integers(classes)))
            x = np.stack(rows)
            results.append(model.evaluate(x, labels if kind == "list" else np.asarray(labels, dtype=kind)))
        counts[f"model {m} evaluate"] = tracing_count(model.evaluate)
    return {"metrics": metrics(results), "calls": {name: 3 for name in counts}, "traces": counts}


@probe(category="contract", weight=2, check="bounded_traces_hidden", hints=["contract"])
def fit_keeps_stepping_after_nan(solution: Any) -> dict[str, Any]:
    """fit with a batch that falls entirely on zero-weight classes in the middle of its batches, then more batches.

    The given loop calls train_step for every batch: the step on the doomed
    batch returns NaN and turns the parameters to NaN, and every later step
    returns NaN too. Each loss is reported, and every batch of a generator is
    read. Two models of different sizes; the second also starts a fit with the
    doomed batch.
    """
    losses, drawn, params = [], [], []
    for m, (features, classes, weights, zero_class) in enumerate(((6, 3, [1.0, 0.0, 2.0], 1), (5, 4, [0.0, 1.0, 3.0, 1.0], 0))):
        model = solution.SoftmaxClassifier(features, classes, seed=151 + m)
        kinds = ("list", "int64", "int32")
        pairs = [sized_batch(15100 + 100 * m + k, (10, 7, 10, 4, 9)[k], features, classes, kinds[k % 3]) for k in range(5)]
        doomed_x, _ = sized_batch(15190 + 100 * m, 6, features, classes)
        pairs.insert(2, (doomed_x, [zero_class] * 6))
        read = [0]

        def loader(items: list[Any], read: list[int] = read) -> Any:
            for item in items:
                read[0] += 1
                yield item

        calls = [solution.fit(model, loader(pairs), [0.4, 0.3, 0.3, 0.2, 0.2, 0.1], weights)]
        x, labels = sized_batch(15180 + 100 * m, 5, features, classes, "int64")
        calls.append(solution.fit(model, loader([(doomed_x, [zero_class] * 6), (x, labels), (x, labels)]), [0.2, 0.2, 0.2], weights))
        losses.append(calls)
        drawn.append(read[0])
        params.append(model)
    return {
        "losses": losses,
        "batches read": drawn,
        "w": [np.array(model.w.numpy()) for model in params],
        "b": [np.array(model.b.numpy()) for model in params],
        "calls": {f"model {m} train_step": 9 for m in range(2)},
        "traces": {f"model {m} train_step": tracing_count(model.train_step) for m, model in enumerate(params)},
    }


@probe(category="contract", weight=2, check="bounded_traces_hidden", hints=["contract"])
def fit_batches_from_a_reused_buffer(solution: Any) -> dict[str, Any]:
    """fit from a loader that refills the same arrays (and the same label list) in place before it yields each batch.

    A batch's arrays are valid until the next batch is read: the given loop
    trains on each one before it reads the next. The last batch of each epoch
    is shorter, a view of the front of the buffers.
    """
    model = solution.SoftmaxClassifier(NUM_FEATURES, NUM_CLASSES, seed=161)
    x_buffer = np.empty((12, NUM_FEATURES), dtype=np.float32)
    label_buffers = {"int32": np.empty(12, dtype=np.int32), "int64": np.empty(12, dtype=np.int64)}
    label_list: list[int] = []

    def loader(epoch: int, kind: str) -> Any:
        for k, size in enumerate((12, 12, 12, 5)):
            x, labels = batch(16100 + 10 * epoch + k, size, "int64")
            x_buffer[:size] = x
            if kind == "list":
                label_list[:] = [int(v) for v in labels]
                yield x_buffer[:size], label_list
            else:
                label_buffers[kind][:size] = labels
                yield x_buffer[:size], label_buffers[kind][:size]

    weights = [1.0, 2.0, 1.0]
    losses = [
        solution.fit(model, loader(epoch, kind), [0.5 - 0.05 * k for k in range(4)], weights)
        for epoch, kind in enumerate(("int32", "list", "int64"))
    ]
    return observe(model, {"train_step": 12}, losses=losses)


@probe(category="python-scalars", weight=2, check="bounded_traces_hidden", hints=["python-scalars", "contract"])
def schedule_shared_across_fits(solution: Any) -> dict[str, Any]:
    """One learning-rate iterator shared by successive fit calls (one per epoch), endless or longer than the batches.

    The given loop reads a batch, then its rate, and stops when the batches
    end: each call takes exactly one rate per batch and leaves the rest for the
    next call. After the epochs the probe reads each schedule's next rate.
    """
    model = solution.SoftmaxClassifier(NUM_FEATURES, NUM_CLASSES, seed=171)
    endless = (0.5 * 0.85**k for k in itertools.count())
    weights = ([1.0, 1.5, 1.0], [2.0, 1.0, 1.0])  # both kept alive: two lists, two ids
    losses = []
    for epoch, sizes in enumerate(((12, 12, 7), (12, 5), (12, 12, 12, 3))):
        batches = [batch(17100 + 10 * epoch + k, size, ("list", "int32", "int64")[k % 3]) for k, size in enumerate(sizes)]
        losses.append(solution.fit(model, batches, endless, weights[0]))
    finite = iter([0.3, 0.25, 0.2, 0.15, 0.1, 0.05, 0.04, 0.03])
    for epoch in range(2):
        batches = iter([batch(17200 + 10 * epoch + k, 9, "int32") for k in range(3)])
        losses.append(solution.fit(model, batches, finite, weights[1]))
    return observe(model, {"train_step": 15}, losses=losses, **{"next rates left in the schedules": [next(endless, None), next(finite, None)]})
