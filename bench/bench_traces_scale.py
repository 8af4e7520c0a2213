"""Production-size traces: whole-process time and peak memory of ``kvplan trace --sweep``, and kvcache-simulator.

Run ``python bench/make_traces.py DIR`` first, then
``python bench/bench_traces_scale.py DIR [--skip-100m] [--skip-kvcache-sim]``.

Each figure is one whole process (``kvplan trace FILE --sweep --json``, as a
user runs it: imports, reading, the curve, the JSON), timed from start to
exit, with its peak resident memory from ``wait4`` (``ru_maxrss``). Prints:

1. the scaling table: x1, x10, x40, x100 copies of the Mooncake conversation
   trace, x40 as Parquet and gzip JSONL, the synthetic 100M-reference trace;
   seconds, peak MiB, bytes of peak per block reference, and the
   unlimited-cache block hit rate (every xN equals x1's: the copies share no
   block);
2. kvcache-simulator 0.1.3 (``pip install kvcache-simulator``; C++ core, LRU at
   its default GiB budgets that fit, ``--backend cpp``) on x1 and x10 in the
   same run, and the ratio of the two wall times;
3. hit rates aligned through its API: its default metric is token-weighted
   over the last 50 % of requests, with a trie LRU that evicts leaves only;
   the unlimited-cache ("ceiling") token hit rate over every request
   (``warmup_fraction=0``) is the same definition as ours and must match to
   the last digit; at its finite budgets the eviction rules differ, and the
   table shows by how much.

Asserts nothing about time; the machine is shared, so the figures say how
loaded it was (load average printed).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

REPEATS = 3
"""Runs of each side in the comparison (interleaved, so both see the same load)."""

KVSIM_MODEL = "qwen3-8b"
"""kvcache-simulator model id for its GiB budgets (its DeepSeek V4.1 entry fails in 0.1.3: "Unsupported
formula"); Qwen3-8B: 75,497,472 B per 512-token block, 13 budgets that fit x10."""

_KVSIM = """
import json, sys, time
from kvcache_sim.trace import parse_trace_file
from kvcache_sim.simulator import run_sweep
t0 = time.perf_counter()
trace = parse_trace_file(sys.argv[1], block_size=512)
t1 = time.perf_counter()
out = run_sweep(trace, model_id=sys.argv[2], policies=["lru"], backend="cpp", warmup_fraction=float(sys.argv[3]))
t2 = time.perf_counter()
print(json.dumps({"parse_s": t1 - t0, "sweep_s": t2 - t1, "ceiling": out["hitRateCeiling"],
                  "warmup_requests": out["metadata"]["warmupRequests"],
                  "points": [{"blocks": p["cacheBlocks"], "lru": p["results"]["lru"]["hitRate"]} for p in out["points"]]}))
"""


LAST_CPU_S: list[float] = [0.0]
"""CPU seconds (user + system, all threads) of the last timed process."""


def timed(cmd: list[str]) -> tuple[float, float, str]:
    """(wall s, peak RSS MiB, stdout) of one process; its CPU seconds, with those of the processes it
    started (kvcache-simulator's C++ core), go to :data:`LAST_CPU_S`."""
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=ROOT)
    out = proc.stdout.read().decode()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)   # the child and every descendant it waited for
    LAST_CPU_S[0] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[:3]}... {cmd[-3:]} failed with exit code {proc.returncode}")
    return wall, usage.ru_maxrss / 1024, out


def _last_cpu() -> float:
    return LAST_CPU_S[0]


def kvplan(path: str) -> tuple[float, float, dict]:
    wall, peak, out = timed([sys.executable, "-c", "import sys; from planner.cli import main; sys.exit(main())", "trace", path, "--sweep", "--json"])
    return wall, peak, json.loads(out)


_STAGES = """
import json, sys, time
from planner.traces import read_trace, reuse_profile, capacity_curve
c0 = time.process_time()
trace = read_trace(sys.argv[1], max_bytes=None)
c1 = time.process_time()
profile = reuse_profile(trace, with_ages=False)
c2 = time.process_time()
capacity_curve(profile)
c3 = time.process_time()
print(json.dumps({"read": c1 - c0, "profile": c2 - c1, "curve": c3 - c2, "refs": trace.num_block_refs}))
"""


def stages(path: str) -> dict:
    """CPU seconds (process time: all threads) of reading, the stack-distance pass and the curve."""
    _, _, out = timed([sys.executable, "-c", _STAGES, path])
    return json.loads(out)


def kvsim(path: str, warmup_fraction: float) -> tuple[float, float, dict]:
    wall, peak, out = timed([sys.executable, "-c", _KVSIM, path, KVSIM_MODEL, str(warmup_fraction)])
    return wall, peak, json.loads(out)


def ours_on_window(path: str, capacities: list[int], warmup_requests: int) -> tuple[list[float], float]:
    """Our token hit rates over requests >= warmup_requests at each capacity, and the all-request ceiling."""
    sys.path.insert(0, ROOT)
    from planner.traces import read_trace, reuse_profile
    from planner.traces.kernels import COLD

    trace = read_trace(path, max_bytes=None)
    profile = reuse_profile(trace, with_ages=False)
    tokens = profile.ref_tokens
    start = int(trace.block_offsets[warmup_requests])
    rd, tok = profile.run_distance_blocks[start:], tokens[start:]
    total = tok.sum()
    rates = [float(tok[(rd != COLD) & (rd <= c)].sum() / total) for c in capacities]
    ceiling = float(tokens[profile.run_distance_blocks != COLD].sum() / trace.input_tokens.sum())
    return rates, ceiling


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dir", help="folder written by bench/make_traces.py")
    p.add_argument("--skip-100m", action="store_true")
    p.add_argument("--skip-kvcache-sim", action="store_true")
    p.add_argument("--agreement-only", action="store_true",
                   help="only the hit-rate agreement with kvcache-simulator on DIR/x10.jsonl")
    p.add_argument("--files", default=None, help="comma-separated subset of the traces (x1 and x10 are needed "
                                                  "for the comparison)")
    args = p.parse_args(argv)
    if args.agreement_only:
        agreement(os.path.join(args.dir, "x10.jsonl"))
        return 0
    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs (shared machine)\n")
    files = ["x1.jsonl", "x10.jsonl", "x40.jsonl", "x100.jsonl", "x40.parquet", "x40.jsonl.gz"]
    if not args.skip_100m:
        files.append("synthetic-100m.parquet")
    if args.files:
        files = args.files.split(",")
    print("| trace | size | block refs | kvplan trace --sweep (whole process) | peak memory | peak B per ref "
          "| unlimited-cache block hit rate |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    walls = {}
    kvplan(os.path.join(args.dir, "x1.jsonl"))        # warm: the compiled-loop cache, the page cache
    for name in files:
        path = os.path.join(args.dir, name)
        if not os.path.exists(path):
            print(f"| {name} | missing: run bench/make_traces.py | | | | | |")
            continue
        wall, peak, data = kvplan(path)
        walls[name] = wall
        refs = data["block_refs"]
        print(f"| {name} | {os.path.getsize(path) / 1e6:,.0f} MB | {refs:,} | {wall:.2f} s | {peak:,.0f} MiB | "
              f"{peak * 2**20 / refs:.1f} | {data['block_hit_rate']:.4f} |", flush=True)
    print("\nCPU seconds per stage, in process (less sensitive to the machine's load than wall time; "
          "reading uses pyarrow's threads): the stack-distance pass should grow as n log n\n")
    print("| trace | block refs | read | stack distances | curve | stack distances per ref |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name in files:
        path = os.path.join(args.dir, name)
        if os.path.exists(path):
            st = stages(path)
            print(f"| {name} | {st['refs']:,} | {st['read']:.2f} s | {st['profile']:.2f} s | {st['curve']:.2f} s | "
                  f"{st['profile'] / st['refs'] * 1e9:.0f} ns |", flush=True)
    if args.skip_kvcache_sim:
        return 0
    print("\nkvcache-simulator 0.1.3 (C++ core, LRU at its default budgets), same machine, same run; "
          f"{REPEATS} runs each, interleaved, median (min-max):\n")
    kvsim(os.path.join(args.dir, "x1.jsonl"), 0.5)    # compiles its C++ core once, outside the timings
    print("| trace | kvplan (whole process) | kvcache-simulator (whole process: parse + sweep) | ratio of medians |")
    print("| --- | ---: | ---: | ---: |")
    results = {}
    cpu_rows = []
    for name in ("x1.jsonl", "x10.jsonl"):
        path = os.path.join(args.dir, name)
        ours, theirs, ours_cpu, theirs_cpu = [], [], [], []
        for _ in range(REPEATS):
            ours.append(kvplan(path)[0])
            ours_cpu.append(_last_cpu())
            wall, peak, out = kvsim(path, 0.5)
            theirs.append(wall)
            theirs_cpu.append(_last_cpu())
        results[name] = out
        mo, mt = float(np.median(ours)), float(np.median(theirs))
        print(f"| {name} | {mo:.2f} s ({min(ours):.2f}-{max(ours):.2f}) | {mt:.2f} s ({min(theirs):.2f}-"
              f"{max(theirs):.2f}; last: parse {out['parse_s']:.2f} s, sweep {out['sweep_s']:.2f} s, "
              f"{len(out['points'])} budgets, {peak:,.0f} MiB) | {mt / mo:.1f}x |", flush=True)
        cpu_rows.append((name, float(np.median(ours_cpu)), float(np.median(theirs_cpu))))
    print("\nThe same runs in CPU seconds (user + system, all threads; what the load does not inflate):\n")
    print("| trace | kvplan CPU | kvcache-simulator CPU | ratio |")
    print("| --- | ---: | ---: | ---: |")
    for name, mine, theirs_s in cpu_rows:
        print(f"| {name} | {mine:.2f} s | {theirs_s:.2f} s | {theirs_s / mine:.1f}x |")
    agreement(os.path.join(args.dir, "x10.jsonl"), results["x10.jsonl"])
    return 0


def agreement(path: str, out: dict | None = None) -> None:
    """Hit rates aligned with kvcache-simulator's on ``path`` (its run ``out``, or a new one)."""
    out = out or kvsim(path, 0.5)[2]
    print("\nHit rates aligned (x10): token-weighted over the last 50 % of requests at its budgets (its trie LRU "
          "evicts leaves only; ours is block LRU, tail blocks first, with the leading-run rule), and the "
          "unlimited-cache ceiling over all requests:\n")
    caps = [pt["blocks"] for pt in out["points"]]
    ours, ceiling = ours_on_window(path, caps, out["warmup_requests"])
    print("| capacity (blocks) | kvcache-simulator LRU | kvplan | difference |")
    print("| ---: | ---: | ---: | ---: |")
    for c, pt, mine in zip(caps, out["points"], ours):
        print(f"| {c:,} | {pt['lru']:.4f} | {mine:.4f} | {mine - pt['lru']:+.4f} |")
    _, _, all_req = kvsim(path, 0.0)
    diff = np.abs(np.array(ours) - np.array([pt["lru"] for pt in out["points"]]))
    print(f"\nceiling (unlimited cache, all requests, token-weighted): kvcache-simulator {all_req['ceiling']:.6f}, "
          f"kvplan {ceiling:.6f} ({'equal' if abs(all_req['ceiling'] - ceiling) < 1e-12 else 'DIFFERENT'}); "
          f"finite budgets: max |difference| {diff.max() if diff.size else 0:.2e}")


if __name__ == "__main__":
    sys.exit(main())
