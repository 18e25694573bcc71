"""``interview::sliding_window_max``: a C++ operator with a Python fake kernel.

Importing this module must build and load the C++ library (which registers
the schema and the CPU kernel with the dispatcher) and then register the
fake kernel. The build plumbing is here; the kernel and the fake kernel are
yours to write.
"""

from __future__ import annotations

import os

import torch  # noqa: F401 - you will need it
from torch.utils.cpp_extension import load_inline

# Under /tmp, the only writable place in the sandbox. A fixed folder lets
# every probe after the first reuse the first build.
BUILD_DIR = "/tmp/interview_sliding_window_max"

CPP_SOURCE = r"""
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <torch/library.h>

#include <tuple>

namespace {

std::tuple<at::Tensor, at::Tensor> sliding_window_max_cpu(const at::Tensor& x, int64_t window, int64_t stride) {
  // TODO: check the arguments with TORCH_CHECK, allocate values (x's dtype)
  // and indices (int64) of shape x.shape[:-1] + (W,), and fill them for
  // every dtype with AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, ...).
  TORCH_CHECK(false, "sliding_window_max: not implemented yet");
}

}  // namespace

TORCH_LIBRARY(interview, m) {
  m.def("sliding_window_max(Tensor x, int window, int stride=1) -> (Tensor, Tensor)");
}

TORCH_LIBRARY_IMPL(interview, CPU, m) {
  m.impl("sliding_window_max", &sliding_window_max_cpu);
}
"""

# cpp_extension compiles with $CXX, default "c++": a link through
# /etc/alternatives, which the sandbox user cannot read. g++ itself works.
os.environ["CXX"] = "g++"
os.makedirs(BUILD_DIR, exist_ok=True)
load_inline(
    name="interview_sliding_window_max",
    cpp_sources=CPP_SOURCE,
    is_python_module=False,
    build_directory=BUILD_DIR,
    no_implicit_headers=True,
)

# TODO: register the fake kernel:
# @torch.library.register_fake("interview::sliding_window_max")
# def _(x, window, stride=1): ...
