"""Measured prefix-cache hit rates: replay request traces through a cache of a given size and TTL.

* :mod:`~planner.traces.load`: :func:`read_trace`, any file or bundled sample.
* :mod:`~planner.traces.readers`: Mooncake JSONL, Azure CSV and a generic
  JSONL, also as Parquet, plain, gzip or zstd (documented there and in
  ``docs/traces.md``) into a :class:`Trace`; malformed rows are counted,
  never fatal. :mod:`~planner.traces.sources` streams the bytes,
  :mod:`~planner.traces.rows` checks and collects rows,
  :mod:`~planner.traces.trace` holds the :class:`Trace`.
* :mod:`~planner.traces.samples`: the bundled traces (``sample:conversation``,
  ``sample:synthetic``, ``sample:azure-conv``, ``sample:azure-code``).
* :mod:`~planner.traces.replay`: the reference replay (LRU + TTL, one pass per
  capacity) that defines the semantics, with cache bytes over time.
* :mod:`~planner.traces.stack`: the whole hit-rate-vs-capacity (and vs-TTL)
  curve from one pass of LRU stack distances (Mattson et al., IBM Systems
  Journal, 1970) under the prefix rule (longest leading run of cached blocks;
  Qin et al., Mooncake, FAST '25).
* :mod:`~planner.traces.kernels`: the compiled loops (numba): Fenwick-tree
  stack distances, sampling hash.
* :mod:`~planner.traces.fleet`: N replicas under a routing policy.
* :mod:`~planner.traces.sampling`: SHARDS spatial sampling and its error bar.
* :mod:`~planner.traces.curvefile`: curve files (``kvplan trace --save``).
* :mod:`~planner.traces.arrivals`: lengths, arrival rates, concurrency over time.

numpy and pyarrow (pandas where a function returns a DataFrame, numba only to compile the loops); no Streamlit.
"""

from planner.traces.arrivals import Concurrency, TraceSummary, arrivals_per_minute, concurrency, summarize
from planner.traces.curvefile import SavedCurve, load_curve
from planner.traces.fleet import FLEET_COLUMNS, ROUTING_POLICIES, FleetResult, fleet_hits, fleet_table
from planner.traces.load import read_trace
from planner.traces.readers import MAX_TRACE_BYTES, read_azure, read_jsonl, read_mooncake
from planner.traces.trace import FORMATS, MalformedRows, Trace
from planner.traces.replay import NOT_MEASURABLE, ReplayResult, reference_curve, replay
from planner.traces.samples import SAMPLES, load_sample
from planner.traces.sizing import kv_bytes_per_token_for, typical_context_tokens
from planner.traces.checks import blocks_for_bytes
from planner.traces.stack import (
    CURVE_COLUMNS, DEFAULT_TTLS_S, TTL_CURVE_COLUMNS, HitRates, ReuseProfile, capacity_curve, capacity_curve_columns,
    default_capacities,
    reuse_profile, ttl_curve,
)

__all__ = [
    "CURVE_COLUMNS", "Concurrency", "DEFAULT_TTLS_S", "FLEET_COLUMNS", "FORMATS", "FleetResult", "HitRates",
    "MAX_TRACE_BYTES", "MalformedRows", "NOT_MEASURABLE", "ROUTING_POLICIES", "ReplayResult", "ReuseProfile",
    "SAMPLES", "SavedCurve", "TTL_CURVE_COLUMNS", "Trace", "TraceSummary", "arrivals_per_minute",
    "blocks_for_bytes", "capacity_curve", "capacity_curve_columns", "concurrency", "default_capacities", "fleet_hits", "fleet_table",
    "kv_bytes_per_token_for", "load_curve", "load_sample", "read_azure", "read_jsonl", "read_mooncake",
    "read_trace", "reference_curve", "replay", "reuse_profile", "summarize", "ttl_curve",
    "typical_context_tokens",
]
