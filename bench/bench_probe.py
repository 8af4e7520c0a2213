"""Speed figures: CPU quantize/dequantize throughput next to a plain copy of the same
bytes (target: quantize >= 20 % of copy), and the 1M-token DeepSeek V4.1-Flash pool
alloc + fill + measure time on the CPU (target < 10 s), plus the CLI end to end.

Run: ``python bench/bench_probe.py`` (needs torch). Prints figures; asserts nothing (tests
carry no timings). Figures are best of N (least disturbed by other load on a shared machine);
``--quick`` prints the one-thread throughput table only.

Reading the quant/copy column: a copy is one pass over the data, and on the CPU every eager
torch op is a pass of about the same cost, so quant/copy is at best about 1 / (passes per
value). nvfp4 and mxfp4 make 15 passes (planner/probe/quant_cpu.py, ``_quantize_chunk_cpu``),
mxfp8 five, one of them a scalar fp8 cast: a copy that stays in the cache (the 8 MiB rows)
runs 10-16x faster than the fp4 quantizers, a copy from DRAM (the 256 MiB rows) 5-9x.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
REPEATS = 5
"""Timed runs per figure (after one warm-up); the best is kept, for copy and quantize alike."""


def throughput_table(torch, threads: int) -> None:
    from planner.probe.pool import measure_throughput

    torch.set_num_threads(threads)
    cpu = torch.device("cpu")
    cpu_time = threads == 1
    print(f"\nCPU throughput, {threads} torch thread(s), float32 source, best of {REPEATS} "
          "(GB/s of source bytes; copy = dst.copy_(src) of the same tensor in the same run)")
    print(f"{'format':<7} {'ch':>4} {'source':>9} {'quant GB/s':>10} {'deq GB/s':>9} {'copy GB/s':>9} "
          f"{'quant/copy':>10} {'deq/copy':>9}" + (f" {'q/c CPU time':>12}" if cpu_time else ""))
    for fmt, ch in (("nvfp4", 512), ("mxfp4", 128), ("mxfp8", 512), ("fp8", 512), ("bf16", 512)):
        for elements in (1 << 21, 1 << 26):  # 8 MiB (cache-resident copy) and 256 MiB (DRAM-bound copy)
            t = measure_throughput(fmt, ch, device=cpu, seed=0, num_elements=elements, source_dtype=torch.float32,
                                   repeats=REPEATS)
            line = (f"{fmt:<7} {ch:>4} {t.source_bytes / 2**20:>6.0f} MiB {t.quantize_gbps:>10.3f} "
                    f"{t.dequantize_gbps:>9.3f} {t.copy_gbps:>9.2f} {t.quantize_over_copy:>10.1%} "
                    f"{t.dequantize_over_copy:>9.1%}")
            if cpu_time:
                line += f" {quantize_over_copy_cpu_time(torch, fmt, ch, elements):>12.1%}"
            print(line)
    if cpu_time:
        print("(q/c CPU time: quant/copy on this thread's CPU time; on a loaded machine the wall clock also "
              "counts preemption, which hits the 10-20x longer quantize harder than the copy)")


def quantize_over_copy_cpu_time(torch, fmt: str, channels: int, elements: int) -> float:
    """quant/copy of :func:`planner.probe.pool.measure_throughput`'s setup, timed on this thread's
    CPU time (best of REPEATS, interleaved): what one thread gets done per CPU-second."""
    from planner.probe.pool import outlier_channels, synthetic_kv
    from planner.kv.formats import get_format
    from planner.probe.quant import quantize_rows, tensor_scale_for
    from planner.probe.quant_cpu import QuantScratch

    rows = elements // channels
    x = synthetic_kv((rows, channels), generator=torch.Generator().manual_seed(0), device=torch.device("cpu"),
                     outliers=outlier_channels(channels, 0))
    scale = tensor_scale_for(x, fmt)
    data = torch.empty((rows, get_format(fmt).vector_bytes(channels)), dtype=torch.uint8)
    dst, scratch = torch.empty_like(x), QuantScratch()
    best = {"copy": float("inf"), "quant": float("inf")}
    runs = {"copy": lambda: dst.copy_(x),
            "quant": lambda: quantize_rows(x, fmt, out=data, tensor_scale=scale, scratch=scratch)}
    for fn in runs.values():
        fn()  # warm-up
    for _ in range(REPEATS):
        for name, fn in runs.items():
            start = time.thread_time()
            fn()
            best[name] = min(best[name], time.thread_time() - start)
    return best["copy"] / best["quant"]


def pool_time() -> None:
    from planner.probe import run_probe

    run_probe("deepseek-v4.1-flash", 16, "nvfp4", device="cpu", measure_formats=False)  # warm-up
    for formats in (False, True):
        runs = []
        for _ in range(3):
            t = time.perf_counter()
            r = run_probe("deepseek-v4.1-flash", 1_000_000, "nvfp4", device="cpu", measure_formats=formats)
            runs.append(time.perf_counter() - t)
        print(f"\nV4.1-Flash, 1,000,000 tokens, nvfp4, CPU, {'with' if formats else 'without'} format runs: "
              f"alloc + fill + measure + release best {min(runs):.2f} s, worst {max(runs):.2f} s over 3")
        print(f"  measured {r.measured_bytes:,} B = {r.measured_bytes_per_token:.6f} B/token "
              f"(ratio {r.measured_over_predicted:.8f}); resident {r.resident_bytes:,} B "
              f"(overhead {r.allocator_overhead_bytes:+,} B = {r.overhead_over_measured:+.3%}); "
              f"released {r.released} (residual {r.residual_bytes:+,} B)")


def cli_time() -> None:
    argv = [sys.executable, "-c", "import sys; from planner.cli import main; sys.exit(main(sys.argv[1:]))",
            "probe", "--model", "deepseek-v4.1-flash", "--tokens", "1000000", "--kv-format", "nvfp4",
            "--device", "cpu", "--json"]
    runs = []
    for _ in range(2):
        t = time.perf_counter()
        proc = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT)
        runs.append(time.perf_counter() - t)
        assert proc.returncode == 0, proc.stderr
    print(f"\nkvplan probe ... --tokens 1000000 --device cpu --json, end to end (python start, torch import, "
          f"probe, format runs): best {min(runs):.2f} s, worst {max(runs):.2f} s over 2")


def main() -> None:
    import torch

    threads = torch.get_num_threads()
    with open("/proc/loadavg", encoding="ascii") as fh:
        load = fh.read().split()[:3]
    print(f"torch {torch.__version__}, {threads} intra-op threads by default; load average {' '.join(load)}")
    throughput_table(torch, 1)
    if "--quick" in sys.argv[1:]:
        return
    if threads > 1:
        throughput_table(torch, threads)
    torch.set_num_threads(threads)
    pool_time()
    cli_time()


if __name__ == "__main__":
    main()
