"""What the public and hidden probes of find-drifting-stage share, imported by both as ``probe_common``.

The pipeline itself is the package's given/pipeline.py (``build_pipeline``,
``Stage``), which the candidate reads and imports too: one copy, so what
they try locally is what the probes build. Here are the drifts the probes
plant that both files use.
"""

from __future__ import annotations

import torch

# ---------------------------------------------------------------- planted drifts


def gelu_tanh(x: torch.Tensor, approximate: str = "none") -> torch.Tensor:
    """A GELU decomposition that quietly uses the tanh approximation."""
    return 0.5 * x * (1 + torch.tanh(0.7978845608028654 * (x + 0.044715 * x**3)))
