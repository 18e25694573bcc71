"""Runtime profiles: what a sandbox imports before it waits for a job.

Imported by the in-sandbox runner (to pre-import) and by the trusted side
(to validate names and size limits), so it depends on nothing. Importing the
heavy modules before the job arrives is what makes a warm sandbox fast; the
runner must not run any torch or tensorflow op before it forks probes: a
child forked after its parent ran even one op hangs, because OpenMP's
thread pool does not survive fork.
"""

from __future__ import annotations

# torch._dynamo is imported up front too: the first custom_op or compile in a
# probe would otherwise import it in every forked child (about 1 s each).
# Importing it runs no op, so forking afterwards stays safe.
PROFILES: dict[str, tuple[str, ...]] = {
    "python": ("numpy",),
    "torch": ("numpy", "torch", "torch._dynamo"),
    # The torch runtime without TorchDynamo, for torch packages whose code never
    # reaches it (grader/sandbox_profile.py decides): a sandbox starts with
    # about 1.2 s less CPU, which is what a busy worker runs short of.
    "torch-eager": ("numpy", "torch"),
    "tensorflow": ("numpy", "tensorflow"),
    # The deployment stack: torch.onnx export, onnx, onnxruntime, and IREE to
    # take an ONNX model on to MLIR and CPU code (its import is cheap, ~0.15 s).
    "onnx": (
        "numpy", "torch", "torch._dynamo", "onnx", "onnxruntime",
        "iree.compiler", "iree.compiler.ir", "iree.runtime",
    ),
    # Apache TVM 0.27 (TensorIR schedules live in tvm.s_tir, the IR in tvm.tirx;
    # there is no tvm.tir any more), LLVM codegen on the CPU.
    "tvm": ("numpy", "tvm", "tvm.te", "tvm.s_tir", "tvm.tirx"),
    # Real MLIR through IREE alone: the compiler's Python API, its MLIR
    # bindings and its runtime. No torch: a sandbox starts several times faster.
    "mlir": ("numpy", "iree.compiler", "iree.compiler.ir", "iree.runtime"),
}

# Profiles no package names as its runtime: the runtime each one serves.
VARIANT_OF: dict[str, str] = {"torch-eager": "torch"}

# Library modules a package may ask the runner to import before it forks the
# probes (challenge.toml ``preload``), on top of its profile. Only what costs
# every forked child a real import: TorchInductor, which torch.compile,
# torch.library.opcheck and AOTAutograd reach for, takes 1-2 s of CPU to import
# and halves the probe time of the custom-op labs when imported once instead
# of once per probe. Not in the torch profile itself: most torch packages never
# touch it and would pay 1-2 s on every sandbox start. Importing runs no op,
# so forking afterwards stays safe.
PRELOADS: dict[str, tuple[str, ...]] = {
    "inductor": ("torch._inductor.compile_fx",),
}

# Processes and threads a sandbox may hold: torch and tensorflow start
# thread pools, so the cap is per profile; it still stops a fork bomb.
PIDS_LIMIT: dict[str, int] = {
    "python": 64, "torch": 128, "torch-eager": 128, "tensorflow": 256, "onnx": 256, "tvm": 128, "mlir": 256,
}

# Memory a warm sandbox starts with, before a job's own limit replaces it.
WARM_MEMORY_MB: dict[str, int] = {
    "python": 512, "torch": 2048, "torch-eager": 2048, "tensorflow": 3072, "onnx": 2048, "tvm": 2048, "mlir": 2048,
}

# Without a cgroup, memory is bounded by address space instead; these are the
# megabytes each profile's libraries reserve without using (tensorflow maps ~2 GB).
ADDRESS_SPACE_OVERHEAD_MB: dict[str, int] = {
    "python": 512, "torch": 1536, "torch-eager": 1536, "tensorflow": 4096, "onnx": 2048, "tvm": 2048, "mlir": 4096,
}
