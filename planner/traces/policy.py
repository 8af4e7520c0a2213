"""Eviction policies of the prefix cache: the engine's order of eviction.

Both policies are LRU with the same two rules for a request arriving at
``now``: its lookups see the cache as it was before the request (the hit is
the longest leading run of its blocks that are cached), then all its blocks
are touched with last-use time ``now``, **tail block first**, so that within
one request the last block is the least recently used and the first block the
most recently used.

* ``vllm`` (default): vLLM's free block queue. A finished request's blocks
  are freed "in reverse order so that the tail blocks are evicted first"
  (``vllm/v1/core/kv_cache_manager.py``, ``KVCacheManager.free``) and
  appended to the tail of the free queue; eviction pops from its head, the
  least recently freed (``vllm/v1/core/block_pool.py``,
  ``BlockPool.get_new_blocks``). Blocks are keyed by their hash as the trace
  gives it (``vllm/v1/core/kv_cache_utils.py``, ``hash_block_tokens``
  chains each block's hash on its parent's).
* ``sglang``: SGLang's radix cache (``python/sglang/srt/mem_cache/radix_cache.py``,
  ``RadixCache.evict``) evicts only leaves of the prefix tree, the least
  recently accessed first. A node of the tree is a block *at its prefix*:
  the same block id under two different prefixes is two nodes. Because a
  request touches its tail first, a parent is always more recently used than
  its children, so the least recently used node is always a leaf and
  leaf-only LRU is plain tail-first LRU over tree nodes
  (:func:`radix_node_ids`). On a trace whose block ids already chain on the
  prefix (Mooncake ``hash_ids``, engine block hashes, tokenized prompts) the
  two policies give the same numbers; they differ when one id follows
  different prefixes (a hand-written ``hash_ids`` column).

Both keep the stack (inclusion) property of LRU: after every request a cache
of ``C`` blocks holds the ``C`` most recently touched blocks, whatever ``C``,
so one stack-distance pass (``planner.traces.stack``) gives every capacity.
"""

from __future__ import annotations

import numpy as np

from planner.errors import PlanInputError
from planner.messages import msg

EVICTION_POLICIES: tuple[str, ...] = ("vllm", "sglang")
"""Eviction policy ids, default first."""

DEFAULT_EVICTION_POLICY: str = "vllm"
"""The default policy: vLLM's tail-first LRU."""

POLICY_LABELS: dict[str, str] = {
    "vllm": "LRU, tail blocks evicted first (vLLM)",
    "sglang": "LRU over radix-tree leaves (SGLang)",
}
"""Words shown beside every hit rate, per policy id."""

POLICY_ENGINES: dict[str, str] = {"vllm": "vLLM", "sglang": "SGLang"}
"""The engine whose order each policy is, for short labels (chart titles)."""


def check_eviction_policy(value: object) -> str:
    """An eviction policy id.

    Raises:
        PlanInputError: not one of :data:`EVICTION_POLICIES`.
    """
    if value not in EVICTION_POLICIES:
        raise PlanInputError("eviction_policy", value, msg("one of {choices}", choices=", ".join(EVICTION_POLICIES)))
    return str(value)


def radix_node_ids(offsets: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, int]:
    """The radix-tree node of every block reference: equal iff same block id after the same prefix of nodes.

    Level by level (block position ``j`` in its request): node = a dense id
    of the pair (node at position ``j - 1``, block id). O(n log n) for ``n``
    references, one numpy pass per level.

    Args:
        offsets: shape (r + 1,), int64: request ``i``'s blocks are ``ids[offsets[i]:offsets[i+1]]``.
        ids: shape (n,), non-negative integer block ids.

    Returns:
        ``(nodes, num_nodes)``: shape (n,) int32 node ids in ``[0, num_nodes)``.
    """
    n = int(ids.shape[0])
    nodes = np.empty(n, dtype=np.int64)
    if n == 0:
        return nodes.astype(np.int32), 0
    offsets = np.asarray(offsets, dtype=np.int64)
    counts = np.diff(offsets)
    order = np.argsort(-counts, kind="stable")           # longest first: level j uses a prefix of them
    starts = offsets[:-1][order]
    lengths = counts[order]
    span = int(ids.max()) + 1
    base = 0
    for level in range(int(lengths[0])):
        live = int(np.searchsorted(-lengths, -level, side="left"))   # requests longer than ``level``
        pos = starts[:live] + level
        parent = nodes[pos - 1] + 1 if level else np.zeros(live, dtype=np.int64)
        keys = parent * span + ids[pos].astype(np.int64)
        uniq, inverse = np.unique(keys, return_inverse=True)
        nodes[pos] = base + inverse
        base += int(uniq.size)
    return nodes.astype(np.int32), base
