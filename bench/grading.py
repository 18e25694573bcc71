"""Grading latency and throughput, cold and warm, on every sandbox backend: ``make bench``.

A benchmark, not a test: it prints figures and asserts nothing (this machine
is shared and noisy). For a pure-Python, a torch and a tensorflow package
(the demo fixtures under tests/fixtures/packages/demo), on each backend that
answers here, it grades the reference's hidden probes:

- cold: a sandbox started per submission (the runtime imported each time);
- warm: from a warm pool, refilled between submissions (what one submission
  sees when the worker is not saturated);
- throughput: ``--concurrency`` graders at once (the worker's concurrency),
  warm pools refilling behind them, submissions per second.

Overhead is the total grading time minus the probes' own run time (each
probe's forked process, from fork to exit, as the runner measured it): what
the platform adds. Usage::

    python -m bench.grading [--backends bwrap,docker] [--runs 15] [--concurrency 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGES = {
    "python": REPO / "tests/fixtures/packages/demo/add-numbers",
    "torch": REPO / "tests/fixtures/packages/demo/torch-linear",
    "tensorflow": REPO / "tests/fixtures/packages/demo/tf-scale",
}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def grade_once(package: object, backend: object) -> tuple[float, float]:
    from grader import grade_submission

    result = grade_submission(package, package.reference_code, public=False, backend=backend)  # type: ignore[attr-defined]
    if result.verdict != "accepted":
        raise RuntimeError(f"the reference was not accepted: {result.to_dict()}")
    return float(result.timings["total_ms"]), float(result.timings["total_ms"] - result.timings["probes_ms"])


def run(backends: list[str], runs: int, concurrency: int) -> None:
    from grader import load_package_dir
    from grader.grade import expected_observations
    from sandbox import get_backend
    from sandbox.pool import PooledBackend

    rows = []
    for backend_name in backends:
        raw = get_backend(backend_name)
        for profile, folder in PACKAGES.items():
            package = load_package_dir(folder)
            expected_observations(package, False, raw)  # cache the reference once
            cold = [grade_once(package, raw) for _ in range(max(3, runs // 3))]
            pool = PooledBackend(raw, {profile: concurrency})
            warm = []
            for _ in range(runs):
                pool.fill(180)
                warm.append(grade_once(package, pool))
            # Throughput: every grader busy, the pool refilling behind them.
            pool.fill(180)
            done: list[float] = []
            per_thread = max(2, runs // concurrency)

            def worker(package: object = package, pool: PooledBackend = pool, done: list[float] = done, n: int = per_thread) -> None:
                for _ in range(n):
                    done.append(grade_once(package, pool)[0])

            t0 = time.monotonic()
            threads = [threading.Thread(target=worker) for _ in range(concurrency)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            elapsed = time.monotonic() - t0
            pool.close()
            rows.append(
                {
                    "backend": backend_name,
                    "profile": profile,
                    "cold_p50": percentile([c[0] for c in cold], 50),
                    "cold_p95": percentile([c[0] for c in cold], 95),
                    "warm_p50": percentile([w[0] for w in warm], 50),
                    "warm_p95": percentile([w[0] for w in warm], 95),
                    "warm_overhead_p50": percentile([w[1] for w in warm], 50),
                    "cold_overhead_p50": percentile([c[1] for c in cold], 50),
                    "speedup": statistics.median(c[0] for c in cold) / max(1.0, statistics.median(w[0] for w in warm)),
                    "throughput": len(done) / elapsed,
                }
            )
            print(f"  measured {backend_name}/{profile}", file=sys.stderr, flush=True)

    print(f"\nGrading the reference's hidden probes; {runs} warm runs, {max(3, runs // 3)} cold runs, concurrency {concurrency}.")
    print("Times in milliseconds; overhead = total minus the probes' own run time.\n")
    print(
        "| backend | profile | cold p50 | cold p95 | warm p50 | warm p95 | warm overhead p50 | cold overhead p50 | cold/warm "
        "| throughput (subs/s) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['backend']} | {r['profile']} | {r['cold_p50']:.0f} | {r['cold_p95']:.0f} | {r['warm_p50']:.0f} | {r['warm_p95']:.0f} "
            f"| {r['warm_overhead_p50']:.0f} | {r['cold_overhead_p50']:.0f} | {r['speedup']:.1f}x | {r['throughput']:.2f} |"
        )


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.grading")
    parser.add_argument("--backends", default="", help="comma-separated; default: bwrap, and docker if its engine answers")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--concurrency", type=int, default=2)
    args = parser.parse_args()
    os.environ.setdefault("GRADER_CACHE_DIR", tempfile.mkdtemp(prefix="mlprep-bench-cache-"))
    backends = [b for b in args.backends.split(",") if b]
    if not backends:
        from tests.sandbox.conftest import real_backends

        backends = real_backends() or ["bwrap"]
    run(backends, args.runs, args.concurrency)
    return 0


if __name__ == "__main__":
    sys.exit(main())
