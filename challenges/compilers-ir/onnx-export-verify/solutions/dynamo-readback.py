"""RIGHT (alternative): dynamo exporter, declarations checked by running the file.

export: torch.onnx.export(dynamo=True) with one torch.export.Dim for batch and
one for sequence shared by every input, on a copy of the example resized
(cyclically, so a padding mask stays a mask) to batch 2 / sequence 3, which
avoids torch.export's 0/1 specialisation and an accidental batch == sequence
equality. Weights are saved inside the file (external_data=False), opset 18.
The output declarations are then checked against onnxruntime's own outputs at
two sizes: a declared number that is not true at both sizes, or a name that
does not follow one axis, is replaced by an unsized dim.

verify: a fresh session per call; the comparison is done with torch in
float64, NaN differences mapped to +inf for both maxima; count and shape of
every output must match exactly.
"""

from __future__ import annotations

import math
import os
import tempfile
import warnings

import onnx
import onnxruntime as ort
import torch

SIZES = ((2, 3), (5, 7))


def _cycle(t: torch.Tensor, b: int, s: int) -> torch.Tensor:
    t = t.index_select(0, torch.arange(b) % t.shape[0])
    return t.index_select(1, torch.arange(s) % t.shape[1]).contiguous()


def _outs(out):
    if isinstance(out, torch.Tensor):
        return [out]
    return [t for o in out for t in _outs(o)]


def export(model: torch.nn.Module, example: tuple[torch.Tensor, ...], path: str) -> None:
    model.eval()
    ex = tuple(_cycle(t, 2, 3) for t in example)
    batch = torch.export.Dim("batch")
    seq = torch.export.Dim("sequence")
    dyn = tuple({0: batch, 1: seq} for _ in ex)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prog = torch.onnx.export(model, ex, dynamo=True, dynamic_shapes=dyn, opset_version=18, verbose=False)
    prog.save(path, external_data=False)
    _fix_declarations(example, path)


def _fix_declarations(example, path):
    proto = onnx.load(path)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    runs = []
    for b, s in SIZES:
        feed = {a.name: _cycle(t, b, s).numpy() for a, t in zip(sess.get_inputs(), example)}
        runs.append([o.shape for o in sess.run(None, feed)])
    in_names = {}
    for v in proto.graph.input:
        d = v.type.tensor_type.shape.dim
        in_names[d[0].dim_param] = 0
        in_names[d[1].dim_param] = 1
    for k, v in enumerate(proto.graph.output):
        dims = v.type.tensor_type.shape.dim
        shapes = [r[k] for r in runs]
        if len(dims) != len(shapes[0]):
            del dims[:]
            for _ in shapes[0]:
                dims.add()
        for i, dim in enumerate(dims):
            got = [sh[i] for sh in shapes]
            if dim.HasField("dim_value"):
                ok = all(g == dim.dim_value for g in got)
            elif dim.HasField("dim_param"):
                axis = in_names.get(dim.dim_param)
                ok = axis is not None and all(g == SIZES[j][axis] for j, g in enumerate(got))
            else:
                ok = True
            if not ok:
                dim.Clear()
    onnx.save(proto, path)


def verify(model: torch.nn.Module, path: str, inputs: tuple[torch.Tensor, ...]) -> dict[str, float]:
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    args = sess.get_inputs()
    if len(args) != len(inputs):
        raise ValueError("input count")
    got = sess.run(None, {a.name: t.detach().cpu().contiguous().numpy() for a, t in zip(args, inputs)})
    model.eval()
    with torch.no_grad():
        want = _outs(model(*inputs))
    if len(got) != len(want):
        raise ValueError(f"{len(got)} ONNX outputs, {len(want)} model outputs")
    abs_m = rel_m = 0.0
    for g, w in zip(got, want):
        g = torch.from_numpy(g).to(torch.float64)
        w = w.to(torch.float64)
        if tuple(g.shape) != tuple(w.shape):
            raise ValueError(f"shape {tuple(g.shape)} vs {tuple(w.shape)}")
        if g.numel() == 0:
            continue
        d = (g - w).abs()
        d = torch.where(torch.isnan(d), torch.full_like(d, math.inf), d)
        r = d / (w.abs() + 1e-7)
        r = torch.where(torch.isnan(r), torch.full_like(r, math.inf), r)
        abs_m = max(abs_m, d.max().item())
        rel_m = max(rel_m, r.max().item())
    return {"max_abs": float(abs_m), "max_rel": float(rel_m)}
