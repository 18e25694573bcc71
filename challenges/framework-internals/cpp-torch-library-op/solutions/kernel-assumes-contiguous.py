"""Wrong: the kernel indexes x's data as if it were dense and row-major, whatever its strides."""

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
#include <torch/library.h>

#include <cmath>
#include <tuple>

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

  const at::Tensor& input = x;
  std::vector<int64_t> out_shape = x.sizes().vec();
  out_shape.back() = out_len;
  at::Tensor values = at::empty(out_shape, x.options());
  at::Tensor indices = at::empty(out_shape, x.options().dtype(at::kLong));
  const int64_t rows = input.numel() / length;

  AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, x.scalar_type(), "sliding_window_max", [&] {
    // Compare bfloat16/float16 in float, float and double in themselves: a
    // float comparison would call distinct doubles equal.
    using acc_t = at::opmath_type<scalar_t>;
    const scalar_t* in = input.const_data_ptr<scalar_t>();
    scalar_t* out_values = values.mutable_data_ptr<scalar_t>();
    int64_t* out_indices = indices.mutable_data_ptr<int64_t>();
    for (int64_t r = 0; r < rows; ++r) {
      const scalar_t* row = in + r * length;
      for (int64_t j = 0; j < out_len; ++j) {
        const int64_t start = j * stride;
        int64_t best = start;
        for (int64_t k = start + 1; k < start + window; ++k) {
          if (better(static_cast<acc_t>(row[k]), static_cast<acc_t>(row[best]))) best = k;
        }
        out_values[r * out_len + j] = row[best];
        out_indices[r * out_len + j] = best;
      }
    }
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
    # new_empty gives contiguous tensors on x's device, as the kernel returns.
    return x.new_empty(shape), x.new_empty(shape, dtype=torch.long)
