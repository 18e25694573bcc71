"""Hidden probes for mlir-read-the-dump: they make the score.

Each probe compiles a small program written in linalg on tensors with the
real iree-compile (IREE 3.13, llvm-cpu, a generic x86-64 CPU), splits the IR
dumps it prints after every pass, and asks the candidate one of four
questions about them. A program is compiled once per run: the first probe
that needs it compiles it, the later ones read the same dumps from the run's
work folder (the candidate's code could overwrite that file, which would only
falsify its own answers). The answers are compared outside the sandbox with
the reference's (``probes/checks.py``).

The programs and what makes each one worth asking about:

- ``TWO_SAME``: two matmuls of the same shapes. Two dispatches but one
  executable: ``iree-flow-deduplicate-executables`` drops the copy, and with
  it one of the two ``linalg.matmul`` ops, long before codegen.
- ``RESHAPE_ONLY``: a program that only collapses its input's shape. IREE
  turns that into metadata on the host: no dispatch, no executable, no
  vector op, nothing to tile.
- ``PAD_CONV``: a padded convolution. No ``linalg.matmul`` ever; the pad
  becomes a dispatch of its own in ``iree-dispatch-creation-convert-tensor-to-flow``,
  after dispatch regions were formed; the two executables are lowered one
  after the other (vector ops appear, vanish into the LLVM dialect, appear
  again); the conv's root has seven loops.
- ``DATA_TILED``: a matmul compiled with ``--iree-opt-data-tiling``: it
  becomes ``linalg.mmt4d`` when encodings are materialised, and the stream
  phase adds two packing dispatches that were never dispatch regions.
- ``ODD_MATMUL``: a matmul of shapes no vector size divides: loop peeling
  turns one ``linalg.matmul`` into three, and the vectorizer masks (the
  ``vector.yield`` inside ``vector.mask`` is not printed).
- ``TWO_DIFFERENT``: two matmuls of different shapes, so two executables,
  lowered one after the other: the ops the last matmul becomes were already
  seen while the first executable was lowered, then vanished into LLVM.
- ``BATCH_ONLY``: a ``linalg.batch_matmul`` and no ``linalg.matmul``: the
  name is not a pattern to match.
- ``VECTOR_BODY``: an elementwise ``linalg.generic`` whose body is written
  with vector ops, so the program holds vector ops from the first dump on,
  before any vectorization pass (and no such pass changes it).
- ``BRANCHY``: a matmul or a transpose, chosen by an ``scf.if``: the host
  program launches its two dispatches from inside the branches, so the
  ``flow.dispatch`` ops are nested in regions, not in the function's body.
- ``DEAD_MATMUL``: a matmul whose result is never used, beside an
  elementwise add. The first ``canonicalize`` on the host function erases
  it (dump 2), long before dispatch formation, and adds no op name: the
  answer's ``became`` is empty. A candidate who looks for the matmul only
  inside executables, or only from the flow phase on, answers None.
  (Red team round 1.)
- ``CF_BRANCHES``: a host function that branches between blocks with
  ``cf.cond_br``: one branch holds that dead matmul and an add, the other a
  generic whose body is written with vector ops. The dead matmul, the
  vector ops of dump 0 and both ``flow.dispatch`` launches all sit outside
  the function's entry block, so a candidate whose walk visits only the
  first block of each region answers None, a later dump, and 0 launches.
  (Red team round 1.)
- ``SORT``: two ``iree_linalg_ext.sort`` ops, of a matrix along its rows
  and of a vector: the dispatches' roots are not ``linalg`` ops at all. The
  matrix sort's configuration has no ``vector_reduction`` level, the vector
  sort's only a ``distribution = [0]``: a missing level counts as zeros (a
  candidate who reads a missing level as ones, or past its end, fails).
- ``DEAD_THEN_QUANTIZED``: a dead matmul beside a ``linalg.quantized_matmul``
  (zero points 0). ``canonicalize`` erases the dead matmul at dump 2, and
  ``iree-global-opt-quantized-matmul-to-matmul`` then makes a new
  ``linalg.matmul``, which codegen lowers much later: the count of
  ``linalg.matmul`` reaches zero and rises again. A candidate who answers the
  last such transition ("the pass that lowered the last matmul") answers the
  vectorization. (Red team round 2.)
- ``MATMUL_BESIDE_VECTOR_BODY``: a matmul + bias dispatch beside a generic
  whose body is written with vector ops. Vectorizing the matmul creates a
  ``vector.broadcast`` (of the bias) in its function, while the other
  dispatch has held one since dump 0: it is not new to the module. A
  candidate who diffs only what the pass ran on (``dump.op``) lists it in
  ``became``. (Red team round 2.)
- ``TWO_ENTRIES``: two public functions, ``@main`` (an elementwise
  subtraction) and ``@second`` (a ``linalg.quantized_matmul`` and a generic
  whose body is written with vector ops): two host functions, three
  dispatches, three executables. A candidate who counts launches in the
  first host function only answers 1 (red team round 2); one who looks only
  at ``@main``, or who answers None when dump 0 holds no ``linalg.matmul``
  (global optimization makes one), fails the other three questions.
- ``SOFTMAX``: a row softmax, 99 dumps like ``TWO_SAME``, with different
  answers to all four questions: ``called_repeatedly`` calls the four
  functions on both in one process, in new lists, in a list and dumps built
  at the freed ones' ids, and in one list refilled in place, so a cache kept
  between calls and keyed on the list's id or length, or on its dumps' ids,
  answers from the other program. (Red team round 2: a cache by
  ``(id(dumps), len(dumps))`` scored 100 while every probe made one call.)
- ``INITIALIZER``: a global computed by a ``util.initializer`` (a matmul
  whose input sits behind ``util.optimization_barrier``, so const-eval
  leaves it alone, and a generic whose body is written with vector ops),
  read by ``@main``, which also holds a dead matmul. The initializer is not
  a function: a candidate who walks only the bodies of functions answers the
  dead matmul's erasure at dump 2 instead of the initializer's matmul
  lowered in codegen, misses its launch, and answers a codegen dump instead
  of dump 0 for the vector ops (red team round 3: it scored 100).
- ``OTHER_FLAGS``: ``DATA_TILED``'s source compiled with no extra flag,
  with data tiling, and with ``--iree-llvmcpu-disable-vector-peeling`` (as
  many dumps as the first, other answers): ``same_source_other_flags`` calls
  the four functions on each, so a cache keyed on the first dump (the
  imported program), alone or with the length, answers from another compile,
  and a function that reorders the list it is given spoils the next call's
  (red team round 3: a memo keyed on dump 0 scored 100).
"""

import gc
from typing import Any

from probe_common import FUNCTIONS, Dump, answer_of, compile_dumps, dispatch_case, matmul_case, tiles_case, vector_case
from probekit import probe

# ---------------------------------------------------------------- the programs

TWO_SAME = """
func.func @main(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %c: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<64x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<64x64xf32>) -> tensor<64x64xf32>
  %ab = linalg.matmul ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<64x64xf32>) -> tensor<64x64xf32>
  %abc = linalg.matmul ins(%ab, %c : tensor<64x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %abc : tensor<64x64xf32>
}
"""

RESHAPE_ONLY = """
func.func @main(%x: tensor<4x6x8xf32>) -> tensor<24x8xf32> {
  %flat = tensor.collapse_shape %x [[0, 1], [2]] : tensor<4x6x8xf32> into tensor<24x8xf32>
  return %flat : tensor<24x8xf32>
}
"""

PAD_CONV = """
func.func @main(%x: tensor<1x14x14x8xf32>, %w: tensor<3x3x8x16xf32>) -> tensor<1x14x14x16xf32> {
  %zero = arith.constant 0.0 : f32
  %padded = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%n: index, %h: index, %w_: index, %c: index):
    tensor.yield %zero : f32
  } : tensor<1x14x14x8xf32> to tensor<1x16x16x8xf32>
  %empty = tensor.empty() : tensor<1x14x14x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x14x14x16xf32>) -> tensor<1x14x14x16xf32>
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%padded, %w : tensor<1x16x16x8xf32>, tensor<3x3x8x16xf32>) outs(%acc : tensor<1x14x14x16xf32>) -> tensor<1x14x14x16xf32>
  return %y : tensor<1x14x14x16xf32>
}
"""

DATA_TILED = """
func.func @main(%a: tensor<32x64xf32>, %b: tensor<64x128xf32>) -> tensor<32x128xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<32x128xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<32x128xf32>) -> tensor<32x128xf32>
  %c = linalg.matmul ins(%a, %b : tensor<32x64xf32>, tensor<64x128xf32>) outs(%acc : tensor<32x128xf32>) -> tensor<32x128xf32>
  return %c : tensor<32x128xf32>
}
"""
DATA_TILING = ("--iree-opt-data-tiling",)

ODD_MATMUL = """
func.func @main(%a: tensor<33x100xf32>, %b: tensor<100x17xf32>) -> tensor<33x17xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<33x17xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<33x17xf32>) -> tensor<33x17xf32>
  %c = linalg.matmul ins(%a, %b : tensor<33x100xf32>, tensor<100x17xf32>) outs(%acc : tensor<33x17xf32>) -> tensor<33x17xf32>
  return %c : tensor<33x17xf32>
}
"""

TWO_DIFFERENT = """
func.func @main(%a: tensor<8x16xf32>, %b: tensor<16x8xf32>, %c: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8x8xf32>
  %acc1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %ab = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x8xf32>) outs(%acc1 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %e2 = tensor.empty() : tensor<8x4xf32>
  %acc2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %r = linalg.matmul ins(%ab, %c : tensor<8x8xf32>, tensor<8x4xf32>) outs(%acc2 : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}
"""

BATCH_ONLY = """
func.func @main(%a: tensor<4x16x32xf32>, %b: tensor<4x32x8xf32>) -> tensor<4x16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x16x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  %c = linalg.batch_matmul ins(%a, %b : tensor<4x16x32xf32>, tensor<4x32x8xf32>) outs(%acc : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  return %c : tensor<4x16x8xf32>
}
"""

VECTOR_BODY = """
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = vector.broadcast %a : f32 to vector<2xf32>
    %s = vector.reduction <add>, %v : vector<2xf32> into f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
"""

BRANCHY = """
func.func @main(%flag: i1, %a: tensor<32x32xf32>, %b: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<32x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<32x32xf32>) -> tensor<32x32xf32>
  %r = scf.if %flag -> tensor<32x32xf32> {
    %ab = linalg.matmul ins(%a, %b : tensor<32x32xf32>, tensor<32x32xf32>) outs(%acc : tensor<32x32xf32>) -> tensor<32x32xf32>
    scf.yield %ab : tensor<32x32xf32>
  } else {
    %t = linalg.transpose ins(%a : tensor<32x32xf32>) outs(%empty : tensor<32x32xf32>) permutation = [1, 0]
    scf.yield %t : tensor<32x32xf32>
  }
  return %r : tensor<32x32xf32>
}
"""

SORT = """
func.func @main(%x: tensor<4x64xf32>, %y: tensor<64xf32>) -> (tensor<4x64xf32>, tensor<64xf32>) {
  %r = iree_linalg_ext.sort dimension(1) outs(%x : tensor<4x64xf32>) {
  ^bb0(%a: f32, %b: f32):
    %c = arith.cmpf olt, %a, %b : f32
    iree_linalg_ext.yield %c : i1
  } -> tensor<4x64xf32>
  %s = iree_linalg_ext.sort dimension(0) outs(%y : tensor<64xf32>) {
  ^bb0(%a: f32, %b: f32):
    %c = arith.cmpf olt, %a, %b : f32
    iree_linalg_ext.yield %c : i1
  } -> tensor<64xf32>
  return %r, %s : tensor<4x64xf32>, tensor<64xf32>
}
"""


DEAD_MATMUL = """
func.func @main(%a: tensor<32x32xf32>, %b: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<32x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<32x32xf32>) -> tensor<32x32xf32>
  %unused = linalg.matmul ins(%a, %b : tensor<32x32xf32>, tensor<32x32xf32>) outs(%acc : tensor<32x32xf32>) -> tensor<32x32xf32>
  %sum = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<32x32xf32>, tensor<32x32xf32>) outs(%empty : tensor<32x32xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<32x32xf32>
  return %sum : tensor<32x32xf32>
}
"""

CF_BRANCHES = """
func.func @main(%flag: i1, %a: tensor<32x32xf32>, %b: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<32x32xf32>
  cf.cond_br %flag, ^add, ^reduce
^add:
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<32x32xf32>) -> tensor<32x32xf32>
  %unused = linalg.matmul ins(%a, %b : tensor<32x32xf32>, tensor<32x32xf32>) outs(%acc : tensor<32x32xf32>) -> tensor<32x32xf32>
  %sum = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<32x32xf32>, tensor<32x32xf32>) outs(%empty : tensor<32x32xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<32x32xf32>
  cf.br ^done(%sum : tensor<32x32xf32>)
^reduce:
  %twice = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<32x32xf32>) outs(%empty : tensor<32x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    %v = vector.broadcast %x : f32 to vector<2xf32>
    %s = vector.reduction <add>, %v : vector<2xf32> into f32
    linalg.yield %s : f32
  } -> tensor<32x32xf32>
  cf.br ^done(%twice : tensor<32x32xf32>)
^done(%r: tensor<32x32xf32>):
  return %r : tensor<32x32xf32>
}
"""



DEAD_THEN_QUANTIZED = """
func.func @main(%a: tensor<16x32xi8>, %b: tensor<32x8xi8>, %c: tensor<32x32xf32>) -> tensor<16x8xi32> {
  %fzero = arith.constant 0.0 : f32
  %fempty = tensor.empty() : tensor<32x32xf32>
  %facc = linalg.fill ins(%fzero : f32) outs(%fempty : tensor<32x32xf32>) -> tensor<32x32xf32>
  %unused = linalg.matmul ins(%c, %c : tensor<32x32xf32>, tensor<32x32xf32>) outs(%facc : tensor<32x32xf32>) -> tensor<32x32xf32>
  %zero = arith.constant 0 : i32
  %empty = tensor.empty() : tensor<16x8xi32>
  %acc = linalg.fill ins(%zero : i32) outs(%empty : tensor<16x8xi32>) -> tensor<16x8xi32>
  %q = linalg.quantized_matmul ins(%a, %b, %zero, %zero : tensor<16x32xi8>, tensor<32x8xi8>, i32, i32)
      outs(%acc : tensor<16x8xi32>) -> tensor<16x8xi32>
  return %q : tensor<16x8xi32>
}
"""

MATMUL_BESIDE_VECTOR_BODY = """
func.func @main(%a: tensor<32x64xf32>, %b: tensor<64x32xf32>, %bias: tensor<32xf32>, %x: tensor<16x8xf32>) -> (tensor<32x32xf32>, tensor<16x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<32x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<32x32xf32>) -> tensor<32x32xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<32x64xf32>, tensor<64x32xf32>) outs(%acc : tensor<32x32xf32>) -> tensor<32x32xf32>
  %biased = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%mm, %bias : tensor<32x32xf32>, tensor<32xf32>) outs(%empty : tensor<32x32xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<32x32xf32>
  %e = tensor.empty() : tensor<16x8xf32>
  %v = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<16x8xf32>) outs(%e : tensor<16x8xf32>) {
  ^bb0(%w: f32, %o: f32):
    %bw = vector.broadcast %w : f32 to vector<4xf32>
    %sq = arith.mulf %bw, %bw : vector<4xf32>
    %r = vector.reduction <add>, %sq : vector<4xf32> into f32
    linalg.yield %r : f32
  } -> tensor<16x8xf32>
  return %biased, %v : tensor<32x32xf32>, tensor<16x8xf32>
}
"""

TWO_ENTRIES = """
func.func @main(%a: tensor<100x37xf32>, %b: tensor<100x37xf32>) -> tensor<100x37xf32> {
  %empty = tensor.empty() : tensor<100x37xf32>
  %d = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<100x37xf32>, tensor<100x37xf32>) outs(%empty : tensor<100x37xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.subf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<100x37xf32>
  return %d : tensor<100x37xf32>
}

func.func @second(%a: tensor<16x32xi8>, %b: tensor<32x8xi8>, %x: tensor<16x8xf32>) -> (tensor<16x8xi32>, tensor<16x8xf32>) {
  %zero = arith.constant 0 : i32
  %empty = tensor.empty() : tensor<16x8xi32>
  %acc = linalg.fill ins(%zero : i32) outs(%empty : tensor<16x8xi32>) -> tensor<16x8xi32>
  %q = linalg.quantized_matmul ins(%a, %b, %zero, %zero : tensor<16x32xi8>, tensor<32x8xi8>, i32, i32)
      outs(%acc : tensor<16x8xi32>) -> tensor<16x8xi32>
  %e = tensor.empty() : tensor<16x8xf32>
  %v = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<16x8xf32>) outs(%e : tensor<16x8xf32>) {
  ^bb0(%w: f32, %o: f32):
    %bw = vector.broadcast %w : f32 to vector<4xf32>
    %sq = arith.mulf %bw, %bw : vector<4xf32>
    %r = vector.reduction <add>, %sq : vector<4xf32> into f32
    linalg.yield %r : f32
  } -> tensor<16x8xf32>
  return %q, %v : tensor<16x8xi32>, tensor<16x8xf32>
}
"""

SOFTMAX = """
func.func @main(%x: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %empty = tensor.empty() : tensor<16x32xf32>
  %s = linalg.softmax dimension(1) ins(%x : tensor<16x32xf32>) outs(%empty : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %s : tensor<16x32xf32>
}
"""

INITIALIZER = """
util.global private @w : tensor<16x16xf32>
util.initializer {
  %zero = arith.constant 0.0 : f32
  %a = arith.constant dense<2.0> : tensor<16x16xf32>
  %b = util.optimization_barrier %a : tensor<16x16xf32>
  %e = tensor.empty() : tensor<16x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %m = linalg.matmul ins(%b, %b : tensor<16x16xf32>, tensor<16x16xf32>) outs(%acc : tensor<16x16xf32>) -> tensor<16x16xf32>
  %v = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<16x16xf32>) outs(%e : tensor<16x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %bx = vector.broadcast %x : f32 to vector<4xf32>
    %s = vector.reduction <add>, %bx : vector<4xf32> into f32
    linalg.yield %s : f32
  } -> tensor<16x16xf32>
  util.global.store %v, @w : tensor<16x16xf32>
  util.return
}
func.func @main(%a: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %w = util.global.load @w : tensor<16x16xf32>
  %e = tensor.empty() : tensor<16x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %unused = linalg.matmul ins(%a, %a : tensor<16x16xf32>, tensor<16x16xf32>) outs(%acc : tensor<16x16xf32>) -> tensor<16x16xf32>
  %r = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%a, %w : tensor<16x16xf32>, tensor<16x16xf32>) outs(%e : tensor<16x16xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<16x16xf32>
  return %r : tensor<16x16xf32>
}
"""

#: DATA_TILED's source compiled three ways: the imported program (dump 0) is the same, the dumps after it are not.
OTHER_FLAGS = ((), DATA_TILING, ("--iree-llvmcpu-disable-vector-peeling",))

# ---------------------------------------------------------------- matmul


@probe(category="matmul", check="matmul_matches", hints=["last-one-gone", "walk-ops"])
def two_same_matmuls_lowered(solution: Any) -> Any:
    """matmul_lowered on two matmuls of the same shapes."""
    return matmul_case(solution, TWO_SAME)


@probe(category="matmul", check="matmul_matches", hints=["last-one-gone"])
def padded_conv_lowered(solution: Any) -> Any:
    """matmul_lowered on a padded convolution."""
    return matmul_case(solution, PAD_CONV)


@probe(category="matmul", check="matmul_matches", hints=["last-one-gone", "walk-ops"])
def data_tiled_matmul_lowered(solution: Any) -> Any:
    """matmul_lowered on a matmul compiled with data tiling."""
    return matmul_case(solution, DATA_TILED, DATA_TILING)


@probe(category="matmul", check="matmul_matches", hints=["text-is-not-ir", "walk-ops"])
def odd_matmul_lowered(solution: Any) -> Any:
    """matmul_lowered on a matmul whose shapes no vector size divides."""
    return matmul_case(solution, ODD_MATMUL)



@probe(category="matmul", check="matmul_matches", hints=["exact-rule", "last-one-gone"])
def two_different_matmuls_lowered(solution: Any) -> Any:
    """matmul_lowered on two matmuls of different shapes."""
    return matmul_case(solution, TWO_DIFFERENT)


@probe(category="matmul", check="matmul_matches", hints=["exact-rule", "walk-ops"])
def batch_matmul_lowered(solution: Any) -> Any:
    """matmul_lowered on a batched matmul."""
    return matmul_case(solution, BATCH_ONLY)


@probe(category="matmul", check="matmul_matches", hints=["exact-rule", "walk-ops"])
def dead_matmul_lowered(solution: Any) -> Any:
    """matmul_lowered on a matmul whose result is never used (erased on the host, before dispatch formation)."""
    return matmul_case(solution, DEAD_MATMUL)


@probe(category="matmul", check="matmul_matches", hints=["walk-ops", "exact-rule"])
def cf_branches_lowered(solution: Any) -> Any:
    """matmul_lowered on a host function that branches between blocks (cf.cond_br), with a dead matmul in a branch."""
    return matmul_case(solution, CF_BRANCHES)


@probe(category="matmul", check="matmul_matches", hints=["last-one-gone", "exact-rule"])
def dead_then_quantized_lowered(solution: Any) -> Any:
    """matmul_lowered on a dead matmul beside a quantized_matmul: no linalg.matmul is left at dump 2, and another one is made later."""
    return matmul_case(solution, DEAD_THEN_QUANTIZED)


@probe(category="matmul", check="matmul_matches", hints=["whole-module", "last-one-gone"])
def matmul_beside_vector_body_lowered(solution: Any) -> Any:
    """matmul_lowered on a matmul + bias dispatch beside a generic whose body is written with vector ops."""
    return matmul_case(solution, MATMUL_BESIDE_VECTOR_BODY)


@probe(category="matmul", check="matmul_matches", hints=["whole-module", "last-one-gone"])
def two_entries_lowered(solution: Any) -> Any:
    """matmul_lowered on two public functions, the second with a quantized_matmul (no linalg.matmul in dump 0)."""
    return matmul_case(solution, TWO_ENTRIES)


@probe(category="matmul", check="matmul_matches", hints=["whole-module", "walk-ops"])
def initializer_lowered(solution: Any) -> Any:
    """matmul_lowered on a global computed by a util.initializer with a matmul, beside a dead matmul in @main."""
    return matmul_case(solution, INITIALIZER)


# ---------------------------------------------------------------- dispatch


@probe(category="dispatch", check="dispatches_match", hints=["flow-phase"])
def two_same_matmuls_dispatches(solution: Any) -> Any:
    """dispatch_count on two matmuls of the same shapes."""
    return dispatch_case(solution, TWO_SAME)


@probe(category="dispatch", check="dispatches_match", hints=["flow-phase"])
def reshape_only_dispatches(solution: Any) -> Any:
    """dispatch_count on a program that only reshapes its input."""
    return dispatch_case(solution, RESHAPE_ONLY)


@probe(category="dispatch", check="dispatches_match", hints=["flow-phase"])
def padded_conv_dispatches(solution: Any) -> Any:
    """dispatch_count on a padded convolution."""
    return dispatch_case(solution, PAD_CONV)


@probe(category="dispatch", check="dispatches_match", hints=["flow-phase"])
def data_tiled_matmul_dispatches(solution: Any) -> Any:
    """dispatch_count on a matmul compiled with data tiling."""
    return dispatch_case(solution, DATA_TILED, DATA_TILING)


@probe(category="dispatch", check="dispatches_match", hints=["walk-ops", "flow-phase"])
def branchy_dispatches(solution: Any) -> Any:
    """dispatch_count on a program that picks one of two computations with an scf.if."""
    return dispatch_case(solution, BRANCHY)


@probe(category="dispatch", check="dispatches_match", hints=["walk-ops", "flow-phase"])
def cf_branches_dispatches(solution: Any) -> Any:
    """dispatch_count on a host function that branches between blocks (cf.cond_br), a dispatch in each branch."""
    return dispatch_case(solution, CF_BRANCHES)


@probe(category="dispatch", check="dispatches_match", hints=["whole-module", "flow-phase"])
def two_entries_dispatches(solution: Any) -> Any:
    """dispatch_count on two public functions, each launching its own dispatches."""
    return dispatch_case(solution, TWO_ENTRIES)


@probe(category="dispatch", check="dispatches_match", hints=["whole-module", "flow-phase"])
def initializer_dispatches(solution: Any) -> Any:
    """dispatch_count on a global computed by a util.initializer, read by @main."""
    return dispatch_case(solution, INITIALIZER)


# ---------------------------------------------------------------- vector


@probe(category="vector", check="vector_matches", hints=["text-is-not-ir"])
def reshape_only_vector(solution: Any) -> Any:
    """first_vector_pass on a program that only reshapes its input."""
    return vector_case(solution, RESHAPE_ONLY)


@probe(category="vector", check="vector_matches", hints=["first-not-last", "text-is-not-ir"])
def padded_conv_vector(solution: Any) -> Any:
    """first_vector_pass on a padded convolution."""
    return vector_case(solution, PAD_CONV)


@probe(category="vector", check="vector_matches", hints=["first-not-last", "text-is-not-ir"])
def data_tiled_matmul_vector(solution: Any) -> Any:
    """first_vector_pass on a matmul compiled with data tiling."""
    return vector_case(solution, DATA_TILED, DATA_TILING)


@probe(category="vector", check="vector_matches", hints=["text-is-not-ir", "walk-ops"])
def odd_matmul_vector(solution: Any) -> Any:
    """first_vector_pass on a matmul whose shapes no vector size divides."""
    return vector_case(solution, ODD_MATMUL)



@probe(category="vector", check="vector_matches", hints=["exact-rule", "walk-ops"])
def vector_body_vector(solution: Any) -> Any:
    """first_vector_pass on an elementwise generic whose body is written with vector ops."""
    return vector_case(solution, VECTOR_BODY)


@probe(category="vector", check="vector_matches", hints=["walk-ops", "exact-rule"])
def cf_branches_vector(solution: Any) -> Any:
    """first_vector_pass on a host function that branches between blocks (cf.cond_br), vector ops in a branch."""
    return vector_case(solution, CF_BRANCHES)


@probe(category="vector", check="vector_matches", hints=["whole-module", "exact-rule"])
def two_entries_vector(solution: Any) -> Any:
    """first_vector_pass on two public functions, vector ops in the body of a generic of the second one."""
    return vector_case(solution, TWO_ENTRIES)


@probe(category="vector", check="vector_matches", hints=["whole-module", "exact-rule"])
def initializer_vector(solution: Any) -> Any:
    """first_vector_pass on a global computed by a util.initializer, vector ops in the body of one of its generics."""
    return vector_case(solution, INITIALIZER)


# ---------------------------------------------------------------- tiles


@probe(category="tiles", check="tiles_match", hints=["root-op", "config-levels"])
def two_same_matmuls_tiles(solution: Any) -> Any:
    """tile_sizes on two matmuls of the same shapes."""
    return tiles_case(solution, TWO_SAME)


@probe(category="tiles", check="tiles_match", hints=["root-op", "config-levels", "attrs-not-lines"])
def padded_conv_tiles(solution: Any) -> Any:
    """tile_sizes on a padded convolution."""
    return tiles_case(solution, PAD_CONV)


@probe(category="tiles", check="tiles_match", hints=["root-op", "config-levels", "attrs-not-lines"])
def data_tiled_matmul_tiles(solution: Any) -> Any:
    """tile_sizes on a matmul compiled with data tiling."""
    return tiles_case(solution, DATA_TILED, DATA_TILING)


@probe(category="tiles", check="tiles_match", hints=["root-op", "config-levels"])
def odd_matmul_tiles(solution: Any) -> Any:
    """tile_sizes on a matmul whose shapes no vector size divides."""
    return tiles_case(solution, ODD_MATMUL)


@probe(category="tiles", check="tiles_match", hints=["root-op", "config-levels"])
def two_different_matmuls_tiles(solution: Any) -> Any:
    """tile_sizes on two matmuls of different shapes."""
    return tiles_case(solution, TWO_DIFFERENT)


@probe(category="tiles", check="tiles_match", hints=["root-op", "config-levels"])
def sort_tiles(solution: Any) -> Any:
    """tile_sizes on two sorts, of a matrix along its rows and of a vector (levels missing from their configurations)."""
    return tiles_case(solution, SORT)


@probe(category="tiles", check="tiles_match", hints=["root-op"])
def reshape_only_tiles(solution: Any) -> Any:
    """tile_sizes on a program that only reshapes its input (no dispatch function: an empty dict)."""
    return tiles_case(solution, RESHAPE_ONLY)


@probe(category="tiles", check="tiles_match", hints=["root-op", "config-levels"])
def cf_branches_tiles(solution: Any) -> Any:
    """tile_sizes on a host function that branches between blocks (cf.cond_br), a dispatch in each branch."""
    return tiles_case(solution, CF_BRANCHES)


@probe(category="tiles", check="tiles_match", hints=["whole-module", "root-op"])
def two_entries_tiles(solution: Any) -> Any:
    """tile_sizes on two public functions, each with its own dispatches."""
    return tiles_case(solution, TWO_ENTRIES)


# ---------------------------------------------------------------- calls: many calls in one process


def _list_at_freed_id(freed: int) -> list[Any]:
    """A new empty list that is, as a rule, at the id of a freed list.

    Lists are made until one lands at ``freed`` (those that land elsewhere
    stay alive until then, so each try takes the next free slot); after 4096
    tries the last one is used.
    """
    spare: list[list[Any]] = []
    for _ in range(4096):
        fresh: list[Any] = []
        if id(fresh) == freed:
            return fresh
        spare.append(fresh)
    return spare.pop()


def _dumps_at_freed_ids(fields: list[tuple[str, str, str]], freed: set[int]) -> list[Dump]:
    """New ``Dump`` objects holding ``fields``, each, as a rule, at the id of one of the freed dumps.

    For each one, dumps are made until one lands at a freed id not taken yet
    (the others stay alive until every one is placed); after 4096 tries in
    all, the rest are made wherever the allocator puts them.
    """
    free, spare, made, tries = set(freed), [], [], 0
    for item in fields:
        fresh = Dump(*item)
        while id(fresh) not in free and tries < 4096:
            spare.append(fresh)
            fresh = Dump(*item)
            tries += 1
        free.discard(id(fresh))
        made.append(fresh)
    return made


def calls_in_one_process(solution: Any, first: str, second: str) -> dict[str, Any]:
    """The four functions called on the dumps of two programs, one after the other, four times over, in this process.

    ``first`` and ``second`` compile to as many dumps. The calls: ``first``'s
    dumps in a new list; ``second``'s in a new list built after that one was
    freed, the list and its dumps at the freed ones' ids as a rule; the same
    list refilled in place with ``first``'s dumps, then with ``second``'s. A
    cache keyed on the list's id or length, on its dumps' ids or on the list
    itself answers one of them from an earlier call. Every answer is read
    when it is returned and again once every call has run; "freed ids taken"
    records whether the new list and dumps did get the freed ids.
    """
    programs = {"first": [tuple(d) for d in compile_dumps(first)], "second": [tuple(d) for d in compile_dumps(second)]}
    where = {name: [Dump(p, o, "") for p, o, _ in fields] for name, fields in programs.items()}  # what an index points at
    steps: list[dict[str, Any]] = []
    returned: list[tuple[dict[str, Any], str, Any, str]] = []

    def ask(step: str, dumps: list[Dump], program: str) -> None:
        entry: dict[str, Any] = {"step": step, "at call": {}}
        for function in FUNCTIONS:
            answer = getattr(solution, function)(dumps)
            entry["at call"][function] = answer_of(function, answer, where[program])
            returned.append((entry, function, answer, program))
        steps.append(entry)

    dumps = [Dump(*item) for item in programs["first"]]
    ask("one program's dumps in a new list", dumps, "first")
    freed_list, freed_dumps = id(dumps), [id(d) for d in dumps]
    del dumps
    gc.collect()  # the list and its dumps are freed: new ones may get their ids
    dumps = _list_at_freed_id(freed_list)
    dumps.extend(_dumps_at_freed_ids(programs["second"], set(freed_dumps)))
    taken = {
        "list": id(dumps) == freed_list,
        "dumps": sum(id(d) in set(freed_dumps) for d in dumps),
        "dumps in place": sum(id(d) == i for d, i in zip(dumps, freed_dumps, strict=False)),  # at the id of the dump they replace
        "lengths": [len(programs["first"]), len(programs["second"])],
    }
    ask("another program's dumps, as many, in a new list at the freed list's id and its dumps at the freed dumps' ids", dumps, "second")
    dumps[:] = [Dump(*item) for item in programs["first"]]
    ask("the first program's dumps again, in that same list refilled in place", dumps, "first")
    dumps[:] = [Dump(*item) for item in programs["second"]]
    ask("the other program's dumps again, in the same list refilled once more", dumps, "second")
    for entry, function, answer, program in returned:
        entry.setdefault("after all calls", {})[function] = answer_of(function, answer, where[program])
    return {"steps": steps, "freed ids taken": taken}


@probe(category="calls", check="every_call_matches", hints=["fresh-each-call"], timeout=120)
def called_repeatedly(solution: Any) -> Any:
    """All four functions, 16 calls in one process: two programs with as many dumps, in new lists, at freed ids and in one list refilled."""
    return calls_in_one_process(solution, TWO_SAME, SOFTMAX)


def calls_on_other_flags(solution: Any, source: str, flag_sets: tuple[tuple[str, ...], ...]) -> dict[str, Any]:
    """The four functions called on one program compiled with each of ``flag_sets``, one after the other, in this process.

    Every compile starts from the same imported program, so the dumps begin
    alike and differ later: a cache keyed on the first dump (the source), on
    the list's length or on anything less than every dump's text answers a
    later compile from an earlier one. Each list stays alive to the end (no
    id is reused here). Every answer is read when it is returned and again
    once every call has run; "same first dump" and "lengths" record what
    makes the probe a test of that.
    """
    compiles = [compile_dumps(source, flags) for flags in flag_sets]
    steps: list[dict[str, Any]] = []
    returned: list[tuple[dict[str, Any], str, Any, list[Dump]]] = []
    kept: list[list[Dump]] = []
    for flags, fields in zip(flag_sets, compiles, strict=True):
        dumps = [Dump(*d) for d in fields]
        kept.append(dumps)
        where = [Dump(d.pass_name, d.op, "") for d in fields]
        entry: dict[str, Any] = {"step": f"the program compiled with {' '.join(flags) or 'no extra flag'}", "at call": {}}
        for function in FUNCTIONS:
            answer = getattr(solution, function)(dumps)
            entry["at call"][function] = answer_of(function, answer, where)
            returned.append((entry, function, answer, where))
        steps.append(entry)
    for entry, function, answer, where in returned:
        entry.setdefault("after all calls", {})[function] = answer_of(function, answer, where)
    return {
        "steps": steps,
        "same first dump": len({c[0].ir for c in compiles}) == 1,
        "lengths": [len(c) for c in compiles],
    }


@probe(category="calls", check="every_flag_call_matches", hints=["fresh-each-call"], timeout=120)
def same_source_other_flags(solution: Any) -> Any:
    """All four functions, 12 calls in one process: one program compiled with no extra flag, then with two other flags."""
    return calls_on_other_flags(solution, DATA_TILED, OTHER_FLAGS)


# ---------------------------------------------------------------- calls: compiles that end alike (red team round 4)

#: DEAD_MATMUL without its unused matmul: the elementwise add alone (the same dumps from dump 2 on).
ADD_ONLY = """
func.func @main(%a: tensor<32x32xf32>, %b: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<32x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<32x32xf32>) -> tensor<32x32xf32>
  %sum = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<32x32xf32>, tensor<32x32xf32>) outs(%empty : tensor<32x32xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<32x32xf32>
  return %sum : tensor<32x32xf32>
}
"""

#: DEAD_MATMUL with an unused generic whose body is written with vector ops in place of the unused matmul.
DEAD_VECTOR_BODY = """
func.func @main(%a: tensor<32x32xf32>, %b: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<32x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<32x32xf32>) -> tensor<32x32xf32>
  %unused = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                            iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<32x32xf32>) outs(%acc : tensor<32x32xf32>) {
  ^bb0(%w: f32, %o: f32):
    %bw = vector.broadcast %w : f32 to vector<4xf32>
    %r = vector.reduction <add>, %bw : vector<4xf32> into f32
    linalg.yield %r : f32
  } -> tensor<32x32xf32>
  %sum = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<32x32xf32>, tensor<32x32xf32>) outs(%empty : tensor<32x32xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<32x32xf32>
  return %sum : tensor<32x32xf32>
}
"""

#: Three programs whose compiles end in the same last dump, with as many dumps and the same pass names, and other answers.
SAME_END = (("an elementwise add beside an unused matmul", DEAD_MATMUL, ()),
            ("the same add alone", ADD_ONLY, ()),
            ("the same add beside an unused generic whose body is written with vector ops", DEAD_VECTOR_BODY, ()))  # fmt: skip

#: DATA_TILED's source compiled with no extra flag, then with edge reshape propagation: the same first and last dumps.
EDGE_RESHAPES = ("--iree-global-opt-experimental-enable-edge-reshape-propagation",)
SAME_ENDS_OTHER_FLAGS = (
    ("a matmul compiled with no extra flag", DATA_TILED, ()),
    ("the same matmul compiled with --iree-global-opt-experimental-enable-edge-reshape-propagation", DATA_TILED, EDGE_RESHAPES),
)


def calls_on_compiles(solution: Any, compiles: tuple[tuple[str, str, tuple[str, ...]], ...]) -> dict[str, Any]:
    """The four functions called on each of ``compiles`` (what, source, flags), one after the other, in this process.

    The compiles end alike (the same last dump, and for some the same first
    dump or as many dumps) and answer differently: a cache keyed on anything
    less than every dump's text answers a later compile from an earlier one.
    Each list stays alive to the end. Every answer is read when it is
    returned and again once every call has run; "same first dump", "same
    last dump", "same headers" and "lengths" record what makes the probe a
    test of that.
    """
    made = [compile_dumps(source, flags) for _, source, flags in compiles]
    steps: list[dict[str, Any]] = []
    returned: list[tuple[dict[str, Any], str, Any, list[Dump]]] = []
    kept: list[list[Dump]] = []
    for (what, _, _), fields in zip(compiles, made, strict=True):
        dumps = [Dump(*d) for d in fields]
        kept.append(dumps)
        where = [Dump(d.pass_name, d.op, "") for d in fields]
        entry: dict[str, Any] = {"step": what, "at call": {}}
        for function in FUNCTIONS:
            answer = getattr(solution, function)(dumps)
            entry["at call"][function] = answer_of(function, answer, where)
            returned.append((entry, function, answer, where))
        steps.append(entry)
    for entry, function, answer, where in returned:
        entry.setdefault("after all calls", {})[function] = answer_of(function, answer, where)
    return {
        "steps": steps,
        "same first dump": len({c[0].ir for c in made}) == 1,
        "same last dump": len({c[-1].ir for c in made}) == 1,
        "same headers": len({tuple((d.pass_name, d.op) for d in c) for c in made}) == 1,
        "lengths": [len(c) for c in made],
    }


@probe(category="calls", check="every_same_end_call_matches", hints=["fresh-each-call"], timeout=120)
def same_last_dump_other_programs(solution: Any) -> Any:
    """All four functions, 12 calls in one process: three programs whose compiles end in the same last dump, with as many dumps."""
    return calls_on_compiles(solution, SAME_END)


@probe(category="calls", check="every_same_ends_call_matches", hints=["fresh-each-call"], timeout=120)
def same_first_and_last_dump(solution: Any) -> Any:
    """All four functions, 8 calls in one process: one program compiled two ways that share the first and the last dump."""
    return calls_on_compiles(solution, SAME_ENDS_OTHER_FLAGS)
