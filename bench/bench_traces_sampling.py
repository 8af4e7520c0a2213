"""SHARDS sampling error: sampled curve vs exact curve, on the bundled traces or on a large file.

Run: ``python bench/bench_traces_sampling.py [--file PATH] [rate ...]``
(default rates 0.5 0.1 0.01; without ``--file``, every bundled trace with
block hashes).

Each sampled curve (``read_trace(..., sample_rate=R)``, SHARDS-adj) is
evaluated at the exact curve's 64 default capacities; printed: references
kept, mean and max absolute error of the block hit rate over those
capacities, the same from ``10 / R`` blocks up (below that the sample holds
fewer than 10 blocks), the error at unlimited capacity, and the expected
error printed with sampled results (2 standard errors at unlimited capacity).
Deterministic: the sampling hash is fixed.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from planner.traces import SAMPLES, capacity_curve, default_capacities, read_trace, reuse_profile
from planner.traces.sampling import standard_error


def compare(label: str, source: str, rates: list[float]) -> None:
    exact_trace = read_trace(source, max_bytes=None)
    if not exact_trace.has_prefix_hashes:
        print(f"| {label} | - | lengths only: no hit rates to sample | | | | | |")
        return
    exact = reuse_profile(exact_trace, with_ages=False)
    caps = default_capacities(exact)
    want = capacity_curve(exact, caps)["block_hit_rate"].to_numpy()
    top_exact = exact.hits().block_hit_rate
    num_refs = exact.num_block_refs
    del exact, exact_trace
    for rate in rates:
        t = read_trace(source, max_bytes=None, sample_rate=rate)
        p = reuse_profile(t, with_ages=False)
        err = np.abs(capacity_curve(p, caps)["block_hit_rate"].to_numpy() - want)
        big = err[caps >= 10 / rate]
        tail = f"{big.mean():.4f} / {big.max():.4f}" if big.size else "-"
        print(f"| {label} | {rate:g} | {t.num_block_refs:,} of {num_refs:,} | {err.mean():.4f} | {err.max():.4f} | "
              f"{tail} | {abs(p.hits().block_hit_rate - top_exact):.4f} | ±{2 * standard_error(t, p, None):.4f} |",
              flush=True)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", default=None, help="a trace file instead of the bundled traces")
    parser.add_argument("rates", nargs="*", type=float, default=[0.5, 0.1, 0.01])
    args = parser.parse_args(argv)
    print("| trace | rate | refs kept | mean abs error | max abs error | mean / max from 10 / R blocks "
          "| error at unlimited | expected (2 se) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    if args.file:
        compare(args.file.rsplit("/", 1)[-1], args.file, args.rates)
        return 0
    for name in SAMPLES:
        compare(name, f"sample:{name}", args.rates)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
