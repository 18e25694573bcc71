"""Hidden probes for fp16-stable-softmax: they make the score.

Every probe builds its inputs from fixed seeds, calls the candidate's
``softmax`` / ``log_softmax`` while watching the torch calls they make, and
returns the inputs with the outputs. The check (``within_softmax_bound`` in
checks.py, run in the trusted worker) computes the float64 truth from the
reference run's inputs and applies the per-element bound from the statement.
"""

from __future__ import annotations

import gc
import math
from typing import Any

import torch
from probe_common import BF16, F16, F32, Case, RuleWatch, both, randn, run_cases
from probekit import probe

F64 = torch.float64
# The largest logit magnitude the statement allows per dtype.
LIMIT = {F16: 3e4, BF16: 1e38, F32: 1e38}
LABEL = {F16: "float16", BF16: "bfloat16", F32: "float32"}


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def far_logit_rows(n: int, d: int, dtype: torch.dtype, seed: int, where: str) -> torch.Tensor:
    """Rows of randn times a per-row temperature in [1, 5], plus one logit far from the rest.

    The far logit sits at position 0 (where="first"), d - 1 ("last") or
    anywhere strictly between, drawn per row ("middle"). In half the rows it
    leads the rest by 8 to 3000 (a dominant token); in the others it trails
    them by 100 to 30,000 (an entry pushed down by an additive mask).
    """
    g = _gen(seed)
    x = torch.randn(n, d, generator=g, dtype=F64) * (1.0 + 4.0 * torch.rand(n, 1, generator=g, dtype=F64))
    x += 20.0 * torch.randn(n, 1, generator=g, dtype=F64)
    lead = 8.0 * (375.0 ** torch.rand(n, generator=g, dtype=F64))  # 8 .. 3000, log-uniform
    trail = 100.0 * (300.0 ** torch.rand(n, generator=g, dtype=F64))  # 100 .. 30,000, log-uniform
    up = torch.rand(n, generator=g, dtype=F64) < 0.5
    if where == "first":
        pos = torch.zeros(n, dtype=torch.long)
    elif where == "last":
        pos = torch.full((n,), d - 1, dtype=torch.long)
    else:
        pos = torch.randint(1, d - 1, (n,), generator=g)
    rows = torch.arange(n)
    x[rows, pos] = torch.where(up, x.amax(-1) + lead, x.amin(-1) - trail)
    return x.clamp(-LIMIT[dtype], LIMIT[dtype]).to(dtype)


# The ways a case of a generated family passes dim to a 2-D input, in turn: by position, by keyword,
# left out (the default, -1), and by keyword as the positive index of the last dim.
DIM_CALLS = ((-1, False, "dim=-1"), (-1, True, "dim=-1 by keyword"), (None, False, "no dim given"), (1, True, "dim=1 by keyword"))


def _far_cases(where: str, seed: int) -> list[Case]:
    cases: list[Case] = []
    for i, (dtype, d) in enumerate(((F16, 1000), (BF16, 4096), (F32, 512))):
        for k in range(2):
            x = far_logit_rows(8, d, dtype, seed + 10 * i + k, where)
            dim, keyword, how = DIM_CALLS[(2 * i + k) % len(DIM_CALLS)]
            cases += both(f"{LABEL[dtype]} (8, {d}), one logit far from the rest ({where}), #{k}, {how}", x, dim, keyword)
    return cases


# ---------------------------------------------------------------- softmax


@probe(category="softmax", weight=2, check="within_softmax_bound", hints=["float32-math"])
def softmax_float16_vocabulary(solution: Any) -> dict[str, Any]:
    """softmax over float16 rows of 32,000 logits (a language model's vocabulary)."""
    x = randn(4, 32_000, scale=3.0, dtype=F16, seed=1)
    return run_cases(solution, [("float16 (4, 32000), randn*3, dim=-1", "softmax", x, -1)])


@probe(category="softmax", weight=2, check="within_softmax_bound", hints=["float32-math"])
def softmax_bfloat16_rows(solution: Any) -> dict[str, Any]:
    """softmax over bfloat16 rows of 1,000 logits, two temperatures."""
    return run_cases(
        solution,
        [
            ("bfloat16 (64, 1000), randn*3, dim=-1", "softmax", randn(64, 1000, scale=3.0, dtype=BF16, seed=2), -1),
            ("bfloat16 (32, 1000), randn*0.3, dim=-1", "softmax", randn(32, 1000, scale=0.3, dtype=BF16, seed=3), -1),
        ],
    )


@probe(category="softmax", check="within_softmax_bound", hints=["float32-math", "max-subtraction"])
def softmax_float32_sharp(solution: Any) -> dict[str, Any]:
    """softmax over float32 rows with logits spread over about +-40."""
    x = randn(64, 1000, scale=10.0, dtype=F32, seed=4)
    return run_cases(solution, [("float32 (64, 1000), randn*10, dim=-1", "softmax", x, -1)])


def deep_tail_rows(n: int, d: int, dtype: torch.dtype, seed: int) -> torch.Tensor:
    """Rows of logits spread evenly from the top down to 103 below it, plus a per-row offset (randn * 30).

    Their exact probabilities run from about 1 down to float32's subnormals (exp(-87.3) is its smallest
    normal, exp(-103.3) half its smallest subnormal); a softmax that flushes subnormal results to 0
    misses them by their whole value, and for |t| of 40 to 87 a float32 probability has little room
    beyond the error of exp's own argument (the statement's E_i).
    """
    g = _gen(seed)
    x = -103.0 * torch.rand(n, d, generator=g, dtype=F64)
    x[torch.arange(n), torch.randint(0, d, (n,), generator=g)] = 0.0  # the top logit, anywhere in its row
    return (x + 30.0 * torch.randn(n, 1, generator=g, dtype=F64)).to(dtype)


@probe(category="softmax", check="within_softmax_bound", hints=["float32-math"])
def softmax_deep_tail(solution: Any) -> dict[str, Any]:
    """softmax over float32 and bfloat16 rows reaching 103 below the top logit: probabilities down to float32's subnormals."""
    return run_cases(
        solution,
        [
            Case("float32 (32, 1000), down to 103 below the top, dim=-1", "softmax", deep_tail_rows(32, 1000, F32, 800), -1),
            Case("float32 (32, 1000), down to 103 below the top, dim=-1 by keyword", "softmax", deep_tail_rows(32, 1000, F32, 801), -1, True),
            Case("float32 (8, 4096), down to 103 below the top, no dim given", "softmax", deep_tail_rows(8, 4096, F32, 802), None),
            Case("bfloat16 (16, 1000), down to 103 below the top, dim=1 by keyword", "softmax", deep_tail_rows(16, 1000, BF16, 803), 1, True),
        ],
    )


# ---------------------------------------------------------------- log-softmax


@probe(category="log-softmax", weight=2, check="within_softmax_bound", hints=["log-softmax-direct", "float32-math"])
def log_softmax_float16_wide_spread(solution: Any) -> dict[str, Any]:
    """log_softmax over float16 rows whose logits span about 70: many probabilities underflow float16."""
    x = randn(64, 1000, scale=10.0, dtype=F16, seed=5)
    return run_cases(solution, [("float16 (64, 1000), randn*10, dim=-1", "log_softmax", x, -1)])


@probe(category="log-softmax", weight=2, check="within_softmax_bound", hints=["log-softmax-direct", "float32-math"])
def log_softmax_bfloat16_wide_spread(solution: Any) -> dict[str, Any]:
    """log_softmax over bfloat16 rows whose logits span about 70 and about 700."""
    return run_cases(
        solution,
        [
            ("bfloat16 (64, 1000), randn*10, dim=-1", "log_softmax", randn(64, 1000, scale=10.0, dtype=BF16, seed=6), -1),
            ("bfloat16 (16, 512), randn*100, dim=-1", "log_softmax", randn(16, 512, scale=100.0, dtype=BF16, seed=7), -1),
        ],
    )


@probe(category="log-softmax", check="within_softmax_bound", hints=["log-softmax-direct"])
def log_softmax_float32_very_wide(solution: Any) -> dict[str, Any]:
    """log_softmax over float32 rows whose logits span about 700: probabilities below 1e-45 underflow even float32."""
    x = randn(16, 256, scale=100.0, dtype=F32, seed=8)
    return run_cases(solution, [("float32 (16, 256), randn*100, dim=-1", "log_softmax", x, -1)])


@probe(category="log-softmax", weight=2, check="within_softmax_bound", hints=["log-near-zero", "float32-math"])
def log_softmax_dominant_logit(solution: Any) -> dict[str, Any]:
    """Logits near 1,000, one per row leading by 8 to 14: its log-probability is a tiny negative number that must keep its digits."""
    cases: list[Case] = []
    for dtype, seed in ((F16, 9), (BF16, 10), (F32, 11)):
        x = randn(32, 256, scale=1.0, dtype=torch.float64, seed=seed)
        lead = torch.linspace(8.0, 14.0, 32, dtype=torch.float64)
        x[:, 0] = x.amax(-1) + lead  # the top logit is 8..14 above the rest
        x = (x + 1000.0).to(dtype)
        name = f"{str(dtype).removeprefix('torch.')} (32, 256), 1000 + randn, top logit leads by 8..14, dim=-1"
        cases.append((name, "log_softmax", x, -1))
    return run_cases(solution, cases)


# ---------------------------------------------------------------- large logits


@probe(category="large-logits", weight=2, check="within_softmax_bound", hints=["max-subtraction"])
def float16_large_magnitude(solution: Any) -> dict[str, Any]:
    """float16 logits of magnitude up to 30,000: exp overflows long before."""
    x = randn(16, 256, scale=1e4, dtype=torch.float64, seed=12).clamp(-3e4, 3e4).to(F16)
    return run_cases(solution, both("float16 (16, 256), randn*1e4 clipped to +-3e4, dim=-1", x))


@probe(category="large-logits", check="within_softmax_bound", hints=["max-subtraction"])
def bfloat16_near_its_range(solution: Any) -> dict[str, Any]:
    """bfloat16 logits of magnitude up to 1e38, near the top of bfloat16's range."""
    x = randn(8, 128, scale=3e37, dtype=torch.float64, seed=13).clamp(-1e38, 1e38).to(BF16)
    return run_cases(solution, both("bfloat16 (8, 128), randn*3e37 clipped to +-1e38, dim=-1", x))


@probe(category="large-logits", weight=2, check="within_softmax_bound", hints=["max-subtraction", "log-near-zero"])
def large_offset_small_spread(solution: Any) -> dict[str, Any]:
    """Logits around 10,000 (float32) and 20,000 (float16) with a small spread: only the differences matter."""
    x32 = randn(16, 512, scale=2.0, offset=1e4, dtype=F32, seed=14)
    x16 = randn(16, 256, scale=64.0, offset=2e4, dtype=F16, seed=15)
    return run_cases(
        solution,
        both("float32 (16, 512), 1e4 + randn*2, dim=-1", x32) + both("float16 (16, 256), 2e4 + randn*64, dim=-1", x16),
    )


# ---------------------------------------------------------------- layout


@probe(category="layout", check="within_softmax_bound", hints=["dims-and-layout"])
def other_dims_and_strides(solution: Any) -> dict[str, Any]:
    """Reductions over a middle dim, dim 0, a negative dim, a transposed input, dim by keyword, and the default dim
    when none is passed (the last, for 3-D and 4-D inputs too)."""
    x3 = randn(6, 50, 7, scale=4.0, dtype=F16, seed=16)
    x2 = randn(300, 20, scale=4.0, dtype=BF16, seed=17)
    xt = randn(40, 24, scale=6.0, dtype=F32, seed=18).t()
    x4 = randn(2, 3, 5, 40, scale=4.0, dtype=BF16, seed=19)
    return run_cases(
        solution,
        both("float16 (6, 50, 7), dim=1", x3, 1)
        + both("bfloat16 (300, 20), dim=0", x2, 0)
        + both("float16 (6, 50, 7), dim=-3 by keyword", x3, -3, keyword=True)
        + both("float32 (24, 40) transposed view, dim=-1", xt, -1)
        + both("float32 (24, 40) transposed view, dim=0 by keyword", xt, 0, keyword=True)
        + both("float16 (6, 50, 7), no dim given (the default, -1)", x3, None)
        + both("bfloat16 (2, 3, 5, 40), no dim given (the default, -1)", x4, None)
        + both("bfloat16 (2, 3, 5, 40), dim=2 by keyword", x4, 2, keyword=True),
    )


@probe(category="layout", weight=2, check="within_softmax_bound", hints=["masked-entries"])
def masked_attention_rows(solution: Any) -> dict[str, Any]:
    """Attention scores with -inf masks (causal and padding): masked entries get 0 and -inf; (batch, heads, query, key)
    scores with dim left out, as attention code calls softmax."""
    causal = torch.ones(32, 32, dtype=torch.bool).triu(1)
    scores16 = randn(4, 32, 32, scale=4.0, dtype=F16, seed=19).masked_fill(causal, float("-inf"))
    pad = torch.arange(48)[None, :] >= torch.tensor([48, 40, 17, 1, 30, 48])[:, None]
    scores_bf = randn(6, 48, scale=8.0, dtype=BF16, seed=20).masked_fill(pad, float("-inf"))
    causal16 = torch.ones(16, 16, dtype=torch.bool).triu(1)
    heads = randn(2, 4, 16, 16, scale=4.0, dtype=F16, seed=24).masked_fill(causal16, float("-inf"))
    return run_cases(
        solution,
        both("float16 (4, 32, 32) causal mask, dim=-1", scores16)
        + both("bfloat16 (6, 48) padding mask, dim=-1 by keyword", scores_bf, -1, keyword=True)
        + both("float16 (2, 4, 16, 16) causal mask, no dim given (the default, -1)", heads, None)
        + both("float16 (4, 32, 32) causal mask, no dim given (the default, -1)", scores16, None),
    )


@probe(category="layout", check="within_softmax_bound", hints=["dims-and-layout"])
def degenerate_shapes(solution: Any) -> dict[str, Any]:
    """A single element along dim, a 1-D vector, an empty batch, a size-1 middle dim; dim by keyword and left out."""
    return run_cases(
        solution,
        both("float16 (5, 1), dim=-1", randn(5, 1, scale=100.0, dtype=F16, seed=21))
        + both("bfloat16 (100,) vector, dim=0 by keyword", randn(100, scale=5.0, dtype=BF16, seed=22), 0, keyword=True)
        + both("bfloat16 (100,) vector, no dim given", randn(100, scale=5.0, dtype=BF16, seed=22), None)
        + both("float32 (0, 5), dim=-1", torch.empty(0, 5))
        + both("float16 (3, 1, 4), dim=1 by keyword", randn(3, 1, 4, dtype=F16, seed=23), 1, keyword=True)
        + both("float32 (0, 5), no dim given", torch.empty(0, 5), None),
    )


# ---------------------------------------------------------------- data real models produce


@probe(category="far-logits", check="within_softmax_bound", hints=["max-subtraction", "float32-math"])
def far_logit_first(solution: Any) -> dict[str, Any]:
    """Rows whose first logit is far above or far below the rest, in all three dtypes."""
    return run_cases(solution, _far_cases("first", 100))


@probe(category="far-logits", check="within_softmax_bound", hints=["max-subtraction", "float32-math"])
def far_logit_middle(solution: Any) -> dict[str, Any]:
    """Rows with one logit far above or far below the rest somewhere in the middle, in all three dtypes."""
    return run_cases(solution, _far_cases("middle", 200))


@probe(category="far-logits", check="within_softmax_bound", hints=["max-subtraction", "float32-math"])
def far_logit_last(solution: Any) -> dict[str, Any]:
    """Rows whose last logit is far above or far below the rest, in all three dtypes."""
    return run_cases(solution, _far_cases("last", 300))


def _near_constant(n: int, d: int, dtype: torch.dtype, seed: int, level: float) -> torch.Tensor:
    """Rows equal to level (exact in dtype) but for one to four entries an ulp or two away."""
    g = _gen(seed)
    bits = {F16: 10, BF16: 7, F32: 23}[dtype]
    ulp = 2.0 ** (math.floor(math.log2(abs(level))) - bits) if level else 2.0**-20
    x = torch.full((n, d), level, dtype=F64)
    for row in range(n):
        k = 1 + int(torch.randint(0, 4, (1,), generator=g))
        cols = torch.randperm(d, generator=g)[:k]
        x[row, cols] += torch.randint(1, 3, (k,), generator=g).to(F64) * torch.where(torch.rand(k, generator=g) < 0.5, -ulp, ulp).to(F64)
    return x.to(dtype)


@probe(category="near-constant", check="within_softmax_bound", hints=["float32-math", "log-near-zero"])
def near_constant_rows(solution: Any) -> dict[str, Any]:
    """Rows whose logits are all equal, or equal but for a few entries an ulp or two away: probabilities near 1/n."""
    cases: list[Case] = []
    for k in range(2):
        kw, how = (False, "dim=-1") if k == 0 else (True, "dim=-1 by keyword")
        cases += both(f"float16 (4, 32000), all equal to 20000 but a few, #{k}, {how}", _near_constant(4, 32000, F16, 400 + k, 20000.0), -1, kw)
        cases += both(
            f"bfloat16 (8, 1000), all equal to -1.5 * 2^124 but a few, #{k}, {how}",
            _near_constant(8, 1000, BF16, 410 + k, -1.5 * 2.0**124),
            -1,
            kw,
        )
        cases += both(f"float32 (8, 4096), all equal to 0.75 but a few, #{k}, {how}", _near_constant(8, 4096, F32, 420 + k, 0.75), -1, kw)
    cases += both("float16 (4, 7), all equal, dim=-1", torch.full((4, 7), -1234.0, dtype=F16))
    cases += both("bfloat16 (2, 2), all equal, dim=-1", torch.full((2, 2), 1e38, dtype=BF16))
    return run_cases(solution, cases)


@probe(category="range", check="within_softmax_bound", hints=["max-subtraction", "float32-math"])
def dtype_limits_and_subnormals(solution: Any) -> dict[str, Any]:
    """Logits at the largest magnitudes each dtype allows, of both signs in one row, and subnormal logits."""
    cases: list[Case] = []
    for k in range(2):
        g = _gen(500 + k)
        signs16 = torch.where(torch.rand(8, 256, generator=g) < 0.5, -1.0, 1.0).to(F64)
        x16 = (signs16 * (3e4 - 100.0 * torch.rand(8, 256, generator=g, dtype=F64))).to(F16)
        x32 = (signs16 * (1e38 - 1e36 * torch.rand(8, 256, generator=g, dtype=F64))).to(F32)
        xbf = randn(8, 256, scale=5e37, dtype=F64, seed=510 + k).clamp(-1e38, 1e38).to(BF16)
        dim, how = (-1, "dim=-1") if k == 0 else (None, "no dim given")
        cases += both(f"float16 (8, 256), near +-30000, #{k}, {how}", x16, dim)
        cases += both(f"float32 (8, 256), near +-1e38, #{k}, {how}", x32, dim)
        cases += both(f"bfloat16 (8, 256), randn*5e37 up to +-1e38, #{k}, {how}", xbf, dim)
        cases += both(f"float16 (8, 512), subnormal logits, #{k}, {how}", randn(8, 512, scale=2e-6, dtype=F16, seed=520 + k), dim)
        cases += both(f"float32 (8, 512), subnormal logits, #{k}, {how}", randn(8, 512, scale=1e-40, dtype=F32, seed=530 + k), dim)
        cases += both(f"bfloat16 (8, 512), subnormal logits, #{k}, {how}", randn(8, 512, scale=1e-39, dtype=BF16, seed=540 + k), dim)
    return run_cases(solution, cases)


@probe(category="layout", check="within_softmax_bound", hints=["dims-and-layout"])
def size_one_dimensions(solution: Any) -> dict[str, Any]:
    """Size-1 dimensions in every position, reduced over and kept: leading, middle and trailing."""
    x1 = randn(1, 300, scale=5.0, dtype=F16, seed=600)
    x2 = randn(300, 1, scale=5.0, dtype=BF16, seed=601)
    x3 = randn(1, 4, 16, scale=5.0, dtype=F32, seed=602)
    x4 = randn(4, 16, 1, scale=5.0, dtype=F16, seed=603)
    x5 = randn(1, 1, 1, scale=5.0, dtype=BF16, seed=604)
    x6 = randn(1, scale=5.0, dtype=F32, seed=605)
    return run_cases(
        solution,
        both("float16 (1, 300), dim=-1", x1)
        + both("float16 (1, 300), dim=0 by keyword", x1, 0, keyword=True)
        + both("bfloat16 (300, 1), dim=0", x2, 0)
        + both("bfloat16 (300, 1), dim=1 by keyword", x2, 1, keyword=True)
        + both("float32 (1, 4, 16), dim=1", x3, 1)
        + both("float32 (1, 4, 16), dim=-1 by keyword", x3, -1, keyword=True)
        + both("float32 (1, 4, 16), dim=0", x3, 0)
        + both("float32 (1, 4, 16), no dim given", x3, None)
        + both("float16 (4, 16, 1), dim=1 by keyword", x4, 1, keyword=True)
        + both("float16 (4, 16, 1), dim=-1", x4, -1)
        + both("float16 (4, 16, 1), no dim given", x4, None)
        + both("bfloat16 (1, 1, 1), dim=1", x5, 1)
        + both("float32 (1,), dim=0 by keyword", x6, 0, keyword=True),
    )


@probe(category="layout", check="within_softmax_bound", hints=["dims-and-layout", "masked-entries"])
def strided_views_and_masks(solution: Any) -> dict[str, Any]:
    """Broadcast, strided and permuted views, masks in float32, masks on the left, and masks along a dim other than the last."""
    expanded = randn(1, 200, scale=4.0, dtype=F16, seed=700).expand(6, 200)
    stepped = randn(8, 400, scale=6.0, dtype=BF16, seed=701)[:, ::2]
    permuted = randn(16, 5, 6, scale=3.0, dtype=F32, seed=702).permute(1, 2, 0)
    left_pad = torch.arange(64)[None, :] < torch.tensor([0, 10, 63, 32, 1, 50])[:, None]
    scores32 = randn(6, 64, scale=8.0, dtype=F32, seed=703).masked_fill(left_pad, float("-inf"))
    scores_bf = randn(6, 64, scale=8.0, dtype=BF16, seed=704).masked_fill(left_pad, float("-inf"))
    col_mask = torch.arange(24)[:, None] > torch.arange(5)[None, :] * 5
    scores16 = randn(24, 5, scale=4.0, dtype=F16, seed=705).masked_fill(col_mask, float("-inf"))
    return run_cases(
        solution,
        both("float16 (6, 200), one row expanded, dim=-1", expanded)
        + both("bfloat16 (8, 200), every second column, dim=-1", stepped)
        + both("bfloat16 (8, 200), every second column, dim=0 by keyword", stepped, 0, keyword=True)
        + both("float32 (5, 6, 16) permuted, dim=-1", permuted)
        + both("float32 (5, 6, 16) permuted, dim=1 by keyword", permuted, 1, keyword=True)
        + both("float32 (5, 6, 16) permuted, no dim given", permuted, None)
        + both("float32 (6, 64) left padding mask, dim=-1", scores32)
        + both("bfloat16 (6, 64) left padding mask, no dim given", scores_bf, None)
        + both("float16 (24, 5) masked along dim 0, dim=0 by keyword", scores16, 0, keyword=True),
    )


# ---------------------------------------------------------------- repeated calls: nothing carried from one call to the next


class _Sequence:
    """Calls both functions on one tensor at a time, in one process, and keeps every call's case in one observation.

    Each case keeps its input as it was at its own call (run_cases clones it)
    and its outputs as returned, not copied: an output that a later call
    writes over is checked as it is at the end. ``setup`` records whether
    the sequence did what it is for: a freed tensor's id and an earlier
    tensor's data_ptr handed out again to a new tensor; the check requires it
    of the reference's run, so a probe that stopped reusing them is noticed.
    """

    def __init__(self, solution: Any) -> None:
        self.solution = solution
        self.observation: dict[str, Any] = {"violations": [], "cases": {}, "setup": {"freed id reused": False, "address reused": False}}
        self.ids: set[int] = set()
        self.addresses: set[int] = set()

    def call(self, name: str, x: torch.Tensor, how: int) -> None:
        """softmax and log_softmax of x along the last dim, dim passed as DIM_CALLS[how] says (always -1 inside)."""
        setup = self.observation["setup"]
        setup["address reused"] = setup["address reused"] or x.data_ptr() in self.addresses
        self.ids.add(id(x))
        self.addresses.add(x.data_ptr())
        dim, keyword, said = DIM_CALLS[how % 3]
        one = run_cases(self.solution, both(f"{name}, {said}", x, dim, keyword))
        self.observation["violations"] += [v for v in one["violations"] if v not in self.observation["violations"]]
        self.observation["cases"].update(one["cases"])

    def rebuilt(self, values: torch.Tensor) -> torch.Tensor:
        """A new tensor holding values, at an earlier (freed) tensor's id when the allocator gives one back within
        4096 tries (the misses stay alive until the end of this call, so each try takes the next free slot: 16 tries
        were too few in the docker runner, whose heap differs, and the reference's run then failed its setup)."""
        misses = []
        for _ in range(4096):
            fresh = torch.empty_like(values)
            if id(fresh) in self.ids:
                break
            misses.append(fresh)
        setup = self.observation["setup"]
        setup["freed id reused"] = setup["freed id reused"] or id(fresh) in self.ids
        return fresh.copy_(values)


def _values(n: int, d: int, dtype: torch.dtype, seed: int, k: int) -> torch.Tensor:
    """The k-th set of logits of a sequence: another temperature and offset each time, exact in dtype."""
    return randn(n, d, scale=(1.0, 4.0, 0.5, 8.0, 2.0, 6.0)[k % 6], offset=(0.0, -3.0, 5.0, 1.0, -8.0, 2.0)[k % 6], dtype=dtype, seed=seed + k)


def _same_tensor_calls(seq: _Sequence, dtype: torch.dtype, n: int, d: int, seed: int) -> None:
    """A tensor, then the same tensor scaled in place, with entries moved within each row, and with new values copied
    in; then a new tensor of the same shape and dtype. All of them are freed on return."""
    shape = f"{LABEL[dtype]} ({n}, {d})"
    x = _values(n, d, dtype, seed, 0)
    seq.call(f"{shape}, first call", x, 0)
    x.mul_(-2).add_(1.5)  # an in-place update of the same tensor
    seq.call(f"{shape}, the same tensor changed in place", x, 1)
    half = d // 2
    x[:, 1:half], x[:, half:-1] = x[:, half:-1].clone(), x[:, 1:half].clone()  # the same values, other places in each row
    seq.call(f"{shape}, the same tensor with entries moved within each row", x, 2)
    x.copy_(_values(n, d, dtype, seed, 1))
    seq.call(f"{shape}, the same tensor with new values copied in", x, 0)
    seq.call(f"{shape}, a new tensor of the same shape and dtype", _values(n, d, dtype, seed, 2), 1)


def _freed_and_rebuilt_calls(seq: _Sequence, dtype: torch.dtype, n: int, d: int, seed: int) -> None:
    """A new tensor made where a freed one was (its id), then three new views over one storage (its data_ptr, shape,
    strides and dtype), rewritten between the calls."""
    shape = f"{LABEL[dtype]} ({n}, {d})"
    seq.call(f"{shape}, a new tensor made after earlier ones were freed", seq.rebuilt(_values(n, d, dtype, seed, 3)), 2)
    flat = torch.empty(n * d, dtype=dtype)
    for j in range(3):
        flat.copy_(_values(n * d, 1, dtype, seed, 4 + j).flatten())
        seq.call(f"{shape}, a new tensor over the storage of earlier ones, call {j + 1}", flat.view(n, d), j)


@probe(category="repeated-calls", check="within_softmax_bound", hints=["state"])
def repeated_calls(solution: Any) -> dict[str, Any]:
    """Many calls in one process: a tensor changed in place, new look-alike tensors, tensors made where freed ones were.

    In each dtype, softmax and log_softmax of: a tensor; the same tensor
    scaled in place, then with entries moved within each row, then with new
    values copied in; a new tensor of the same shape and dtype. Then, once
    all of those are freed, in each dtype: a tensor made at a freed one's
    id, and three new views over one storage rewritten between calls (the
    same data_ptr, shape, strides and dtype). A cache keyed on id(),
    data_ptr(), the shape or dtype, the tensor object, or a summary of its
    values returns earlier results, and a buffer a later call reuses changes
    a result already returned (the observation keeps every output as
    returned).
    """
    seq = _Sequence(solution)
    sizes = [(F32, 8, 256, 9000), (BF16, 4, 512, 9020), (F16, 8, 128, 9040)]
    for dtype, n, d, seed in sizes:
        _same_tensor_calls(seq, dtype, n, d, seed)
    gc.collect()  # every tensor of the calls above is gone: their ids and storage are free to be handed out again
    for dtype, n, d, seed in sizes:
        _freed_and_rebuilt_calls(seq, dtype, n, d, seed)
    return seq.observation


# ---------------------------------------------------------------- masks among logits of every magnitude


def masked_far_rows(n: int, d: int, dtype: torch.dtype, seed: int, level: float) -> torch.Tensor:
    """Rows near level (level times 1 to 1.01, plus randn * 4, within the dtype's allowed range) with -inf masks.

    Row 0 keeps one finite entry, row 1 a left padding of about half the row, the others a random half of their
    entries masked (at least one finite). With every finite logit far below 0 (down to -30,000 in float16, -1e38
    in bfloat16 and float32), a mask filled with a "very negative" constant (-1e4, float16's -65504, -1e9) before
    the maximum becomes the slice's maximum, and every real entry gets probability about 0.
    """
    g = _gen(seed)
    x = level * (1.0 + 0.01 * torch.rand(n, d, generator=g, dtype=F64)) + 4.0 * torch.randn(n, d, generator=g, dtype=F64)
    x = x.clamp(-LIMIT[dtype], LIMIT[dtype])
    mask = torch.rand(n, d, generator=g) < 0.5
    mask[0] = True
    mask[1] = torch.arange(d) < d // 2
    mask[torch.arange(n), torch.randint(0, d, (n,), generator=g)] = False  # every slice keeps a finite value
    mask[1, -1] = False
    return x.masked_fill(mask, float("-inf")).to(dtype)


@probe(category="range", check="within_softmax_bound", hints=["masked-entries", "max-subtraction"])
def masks_among_extreme_logits(solution: Any) -> dict[str, Any]:
    """-inf masks in slices whose finite logits lie far below 0, down to the dtype's limit, along the last dim and dim 0,
    and among logits near +-1e38 of both signs."""
    cases: list[Case] = []
    levels = ((F16, -2.5e4), (BF16, -1e5), (BF16, -1e20), (BF16, -1e38), (F32, -1e6), (F32, -1e12), (F32, -1e38))
    for i, (dtype, level) in enumerate(levels):
        x = masked_far_rows(6, 64, dtype, 1000 + i, level)
        dim, keyword, how = DIM_CALLS[i % len(DIM_CALLS)]
        cases += both(f"{LABEL[dtype]} (6, 64), logits near {level:g} with -inf masks, {how}", x, dim, keyword)
    cols = masked_far_rows(5, 40, F32, 1010, -3e5).t()
    cases += both("float32 (40, 5) transposed, logits near -3e5 with -inf masks, dim=0 by keyword", cols, 0, keyword=True)
    g = _gen(1011)
    signs = torch.where(torch.rand(6, 64, generator=g) < 0.5, -1.0, 1.0).to(F64)
    wide = signs * (1e38 - 1e36 * torch.rand(6, 64, generator=g, dtype=F64))
    wide[torch.rand(6, 64, generator=g) < 0.3] = float("-inf")
    wide[:, 0] = 1e38 - 1e36  # every slice keeps a finite value
    cases += both("bfloat16 (6, 64), near +-1e38 with -inf masks, dim=-1", wide.to(BF16))
    cases += both("float32 (6, 64), near +-1e38 with -inf masks, no dim given", wide.to(F32), None)
    return run_cases(solution, cases)


# ---------------------------------------------------------------- results are new tensors, even for one-entry slices


def _same_memory(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether a and b are one tensor, or share storage that holds anything."""
    if a is b:
        return True
    storage = a.untyped_storage()
    return storage.nbytes() > 0 and storage.data_ptr() == b.untyped_storage().data_ptr()


def _change_in_place(t: torch.Tensor, what: str, notes: list[str]) -> None:
    """What a caller may do with its own tensor: scale and shift it in place (every value moves, 0 and 1 included)."""
    try:
        t.mul_(-0.5).add_(0.75)
    except Exception as exc:  # noqa: BLE001 - a result the caller cannot write is the finding
        notes.append(f"the caller could not change {what} in place: {type(exc).__name__}: {str(exc)[:120]}")


class _Fresh:
    """Calls one function four times per layout and checks that no result shares memory with an input or another result.

    Between the calls the caller changes inputs and results in place. A result kept as the observation's ``y`` is
    either a copy made at its call (for a result the caller changes later) or the tensor itself, held untouched to
    the end: an earlier or later call that hands out the same memory, or a view of an input, changes it.
    """

    def __init__(self, solution: Any) -> None:
        self.solution = solution
        self.observation: dict[str, Any] = {"violations": [], "cases": {}}
        self.watch = RuleWatch()

    def _call(self, name: str, c: Case, seen: list[tuple[str, torch.Tensor]], keep: bool) -> torch.Tensor | None:
        before = c.x.clone()
        try:
            with self.watch:
                y = _call_case(self.solution, c)
        except Exception as exc:  # noqa: BLE001 - reported per case by the check
            y = f"raised {type(exc).__name__}: {str(exc)[:300]}"
        if not isinstance(y, torch.Tensor | str):
            y = f"returned a {type(y).__module__}.{type(y).__qualname__}, not a torch.Tensor"
        if isinstance(y, torch.Tensor):
            for what, other in seen:
                if _same_memory(y, other):
                    self.observation["violations"].append(f"{name}: the result shares memory with {what}")
        self.observation["cases"][name] = {
            "fn": c.fn,
            "dim": -1 if c.dim is None else c.dim,
            "x": before.contiguous(),
            "y": (y.detach() if keep else y.detach().clone()) if isinstance(y, torch.Tensor) else y,
            "input unchanged": bool(torch.equal(c.x, before)),
        }
        return y if isinstance(y, torch.Tensor) else None

    def sequence(self, label: str, fn: str, make: Any, dim: int | None, keyword: bool) -> None:
        """make(k) gives the k-th input of one layout. Call 1 (result copied, then changed by the caller with its
        input), call 2 (held; its input changed after), call 3 on a new input (copied, then changed), call 4 on
        call 1's input as changed (held; the input changed again after)."""
        notes: list[str] = []
        seen: list[tuple[str, torch.Tensor]] = []
        base = f"{fn}, {label}"
        x1, x2, x3 = make(0), make(1), make(2)
        seen += [("the input of call 1", x1), ("the input of call 2", x2), ("the input of call 3", x3)]
        y1 = self._call(f"{base}, call 1", Case("", fn, x1, dim, keyword), seen, keep=False)
        if y1 is not None:
            seen.append(("the result of call 1", y1))
        y2 = self._call(f"{base}, call 2, held while the caller changes other tensors", Case("", fn, x2, dim, keyword), seen, keep=True)
        if y2 is not None:
            seen.append(("the result of call 2", y2))
        _change_in_place(x1, "the input of call 1", notes)
        _change_in_place(x2, "the input of call 2", notes)
        if y1 is not None:
            _change_in_place(y1, "the result of call 1", notes)
        y3 = self._call(f"{base}, call 3, after the caller changed earlier inputs and results", Case("", fn, x3, dim, keyword), seen, keep=False)
        if y3 is not None:
            seen.append(("the result of call 3", y3))
            _change_in_place(y3, "the result of call 3", notes)
        self._call(f"{base}, call 4, on call 1's input as changed, held", Case("", fn, x1, dim, keyword), seen, keep=True)
        _change_in_place(x1, "the input of call 1 (again)", notes)
        if y1 is not None:
            _change_in_place(y1, "the result of call 1 (again)", notes)
        if y3 is not None:
            _change_in_place(y3, "the result of call 3 (again)", notes)
        self.observation["violations"] += [f"{base}: {n}" for n in notes]

    def done(self) -> dict[str, Any]:
        self.observation["violations"] = self.watch.violations + self.observation["violations"][:5]
        return self.observation


def _call_case(solution: Any, c: Case) -> Any:
    fn = getattr(solution, c.fn)
    if c.dim is None:
        return fn(c.x)
    return fn(c.x, dim=c.dim) if c.keyword else fn(c.x, c.dim)


def _fresh_layouts(dtype: torch.dtype, seed: int) -> list[tuple[str, Any, int | None, bool]]:
    """(label, make(k), dim, by keyword): every position of a size-1 reduced dim, one-element tensors, empty batches,
    a size-1 slice seen through a column view and a transposed view, and two ordinary reductions."""

    def dense(*shape: int) -> Any:
        return lambda k: randn(*shape, scale=3.0, dtype=dtype, seed=seed + 10 * k + len(shape))

    def column(k: int) -> torch.Tensor:  # (6, 1): the middle column of a (6, 3) tensor, a view at an offset
        return randn(6, 3, scale=3.0, dtype=dtype, seed=seed + 10 * k + 7)[:, 1:2]

    def transposed(k: int) -> torch.Tensor:  # (5, 1) with strides (1, 5)
        return randn(1, 5, scale=3.0, dtype=dtype, seed=seed + 10 * k + 8).t()

    def empty(*shape: int) -> Any:
        return lambda k: torch.empty(*shape, dtype=dtype)

    name = LABEL[dtype]
    return [
        (f"{name} (1,), dim=0", dense(1), 0, False),
        (f"{name} (1,), no dim given", dense(1), None, False),
        (f"{name} (5, 1), dim=-1", dense(5, 1), -1, False),
        (f"{name} (5, 1), dim=1 by keyword", dense(5, 1), 1, True),
        (f"{name} (5, 1), no dim given", dense(5, 1), None, False),
        (f"{name} (1, 5), dim=0", dense(1, 5), 0, False),
        (f"{name} (1, 1), dim=0 by keyword", dense(1, 1), 0, True),
        (f"{name} (1, 1), no dim given", dense(1, 1), None, False),
        (f"{name} (3, 1, 4), dim=1", dense(3, 1, 4), 1, False),
        (f"{name} (3, 1, 4), dim=-2 by keyword", dense(3, 1, 4), -2, True),
        (f"{name} (2, 3, 1), no dim given", dense(2, 3, 1), None, False),
        (f"{name} (1, 2, 3), dim=0", dense(1, 2, 3), 0, False),
        (f"{name} (1, 1, 1), dim=0", dense(1, 1, 1), 0, False),
        (f"{name} (1, 1, 1), dim=1 by keyword", dense(1, 1, 1), 1, True),
        (f"{name} (1, 1, 1), no dim given", dense(1, 1, 1), None, False),
        (f"{name} (2, 1, 1, 3), dim=2", dense(2, 1, 1, 3), 2, False),
        (f"{name} (6, 1) column of a (6, 3) tensor, dim=-1", column, -1, False),
        (f"{name} (5, 1) transposed view, dim=1 by keyword", transposed, 1, True),
        (f"{name} (0, 1), dim=-1", empty(0, 1), -1, False),
        (f"{name} (1, 0), dim=0", empty(1, 0), 0, False),
        (f"{name} (0, 5), no dim given", empty(0, 5), None, False),
        (f"{name} (4, 8), dim=-1", dense(4, 8), -1, False),
        (f"{name} (3, 6), dim=0 by keyword", dense(3, 6), 0, True),
    ]


@probe(category="repeated-calls", check="within_softmax_bound", hints=["state"])
def results_are_new_tensors(solution: Any) -> dict[str, Any]:
    """Each result is a new tensor: never x, a view of x, or memory handed out before, even for one-entry slices.

    In every dtype, for both functions, on a size-1 reduced dim in every position (1-D to 4-D, by position, keyword
    and left out), one-element tensors, a size-1 slice seen through a column view and a transposed view, empty
    batches and two ordinary reductions: four calls per layout, with the caller changing inputs and results in
    place between and after them. A shortcut that returns one kept tensor of ones (or zeros) per shape, x itself,
    or a view of x fails: on storage shared with an input or another result, on a result the caller cannot write,
    and on held results whose values changed.
    """
    fresh = _Fresh(solution)
    for i, dtype in enumerate((F16, BF16, F32)):
        for label, make, dim, keyword in _fresh_layouts(dtype, 11000 + 1000 * i):
            for fn in ("softmax", "log_softmax"):
                fresh.sequence(label, fn, make, dim, keyword)
    return fresh.done()
