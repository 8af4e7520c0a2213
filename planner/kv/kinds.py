"""KV-cache layer kinds: one frozen spec per kind, each owning its bytes and pages.

Every kind, listed here (the base in :mod:`planner.kv.group`; attention kinds in
:mod:`planner.kv.attention`; DeepSeek kinds in :mod:`planner.kv.deepseek`;
Mamba / linear-attention state in :mod:`planner.kv.state`), and one group's
breakdown row (:func:`group_bytes`).

A model's KV cache is a tuple of layer groups, derived from its per-layer
pattern (layers of equal kind and geometry). Each group is a frozen spec with
one number format; each variant overrides only what differs: how many entries
a layer stores for a sequence of ``n`` tokens (``entries``), where they stop
(``cap_tokens``: a window or chunk), how wide one entry is (``entry_bytes``), the
sentence that explains it (``entry_formula``) and its vLLM rule, after
``vllm/v1/kv_cache_interface.py`` (``vllm_kind``, ``vllm_max_blocks``,
``vllm_blocks_for``, ``vllm_as_full``, ``vllm_per_sequence``, ``vllm_reason``).
Bytes per token have one formula, :meth:`KVGroup.entry_bytes_per_token`
(``layers_per_gpu * entry_bytes / tokens_per_entry``, B/token while the group
grows); :meth:`KVGroup.growing_bytes_per_token` is the marginal figure (0 past
a window):

==========================  ======================================  =====================
group                       entry bytes (per layer, per GPU)         entries for n tokens
==========================  ======================================  =====================
``FullAttentionGroup``      ceil(H_kv/TP) * (vec(d_k) + vec(d_v))    n
``SlidingWindowGroup``      same                                     min(n, W)
``ChunkedLocalGroup``       same                                     min(n, C)
``MLAGroup``                vec(kv_lora_rank + rope_dim)             n (replicated on TP)
``IndexerKeyGroup``         vec(index_head_dim), FP8 + FP32 / 128    n (replicated on TP)
``CompressedGroup``         vec(entry_dim)                           n // compress_ratio
``WindowRingGroup``         vec(entry_dim)                           min(n, W)
``StateGroup``              fixed state per sequence (TP-split)      1
``Mamba2ConvStateGroup``    conv channels with vLLM's group rule     1
==========================  ======================================  =====================

``vec`` is :meth:`planner.kv.formats.KVFormat.vector_bytes` (block scales per
vector, rounded up: ``vec(n) = ceil(n * bits / 8) + ceil(n / block) * scale_bits / 8``);
:class:`RopeTailFormat` keeps an MLA latent's RoPE tail unscaled (vLLM's
``fp8_ds_mla``: 512 + 4 x 4 + 64 x 2 = 656 B).

Parallelism (per GPU):

* tensor parallel ``TP``: a GPU holds ``ceil(H_kv / TP)`` KV heads, at least
  one; with ``TP > H_kv`` heads are replicated (vLLM ``get_num_kv_heads``:
  ``max(1, H_kv // TP)``, which equals the ceiling whenever vLLM accepts the
  split). MLA latents, DeepSeek V4 compressed entries and window rings have one
  KV head and are replicated on every TP rank, never divided.
* pipeline parallel ``PP``: layers are split into ``PP`` contiguous stages.
  kvplan charges each GPU ``ceil(L_g / PP)`` layers of every group ``g``: the
  most any stage can hold of that group. Summed over groups this is the KV of
  the largest stage (exact when one group holds all layers, as in vLLM's
  ``get_pp_indices`` split, an upper bound by under one layer per group
  otherwise). Per replica, every layer is counted once per TP rank.

Sources: MHA/GQA, Ainslie et al. arXiv:2305.13245; MLA, DeepSeek-V2 paper
arXiv:2405.04434 Table 1 ((d_c + d_h^R) * l elements per token, no factor 2);
sliding window, Mistral 7B arXiv:2310.06825; Mamba1 / Mamba2 / Gated DeltaNet
state, vLLM ``MambaStateShapeCalculator`` (``mamba1_state_shape``,
``mamba2_state_shape``, ``gated_delta_net_state_shape``); DSA indexer keys and
``fp8_ds_mla``, vLLM ``deepseek_v2.py`` and its DeepSeek V3.2 config hook.
"""

from __future__ import annotations

from planner.kv.attention import ChunkedLocalGroup, FullAttentionGroup, MLAGroup, SlidingWindowGroup
from planner.kv.deepseek import (
    DSA_INDEXER_FP8,
    FP8_DS_MLA,
    CompressedGroup,
    IndexerKeyGroup,
    RopeTailFormat,
    WindowRingGroup,
)
from planner.kv.estimate import MAX_PARALLEL, GroupBytes, KVEstimate, check_tokens, check_tp
from planner.kv.group import KVGroup, PageUse, Role, vector_formula
from planner.kv.state import Mamba2ConvStateGroup, StateGroup

__all__ = [
    "ChunkedLocalGroup", "CompressedGroup", "DSA_INDEXER_FP8", "FP8_DS_MLA", "FullAttentionGroup", "GroupBytes",
    "IndexerKeyGroup", "KVEstimate", "KVGroup", "MAX_PARALLEL", "MLAGroup", "Mamba2ConvStateGroup", "PageUse", "Role",
    "RopeTailFormat", "SlidingWindowGroup", "StateGroup", "WindowRingGroup", "check_tokens", "check_tp",
    "group_bytes", "layer_ranges", "vector_formula",
]


def layer_ranges(layer_ids: tuple[int, ...]) -> str:
    """Layer indices as compact ranges.

    >>> layer_ranges((0, 1, 2, 3, 5, 7, 8))
    '0-3, 5, 7-8'
    >>> layer_ranges(())
    ''
    """
    parts: list[str] = []
    ids = sorted(layer_ids)
    start = prev = None
    for i in ids + [None]:
        if start is not None and i == prev + 1:
            prev = i
            continue
        if start is not None:
            parts.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = i
    return ", ".join(parts)


def group_bytes(group: KVGroup, num_tokens: int, tp: int = 1, pp: int = 1) -> GroupBytes:
    """Breakdown row of ``group`` for a sequence of ``num_tokens`` tokens, per GPU."""
    entries = group.entries(num_tokens)
    entry = group.entry_bytes(tp)
    layers = group.layers_per_gpu(pp)
    return GroupBytes(
        name=group.name,
        kind=type(group).__name__,
        role=group.role,
        kv_format=group.kv_format.id,
        num_layers=group.num_layers,
        entry_bytes=entry,
        entries=entries,
        bytes=layers * entries * entry,
        growing_bytes_per_token=group.growing_bytes_per_token(num_tokens, tp, pp),
        entry_bytes_per_token=group.entry_bytes_per_token(tp, pp),
        capped=group.capped,
        in_pool=group.in_pool,
        num_layers_per_gpu=layers,
        kv_heads_per_gpu=group.kv_heads_per_gpu(tp),
        width=group.width,
        tokens_per_entry=group.tokens_per_entry,
        replicated_on_tp=group.replicated_on_tp,
        formula=group.entry_formula(tp),
        layer_ids=layer_ranges(group.layer_ids),
    )
