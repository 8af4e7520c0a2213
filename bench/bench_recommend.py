"""Recommend speed: configurations searched per second with the array plan (figures only; asserts nothing).

Run: ``python bench/bench_recommend.py``.

* search: 20 accelerators (18 catalog + two custom sizes) x GPUs per replica 1..16
  (16 values) x 2 attention parallelisms x 6 KV formats x 2 weight formats = 7,680 configurations of
  Llama-3.1-70B at 32k tokens, target 1,000 sessions, best of 5; ranking included,
  scalar verification of the top 20 rows included;
* verify: the scalar plan on every feasible row (the page verifies the top 50).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    from planner.plan import make_inputs
    from planner.catalog.entries import GPUS
    from planner.frontier import Accelerator
    from planner.recommend import recommend

    base = make_inputs(model_id="llama-3.1-70b", context_tokens=32_000, pause_mean_s=30.0)
    accs = [Accelerator(g) for g in GPUS] + [Accelerator("custom", 64.0), Accelerator("custom", 512.0)]
    kw = dict(target=1000, gpus_per_replica=range(1, 17), kv_formats=["native", "bf16", "fp8", "mxfp8", "nvfp4",
                                                                      "int8"],
              weight_formats=[None, "fp8"])
    recommend(base, accs, verify=1, **kw)  # warm
    best = min(_time(lambda: recommend(base, accs, verify=20, **kw)) for _ in range(5))
    rec = recommend(base, accs, verify=20, **kw)
    print(f"search: {rec.searched:,} configurations ({len(rec.frame):,} feasible), top 20 verified: {best * 1e3:.0f} ms "
          f"({rec.searched / best:,.0f} configurations/s)")
    t = _time(lambda: recommend(base, accs, verify=None, **kw))
    print(f"every feasible row verified by the scalar plan: {t * 1e3:.0f} ms")


def _time(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


if __name__ == "__main__":
    main()
