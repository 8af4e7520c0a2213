"""The paged KV pool in torch: allocate, fill with quantized synthetic KV, measure formats.

Synthetic KV: standard normal values with a few outlier channels (1 in 64 of a
vector's channels, at least one, scaled by :data:`OUTLIER_SCALE`), the shape of
real K caches, where a handful of channels carry most of the magnitude
(KIVI, arXiv:2402.02750, §3). Outlier channels are fixed per group and seed.

Fill modes:

* ``quantize``: every entry is generated and quantized, chunk by chunk
  (default on CUDA, where it is fast);
* ``tile``: one tile of up to 4,096 entries is generated and quantized per
  group, then copied over every block of every layer (default on the CPU, where
  generating 1.3 G normal values for a 1M-token V4.1 pool would take minutes).
  Every page is written either way, so every page is resident; the round-trip
  errors are measured on their own sample (:func:`measure_quality`).

Per-tensor FP32 scales (nvfp4's second level, fp8's) live in a small tensor per
group, ``[num_layers, len(vectors)]``, on the same device, allocated before the
measurement's baseline: counted in ``tensor_scale_bytes``, not in the measured
per-token bytes, as the planner leaves them out.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from planner.probe._torch import require_torch
from planner.probe.errors import ProbeTimeoutError
from planner.probe.layout import PoolGroup, PoolLayout
from planner.probe.quant import (
    CUDA_CHUNK_ELEMENTS,
    default_rows_per_chunk,
    dequantize,
    quantize,
    tensor_scale_for,
)
from planner.probe.quant_cpu import QuantScratch
from planner.probe.result import FormatQuality, FormatThroughput
from planner.units import GB

torch = require_torch()

OUTLIER_SCALE = 10.0
"""Outlier channels are this many times the others' standard deviation."""
OUTLIER_EVERY = 64
"""One outlier channel per this many channels (at least one per vector)."""
TILE_ENTRIES = 4096
"""Most entries in one fill tile."""
TILE_ELEMENTS = 1 << 22
"""Most synthetic values in one fill tile or chunk on the CPU (4 Mi float32 = 16 MiB)."""
SCALED_FORMATS = ("nvfp4", "fp8", "fp8-e5m2")
"""Formats with a per-tensor FP32 scale."""


class Deadline:
    """A wall-clock limit: :meth:`check` raises once ``limit_s`` seconds have passed."""

    def __init__(self, limit_s: float, *, what: str = "probe") -> None:
        self.limit_s = limit_s
        self.what = what
        self.start = time.monotonic()

    def elapsed_s(self) -> float:
        """Seconds since the start."""
        return time.monotonic() - self.start

    def check(self, stage: str) -> None:
        """Raise :class:`ProbeTimeoutError` if past the limit."""
        if self.elapsed_s() > self.limit_s:
            raise ProbeTimeoutError(f"the {self.what} ran past its time limit of {self.limit_s:g} s "
                                    f"(while {stage}); everything it allocated is released")


@dataclass
class KVPool:
    """Allocated pool tensors, one per layout group, and their per-tensor scales."""

    layout: PoolLayout
    device: object
    data: list = field(default_factory=list)
    scales: list = field(default_factory=list)

    def storage_bytes(self) -> int:
        """Bytes of the paged KV tensors' storages (the allocation torch made; scales apart)."""
        return sum(int(t.untyped_storage().nbytes()) for t in self.data)

    def scale_bytes(self) -> int:
        """Bytes of the per-tensor scale tensors."""
        return sum(int(t.untyped_storage().nbytes()) for t in self.scales if t is not None)

    def release(self) -> None:
        """Drop every tensor reference (the caller frees caches and measures)."""
        self.data.clear()
        self.scales.clear()


def allocate_scales(layout: PoolLayout, device) -> KVPool:
    """A pool holding only the per-tensor scale tensors (allocated first, so that the
    measured delta of :func:`allocate_blocks` is the paged KV alone)."""
    pool = KVPool(layout=layout, device=device)
    for g in layout.groups:
        needs_scale = g.kv_format in SCALED_FORMATS and g.vectors
        pool.scales.append(torch.ones((g.num_layers, len(g.vectors)), dtype=torch.float32, device=device)
                           if needs_scale else None)
    return pool


def allocate_blocks(pool: KVPool) -> KVPool:
    """Allocate (uninitialised) the paged KV tensors of ``pool.layout``."""
    for g in pool.layout.groups:
        pool.data.append(torch.empty(g.shape, dtype=torch.uint8, device=pool.device))
    return pool


def allocate(layout: PoolLayout, device) -> KVPool:
    """Allocate the scale tensors and (uninitialised) paged KV tensors of ``layout`` on ``device``."""
    return allocate_blocks(allocate_scales(layout, device))


def outlier_channels(num_channels: int, seed: int):
    """Indices of the outlier channels of a vector (CPU tensor), fixed by ``seed``."""
    gen = torch.Generator().manual_seed(seed)
    k = max(1, num_channels // OUTLIER_EVERY)
    return torch.randperm(num_channels, generator=gen)[:k]


def synthetic_kv(shape, *, generator, device, outliers, dtype=None):
    """Normal values of ``shape`` (channels last) with ``outliers`` channels x OUTLIER_SCALE."""
    x = torch.randn(shape, generator=generator, device=device, dtype=torch.float32)
    x[..., outliers.to(x.device)] *= OUTLIER_SCALE
    return x if dtype is None or dtype == torch.float32 else x.to(dtype)


def _generator(device, seed: int):
    return torch.Generator(device=device).manual_seed(seed)


def _elements_per_entry(g: PoolGroup) -> int:
    return sum(v.count * v.num_channels for v in g.vectors)


def _quantize_entries(xs, g: PoolGroup, scales, out) -> None:
    """Quantize synthetic vectors ``xs`` (one ``[rows, count, channels]`` per vector spec)
    into entries ``out [rows, entry_bytes]``, in cache-sized row chunks on the CPU."""
    from planner.kv.formats import get_format

    fmt = get_format(g.kv_format)
    rows = out.shape[0]
    offset = 0
    scratch = QuantScratch()  # the CPU path's buffers, reused by every chunk
    for spec, x, scale in zip(g.vectors, xs, scales):
        width = spec.count * fmt.vector_bytes(spec.num_channels)
        target = out[:, offset:offset + width].view(rows, spec.count, width // spec.count)
        step = max(1, default_rows_per_chunk(x.view(rows, -1)))
        for start in range(0, rows, step):
            quantize(x[start:start + step], g.kv_format, tensor_scale=scale, out=target[start:start + step],
                     scratch=scratch)
        offset += width


def _make_entries(g: PoolGroup, rows: int, *, generator, device, outliers, scales=None):
    """``rows`` quantized synthetic entries of group ``g``: (uint8 ``[rows, entry_bytes]``, scales)."""
    xs = [synthetic_kv((rows, v.count, v.num_channels), generator=generator, device=device, outliers=o)
          for v, o in zip(g.vectors, outliers)]
    if scales is None:
        scales = [tensor_scale_for(x, g.kv_format) for x in xs]
    out = torch.empty((rows, g.entry_bytes), dtype=torch.uint8, device=device)
    _quantize_entries(xs, g, scales, out)
    return out, scales


def fill(pool: KVPool, *, mode: str, seed: int, deadline: Deadline, progress=None) -> None:
    """Write quantized synthetic KV into every block of every layer of ``pool``.

    Args:
        mode: "tile" or "quantize" (see the module docstring).
        seed: fixes the synthetic values and outlier channels.
        deadline: checked between chunks and layers.
        progress: optional ``callback(stage: str, fraction: float)``.
    """
    device = pool.device
    total = max(1, sum(g.num_layers * g.num_blocks for g in pool.layout.groups))
    done = 0
    for gi, g in enumerate(pool.layout.groups):
        data = pool.data[gi]
        rows = g.num_blocks * g.entries_per_block
        flat = data.view(g.num_layers, rows, g.entry_bytes)
        gen = _generator(device, seed + 7919 * gi)
        if not g.vectors:  # raw fixed state: random bytes
            for layer in range(g.num_layers):
                flat[layer].copy_(torch.randint(0, 256, (rows, g.entry_bytes), generator=gen, device=device,
                                                dtype=torch.uint8))
            done += g.num_layers * g.num_blocks
            continue
        outliers = [outlier_channels(v.num_channels, seed + i) for i, v in enumerate(g.vectors)]
        per_entry = _elements_per_entry(g)
        if mode == "tile":
            budget = TILE_ELEMENTS if device.type != "cuda" else CUDA_CHUNK_ELEMENTS
            tile_rows = max(1, min(rows, TILE_ENTRIES, budget // per_entry))
            tile, scales = _make_entries(g, tile_rows, generator=gen, device=device, outliers=outliers)
            _store_scales(pool, gi, scales)
            reps, rest = divmod(rows, tile_rows)
            for layer in range(g.num_layers):
                deadline.check(f"filling {g.name}")
                if reps:
                    flat[layer, :reps * tile_rows].view(reps, tile_rows, g.entry_bytes).copy_(
                        tile.unsqueeze(0).expand(reps, tile_rows, g.entry_bytes))
                if rest:
                    flat[layer, reps * tile_rows:].copy_(tile[:rest])
                done += g.num_blocks
                if progress:
                    progress(f"filling {g.name}", done / total)
            del tile
        elif mode == "quantize":
            budget = CUDA_CHUNK_ELEMENTS if device.type == "cuda" else TILE_ELEMENTS
            chunk = max(1, budget // per_entry)
            for layer in range(g.num_layers):
                scales = None
                for start in range(0, rows, chunk):
                    deadline.check(f"filling {g.name}")
                    n = min(chunk, rows - start)
                    entries, scales = _make_entries(g, n, generator=gen, device=device, outliers=outliers,
                                                    scales=scales)  # the first chunk calibrates the scale
                    flat[layer, start:start + n].copy_(entries)
                    del entries
                _store_scales(pool, gi, scales, layer=layer)
                done += g.num_blocks
                if progress:
                    progress(f"filling {g.name}", done / total)
        else:
            raise ValueError(f"fill mode {mode!r}")
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _store_scales(pool: KVPool, gi: int, scales, layer: int | None = None) -> None:
    target = pool.scales[gi]
    if target is None or scales is None:
        return
    values = torch.stack([s.reshape(()).float() for s in scales])
    if layer is None:
        target.copy_(values.unsqueeze(0).expand_as(target))
    else:
        target[layer].copy_(values)


# ---------------------------------------------------------------------------
# Formats: round-trip error and speed
# ---------------------------------------------------------------------------

def _sync(device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _best_time_s(fn, device, repeats: int) -> float:
    """Best of ``repeats`` timed runs after one warm-up (least disturbed by other load)."""
    fn()
    _sync(device)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        _sync(device)
        best = min(best, time.perf_counter() - start)
    return max(best, 1e-9)


def measure_quality(format_id: str, num_channels: int, role: str, *, device, seed: int,
                    num_elements: int) -> FormatQuality:
    """Round-trip error of ``format_id`` on ``num_elements`` synthetic values (vectors of ``num_channels``)."""
    rows = max(1, num_elements // num_channels)
    x = synthetic_kv((rows, num_channels), generator=_generator(device, seed), device=device,
                     outliers=outlier_channels(num_channels, seed))
    scale = tensor_scale_for(x, format_id)
    y = torch.empty_like(x)
    step = default_rows_per_chunk(x)
    scratch = QuantScratch()
    for start in range(0, rows, step):
        data, _ = quantize(x[start:start + step], format_id, tensor_scale=scale, scratch=scratch)
        y[start:start + step] = dequantize(data, format_id, num_channels, tensor_scale=scale)
    err = (y - x).double()
    rel = float(err.norm() / x.double().norm())
    return FormatQuality(kv_format=format_id, role=role, num_channels=num_channels, num_elements=rows * num_channels,
                         rel_rmse=rel, max_abs_error=float(err.abs().max()), max_abs_value=float(x.abs().max()))


def measure_throughput(format_id: str, num_channels: int, *, device, seed: int, num_elements: int,
                       source_dtype, repeats: int = 3) -> FormatThroughput:
    """Quantize and dequantize GB/s of ``format_id`` and a plain copy of the same source
    bytes, in the same run (best of ``repeats`` each)."""
    from planner.kv.formats import get_format
    from planner.probe.quant import dequantize_rows, quantize_rows

    rows = max(1, num_elements // num_channels)
    x = synthetic_kv((rows, num_channels), generator=_generator(device, seed), device=device,
                     outliers=outlier_channels(num_channels, seed), dtype=source_dtype)
    scale = tensor_scale_for(x, format_id)
    data = torch.empty((rows, get_format(format_id).vector_bytes(num_channels)), dtype=torch.uint8, device=device)
    back = torch.empty_like(x)
    dst = torch.empty_like(x)
    nbytes = x.numel() * x.element_size()
    scratch = QuantScratch()  # work buffers, like dst for the copy: allocated once, outside the timing
    t_copy = _best_time_s(lambda: dst.copy_(x), device, repeats)
    t_quant = _best_time_s(lambda: quantize_rows(x, format_id, out=data, tensor_scale=scale, scratch=scratch),
                           device, repeats)
    t_deq = _best_time_s(lambda: dequantize_rows(data, format_id, num_channels, out=back, tensor_scale=scale),
                         device, repeats)
    copy_gbps, q_gbps, d_gbps = nbytes / t_copy / GB, nbytes / t_quant / GB, nbytes / t_deq / GB
    return FormatThroughput(kv_format=format_id, num_channels=num_channels,
                            source_dtype=str(source_dtype).removeprefix("torch."), source_bytes=nbytes,
                            repeats=repeats, quantize_gbps=q_gbps, dequantize_gbps=d_gbps, copy_gbps=copy_gbps,
                            quantize_over_copy=q_gbps / copy_gbps, dequantize_over_copy=d_gbps / copy_gbps)


def format_samples(layout: PoolLayout) -> list[tuple[str, int, str]]:
    """Distinct ``(format, channels, role)`` to measure: every vector width of every group of
    the model's layout, the out-of-pool ones (V4.1's MXFP8 window ring) included."""
    from planner.catalog.entries import get_model
    from planner.probe.layout import PROBE_FORMATS, vectors_of

    seen: dict[tuple[str, int], str] = {}
    for g in get_model(layout.model_id).layout(layout.kv_format):
        if g.kv_format.id not in PROBE_FORMATS:
            continue
        for v in vectors_of(g):
            seen.setdefault((g.kv_format.id, v.num_channels), g.role + ("" if g.in_pool else " (outside the pool)"))
    return [(f, ch, role) for (f, ch), role in seen.items()]


__all__ = ["KVPool", "allocate", "fill", "measure_quality", "measure_throughput", "synthetic_kv"]
