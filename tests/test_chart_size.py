"""Trace charts stay small on a large trace: binned or enveloped on the server, never one point per request.

An Azure trace of 1.7M rows once made 85 MB of chart JSON (one histogram value per request, one step point per
arrival and completion). A synthetic trace of that size (1,700,000 requests over 7 days: 10,080 minutes) must
give figures whose JSON, all together, stays under 4 MB (``MAX_CHART_POINTS`` = 5,000 points per series).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from planner.traces import arrivals_per_minute, concurrency
from planner.traces.binning import MAX_CHART_POINTS, coarser_minutes, envelope, log_histogram
from kvplan_app.charts.traces import arrivals_figure, cache_bytes_figure, concurrency_figure, lengths_figure
from planner.traces.readers import Trace
from planner.traces.replay import TIMELINE_COLUMNS

NUM_REQUESTS = 1_700_000
SPAN_S = 7 * 86_400


def big_trace() -> Trace:
    rng = np.random.default_rng(7)
    arrival = np.sort(rng.uniform(0, SPAN_S, NUM_REQUESTS))
    arrival -= arrival[0]
    inputs = rng.integers(1, 200_000, NUM_REQUESTS)
    outputs = rng.integers(1, 4_000, NUM_REQUESTS)
    return Trace(name="synthetic", format="azure", block_tokens=None, arrival_s=arrival, input_tokens=inputs,
                 output_tokens=outputs)


def test_every_trace_chart_of_a_large_trace_is_small():
    trace = big_trace()
    n = NUM_REQUESTS
    blocks = np.cumsum(np.random.default_rng(8).integers(-5, 6, n)) + 10 * n
    timeline = pd.DataFrame({"arrival_s": trace.arrival_s, "input_tokens": trace.input_tokens,
                             "num_blocks": np.ones(n, np.int64), "hit_blocks": np.zeros(n, np.int64),
                             "hit_tokens": np.zeros(n, np.int64), "cache_blocks": blocks,
                             "cache_bytes": blocks * 1e6}, columns=list(TIMELINE_COLUMNS))
    figures = {
        "lengths": lengths_figure(trace.input_tokens, trace.output_tokens),
        "arrivals": arrivals_figure(arrivals_per_minute(trace)),
        "concurrency": concurrency_figure(concurrency(trace, session_decode_tokens_per_s=50)),
        "cache": cache_bytes_figure(timeline, capacity_bytes=20 * n * 1e6),
    }
    sizes = {name: len(fig.to_json()) for name, fig in figures.items()}
    print("figure JSON bytes:", sizes)
    assert sum(sizes.values()) < 4_000_000, sizes
    for name, fig in figures.items():
        assert all(len(t.x) <= MAX_CHART_POINTS for t in fig.data), name
    # binned, not dropped: the histogram still counts every request, the bars every arrival
    assert [int(np.sum(t.y)) for t in figures["lengths"].data] == [n, n]
    assert int(np.sum(figures["arrivals"].data[0].y)) == n
    assert "per 3 minutes" in figures["arrivals"].layout.title.text  # ceil(10,080 / 5,000) = 3


def test_envelope_keeps_every_peak_and_trough_exactly():
    y = np.zeros(1_000_000)
    y[123_457] = 99.0   # one spike
    y[654_321] = -7.0   # one dip
    keep = envelope(y, max_points=101)
    assert len(keep) <= 101
    assert 123_457 in keep and 654_321 in keep and keep[-1] == 999_999
    assert list(keep) == sorted(set(keep.tolist()))
    assert list(envelope(np.arange(10.0), max_points=101)) == list(range(10))  # short series untouched


def test_log_histogram_counts_each_positive_value_once():
    bins = log_histogram(np.array([0, 1, 10, 100, 1000]), num_bins=3)  # log10 edges 0, 1, 2, 3
    assert bins["count"].tolist() == [1, 1, 2]  # the last bin holds its upper edge (numpy.histogram)
    assert bins["log10_lo"].tolist() == [0.0, 1.0, 2.0]


def test_coarser_minutes_adds_whole_minutes():
    per_minute = pd.DataFrame({"minute": np.arange(7), "start_s": np.arange(7) * 60.0,
                               "requests": [1, 2, 3, 4, 5, 6, 7], "input_tokens": np.ones(7, np.int64),
                               "output_tokens": np.ones(7, np.int64)})
    out, k = coarser_minutes(per_minute, max_points=3)   # ceil(7 / 3) = 3 minutes per bar
    assert k == 3
    assert out["minute"].tolist() == [0, 3, 6] and out["requests"].tolist() == [6, 15, 7]
    assert out["start_s"].tolist() == [0.0, 180.0, 360.0]
