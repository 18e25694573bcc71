"""Custom checks for dispatch-mode-op-counter: FLOPs against a count from the sizes alone.

Each check recomputes the FLOPs from the layer sizes in the *expected*
observation (the reference's, made by the same probe), so the truth does not
depend on the reference's counter, and then compares the candidate's numbers
with it. The op counts in the same observations are checked exactly against
the reference's.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any


def _is_int(value: Any) -> bool:
    """An int and nothing else: the statement makes every count and FLOP figure an int (4.0 == 4 in Python)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _compare_counted(actual: dict[str, Any], truth: dict[str, int], what: str) -> tuple[bool, str]:
    if not isinstance(actual, dict) or "flops" not in actual or "flops_by_op" not in actual:
        return False, f"{what}: the counter's results are missing"
    by_op = actual["flops_by_op"]
    if by_op != truth:
        return False, f"{what}: flops_by_op is {by_op}, expected {truth}"
    if actual["flops"] != sum(truth.values()):
        return False, f"{what}: flops is {actual['flops']!r}, expected {sum(truth.values())}"
    if not _is_int(actual["flops"]) or not all(_is_int(v) for v in by_op.values()):
        return False, f"{what}: flops is {actual['flops']!r} and flops_by_op is {by_op}: they must be ints"
    counts = actual.get("counts")
    if isinstance(counts, dict) and not all(_is_int(v) for v in counts.values()):
        return False, f"{what}: counts are {counts}: they must be ints"
    return True, ""


def _check_parts(actual: Any, expected: Any, inputs: tuple[str, ...], truths: dict[str, dict[str, int]]) -> tuple[bool, str]:
    if not isinstance(actual, dict):
        return False, "the probe returned no observation"
    for key in inputs:
        if actual.get(key) != expected[key]:
            return False, f"the probe's input {key!r} differs from the reference's"
    for part, truth in truths.items():
        ok, message = _compare_counted(actual.get(part), truth, part)
        if not ok:
            return False, message
        if actual[part]["counts"] != expected[part]["counts"]:
            return False, f"{part}: counts are {actual[part]['counts']}, expected {expected[part]['counts']}"
    return True, ""


def mlp_flops(actual: Any, expected: Any) -> tuple[bool, str]:
    """Forward: one addmm per layer. Backward: one mm for each weight, one more for each layer whose input needs grad."""
    sizes, batch = expected["sizes"], expected["batch"]
    layer_flops = [2 * batch * fan_in * fan_out for fan_in, fan_out in pairwise(sizes)]
    forward = {"aten.addmm": sum(layer_flops)}
    # The first layer's input (the data) needs no grad: only its weight gradient is computed.
    backward = {"aten.mm": sum(layer_flops) + sum(layer_flops[1:])}
    return _check_parts(actual, expected, ("sizes", "batch"), {"forward": forward, "backward": backward})


def attention_flops(actual: Any, expected: Any) -> tuple[bool, str]:
    """Two bmm forward (scores, weighted values); each has two bmm in backward (q, k, v all need grad)."""
    b, s, d = expected["batch"], expected["seq"], expected["dim"]
    scores = 2 * b * s * d * s  # (s, d) @ (d, s)
    values = 2 * b * s * s * d  # (s, s) @ (s, d)
    return _check_parts(
        actual,
        expected,
        ("batch", "seq", "dim"),
        {"forward": {"aten.bmm": scores + values}, "backward": {"aten.bmm": 2 * (scores + values)}},
    )


def _conv_out(size: int, kernel: int, stride: int, padding: int, dilation: int) -> int:
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def _conv_stack_flops(layers: list[dict[str, Any]], batch: int, size: list[int]) -> tuple[int, int, int]:
    """Forward, backward and last-weight-only FLOPs of a Conv2d stack whose data needs no grad.

    ``trainable`` is True (weight and bias train), False (frozen) or "bias" (frozen weight, trainable
    bias). Backward charges F for the weight grad of a layer whose weight trains, and F for the input
    grad where the layer's input needs grad (some earlier layer has a trainable parameter); the bias
    grad costs nothing."""
    forward_total, backward_total, last = 0, 0, 0
    input_needs_grad = False
    for layer in layers:
        pairs = zip(size, layer["kernel"], layer["stride"], layer["padding"], layer["dilation"], strict=True)
        out = [_conv_out(side, kernel, stride, padding, dilation) for side, kernel, stride, padding, dilation in pairs]
        flops = 2 * batch * layer["cout"] * out[0] * out[1] * layer["cin"] * layer["kernel"][0] * layer["kernel"][1]
        forward_total += flops
        backward_total += flops * (int(input_needs_grad) + int(layer["trainable"] is True))
        input_needs_grad = input_needs_grad or bool(layer["trainable"])
        size, last = out, flops
    return forward_total, backward_total, last


def conv_flops(actual: Any, expected: Any) -> tuple[bool, str]:
    """Forward: 2 * outputs * cin * kh * kw per layer. Backward: that again for the weight grad of
    a trainable layer, and again for the input grad where the layer's input needs grad (some
    earlier layer is trainable; the data needs none). Last weight only: one weight grad.
    Sizes, kernels, strides, paddings and dilations are [height, width] pairs. Then a stack whose
    weights are frozen and whose biases train, forward and backward in one counter."""
    forward, backward, last = _conv_stack_flops(expected["layers"], expected["batch"], list(expected["size"]))
    bias_forward, bias_backward, _ = _conv_stack_flops(expected["bias layers"], expected["bias batch"], list(expected["bias size"]))
    return _check_parts(
        actual,
        expected,
        ("layers", "batch", "size", "bias layers", "bias batch", "bias size"),
        {
            "forward": {"aten.convolution": forward},
            "backward": {"aten.convolution_backward": backward},
            "last weight only": {"aten.convolution_backward": last},
            "biases only, forward and backward": {"aten.convolution": bias_forward, "aten.convolution_backward": bias_backward},
        },
    )


def explicit_calls_flops(actual: Any, expected: Any) -> tuple[bool, str]:
    """mm(out=) and addmm twice (once with out=) on (4, 6) @ (6, 3); bmm(out=) and baddbmm twice (once
    with out=) on (2, 5, 4) @ (2, 4, 7). Then mm and bmm on empty batches: entries of 0 FLOPs."""
    if not isinstance(actual, dict) or actual.get("shapes") != expected["shapes"]:
        return False, "the probe's input shapes differ from the reference's"
    (m, k), (_, n) = expected["shapes"]["mm"]
    (bb, bm, bk), (_, _, bn) = expected["shapes"]["bmm"]
    mm = 2 * m * k * n
    bmm = 2 * bb * bm * bk * bn
    truth = {"aten.mm": mm, "aten.addmm": 2 * mm, "aten.bmm": bmm, "aten.baddbmm": 2 * bmm}
    ok, message = _compare_counted(actual, truth, "explicit calls")
    if not ok:
        return False, message
    if actual.get("counts") != expected["counts"]:
        return False, f"counts are {actual.get('counts')}, expected {expected['counts']}"
    # An op of the table that ran has an entry in flops_by_op, even when it cost 0 FLOPs.
    ok, message = _compare_counted(actual.get("empty batch"), {"aten.mm": 0, "aten.bmm": 0}, "empty batch")
    if not ok:
        return False, message
    if actual["empty batch"]["counts"] != expected["empty batch"]["counts"]:
        return False, f"empty batch: counts are {actual['empty batch']['counts']}, expected {expected['empty batch']['counts']}"
    return True, ""


def more_explicit_calls_flops(actual: Any, expected: Any) -> tuple[bool, str]:
    """Five baddbmm on [B, M, K] @ [B, K, N] (added tensors [M, N], [1, 1, N], [N], [1, M, N], then [M, N]
    with out=) and two addmm on [M, K] @ [K, N] (added [1, N], then [M, N] with out=); convolution.out
    and convolution_backward.out (every gradient requested: 2 F), then convolution_backward with the masks
    [False, False, True] (0) and [True, False, True] (F); a convolution with one-element stride, padding and
    dilation lists, forward and backward (the weight gradient alone: F), and called directly; meta-tensor mm,
    bmm and convolution whose FLOPs pass 2**53."""
    truths: dict[str, dict[str, int]] = {}
    batch, m, k, n = expected["sizes"]
    truths["added tensor broadcasts"] = {"aten.baddbmm": 5 * 2 * batch * m * k * n, "aten.addmm": 2 * 2 * m * k * n}
    (x_n, _, x_h, x_w), (c_out, c_in, k_h, k_w) = expected["convolution"]["input"], expected["convolution"]["weight"]
    conv = 2 * x_n * c_out * _conv_out(x_h, k_h, 1, 0, 1) * _conv_out(x_w, k_w, 1, 0, 1) * c_in * k_h * k_w
    truths["convolution overloads"] = {"aten.convolution": conv, "aten.convolution_backward": 3 * conv}
    short = expected["short"]
    (s_n, _, s_h, s_w), (s_out, s_in, s_kh, s_kw) = short["input"], short["weight"]
    stride, padding, dilation = short["stride"], short["padding"], short["dilation"]
    outputs = _conv_out(s_h, s_kh, stride, padding, dilation) * _conv_out(s_w, s_kw, stride, padding, dilation)
    short_conv = 2 * s_n * s_out * outputs * s_in * s_kh * s_kw
    # Forward twice (F.conv2d, then aten.convolution directly); backward: the weight gradient only, as the input needs none.
    truths["short lists"] = {"aten.convolution": 2 * short_conv, "aten.convolution_backward": short_conv}
    big = expected["big"]
    (mm_m, mm_k), (_, mm_n) = big["mm"]
    (bmm_b, bmm_m, bmm_k), (_, _, bmm_n) = big["bmm"]
    (b_n, _, b_h, b_w), (b_out, b_in, b_kh, b_kw) = big["convolution"]["input"], big["convolution"]["weight"]
    truths["past 2**53"] = {
        "aten.mm": 2 * mm_m * mm_k * mm_n,
        "aten.bmm": 2 * bmm_b * bmm_m * bmm_k * bmm_n,
        "aten.convolution": 2 * b_n * b_out * _conv_out(b_h, b_kh, 1, 0, 1) * _conv_out(b_w, b_kw, 1, 0, 1) * b_in * b_kh * b_kw,
    }
    return _check_parts(actual, expected, ("sizes", "added", "convolution", "short", "big"), truths)


def ops_outside_table_flops(actual: Any, expected: Any) -> tuple[bool, str]:
    """mv, dot, vdot, addmv, addbmm, the in-place addmm_ and baddbmm_, the custom operators opcount::mm and
    opcount::bmm, and the fused attention ops are not in the table: the one mm is all."""
    if not isinstance(actual, dict) or actual.get("mm") != expected["mm"]:
        return False, "the probe's input 'mm' differs from the reference's"
    (m, k), (_, n) = expected["mm"]
    return _check_parts({"calls": actual}, {"calls": expected}, (), {"calls": {"aten.mm": 2 * m * k * n}})


def empty_sizes_flops(actual: Any, expected: Any) -> tuple[bool, str]:
    """Each case ran alone in a counter: every table operator it ran has an entry of 0 FLOPs (sizes of 0 multiply
    to 0), and nothing raised. The counts are the reference's."""
    cases = actual.get("cases") if isinstance(actual, dict) else None
    if not isinstance(cases, dict) or set(cases) != set(expected["cases"]):
        return False, "the probe's cases differ from the reference's"
    for name, want in expected["cases"].items():
        got = cases[name]
        if not isinstance(got, dict) or got.get("ops") != want["ops"]:
            return False, f"{name}: the probe's input differs from the reference's"
        if got.get("error") is not None:
            return False, f"{name}: the call raised {got['error']} under the counter"
        ok, message = _compare_counted(got.get("results"), dict.fromkeys(want["ops"], 0), name)
        if not ok:
            return False, message
        if got["results"].get("counts") != want["results"]["counts"]:
            return False, f"{name}: counts are {got['results'].get('counts')}, expected {want['results']['counts']}"
    return True, ""


def zero_cost_backward_flops(actual: Any, expected: Any) -> tuple[bool, str]:
    """Every case is one convolution_backward call whose mask requests neither the input nor the weight gradient:
    an entry of 0 FLOPs."""
    cases = actual.get("cases") if isinstance(actual, dict) else None
    if not isinstance(cases, dict) or set(cases) != set(expected["cases"]):
        return False, "the probe's cases differ from the reference's"
    return _check_parts(cases, expected["cases"], (), {case: {"aten.convolution_backward": 0} for case in expected["cases"]})


def grouped_conv_flops(actual: Any, expected: Any) -> tuple[bool, str]:
    """Each grouped layer: F = 2 * outputs * (cin/groups) * kh * kw forward, and 2 F backward (the input needs a
    gradient, so every layer asks for the input and the weight gradients). The direct call: one F."""
    size, batch = list(expected["size"]), expected["batch"]
    forward = 0
    for layer in expected["layers"]:
        pairs = zip(size, layer["kernel"], layer["stride"], layer["padding"], layer["dilation"], strict=True)
        size = [_conv_out(side, kernel, stride, padding, dilation) for side, kernel, stride, padding, dilation in pairs]
        per_group_in = layer["cin"] // layer["groups"]
        forward += 2 * batch * layer["cout"] * size[0] * size[1] * per_group_in * layer["kernel"][0] * layer["kernel"][1]
    direct = expected["direct"]
    (d_n, d_in, d_h, d_w), (d_out, _, d_kh, d_kw) = direct["input"], direct["weight"]
    s, p, dl = direct["stride"], direct["padding"], direct["dilation"]
    outputs = _conv_out(d_h, d_kh, s, p, dl) * _conv_out(d_w, d_kw, s, p, dl)
    called = 2 * d_n * d_out * outputs * (d_in // direct["groups"]) * d_kh * d_kw
    return _check_parts(
        actual,
        expected,
        ("layers", "batch", "size", "direct"),
        {
            "forward": {"aten.convolution": forward},
            "backward": {"aten.convolution_backward": 2 * forward},
            "called directly": {"aten.convolution": called},
        },
    )
