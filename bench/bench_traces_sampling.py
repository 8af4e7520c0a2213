"""SHARDS sampling error on every bundled trace with prefix hashes: sampled curve vs exact curve.

Run: ``python bench/bench_traces_sampling.py [rate ...]`` (default 0.5 0.1 0.01).

For each bundled trace that has block hashes and each rate, the sampled
curve (``read_trace(..., sample_rate=R)``, SHARDS-adj) is evaluated at the
exact curve's 64 default capacities; printed: references kept, mean and max
absolute error of the block hit rate over those capacities, the error at
unlimited capacity, and the expected error printed with sampled results (2
standard errors at unlimited capacity). Deterministic: the sampling hash is
fixed.
"""

from __future__ import annotations

import sys

import numpy as np

from planner.traces import SAMPLES, capacity_curve, default_capacities, read_trace, reuse_profile
from planner.traces.sampling import standard_error


def main(argv: list[str]) -> int:
    rates = [float(r) for r in argv] or [0.5, 0.1, 0.01]
    print("| trace | rate | refs kept | mean abs error | max abs error | error at unlimited | expected (2 se) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, sample in SAMPLES.items():
        exact_trace = read_trace(f"sample:{name}")
        if not exact_trace.has_prefix_hashes:
            print(f"| {name} | - | lengths only: no hit rates to sample | | | | |")
            continue
        exact = reuse_profile(exact_trace, with_ages=False)
        caps = default_capacities(exact)
        want = capacity_curve(exact, caps)["block_hit_rate"].to_numpy()
        for rate in rates:
            t = read_trace(f"sample:{name}", sample_rate=rate)
            p = reuse_profile(t, with_ages=False)
            got = capacity_curve(p, caps)["block_hit_rate"].to_numpy()
            err = np.abs(got - want)
            top = abs(p.hits().block_hit_rate - exact.hits().block_hit_rate)
            print(f"| {name} | {rate:g} | {t.num_block_refs:,} of {exact.num_block_refs:,} | {err.mean():.4f} | "
                  f"{err.max():.4f} | {top:.4f} | ±{2 * standard_error(t, p, None):.4f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
