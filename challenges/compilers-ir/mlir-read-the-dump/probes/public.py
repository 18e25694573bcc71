"""Public probes for mlir-read-the-dump: what Run shows.

One program, a matmul with a bias and a ReLU, compiled once by iree-compile
(the first probe that needs it compiles it, the others reuse the dumps), and
the four questions asked about its dumps. The hidden probes ask them about
other programs.
"""

from typing import Any

from probe_common import dispatch_case, matmul_case, tiles_case, vector_case
from probekit import probe

# ---------------------------------------------------------------- the program

MATMUL_BIAS_RELU = """
func.func @main(%a: tensor<64x128xf32>, %b: tensor<128x256xf32>, %bias: tensor<256xf32>) -> tensor<64x256xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<64x256xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<64x256xf32>) -> tensor<64x256xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<64x128xf32>, tensor<128x256xf32>)
                      outs(%acc : tensor<64x256xf32>) -> tensor<64x256xf32>
  %out = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%mm, %bias : tensor<64x256xf32>, tensor<256xf32>) outs(%empty : tensor<64x256xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %sum = arith.addf %x, %y : f32
    %relu = arith.maximumf %sum, %zero : f32
    linalg.yield %relu : f32
  } -> tensor<64x256xf32>
  return %out : tensor<64x256xf32>
}
"""


# ---------------------------------------------------------------- probes


@probe(category="matmul", check="matmul_matches", hints=["walk-ops", "last-one-gone"])
def matmul_bias_relu_lowered(solution: Any) -> Any:
    """matmul_lowered on a 64x128x256 matmul + bias + ReLU."""
    return matmul_case(solution, MATMUL_BIAS_RELU)


@probe(category="dispatch", check="dispatches_match", hints=["flow-phase"])
def matmul_bias_relu_dispatches(solution: Any) -> Any:
    """dispatch_count on a 64x128x256 matmul + bias + ReLU."""
    return dispatch_case(solution, MATMUL_BIAS_RELU)


@probe(category="vector", check="vector_matches", hints=["walk-ops", "text-is-not-ir"])
def matmul_bias_relu_vector(solution: Any) -> Any:
    """first_vector_pass on a 64x128x256 matmul + bias + ReLU."""
    return vector_case(solution, MATMUL_BIAS_RELU)


@probe(category="tiles", check="tiles_match", hints=["root-op", "config-levels"])
def matmul_bias_relu_tiles(solution: Any) -> Any:
    """tile_sizes on a 64x128x256 matmul + bias + ReLU."""
    return tiles_case(solution, MATMUL_BIAS_RELU)
