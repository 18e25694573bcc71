"""Correct, written differently (owner, red team round 3): the running maximum is kept on the side,
in the compare type, and written out at the end of each window, not read back from the row: it is
replaced only by a strictly better element, so it holds the first maximum's own value (the cast back
to the dtype is exact, the sign of a zero included). Rows come from ``x.reshape(-1, L)`` (a copy only
when the batch dims cannot be merged) and are read through the last dimension's stride, in an
``at::parallel_for`` over rows. The fake kernel is ``torch.empty`` on x's device.
"""

from __future__ import annotations

import os

import torch
from torch.utils.cpp_extension import load_inline

# A fixed folder under /tmp (the only writable place in the sandbox): every
# probe imports this module in a fresh process, and ninja finds the library
# of the first build up to date instead of compiling it again.
BUILD_DIR = "/tmp/interview_sliding_window_max"

CPP_SOURCE = r"""
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <cmath>
#include <tuple>
#include <vector>

namespace {

// a is a better maximum than b: larger, or NaN where b is not. Equal values
// are not better, so the earliest position of the maximum wins.
template <typename T>
inline bool better(T a, T b) {
  if (std::isnan(b)) return false;
  return std::isnan(a) || a > b;
}

std::tuple<at::Tensor, at::Tensor> sliding_window_max_cpu(const at::Tensor& x, int64_t window, int64_t stride) {
  TORCH_CHECK(x.dim() >= 1, "sliding_window_max: x must have at least one dimension");
  TORCH_CHECK(x.is_floating_point(), "sliding_window_max: x must be a float tensor, got ", x.scalar_type());
  const int64_t length = x.size(-1);
  TORCH_CHECK(window >= 1 && window <= length,
              "sliding_window_max: window must be in [1, ", length, "], got ", window);
  TORCH_CHECK(stride >= 1, "sliding_window_max: stride must be positive, got ", stride);
  const int64_t out_len = (length - window) / stride + 1;

  // Rows of the last dimension: reshape merges the batch dims (copying only when it must); the
  // last dimension keeps its stride, which may be anything.
  const at::Tensor rows2d = x.reshape({-1, length});
  const int64_t rows = rows2d.size(0);
  const int64_t row_step = rows2d.stride(0);
  const int64_t step = rows2d.stride(1);
  std::vector<int64_t> out_shape = x.sizes().vec();
  out_shape.back() = out_len;
  at::Tensor values = at::empty(out_shape, x.options());
  at::Tensor indices = at::empty(out_shape, x.options().dtype(at::kLong));

  AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, x.scalar_type(), "sliding_window_max", [&] {
    using acc_t = at::opmath_type<scalar_t>;
    const scalar_t* in = rows2d.const_data_ptr<scalar_t>();
    scalar_t* out_values = values.mutable_data_ptr<scalar_t>();
    int64_t* out_indices = indices.mutable_data_ptr<int64_t>();
    at::parallel_for(0, rows, 1, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const scalar_t* row = in + r * row_step;
        for (int64_t j = 0; j < out_len; ++j) {
          const int64_t start = j * stride;
          acc_t best_value = static_cast<acc_t>(row[start * step]);
          int64_t best = start;
          for (int64_t k = start + 1; k < start + window; ++k) {
            const acc_t v = static_cast<acc_t>(row[k * step]);
            if (better(v, best_value)) {
              best_value = v;
              best = k;
            }
          }
          out_values[r * out_len + j] = static_cast<scalar_t>(best_value);
          out_indices[r * out_len + j] = best;
        }
      }
    });
  });
  return std::make_tuple(values, indices);
}

}  // namespace

TORCH_LIBRARY(interview, m) {
  m.def("sliding_window_max(Tensor x, int window, int stride=1) -> (Tensor, Tensor)");
}

TORCH_LIBRARY_IMPL(interview, CPU, m) {
  m.impl("sliding_window_max", &sliding_window_max_cpu);
}
"""


def _build() -> None:
    # cpp_extension compiles with $CXX, default "c++": a link through
    # /etc/alternatives, which the sandbox user cannot read. g++ itself works.
    os.environ["CXX"] = "g++"
    os.makedirs(BUILD_DIR, exist_ok=True)
    load_inline(
        name="interview_sliding_window_max",
        cpp_sources=CPP_SOURCE,
        is_python_module=False,  # a plain shared library: loading it runs TORCH_LIBRARY
        build_directory=BUILD_DIR,
        no_implicit_headers=True,  # skip torch/extension.h (pybind11, Python.h): a faster build
    )


_build()


@torch.library.register_fake("interview::sliding_window_max")
def _(x: torch.Tensor, window: int, stride: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
    """The outputs' metadata from the inputs' metadata, with the kernel's argument checks."""
    torch._check(x.dim() >= 1, lambda: "sliding_window_max: x must have at least one dimension")
    length = x.shape[-1]
    torch._check(window >= 1, lambda: f"sliding_window_max: window must be positive, got {window}")
    torch._check(window <= length, lambda: f"sliding_window_max: window {window} is longer than {length}")
    torch._check(stride >= 1, lambda: f"sliding_window_max: stride must be positive, got {stride}")
    out_len = (length - window) // stride + 1
    shape = (*x.shape[:-1], out_len)
    values = torch.empty(shape, dtype=x.dtype, device=x.device)
    return values, torch.empty(shape, dtype=torch.long, device=x.device)
