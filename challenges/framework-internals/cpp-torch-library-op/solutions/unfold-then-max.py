"""Correct alternative: the C++ kernel composes ATen ops (unfold + max).

x.unfold(-1, window, stride) is a strided view of shape (..., W, window) that
never reaches past the last window; at::max over its last dimension gives each
window's maximum with NaN propagation and the first index of the maximum, and
adding j*stride turns the within-window index into a row position. Outputs are
made contiguous (and are new tensors: max allocates them). The fake kernel
uses x.new_empty.
"""

from __future__ import annotations

import os

import torch
from torch.utils.cpp_extension import load_inline

BUILD_DIR = "/tmp/interview_sliding_window_max"

CPP_SOURCE = r"""
#include <ATen/ATen.h>
#include <torch/library.h>

#include <tuple>

namespace {

std::tuple<at::Tensor, at::Tensor> sliding_window_max_cpu(const at::Tensor& x, int64_t window, int64_t stride) {
  TORCH_CHECK(x.dim() >= 1, "sliding_window_max: x must have a dimension");
  TORCH_CHECK(x.scalar_type() == at::kFloat || x.scalar_type() == at::kDouble ||
              x.scalar_type() == at::kBFloat16 || x.scalar_type() == at::kHalf,
              "sliding_window_max: unsupported dtype ", x.scalar_type());
  const int64_t L = x.size(-1);
  TORCH_CHECK(window >= 1 && window <= L, "sliding_window_max: bad window ", window);
  TORCH_CHECK(stride >= 1, "sliding_window_max: bad stride ", stride);
  const int64_t W = (L - window) / stride + 1;
  auto windows = x.unfold(-1, window, stride);           // (..., W, window)
  auto [values, local] = at::max(windows, -1);           // first index of the max, NaN wins
  auto offsets = at::arange(W, x.options().dtype(at::kLong)).mul_(stride);
  at::Tensor indices = (local + offsets).contiguous();
  return std::make_tuple(values.contiguous(), indices);
}

}  // namespace

TORCH_LIBRARY(interview, m) {
  m.def("sliding_window_max(Tensor x, int window, int stride=1) -> (Tensor, Tensor)");
}

TORCH_LIBRARY_IMPL(interview, CPU, m) {
  m.impl("sliding_window_max", &sliding_window_max_cpu);
}
"""

os.environ["CXX"] = "g++"
os.makedirs(BUILD_DIR, exist_ok=True)
load_inline(
    name="interview_sliding_window_max",
    cpp_sources=CPP_SOURCE,
    is_python_module=False,
    build_directory=BUILD_DIR,
    no_implicit_headers=True,
)


@torch.library.register_fake("interview::sliding_window_max")
def _(x, window, stride=1):
    torch._check(x.dim() >= 1, lambda: "x must have a dimension")
    torch._check(window >= 1, lambda: "window must be >= 1")
    torch._check(window <= x.shape[-1], lambda: "window must be <= L")
    torch._check(stride >= 1, lambda: "stride must be >= 1")
    n = (x.shape[-1] - window) // stride + 1
    return x.new_empty((*x.shape[:-1], n)), x.new_empty((*x.shape[:-1], n), dtype=torch.int64)
