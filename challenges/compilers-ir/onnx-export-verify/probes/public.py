"""Public probes for onnx-export-verify: shown on "Run", inputs and all.

One export probe (your ``export`` writes the file from one example; the
probe runs it in onnxruntime at other batch and sequence sizes and compares
it with the model in eval mode) and three verification probes (the probe writes
a file itself, measures onnxruntime against PyTorch, and compares your
``verify``'s report with that measurement). The hidden probes use the same
helpers on other models, sizes and drifts.
"""

from __future__ import annotations

from typing import Any

from probe_common import MLPBlock, build, export_and_run, tokens, verify_case
from probekit import probe

# ---------------------------------------------------------------- probes


@probe(category="dynamic-shapes", check="every_size_ok", hints=["dynamic-axes"])
def mlp_exported_from_2x5(solution: Any) -> dict[str, str]:
    """MLP block exported from a (2, 5) example, run at (3, 7) and (1, 2)."""
    model = build(MLPBlock, seed=1)
    return export_and_run(solution, model, tokens, (2, 5), [(3, 7), (1, 2)])


@probe(category="verification", check="reported_error_matches", hints=["verify-definition"])
def verify_faithful_mlp(solution: Any) -> dict[str, Any]:
    """A faithful export of the MLP block, verified at (2, 6)."""
    return verify_case(solution, build(MLPBlock, seed=2), tokens, (2, 5), (2, 6))


@probe(category="verification", check="reported_error_matches", hints=["verify-definition"])
def verify_layernorm_epsilon_drift(solution: Any) -> dict[str, Any]:
    """The file's LayerNormalization epsilon was changed from 1e-5 to 0.1: verify must report the drift."""
    edit = {"LayerNormalization": ("epsilon", 0.1)}
    return verify_case(solution, build(MLPBlock, seed=3), tokens, (2, 5), (3, 4), edit)


@probe(category="verification", check="reported_error_matches", hints=["eval-mode"])
def verify_faithful_mlp_with_dropout(solution: Any) -> dict[str, Any]:
    """A faithful export of an MLP block with dropout 0.1, verified at (2, 6): the file has no drift to report."""
    return verify_case(solution, build(MLPBlock, seed=4, p=0.1), tokens, (2, 5), (2, 6))
