"""Saved hit-rate curves: ``kvplan trace ... --sweep --save curve.json`` writes one, the Traces page reads it.

A team computes the curve of a large trace once, on a big machine, and shares
the small JSON file. The file holds the trace's summary, the settings, the
sampling (if any) and the curve in blocks, so any model's bytes per token can
price it later. Format (``"kvplan_curve": 2``)::

    {"kvplan_curve": 2,
     "trace": {"name": ..., "format": ..., "requests": ..., "block_refs": ..., "unique_blocks": ...,
               "block_tokens": 512, "duration_s": ..., "malformed_rows": ..., "mean_input_tokens": ...},
     "settings": {"ttl_s": null, "model": null, "kv_bytes_per_token": null, "eviction_policy": "vllm"},
     "sampling": null | {"sample_rate": 0.01, "expected_error": 0.004},
     "curve": [{"capacity_blocks": 0, "block_hit_rate": 0.0, "token_hit_rate": 0.0}, ...]}

:func:`load_curve` checks every field (a shared file is untrusted input) and
returns a :class:`SavedCurve`; its :meth:`SavedCurve.at` answers the hit rate at
a capacity from the largest saved capacity not above it: a lower bound, since
the hit rate never falls as capacity grows (at any fixed TTL).

Versions: 2 adds ``settings.eviction_policy`` (``planner.traces.policy``: the
cache's eviction order the curve was computed under; the block size is
``trace.block_tokens`` in both). Version 1 files still load; their policy is
unknown (``None``: written before kvplan recorded it, and before its
tail-first order, so they were computed with head-first touches).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np

from planner.errors import PlanInputError
from planner.traces.rows import MAX_BLOCK_TOKENS
from planner.traces.checks import MAX_CAPACITY_BLOCKS
from planner.traces.policy import EVICTION_POLICIES, check_eviction_policy
from planner.traces.stack import CURVE_COLUMNS
from planner.units import GB, GiB
from planner.messages import msg

CURVE_FILE_VERSION: int = 2
"""Value of the ``kvplan_curve`` key written; :data:`READ_VERSIONS` are read."""

READ_VERSIONS: tuple[int, ...] = (1, 2)
"""Versions :func:`load_curve` reads (1: no eviction policy recorded)."""

MAX_CURVE_FILE_BYTES: int = 5_000_000
"""Largest curve file read, bytes (a 64-point curve is about 10 kB)."""

MAX_CURVE_POINTS: int = 100_000
"""Most points a curve file may hold."""


@dataclass(frozen=True, kw_only=True, eq=False)
class SavedCurve:
    """A loaded curve file.

    Attributes:
        trace: the trace summary (str/number values only).
        block_tokens: tokens per block.
        ttl_s: the TTL the curve was computed at (None = none).
        sample_rate: None when exact, else the SHARDS rate.
        expected_error: the saved expected error of the sampled curve (None when exact).
        eviction_policy: the policy id (``planner.traces.policy.EVICTION_POLICIES``), None in a version-1 file.
        version: the file's ``kvplan_curve`` version.
        curve: DataFrame ``capacity_blocks`` (int, increasing), ``block_hit_rate``, ``token_hit_rate``.
    """

    trace: dict
    block_tokens: int
    ttl_s: float | None
    sample_rate: float | None
    expected_error: float | None
    curve: pd.DataFrame
    eviction_policy: str | None = None
    version: int = CURVE_FILE_VERSION

    @property
    def context_tokens(self) -> int:
        """Context length to price a token at: the trace's mean prompt when saved, else one block."""
        v = self.trace.get("mean_input_tokens")
        return int(v) if isinstance(v, int) and 1 <= v <= 10**9 else self.block_tokens

    def frame(self, kv_bytes_per_token: float | None) -> pd.DataFrame:
        """The curve with ``planner.traces.stack.CURVE_COLUMNS`` (hit counts unknown: NaN), priced at
        ``kv_bytes_per_token`` (None leaves the byte columns NaN)."""
        caps = self.curve["capacity_blocks"].to_numpy()
        tokens = caps * self.block_tokens
        cap_bytes = tokens * float(kv_bytes_per_token) if kv_bytes_per_token is not None else np.full(caps.shape, np.nan)
        import pandas as pd

        return pd.DataFrame({
            "capacity_blocks": caps, "capacity_tokens": tokens, "capacity_bytes": cap_bytes.astype(np.float64),
            "capacity_gb": cap_bytes / GB, "capacity_gib": cap_bytes / GiB,
            "hit_blocks": np.nan, "hit_tokens": np.nan,
            "block_hit_rate": self.curve["block_hit_rate"].to_numpy(),
            "token_hit_rate": self.curve["token_hit_rate"].to_numpy(),
        }, columns=list(CURVE_COLUMNS))

    def at(self, capacity_blocks: int) -> tuple[int, float, float]:
        """``(saved capacity used, block rate, token rate)`` at the largest saved capacity <= ``capacity_blocks``."""
        caps = self.curve["capacity_blocks"].to_numpy()
        k = int(np.searchsorted(caps, capacity_blocks, side="right")) - 1
        if k < 0:
            return 0, 0.0, 0.0
        row = self.curve.iloc[k]
        return int(row.capacity_blocks), float(row.block_hit_rate), float(row.token_hit_rate)


def curve_document(*, trace: dict, block_tokens: int, ttl_s: float | None, model: str | None,
                   kv_bytes_per_token: float | None, sampling: dict | None, curve, eviction_policy: str) -> dict:
    """The JSON object written by ``--save`` (version :data:`CURVE_FILE_VERSION`). ``curve``: a mapping of
    ``capacity_blocks``, ``block_hit_rate`` and ``token_hit_rate`` columns (a DataFrame with
    ``planner.traces.stack.CURVE_COLUMNS``, or ``planner.traces.stack.capacity_curve_columns``)."""
    return {
        "kvplan_curve": CURVE_FILE_VERSION,
        "trace": {**trace, "block_tokens": block_tokens},
        "settings": {"ttl_s": ttl_s, "model": model, "kv_bytes_per_token": kv_bytes_per_token,
                     "eviction_policy": check_eviction_policy(eviction_policy)},
        "sampling": sampling,
        "curve": [{"capacity_blocks": int(c), "block_hit_rate": float(b), "token_hit_rate": float(t)}
                  for c, b, t in zip(curve["capacity_blocks"], curve["block_hit_rate"], curve["token_hit_rate"])],
    }


def _field(obj: dict, key: str, where: str):
    if not isinstance(obj, dict) or key not in obj:
        raise PlanInputError(f"{where}.{key}", None, msg("present (a kvplan curve file, from kvplan trace --save)"))
    return obj[key]


def _number(value: object, name: str, lo: float, hi: float, *, whole: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not lo <= value <= hi or (whole and not float(value).is_integer()):
        kind = msg("a whole number") if whole else msg("a number")
        raise PlanInputError(name, value, msg("{kind} in [{lo:g}, {hi:g}]", kind=kind, lo=lo, hi=hi))
    return value


def load_curve(data: bytes | str) -> SavedCurve:
    """Parse and check a curve file.

    Raises:
        PlanInputError: too large, not JSON, another version, or any field
            missing or out of range (named, with its value).
    """
    if len(data) > MAX_CURVE_FILE_BYTES:
        raise PlanInputError("curve file", f"{len(data):,} B", msg("at most {max_curve_file_bytes:,} B",
                                                                   max_curve_file_bytes=MAX_CURVE_FILE_BYTES))
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        raise PlanInputError("curve file", "not JSON", msg("a kvplan curve file (kvplan trace --sweep --save)")) from None
    version = _field(doc, "kvplan_curve", "file")
    if isinstance(version, bool) or version not in READ_VERSIONS:
        raise PlanInputError("kvplan_curve", version, msg("one of {versions}",
                                                          versions=", ".join(map(str, READ_VERSIONS))))
    trace = _field(doc, "trace", "file")
    block_tokens = int(_number(_field(trace, "block_tokens", "trace"), "trace.block_tokens", 1, MAX_BLOCK_TOKENS,
                               whole=True))
    shown = {k: v for k, v in trace.items() if isinstance(v, (str, int, float)) and not isinstance(v, bool)
             and (not isinstance(v, str) or len(v) <= 300)}
    settings = _field(doc, "settings", "file")
    ttl = _field(settings, "ttl_s", "settings")
    ttl_s = None if ttl is None else float(_number(ttl, "settings.ttl_s", 0, 1e9))
    policy = None
    if version >= 2:
        found = _field(settings, "eviction_policy", "settings")
        if found not in EVICTION_POLICIES:
            raise PlanInputError("settings.eviction_policy", str(found)[:40],
                                 msg("one of {policies}", policies=", ".join(EVICTION_POLICIES)))
        policy = found
    sampling = _field(doc, "sampling", "file")
    rate = err = None
    if sampling is not None:
        rate = float(_number(_field(sampling, "sample_rate", "sampling"), "sampling.sample_rate", 1e-9, 1))
        err = float(_number(_field(sampling, "expected_error", "sampling"), "sampling.expected_error", 0, 1))
    rows = _field(doc, "curve", "file")
    if not isinstance(rows, list) or not 1 <= len(rows) <= MAX_CURVE_POINTS:
        raise PlanInputError("curve", type(rows).__name__, msg("a list of 1 to {max_curve_points:,} points",
                                                               max_curve_points=MAX_CURVE_POINTS))
    caps, blocks, tokens = [], [], []
    for k, row in enumerate(rows):
        caps.append(int(_number(_field(row, "capacity_blocks", f"curve[{k}]"), f"curve[{k}].capacity_blocks",
                                0, MAX_CAPACITY_BLOCKS, whole=True)))
        blocks.append(float(_number(_field(row, "block_hit_rate", f"curve[{k}]"), f"curve[{k}].block_hit_rate", 0, 1)))
        tokens.append(float(_number(_field(row, "token_hit_rate", f"curve[{k}]"), f"curve[{k}].token_hit_rate", 0, 1)))
    if any(b <= a for a, b in zip(caps, caps[1:])):
        raise PlanInputError("curve", "capacities out of order", msg("capacity_blocks strictly increasing"))
    import pandas as pd

    frame = pd.DataFrame({"capacity_blocks": np.asarray(caps, dtype=np.int64), "block_hit_rate": blocks,
                          "token_hit_rate": tokens})
    return SavedCurve(trace=shown, block_tokens=block_tokens, ttl_s=ttl_s, sample_rate=rate, expected_error=err,
                      curve=frame, eviction_policy=policy, version=int(version))
