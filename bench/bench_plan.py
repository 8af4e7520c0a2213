"""Speed figures: import cost, one plan evaluation, one Plan-page script run.

Run: ``python bench/bench_plan.py``. Prints figures; asserts nothing (tests carry no timings).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    code = ("import sys, time; t = time.perf_counter(); import planner.plan, planner.cli; "
            "print(time.perf_counter() - t, 'torch' in sys.modules, 'streamlit' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT).stdout.split()
    print(f"import planner.plan + planner.cli: {float(out[0]) * 1e3:.0f} ms; torch imported: {out[1]}; "
          f"streamlit imported: {out[2]}")

    from planner.plan import make_inputs, plan

    inputs = make_inputs()
    plan(inputs)  # warm the catalog
    runs = []
    for _ in range(5):
        n = 2000
        t = time.perf_counter()
        for _ in range(n):
            plan(inputs)
        runs.append((time.perf_counter() - t) / n)
    print(f"one plan evaluation (V4.1-Flash on H200): median {statistics.median(runs) * 1e6:.0f} us over 5 x 2000")

    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    for key, words in (("plan_hit_rate", "hit rate (the charts are cached: they never depend on it)"),
                       ("plan_shared_prefix", "shared prefix (the headline chart is redrawn)")):
        times, cpu = [], []
        for i in range(10):
            at.slider(key=key).set_value(round(0.1 + 0.08 * i, 2))
            t, c = time.perf_counter(), time.process_time()
            at.run()
            times.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
        print(f"Plan page script run after a {words} slider move (AppTest): median {statistics.median(times) * 1e3:.0f} "
              f"ms, max {max(times) * 1e3:.0f} ms, CPU median {statistics.median(cpu) * 1e3:.0f} ms over 10; "
              f"load average {os.getloadavg()[0]:.2f}")

if __name__ == "__main__":
    main()
