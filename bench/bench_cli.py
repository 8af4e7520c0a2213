"""Whole-process time of ``kvplan kv`` against an empty Python start (``python -c pass``).

Run: ``python bench/bench_cli.py [RUNS]`` (default 30). The two commands run in turn (A B A B ...), each as a
fresh process with this checkout first on ``PYTHONPATH``; wall time is a monotonic clock around each child, CPU
time the operating system's own accounting of the finished child (``getrusage(RUSAGE_CHILDREN)``). The ratio is
taken pair by pair, so a machine whose speed drifts moves both sides of a pair together. Prints medians with
min and max; asserts nothing (the tests assert which modules ``kvplan kv`` imports, never a time).

The command is the ``kvplan`` console script installed next to this Python when there is one (what a user
runs), else the same entry point through ``python -c``.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KV_ARGS = ["kv", "--model", "deepseek-v4.1-flash", "--context", "1m"]


def kvplan_command() -> list[str]:
    """The console script next to this interpreter, or its entry point run by this interpreter."""
    script = Path(sys.executable).parent / "kvplan"
    if script.is_file() and b"python" in script.read_bytes().split(b"\n", 1)[0]:
        return [str(script), *KV_ARGS]
    return [sys.executable, "-c", "import sys; from planner.cli import main; sys.exit(main())", *KV_ARGS]


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, user + system CPU seconds) of one run of ``cmd``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.decode()[-500:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def spread(values: list[float], scale: float = 1.0, unit: str = "") -> str:
    return (f"median {statistics.median(values) * scale:.3g}{unit} "
            f"(min {min(values) * scale:.3g}{unit}, max {max(values) * scale:.3g}{unit})")


def main(runs: int = 30) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    a, b = kvplan_command(), [sys.executable, "-c", "pass"]
    print(f"A: {' '.join(a)}\nB: {' '.join(b)}\n{runs} pairs after 2 warm-up pairs; {os.cpu_count()} CPUs")
    for _ in range(2):
        timed(a, env), timed(b, env)
    pairs = [(timed(a, env), timed(b, env)) for _ in range(runs)]
    a_wall = [p[0][0] for p in pairs]
    b_wall = [p[1][0] for p in pairs]
    a_cpu = [p[0][1] for p in pairs]
    b_cpu = [p[1][1] for p in pairs]
    print(f"A wall: {spread(a_wall, 1e3, ' ms')}; cpu: {spread(a_cpu, 1e3, ' ms')}")
    print(f"B wall: {spread(b_wall, 1e3, ' ms')}; cpu: {spread(b_cpu, 1e3, ' ms')}")
    print(f"A/B wall, pair by pair: {spread([x / y for x, y in zip(a_wall, b_wall)], 1, 'x')}")
    print(f"A/B cpu, pair by pair: {spread([x / max(y, 1e-9) for x, y in zip(a_cpu, b_cpu)], 1, 'x')}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 30)
