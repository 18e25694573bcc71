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

import math
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
    return [[loss, accuracy] for loss, accuracy in pairs]


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
    batches = [batch(4100 + k, size, kind) for k, (size, kind) in enumerate(zip(sizes, kinds))]
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
