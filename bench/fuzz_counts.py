"""Fuzz counts: the strategies of tests/test_fuzz.py, N inputs per surface, and how many crashed.

Each surface (plan inputs, share links, config.json, trace files, plan files, ProbeResult JSON) draws N
hostile inputs (tests/fuzz_surfaces.py) and checks that every one gives a sane result or a one-line
PlanInputError naming the field. Prints the inputs tried per surface (accepted / refused) and the crashes:
"0 crashes" when none. A crash is printed with the input hypothesis shrank it to.

Run: ``python bench/fuzz_counts.py [-n 2000] [--explore]`` (``--explore``: a fresh random search instead of
the fixed, derandomized one). Exits 1 on a crash.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from hypothesis import HealthCheck, given, settings  # noqa: E402

import fuzz_surfaces as fs  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-n", "--examples", type=int, default=2000, help="inputs per surface")
    p.add_argument("--explore", action="store_true", help="random search (default: derandomized, reproducible)")
    p.add_argument("surfaces", nargs="*", default=list(fs.SURFACES), help="surfaces to run (default: all)")
    args = p.parse_args()

    crashes = []
    total = 0.0
    print(f"{'surface':<15} {'inputs':>8} {'accepted':>9} {'refused':>8} {'seconds':>8}")
    for surface in args.surfaces:
        strategy, check = fs.STRATEGIES[surface]

        @settings(max_examples=args.examples, deadline=None, database=None, derandomize=not args.explore,
                  suppress_health_check=list(HealthCheck), print_blob=True)
        @given(strategy)
        def run(value):
            check(value)

        t0 = time.perf_counter()
        try:
            run()
        except Exception as exc:  # noqa: BLE001 - reported below
            crashes.append((surface, "".join(traceback.format_exception_only(type(exc), exc)).strip()))
        seconds = time.perf_counter() - t0
        total += seconds
        print(f"{surface:<15} {fs.COUNTS[surface]:>8,} {fs.OUTCOMES[surface, 'valid']:>9,} "
              f"{fs.OUTCOMES[surface, 'refused']:>8,} {seconds:>8.1f}")
    print(f"{'all':<15} {sum(fs.COUNTS[s] for s in args.surfaces):>8,} "
          f"{sum(fs.OUTCOMES[s, 'valid'] for s in args.surfaces):>9,} "
          f"{sum(fs.OUTCOMES[s, 'refused'] for s in args.surfaces):>8,} {total:>8.1f}")
    print(f"{len(crashes)} crashes")
    for surface, text in crashes:
        print(f"\n{surface}: {text[:3000]}")
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
