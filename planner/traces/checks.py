"""Checks of the cache settings every trace computation takes: capacity, TTL, bytes per token.

Each returns the validated value or raises :class:`planner.errors.PlanInputError`
naming the field, the value and the allowed range.
"""

from __future__ import annotations

import math

import numpy as np

from planner.errors import PlanInputError
from planner.messages import msg

MAX_CAPACITY_BLOCKS: int = 10**15
"""Largest capacity accepted, blocks."""

def check_capacity_blocks(value: object, name: str = "capacity_blocks") -> int | None:
    """Validate a capacity in blocks: None (unlimited) or an integer in [0, 1e15].

    Raises:
        PlanInputError: anything else.
    """
    if value is None:
        return None
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        value = int(value)
    if isinstance(value, np.integer):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_CAPACITY_BLOCKS:
        raise PlanInputError(name, value, msg("None (unlimited) or a whole number of blocks in [0, "
                                              "{max_capacity_blocks:,}]", max_capacity_blocks=MAX_CAPACITY_BLOCKS))
    return value


def check_capacities(capacities_blocks: Sequence[int] | np.ndarray) -> np.ndarray:
    """Validate many capacities at once (vectorized for integer arrays)."""
    arr = np.asarray(capacities_blocks)
    if arr.ndim == 1 and arr.dtype.kind in "iu" and \
            (arr.size == 0 or (int(arr.min()) >= 0 and int(arr.max()) <= MAX_CAPACITY_BLOCKS)):
        return arr.astype(np.int64)
    return np.asarray([check_capacity_blocks(c) for c in capacities_blocks], dtype=np.int64)


def check_ttl_s(value: object, name: str = "ttl_s") -> float | None:
    """Validate a TTL: None (no TTL) or a number of seconds >= 0 (``inf`` means no TTL).

    Raises:
        PlanInputError: negative, NaN or not a number.
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise PlanInputError(name, value, msg("None (no TTL) or a number of seconds >= 0"))
    v = float(value)
    if math.isnan(v) or v < 0:
        raise PlanInputError(name, value, msg("None (no TTL) or a number of seconds >= 0"))
    return None if math.isinf(v) else v


def check_kv_bytes_per_token(value: object) -> float:
    """Validate KV bytes per token: a finite number > 0.

    Raises:
        PlanInputError: anything else.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not math.isfinite(float(value)) or float(value) <= 0:
        raise PlanInputError("kv_bytes_per_token", value, msg("a finite number of bytes > 0"))
    return float(value)


def blocks_for_bytes(capacity_bytes: float, kv_bytes_per_token: float, block_tokens: int) -> int:
    """Whole cache blocks that fit in ``capacity_bytes``: ``floor(bytes / (kv_bytes_per_token * block_tokens))``.

    >>> blocks_for_bytes(100 * 10**9, 890.0, 512)  # 1e11 / 455,680 B per block = 219,452.2
    219452

    Raises:
        PlanInputError: negative or non-finite bytes, or bad ``kv_bytes_per_token``.
    """
    per_token = check_kv_bytes_per_token(kv_bytes_per_token)
    if isinstance(capacity_bytes, bool) or not isinstance(capacity_bytes, (int, float, np.integer, np.floating)) \
            or not math.isfinite(float(capacity_bytes)) or capacity_bytes < 0:
        raise PlanInputError("capacity_bytes", capacity_bytes, msg("a finite number of bytes >= 0"))
    return int(min(MAX_CAPACITY_BLOCKS, math.floor(float(capacity_bytes) / (per_token * block_tokens))))
