"""Speed figures: the vectorized frontier grid vs the scalar plan, and a Frontier-page slider move.

Run: ``python bench/bench_frontier.py``. Prints figures; asserts nothing (tests carry no timings).

* grid: 20 accelerators (the 18 catalog ones + custom 64 GiB and 512 GiB) x 200
  context lengths (1k .. 10M, log-spaced) x 101 hit rates (0 .. 1) = 404,000
  plans of DeepSeek V4.1-Flash with pauses (so replay is priced), best of 7;
* scalar: the same plans through ``planner.plan.plan`` one by one, timed
  on a random sample of 2,000 points and extrapolated to 404,000;
* page: the Frontier page's script run after moving its hit-rate slider
  (AppTest), median of 10.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SAMPLE = 2_000


def main() -> None:
    from planner.plan import make_inputs, plan
    from planner.catalog.entries import GPUS
    from planner.frontier import Accelerator, context_axis, frontier_grid, hit_rate_axis

    base = make_inputs(pause_mean_s=45.0, output_tokens=1_000)
    accs = [Accelerator(g) for g in GPUS] + [Accelerator("custom", 64.0), Accelerator("custom", 512.0)]
    contexts = context_axis(10_000_000, 200)
    hits = hit_rate_axis(101)
    points = len(accs) * len(contexts) * len(hits)
    print(f"grid: {len(accs)} accelerators x {len(contexts)} contexts x {len(hits)} hit rates = {points:,} plans")

    frontier_grid(base, accs, contexts, hits)  # warm the catalog and numpy
    runs = []
    for _ in range(7):
        t = time.perf_counter()
        grid = frontier_grid(base, accs, contexts, hits)
        runs.append(time.perf_counter() - t)
    vec = min(runs)
    print(f"vectorized grid: best {vec * 1e3:.1f} ms, median {statistics.median(runs) * 1e3:.1f} ms over 7")
    t = time.perf_counter()
    frame = grid.frame()
    print(f"long CSV frame of the grid ({len(frame):,} rows): {(time.perf_counter() - t) * 1e3:.1f} ms")

    rng = random.Random(4)
    sample = [(rng.randrange(len(accs)), rng.randrange(len(contexts)), rng.randrange(len(hits))) for _ in range(SAMPLE)]
    inputs = [grid.inputs_at(*p) for p in sample]
    t = time.perf_counter()
    results = [plan(i) for i in inputs]
    scalar_each = (time.perf_counter() - t) / SAMPLE
    mismatches = sum(r.sessions_per_gpu != grid.sessions_per_gpu[p] or r.request_rate_per_s != grid.request_rate_per_s[p]
                     for r, p in zip(results, sample))
    scalar_total = scalar_each * points
    print(f"scalar plan(): {scalar_each * 1e6:.0f} us per plan on {SAMPLE:,} sampled points "
          f"-> {scalar_total:.1f} s extrapolated to {points:,} (inputs built outside the timing)")
    print(f"speed-up: {scalar_total / vec:,.0f}x; sampled points differing from the grid: {mismatches}")

    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("kvplan_app/views/frontier.py").run()
    times = []
    for i in range(10):
        at.slider(key="frontier_hit_rate").set_value(round(0.05 + 0.09 * i, 2))
        t = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - t)
    err = " (exception!)" if at.exception else ""
    print(f"Frontier page script run after a slider move (AppTest): median {statistics.median(times) * 1e3:.0f} ms, "
          f"max {max(times) * 1e3:.0f} ms over 10{err}")


if __name__ == "__main__":
    main()
