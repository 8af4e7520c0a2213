"""Speed figures: the whole hit-rate curve from stack distances vs one replay per capacity.

Run: ``python bench/bench_traces.py [sample]`` (default ``conversation``, the
Mooncake conversation trace: 12,031 requests, 288,500 block references).
Prints figures and whether the two methods agree at every capacity; asserts
nothing about time (tests carry no timings).
"""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np

from planner.traces import capacity_curve, default_capacities, load_sample, reference_curve, reuse_profile

NUM_REFERENCE_CAPACITIES = 20
"""Capacities replayed one by one by the reference method."""


def main(sample: str = "conversation") -> int:
    t = time.perf_counter()
    load_sample.cache_clear()
    trace = load_sample(sample)
    read_s = time.perf_counter() - t
    print(f"trace {sample}: {trace.num_requests:,} requests, {trace.num_block_refs:,} block refs, "
          f"{trace.num_unique_blocks:,} unique blocks; read in {read_s * 1e3:.0f} ms")

    runs = []
    for _ in range(5):
        t = time.perf_counter()
        profile = reuse_profile(trace)
        full = capacity_curve(profile, np.arange(0, profile.saturation_blocks + 1))
        runs.append(time.perf_counter() - t)
    curve_s = statistics.median(runs)
    print(f"full curve (stack distances, every capacity 0..{profile.saturation_blocks:,} blocks, "
          f"{len(full):,} points): median {curve_s * 1e3:.0f} ms over 5 runs (min {min(runs) * 1e3:.0f} ms)")

    caps = np.unique(np.round(np.geomspace(1, profile.saturation_blocks, NUM_REFERENCE_CAPACITIES)).astype(int))
    while len(caps) < NUM_REFERENCE_CAPACITIES:   # tiny traces: fill with the smallest missing capacities
        caps = np.unique(np.append(caps, np.setdiff1d(np.arange(caps.max() + 2), caps)[0]))
    caps = caps[:NUM_REFERENCE_CAPACITIES].tolist()
    t = time.perf_counter()
    ref = reference_curve(trace, caps)
    ref_s = time.perf_counter() - t
    print(f"reference replay at {len(caps)} capacities: {ref_s:.2f} s ({ref_s / len(caps) * 1e3:.0f} ms each)")

    fast = capacity_curve(profile, caps)
    same_blocks = fast["hit_blocks"].tolist() == ref["hit_blocks"].tolist()
    same_tokens = fast["hit_tokens"].tolist() == ref["hit_tokens"].tolist()
    identical = same_blocks and same_tokens
    print(f"identical hit counts (blocks and tokens) at all {len(caps)} capacities: {'yes' if identical else 'NO'}")
    print(f"speed ratio: reference for {len(caps)} capacities / full curve = {ref_s / curve_s:.1f}x "
          f"(per capacity: {ref_s / len(caps) / curve_s:.2f}x)")
    print("\ncapacity_blocks  block_hit_rate  token_hit_rate")
    for row in ref.itertuples():
        print(f"{row.capacity_blocks:>15,}  {row.block_hit_rate:>14.4f}  {row.token_hit_rate:>14.4f}")
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
