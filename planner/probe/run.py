"""Run one live probe: cap check, allocate, fill, measure, release, verify, report.

Order of events (each step's memory reading is taken with nothing else live):

1. plan the pool (:func:`planner.probe.layout.plan_pool`) and check it against
   ``max_fraction`` x free memory (CUDA ``mem_get_info``; CPU ``MemAvailable``, or
   less: the headroom under ``ulimit -v`` / ``-d`` or the memory cgroup),
   fill scratch included; a larger request is refused with a PlanInputError that
   says how many tokens would fit;
2. warm up (CUDA context, kernels, tables), collect garbage, read the baseline;
3. allocate the pool, fill every block, free the scratch, read again:
   ``measured`` = allocated delta (CUDA) or storage bytes (CPU), ``resident`` =
   driver free delta (CUDA) or RSS delta (CPU), ``reserved`` delta (CUDA);
4. release everything, read again: ``residual`` is what did not come back;
5. measure each format's round-trip error and speed on its own sample.

One probe at a time per process (a module lock; a second caller waits up to
``lock_timeout_s`` and is then refused), and a wall-clock ``time_limit_s``
checked between chunks (a single torch op is not interrupted).
"""

from __future__ import annotations

import gc
import math
import threading
from datetime import datetime, timezone

from planner.errors import PlanInputError
from planner.kv.models import NATIVE
from planner.probe._torch import require_torch
from planner.probe.errors import ProbeBusyError
from planner.probe.layout import DEFAULT_BLOCK_SIZE, PoolLayout, plan_pool, tokens_that_fit
from planner.probe.memory import cpu_name, cuda_snapshot, host_memory, malloc_trim, process_limits, rss_bytes
from planner.probe.result import ProbeResult, make_probe_result
from planner.units import MiB, format_bytes
from planner.messages import msg

_PROBE_LOCK = threading.Lock()
"""One probe at a time in this process."""

DEFAULT_MAX_FRACTION = 0.5
"""Largest share of free memory a probe may take, pool and scratch together."""
DEFAULT_TIME_LIMIT_S = 120.0
"""Default wall-clock limit of a probe, seconds."""
CPU_RELEASE_TOLERANCE_BYTES = 16 * MiB
"""RSS may stay this much (or 1 % of the pool) above the baseline after release on the CPU
(heap pages glibc keeps); CUDA must return to the exact allocated baseline."""
QUALITY_ELEMENTS = {"cpu": 1 << 19, "cuda": 1 << 24}
"""Values per format in the round-trip error sample."""
SPEED_ELEMENTS = {"cpu": 1 << 21, "cuda": 1 << 26}
"""Values per format in the throughput sample (CPU: 8 MiB of float32; CUDA: 128 MiB of bfloat16)."""


def probe_lock() -> threading.Lock:
    """The process-wide probe lock (tests hold it to simulate a running probe)."""
    return _PROBE_LOCK


def resolve_device(torch, device: str):
    """"auto" -> CUDA when torch sees one, else the CPU.

    Raises:
        PlanInputError: not one of auto, cuda, cuda:N, cpu; or CUDA asked for but not visible.
    """
    if device in (None, "auto"):
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if not isinstance(device, str) or not (device == "cpu" or device == "cuda" or
                                           (device.startswith("cuda:") and device[5:].isdigit())):
        raise PlanInputError("device", device, msg("auto, cuda, cuda:N or cpu"))
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            raise PlanInputError("device", device, msg("cpu: torch {version} sees no CUDA device here",
                                                       version=torch.__version__))
        dev = torch.device(device)
        index = dev.index if dev.index is not None else torch.cuda.current_device()
        if index >= torch.cuda.device_count():
            raise PlanInputError("device", device, msg("cuda:0 to cuda:{value}", value=torch.cuda.device_count() - 1))
        return torch.device("cuda", index)
    return torch.device("cpu")


def check_fraction(value: object) -> float:
    """Validate ``max_fraction``: a number in (0, 1].

    Raises:
        PlanInputError: otherwise.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not 0 < value <= 1:
        raise PlanInputError("max_fraction", value, msg("a fraction of free memory in (0, 1]"))
    return float(value)


def fill_scratch_bytes(layout: PoolLayout, device_type: str) -> int:
    """Upper bound of the fill's temporary memory: float32 chunk, its temporaries, one tile."""
    from planner.probe.pool import CUDA_CHUNK_ELEMENTS, TILE_ELEMENTS

    budget = CUDA_CHUNK_ELEMENTS if device_type == "cuda" else TILE_ELEMENTS
    widest = max((sum(v.count * v.num_channels for v in g.vectors) for g in layout.groups), default=1)
    elements = max(budget, widest)
    return 6 * 4 * elements  # x, |x|, codes and rounding temporaries, all float32-sized


def measure_scratch_bytes(device_type: str) -> int:
    """Upper bound of the format measurements' memory (source, copy, codes, output, temporaries)."""
    return 6 * 4 * max(SPEED_ELEMENTS[device_type], QUALITY_ELEMENTS[device_type])


def _collect(torch, device, *, full: bool = True) -> None:
    """Free what was dropped: Python cycles (``full``), CUDA cached segments, glibc heap pages."""
    if full:
        gc.collect()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        torch.cuda.empty_cache()
    else:
        malloc_trim()


def run_probe(model_id: str, num_tokens: int, kv_format: str = NATIVE, *, device: str = "auto",
              block_size: int = DEFAULT_BLOCK_SIZE, max_fraction: float = DEFAULT_MAX_FRACTION,
              fill: str | None = None, seed: int = 0, time_limit_s: float = DEFAULT_TIME_LIMIT_S,
              lock_timeout_s: float = 0.0, measure_formats: bool = True, cpu_threads: int | None = 1,
              progress=None) -> ProbeResult:
    """Allocate the model's quantized KV pool for ``num_tokens`` tokens and measure it.

    Args:
        model_id, num_tokens, kv_format, block_size: the pool (see :func:`plan_pool`).
        device: "auto" (CUDA if visible, else CPU), "cuda", "cuda:N" or "cpu".
        max_fraction: largest share of free memory to use, in (0, 1].
        fill: "quantize" or "tile"; None = quantize on CUDA, tile on the CPU.
        seed: synthetic data seed.
        time_limit_s: wall-clock limit (checked between chunks).
        lock_timeout_s: how long to wait for another probe in this process.
        measure_formats: also measure round-trip error and throughput.
        cpu_threads: torch intra-op threads while a CPU probe runs (restored afterwards); None
            keeps torch's setting. Default 1: the work is cut into cache-sized chunks, which
            threads split at a loss (on a shared 2-vCPU VM a 16K-token pool took 1.0 s on one
            thread and 2.3-3.3 s on two), and copy and quantize are timed alike.
        progress: optional ``callback(stage: str, fraction: float)``.

    Raises:
        PlanInputError: bad input, or a pool over ``max_fraction`` of free memory
            (the message says how many tokens fit).
        ProbeUnavailableError: torch missing.
        ProbeBusyError: another probe held the lock past ``lock_timeout_s``.
        ProbeTimeoutError: past ``time_limit_s`` (memory released first).
    """
    layout = plan_pool(model_id, num_tokens, kv_format, block_size)
    fraction = check_fraction(max_fraction)
    if fill not in (None, "quantize", "tile"):
        raise PlanInputError("fill", fill, msg("quantize or tile (or None for the device's default)"))
    if isinstance(time_limit_s, bool) or not isinstance(time_limit_s, (int, float)) \
            or not 0 < time_limit_s <= 3600:
        raise PlanInputError("time_limit_s", time_limit_s, msg("seconds in (0, 3600]"))
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**62:
        raise PlanInputError("seed", seed, msg("a whole number in [0, 2**62)"))
    if isinstance(lock_timeout_s, bool) or not isinstance(lock_timeout_s, (int, float)) \
            or not 0 <= lock_timeout_s <= 3600:
        raise PlanInputError("lock_timeout_s", lock_timeout_s, msg("seconds in [0, 3600]"))
    if cpu_threads is not None and (isinstance(cpu_threads, bool) or not isinstance(cpu_threads, int)
                                    or not 1 <= cpu_threads <= 4096):
        raise PlanInputError("cpu_threads", cpu_threads, msg("a whole number of threads in [1, 4096], or None"))
    torch = require_torch()
    dev = resolve_device(torch, device)
    acquired = (_PROBE_LOCK.acquire(timeout=lock_timeout_s) if lock_timeout_s > 0
                else _PROBE_LOCK.acquire(blocking=False))
    if not acquired:
        raise ProbeBusyError(msg("another probe is running in this process (waited {seconds:g} s); try again when it "
                                 "has finished", seconds=lock_timeout_s) if lock_timeout_s > 0 else
                             msg("another probe is running in this process; try again when it has finished"))
    threads_before = torch.get_num_threads()
    try:
        if dev.type == "cpu" and cpu_threads is not None:
            torch.set_num_threads(cpu_threads)
        return _run_locked(torch, layout, dev, fraction=fraction, fill=fill or ("quantize" if dev.type == "cuda"
                                                                                   else "tile"),
                           seed=seed, time_limit_s=float(time_limit_s), measure_formats=measure_formats,
                           progress=progress)
    finally:
        torch.set_num_threads(threads_before)
        _PROBE_LOCK.release()


def _run_locked(torch, layout: PoolLayout, dev, *, fraction: float, fill: str, seed: int, time_limit_s: float,
                measure_formats: bool, progress) -> ProbeResult:
    from planner.probe import pool as pool_mod
    from planner.probe.quant import quantize

    deadline = pool_mod.Deadline(time_limit_s)
    is_cuda = dev.type == "cuda"
    limit_note = None

    # warm-up: CUDA context, kernels and lookup tables, so that the baseline excludes lazy init
    warm = torch.randn((4, 512), device=dev)
    for fmt in layout.formats:
        quantize(warm, fmt)
    del warm
    _collect(torch, dev)

    if is_cuda:
        start = cuda_snapshot(torch, dev)
        free_bytes, total_bytes = start.free, start.total
        name = torch.cuda.get_device_name(dev)
    else:
        host = host_memory()
        free_bytes, total_bytes = host.available, host.total
        name = cpu_name()
        limits = process_limits()  # ulimit -v / -d and the container's cgroup: /proc/meminfo knows neither
        if limits and limits[0].headroom_bytes < free_bytes:
            free_bytes = limits[0].headroom_bytes
            total_bytes = min(total_bytes, limits[0].limit_bytes)
            limit_note = (f"Free memory is this process's headroom under its {limits[0].source}: "
                          f"{format_bytes(free_bytes)} of {format_bytes(limits[0].limit_bytes)} (host MemAvailable "
                          f"{format_bytes(host.available)}).")

    # 1. the cap: pool + scale tensors + scratch must fit in max_fraction x free
    cap = math.floor(fraction * free_bytes)
    scratch = max(fill_scratch_bytes(layout, dev.type), measure_scratch_bytes(dev.type))
    scale_reserve = 4 * MiB  # per-tensor scale tensors: a few bytes per layer, rounded up generously
    fit_cap = tokens_that_fit(layout, cap - scratch - scale_reserve)
    if layout.pool_bytes + scratch + scale_reserve > cap:
        raise PlanInputError(
            "tokens", layout.num_tokens,
            msg("at most {fit_cap:,} tokens on this {type} ({model_id}, {kv_format}): the pool needs {size} plus "
                "{size2} scratch, over max_fraction {fraction:g} x free {size3} = {size4}{value}", fit_cap=fit_cap,
                type=dev.type, model_id=layout.model_id, kv_format=layout.kv_format,
                size=format_bytes(layout.pool_bytes), size2=format_bytes(scratch), fraction=fraction,
                size3=format_bytes(free_bytes), size4=format_bytes(cap),
                value=f" (free = headroom under {limits[0].source})" if limit_note else ""))

    if progress:
        progress("allocating", 0.0)
    pool = None
    try:
        pool = pool_mod.allocate_scales(layout, dev)  # a few bytes per layer, kept out of the measured delta
        scale_bytes = pool.scale_bytes()
        if is_cuda:
            before = cuda_snapshot(torch, dev)
        rss0 = rss_bytes()  # after the scales too: tiny, and the release check compares with this
        pool_mod.allocate_blocks(pool)
        pool_mod.fill(pool, mode=fill, seed=seed, deadline=deadline, progress=progress)
        _collect(torch, dev, full=False)  # fill scratch is gone (refcounts); return its cached segments / pages
        if is_cuda:
            after = cuda_snapshot(torch, dev)
            measured = after.allocated - before.allocated
            resident = max(0, before.free - after.free)
            reserved = max(0, after.reserved - before.reserved)
        else:
            measured = pool.storage_bytes()
            resident = max(0, rss_bytes() - rss0)
            reserved = None
        if progress:
            progress("releasing", 1.0)
        pool.release()
        pool = None
        _collect(torch, dev)
        if is_cuda:  # scale tensors and pool both released: back to the allocation before either
            residual = cuda_snapshot(torch, dev).allocated - start.allocated
            released = residual == 0
        else:
            residual = rss_bytes() - rss0
            released = residual <= max(CPU_RELEASE_TOLERANCE_BYTES, layout.pool_bytes // 100)
    finally:
        if pool is not None:  # an error or the time limit: drop the pool before re-raising
            pool.release()
            _collect(torch, dev)

    quality, throughput = [], []
    if measure_formats:
        source_dtype = torch.bfloat16 if is_cuda else torch.float32
        samples = pool_mod.format_samples(layout)
        for i, (fmt, channels, role) in enumerate(samples):
            deadline.check(f"measuring {fmt}")
            if progress:
                progress(f"measuring {fmt}", i / max(1, len(samples)))
            quality.append(pool_mod.measure_quality(fmt, channels, role, device=dev, seed=seed,
                                                    num_elements=QUALITY_ELEMENTS[dev.type]))
            throughput.append(pool_mod.measure_throughput(fmt, channels, device=dev, seed=seed,
                                                          num_elements=SPEED_ELEMENTS[dev.type],
                                                          source_dtype=source_dtype))
            _collect(torch, dev)

    n = layout.num_tokens
    measured_per_token = measured / n
    notes = list(layout.notes)
    if limit_note:
        notes.append(limit_note)
    if fill == "tile":
        notes.append("Filled by tiling one quantized synthetic tile (up to 4,096 entries) per group over every "
                     "block: every page is written; errors are measured on their own sample.")
    if not is_cuda:
        notes.append(f"CPU work ran on {torch.get_num_threads()} torch thread(s).")
        notes.append("CPU: measured = the pool tensors' storage bytes; resident = the process RSS delta "
                     "(page-granular, includes allocator and other threads' changes).")
    result = make_probe_result(
        timestamp=datetime.now(timezone.utc), device=dev.type, device_name=name,
        total_bytes=total_bytes, free_bytes=free_bytes, torch_version=str(torch.__version__),
        cuda_version=str(torch.version.cuda) if is_cuda and torch.version.cuda else None,
        model_id=layout.model_id, kv_format=layout.kv_format, num_tokens=n, block_size=layout.block_size,
        fill=fill, seed=seed, max_fraction=fraction,
        groups=[dict(name=g.name, role=g.role, kv_format=g.kv_format, num_layers=g.num_layers,
                     entry_bytes=g.entry_bytes, entries=g.entries, entries_per_block=g.entries_per_block,
                     num_blocks=g.num_blocks, pool_bytes=g.pool_bytes) for g in layout.groups],
        predicted_bytes=layout.predicted_bytes, predicted_bytes_per_token=layout.predicted_bytes / n,
        pool_bytes=layout.pool_bytes, tensor_scale_bytes=scale_bytes, measured_bytes=measured,
        measured_bytes_per_token=measured_per_token,
        measured_over_predicted=(measured / layout.predicted_bytes) if layout.predicted_bytes else None,
        resident_bytes=resident, reserved_bytes=reserved, allocator_overhead_bytes=resident - measured,
        tokens_fit_free=tokens_that_fit(layout, free_bytes),
        tokens_fit_cap=fit_cap, released=released, residual_bytes=residual,
        quality=quality, throughput=throughput, elapsed_s=deadline.elapsed_s(), notes=notes,
    )
    if progress:
        progress("done", 1.0)
    return result
