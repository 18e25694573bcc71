# Wrong on purpose (red team round 3, blind): the gate gradient multiplies the scale into each product
# before the row sum, (grad_out * rows * scale).sum(-1): with an infinite scale, a 0 in a looked-up row or
# in the incoming gradient gives 0 * inf = NaN where scale * (row sum) is +-inf.
"""Reference solution: the autograd formula for ``interview::weighted_embedding``.

The operator, its eager kernel and its fake kernel are the starter's,
unchanged. ``setup_context`` saves tensors with ``ctx.save_for_backward``
(so autograd checks them for in-place changes) and only the ones each
needed gradient uses; ``backward`` returns None for the index tensor and the
float, and for every input whose ``ctx.needs_input_grad`` entry is False, so
a frozen table never gets a (V, D) gradient built for it. Repeated indices
accumulate through ``index_add``, and nothing reads tensor values into
Python, so the formula traces under FakeTensor and torch.compile.
"""

from __future__ import annotations

import torch
from torch import Tensor


@torch.library.custom_op("interview::weighted_embedding", mutates_args=(), device_types="cpu")
def weighted_embedding(table: Tensor, indices: Tensor, weights: Tensor, scale: float) -> Tensor:
    """Look rows up in ``table`` and scale each by its weight and by ``scale``.

    Args:
        table: float tensor of shape ``(V, D)``.
        indices: int64 tensor of any shape ``S``, values in ``[0, V)``; repeats allowed.
        weights: tensor of shape ``S``, the dtype of ``table``.
        scale: a Python float.

    Returns:
        ``out`` of shape ``(*S, D)``, a new contiguous tensor, with
        ``out[s, :] = scale * weights[s] * table[indices[s], :]`` for every index ``s`` of ``S``.
    """
    torch._check(table.dim() == 2, lambda: f"weighted_embedding: table must be 2-D, got {table.dim()}-D")
    torch._check(indices.dtype == torch.int64, lambda: f"weighted_embedding: indices must be int64, got {indices.dtype}")
    torch._check(weights.shape == indices.shape, lambda: "weighted_embedding: weights must have the shape of indices")
    torch._check(weights.dtype == table.dtype, lambda: "weighted_embedding: weights must have the dtype of table")
    if indices.numel():
        torch._check(
            0 <= int(indices.min()) and int(indices.max()) < table.shape[0],
            lambda: "weighted_embedding: index out of range",
        )
    # Stands in for a vendor gather kernel: one fused pass, no autograd inside.
    rows = table.index_select(0, indices.reshape(-1)).reshape(*indices.shape, table.shape[1])
    return (rows * (weights.unsqueeze(-1) * scale)).contiguous()


@weighted_embedding.register_fake
def _weighted_embedding_fake(table: Tensor, indices: Tensor, weights: Tensor, scale: float) -> Tensor:
    """Output metadata only: shape ``(*indices.shape, D)``, table's dtype, contiguous."""
    torch._check(table.dim() == 2, lambda: "weighted_embedding: table must be 2-D")
    torch._check(weights.shape == indices.shape, lambda: "weighted_embedding: weights must have the shape of indices")
    return table.new_empty((*indices.shape, table.shape[1]))


# ---------------------------------------------------------------------------
# Your code: the autograd formula for interview::weighted_embedding.
# ---------------------------------------------------------------------------


def setup_context(ctx, inputs, output):
    table, indices, weights, scale = inputs
    needs_table, _, needs_weights = ctx.needs_input_grad[:3]
    ctx.save_for_backward(indices, weights if needs_table else None, table if needs_weights else None)
    ctx.scale = scale
    ctx.num_rows = table.shape[0]


def backward(ctx, grad_out):
    indices, weights, table = ctx.saved_tensors
    grad_table = grad_weights = None
    if ctx.needs_input_grad[0]:
        dim = grad_out.shape[-1]
        rows = (grad_out * (weights.unsqueeze(-1) * ctx.scale)).reshape(-1, dim)
        grad_table = rows.new_zeros((ctx.num_rows, dim)).index_add_(0, indices.reshape(-1), rows)
    if ctx.needs_input_grad[2]:
        gathered = table.index_select(0, indices.reshape(-1)).reshape(grad_out.shape)
        grad_weights = (grad_out * gathered * ctx.scale).sum(-1)
    return grad_table, None, grad_weights, None


torch.library.register_autograd("interview::weighted_embedding", backward, setup_context=setup_context)
