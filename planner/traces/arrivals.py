"""Lengths, arrival rates and concurrency of a trace (any format, hashes or not).

Concurrency is estimated from arrivals alone: request ``i`` is active on the
half-open interval ``[a_i, a_i + s_i)`` with service time ``s_i =
output_tokens_i / session_decode_tokens_per_s`` (plus ``input_tokens_i /
prefill_tokens_per_s`` when a prefill speed is given). Queueing is ignored:
this is the concurrency a server must sustain to keep up with the trace, the
time-series form of Little's law (mean concurrency = arrival rate x mean
service time; Little, Operations Research 9(3), 1961).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from planner.units import MIN_TOKENS_PER_S
from planner.errors import PlanInputError
from planner.traces.trace import Trace
from planner.messages import msg

SECONDS_PER_MINUTE = 60
"""Seconds in a minute (bins of :func:`arrivals_per_minute`)."""

MAX_TOKENS_PER_S = 1e9
"""Largest decode or prefill speed accepted, tokens/s."""

CONCURRENCY_COLUMNS: tuple[str, ...] = ("time_s", "concurrent_requests")
"""Columns of :attr:`Concurrency.frame`: event time (s since the first arrival,
increasing) and requests active just after every event at that time (int); a
step function, constant until the next row."""

ARRIVAL_COLUMNS: tuple[str, ...] = ("minute", "start_s", "requests", "input_tokens", "output_tokens")
"""Columns of :func:`arrivals_per_minute`: minute index from the first arrival,
its start (s), requests arriving in it, and their prompt and output tokens."""


@dataclass(frozen=True, kw_only=True)
class LengthStats:
    """Distribution of a token length over requests (percentiles interpolate linearly).

    Attributes:
        mean, p50, p90, p99: tokens (float).
        min, max: tokens (int).
        total: sum over requests, tokens (int).
    """

    mean: float
    p50: float
    p90: float
    p99: float
    min: int
    max: int
    total: int


def _length_stats(a: np.ndarray) -> LengthStats:
    p50, p90, p99 = np.percentile(a, [50, 90, 99])
    return LengthStats(mean=float(a.mean()), p50=float(p50), p90=float(p90), p99=float(p99),
                       min=int(a.min()), max=int(a.max()), total=int(a.sum()))


@dataclass(frozen=True, kw_only=True)
class TraceSummary:
    """What a trace holds, before any replay.

    Attributes:
        name, format: the trace.
        num_requests: requests.
        duration_s: first to last arrival, seconds.
        mean_rate_per_s: requests / duration (0 when the duration is 0).
        peak_requests_per_minute: most arrivals in one minute, minutes counted
            from the first arrival.
        num_distinct_arrival_times: distinct timestamps (Mooncake's are
            quantized to about 3 s).
        input_tokens, output_tokens: length distributions.
        has_prefix_hashes: whether hit rates are measurable.
        block_tokens: tokens per block (None without hashes).
        num_block_refs, num_unique_blocks: block references and distinct blocks.
        working_set_tokens: distinct blocks x block tokens (whole blocks).
        malformed_rows: rows skipped while reading.
    """

    name: str
    format: str
    num_requests: int
    duration_s: float
    mean_rate_per_s: float
    peak_requests_per_minute: int
    num_distinct_arrival_times: int
    input_tokens: LengthStats
    output_tokens: LengthStats
    has_prefix_hashes: bool
    block_tokens: int | None
    num_block_refs: int
    num_unique_blocks: int
    working_set_tokens: int
    malformed_rows: int


def summarize(trace: Trace) -> TraceSummary:
    """Sizes, rates and length percentiles of ``trace``."""
    duration = trace.duration_s
    per_minute = np.bincount((trace.arrival_s // SECONDS_PER_MINUTE).astype(np.int64))
    return TraceSummary(
        name=trace.name, format=trace.format, num_requests=trace.num_requests, duration_s=duration,
        mean_rate_per_s=trace.num_requests / duration if duration > 0 else 0.0,
        peak_requests_per_minute=int(per_minute.max()),
        num_distinct_arrival_times=int(np.unique(trace.arrival_s).shape[0]),
        input_tokens=_length_stats(trace.input_tokens), output_tokens=_length_stats(trace.output_tokens),
        has_prefix_hashes=trace.has_prefix_hashes, block_tokens=trace.block_tokens,
        num_block_refs=trace.num_block_refs, num_unique_blocks=trace.num_unique_blocks,
        working_set_tokens=trace.num_unique_blocks * (trace.block_tokens or 0),
        malformed_rows=trace.malformed.num_malformed,
    )


def arrivals_per_minute(trace: Trace) -> pd.DataFrame:
    """Arrivals and tokens per minute: DataFrame with :data:`ARRIVAL_COLUMNS`, one row per minute."""
    import pandas as pd

    minute = (trace.arrival_s // SECONDS_PER_MINUTE).astype(np.int64)
    num = int(minute.max()) + 1 if minute.size else 0
    return pd.DataFrame({
        "minute": np.arange(num, dtype=np.int64),
        "start_s": np.arange(num, dtype=np.float64) * SECONDS_PER_MINUTE,
        "requests": np.bincount(minute, minlength=num).astype(np.int64),
        "input_tokens": np.bincount(minute, weights=trace.input_tokens, minlength=num).astype(np.int64),
        "output_tokens": np.bincount(minute, weights=trace.output_tokens, minlength=num).astype(np.int64),
    }, columns=list(ARRIVAL_COLUMNS))


def _speed(name: str, value: object, *, optional: bool = False) -> float | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not math.isfinite(float(value)) or not MIN_TOKENS_PER_S <= float(value) <= MAX_TOKENS_PER_S:
        # a denormal speed makes service times infinite and the mean concurrency inf / inf = NaN
        raise PlanInputError(name, value, msg("a speed in tokens/s in [{min_tokens_per_s:g}, {max_tokens_per_s:,.0f}]",
                                              min_tokens_per_s=MIN_TOKENS_PER_S, max_tokens_per_s=MAX_TOKENS_PER_S))
    return float(value)


@dataclass(frozen=True, kw_only=True, eq=False)
class Concurrency:
    """Requests in flight over time, estimated from arrivals and per-request speeds.

    Attributes:
        session_decode_tokens_per_s: decode speed of one request, tokens/s.
        prefill_tokens_per_s: prefill speed of one request, tokens/s (None = prefill ignored).
        time_s, concurrent_requests: the step function: shape (k,) float64 and int64, the level after all events
            at each time; :attr:`frame` gives them as a DataFrame with :data:`CONCURRENCY_COLUMNS`.
        peak_concurrent_requests: most requests active at once.
        mean_concurrent_requests: time-weighted mean from the first arrival to
            the last completion (total service time / span).
        mean_service_time_s: mean time a request is active, seconds.
    """

    session_decode_tokens_per_s: float
    prefill_tokens_per_s: float | None
    time_s: np.ndarray
    concurrent_requests: np.ndarray
    peak_concurrent_requests: int
    mean_concurrent_requests: float
    mean_service_time_s: float

    @property
    def frame(self) -> pd.DataFrame:
        """The step function as a DataFrame with :data:`CONCURRENCY_COLUMNS` (pandas imported only here)."""
        import pandas as pd

        return pd.DataFrame({"time_s": self.time_s, "concurrent_requests": self.concurrent_requests},
                            columns=list(CONCURRENCY_COLUMNS))


def concurrency(trace: Trace, *, session_decode_tokens_per_s: float,
                prefill_tokens_per_s: float | None = None) -> Concurrency:
    """Concurrent requests over time (see the module docstring for the model).

    Args:
        trace: any trace.
        session_decode_tokens_per_s: decode speed of one request, tokens/s.
        prefill_tokens_per_s: prefill speed of one request, tokens/s, or None to ignore prefill.

    Raises:
        PlanInputError: a speed that is not in [0.001, 1e9] tokens/s (``MIN_TOKENS_PER_S``).
    """
    decode = _speed("session_decode_tokens_per_s", session_decode_tokens_per_s)
    prefill = _speed("prefill_tokens_per_s", prefill_tokens_per_s, optional=True)
    service = trace.output_tokens / decode
    if prefill is not None:
        service = service + trace.input_tokens / prefill
    start = trace.arrival_s
    end = start + service
    times = np.concatenate([start, end])
    delta = np.concatenate([np.ones_like(start, dtype=np.int64), -np.ones_like(end, dtype=np.int64)])
    order = np.lexsort((delta, times))         # at equal times, completions before arrivals
    times, level = times[order], np.cumsum(delta[order])
    last = np.append(times[1:] != times[:-1], True)   # the level after all events at a time
    times, level = times[last], level[last]
    span = float(end.max() - start.min()) if start.size else 0.0
    busy = float(service.sum())
    return Concurrency(
        session_decode_tokens_per_s=decode, prefill_tokens_per_s=prefill,
        time_s=times, concurrent_requests=level.astype(np.int64),
        peak_concurrent_requests=int(level.max()) if level.size else 0,
        mean_concurrent_requests=busy / span if span > 0 else 0.0,
        mean_service_time_s=float(service.mean()) if service.size else 0.0,
    )
