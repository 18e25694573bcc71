"""Correct alternative: an O(L) monotonic-deque kernel that walks x's strides.

Instead of copying x to a contiguous buffer and scanning each window, the C++
kernel keeps, per row, a deque of candidate positions whose keys decrease
strictly from front to back (NaN is the largest key; equal keys are kept, so
the front is always the earliest maximum). Rows are located by decomposing the
row number over x's leading sizes and strides, so any layout (transposed,
sliced, broadcast with stride 0) is read in place and the kernel never reads
past the last position a window reaches. The fake kernel uses torch.empty with
x's device.
"""

from __future__ import annotations

import os

import torch
from torch.utils.cpp_extension import load_inline

BUILD_DIR = "/tmp/interview_sliding_window_max"

CPP_SOURCE = r"""
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <torch/library.h>

#include <cmath>
#include <tuple>
#include <vector>

namespace {

template <typename T>
inline bool gt(T a, T b) {  // strict "a is a larger maximum than b", NaN on top
  const bool na = a != a, nb = b != b;
  if (na || nb) return na && !nb;
  return a > b;
}

std::tuple<at::Tensor, at::Tensor> swm(const at::Tensor& x, int64_t window, int64_t stride) {
  TORCH_CHECK(x.dim() >= 1, "sliding_window_max: x needs a dimension");
  const int64_t L = x.size(-1);
  TORCH_CHECK(window >= 1, "sliding_window_max: window < 1");
  TORCH_CHECK(window <= L, "sliding_window_max: window > L");
  TORCH_CHECK(stride >= 1, "sliding_window_max: stride < 1");
  const int64_t W = (L - window) / stride + 1;
  auto shape = x.sizes().vec();
  shape.back() = W;
  at::Tensor values = at::empty(shape, x.options());
  at::Tensor indices = at::empty(shape, x.options().dtype(at::kLong));
  const int64_t nd = x.dim();
  const auto sizes = x.sizes();
  const auto strides = x.strides();
  int64_t rows = 1;
  for (int64_t d = 0; d + 1 < nd; ++d) rows *= sizes[d];
  const int64_t cs = strides[nd - 1];
  const int64_t last = (W - 1) * stride + window;  // positions [0, last) are read

  AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, x.scalar_type(), "sliding_window_max", [&] {
    const scalar_t* base = x.const_data_ptr<scalar_t>();
    scalar_t* ov = values.mutable_data_ptr<scalar_t>();
    int64_t* oi = indices.mutable_data_ptr<int64_t>();
    std::vector<int64_t> dq(static_cast<size_t>(L));
    for (int64_t r = 0; r < rows; ++r) {
      int64_t off = 0, rem = r;
      for (int64_t d = nd - 2; d >= 0; --d) {
        off += (rem % sizes[d]) * strides[d];
        rem /= sizes[d];
      }
      const scalar_t* row = base + off;
      int64_t head = 0, tail = 0, j = 0;
      for (int64_t k = 0; k < last; ++k) {
        const scalar_t v = row[k * cs];
        while (tail > head && gt(v, row[dq[tail - 1] * cs])) --tail;
        dq[tail++] = k;
        if (k == j * stride + window - 1) {
          while (dq[head] < j * stride) ++head;
          ov[r * W + j] = row[dq[head] * cs];
          oi[r * W + j] = dq[head];
          ++j;
        }
      }
    }
  });
  return {values, indices};
}

}  // namespace

TORCH_LIBRARY(interview, m) {
  m.def("sliding_window_max(Tensor x, int window, int stride=1) -> (Tensor, Tensor)");
}

TORCH_LIBRARY_IMPL(interview, CPU, m) {
  m.impl("sliding_window_max", &swm);
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
def _fake(x, window, stride=1):
    torch._check(x.ndim >= 1, lambda: "sliding_window_max: x needs a dimension")
    L = x.size(-1)
    torch._check(window >= 1, lambda: "sliding_window_max: window < 1")
    torch._check(window <= L, lambda: "sliding_window_max: window > L")
    torch._check(stride >= 1, lambda: "sliding_window_max: stride < 1")
    shape = list(x.shape[:-1]) + [(L - window) // stride + 1]
    return (torch.empty(shape, dtype=x.dtype, device=x.device),
            torch.empty(shape, dtype=torch.int64, device=x.device))
