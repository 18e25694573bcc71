"""Runtime profiles: what a sandbox imports before it waits for a job.

Imported by the in-sandbox runner (to pre-import) and by the trusted side
(to validate names and size limits), so it depends on nothing. Importing the
heavy modules before the job arrives is what makes a warm sandbox fast; the
runner must not run any torch or tensorflow op before it forks probes (see
ML-STACK.md: OpenMP's pool does not survive fork).
"""

from __future__ import annotations

# torch._dynamo is imported up front too: the first custom_op or compile in a
# probe would otherwise import it in every forked child (about 1 s each).
# Importing it runs no op, so forking afterwards stays safe.
PROFILES: dict[str, tuple[str, ...]] = {
    "python": ("numpy",),
    "torch": ("numpy", "torch", "torch._dynamo"),
    "tensorflow": ("numpy", "tensorflow"),
    "onnx": ("numpy", "torch", "torch._dynamo", "onnx", "onnxruntime"),
}

# Processes and threads a sandbox may hold: torch and tensorflow start
# thread pools, so the cap is per profile; it still stops a fork bomb.
PIDS_LIMIT: dict[str, int] = {"python": 64, "torch": 128, "tensorflow": 256, "onnx": 192}
