"""In torch, float64 throughout: the default dtype is float64 while the call runs, and put back as it was found.

Each stage is measured batch by batch against the reference's outputs, kept as float64 tensors; NumPy's and
torch's settings are changed only inside context managers or a try/finally, so the caller's process is left as
it was.
"""

import math

import numpy as np
import torch


def _tensor(a):
    # a fresh C-ordered float64 copy: any layout, negative strides included, and never the stage's own array
    return torch.tensor(np.array(a, dtype=np.float64, order="C"))


def find_drifting_stage(stages, inputs):
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        with torch.no_grad(), np.errstate(all="ignore"):
            it = iter(stages)
            reference = next(it)
            want = [[_tensor(o) for o in reference.run(*batch)] for batch in inputs]
            errors, first = {}, None
            for stage in it:
                max_abs = ratio = 0.0
                for batch, refs in zip(inputs, want, strict=True):
                    for y, r in zip(stage.run(*batch), refs, strict=True):
                        y = _tensor(y)
                        if not bool(torch.isfinite(y).all()):
                            max_abs = ratio = math.inf
                            continue
                        if y.numel() == 0:
                            continue
                        d = (y - r).abs()
                        max_abs = max(max_abs, float(d.max()))
                        ratio = max(ratio, float((d / (stage.atol + stage.rtol * r.abs())).max()))
                errors[stage.name] = {"max_abs": max_abs, "ratio": ratio}
                if first is None and ratio > 1.0:
                    first = stage.name
            return {"first": first, "errors": errors}
    finally:
        torch.set_default_dtype(previous)
