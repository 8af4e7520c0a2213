"""Down-sampling and binning for trace charts: what a browser receives stays small on any trace.

A chart of one point per request sends every point to the browser as JSON: an Azure trace of 1.7M
requests made 85 MB of figure JSON, and the tab hung. Every trace chart therefore holds at most
:data:`MAX_CHART_POINTS` points per series:

* step lines over time (concurrency, cache contents): :func:`envelope` keeps, for each of at most
  ``max_points // 2`` equal runs of consecutive points, the run's lowest and highest point (in order), so
  every peak and trough in the data is still drawn at its exact value;
* per-request histograms: :func:`log_histogram` counts on the server (fixed log-spaced bins);
* per-minute bars: :func:`coarser_minutes` adds whole minutes together once there are too many.
"""

from __future__ import annotations

import math

import numpy as np

MAX_CHART_POINTS: int = 5_000
"""Most points one chart series holds (about 100-200 kB of figure JSON)."""


def envelope(y: np.ndarray, max_points: int = MAX_CHART_POINTS) -> np.ndarray:
    """Indices of the points of ``y`` to draw: all of them when there are at most ``max_points``; otherwise,
    for each of ``(max_points - 1) // 2`` equal runs of consecutive points, the run's lowest and highest
    (ascending index), and the last point.

    Args:
        y: shape (n,), the series in drawing order.
        max_points: at least 3.

    Returns:
        int64 indices, ascending, at most ``max_points`` of them; the global minimum and maximum are among them.
    """
    y = np.asarray(y)
    n = int(y.shape[0])
    if max_points < 3:
        raise ValueError(f"max_points {max_points} is below 3")
    if n <= max_points:
        return np.arange(n, dtype=np.int64)
    runs = (max_points - 1) // 2
    starts = np.linspace(0, n, runs + 1).astype(np.int64)
    keep = []
    for a, b in zip(starts[:-1].tolist(), starts[1:].tolist()):
        seg = y[a:b]
        i, j = a + int(np.argmin(seg)), a + int(np.argmax(seg))
        keep.extend((i, j) if i <= j else (j, i))
    keep.append(n - 1)
    return np.unique(np.asarray(keep, dtype=np.int64))


def log_histogram(values: np.ndarray, num_bins: int = 50) -> pd.DataFrame:
    """Counts of the positive ``values`` in ``num_bins`` equal bins of log10(value) from the smallest to the
    largest positive value.

    Returns:
        DataFrame with ``log10_lo``, ``log10_hi`` (bin edges, log10 of tokens) and ``count``; empty when no
        value is positive.
    """
    import pandas as pd

    v = np.asarray(values)
    v = v[v > 0]
    if v.size == 0:
        return pd.DataFrame({"log10_lo": [], "log10_hi": [], "count": []})
    logs = np.log10(v.astype(np.float64))
    lo, hi = float(logs.min()), float(logs.max())
    if hi <= lo:
        hi = lo + 0.01
    counts, edges = np.histogram(logs, bins=num_bins, range=(lo, hi))
    return pd.DataFrame({"log10_lo": edges[:-1], "log10_hi": edges[1:], "count": counts.astype(np.int64)})


def coarser_minutes(per_minute: pd.DataFrame, max_points: int = MAX_CHART_POINTS) -> tuple[pd.DataFrame, int]:
    """Add up ``per_minute`` rows (``planner.traces.arrivals.ARRIVAL_COLUMNS``) in runs of whole minutes so
    that at most ``max_points`` rows remain.

    Returns:
        (frame with the same columns, ``minute`` the first minute of each run; minutes per row).
    """
    n = len(per_minute)
    if n <= max_points:
        return per_minute, 1
    k = math.ceil(n / max_points)
    group = per_minute["minute"].to_numpy() // k
    sums = per_minute.groupby(group, sort=True).agg(
        {col: ("min" if col in ("minute", "start_s") else "sum") for col in per_minute.columns})
    return sums.reset_index(drop=True), k
