"""vLLM's view of a KV layout: its cache specs, pages and KV-cache groups, on one GPU.

Reproduces vLLM V1's arithmetic (``vllm/v1/core/kv_cache_utils.py``,
``vllm/v1/kv_cache_interface.py``, ``vllm/model_executor/models/config.py``); the
rules, each with its source, are listed in :mod:`planner.engines.capacity`. Each layer
kind carries its own vLLM rule (:class:`planner.kv.kinds.KVGroup`: ``vllm_kind``,
``vllm_max_blocks``, ``vllm_blocks_for``, ``vllm_as_full``, ``vllm_per_sequence``,
``vllm_reason``); this module loops over the groups, unifies page sizes and forms
vLLM's KV-cache groups, never asking which kind a group is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from planner.errors import PlanInputError
from planner.kv.formats import cdiv
from planner.kv.kinds import KVGroup, PageUse
from planner.kv.models import ModelSpec
from planner.messages import msg

DEFAULT_BLOCK_SIZE = 16
"""vLLM's default tokens per KV block (``--block-size``) on CUDA."""
DEFAULT_MAX_NUM_BATCHED_TOKENS = 8192
"""vLLM's ``max_num_batched_tokens`` default for ``vllm serve`` on GPUs with at
least 70 GiB other than A100 (2048 on smaller GPUs and A100; 16384 for the
offline ``LLM`` class): ``EngineArgs.get_batch_defaults``. Set yours."""
HYBRID_GROUP_RATIO = 1.5
"""vLLM uses the largest layer count as group size when it is under 1.5 x the smallest."""
MAX_BLOCK_SIZE = 4096
MAX_BATCHED_TOKENS = 10**8
MAX_MODEL_LEN = 10**9

MAMBA_CACHE_MODES = {"none": 1, "align": 2}
"""vLLM's ``mamba_cache_mode`` -> pages one request of a Mamba / linear-attention layer may hold
(``MambaSpec.max_memory_usage_bytes``: ``page x (1 + spec blocks)``, ``"align"`` (prefix caching on): ``page x
(2 + spec blocks)``); ``"all"`` (a page per block of the sequence) is not modelled."""

MAMBA_BLOCK_MULTIPLE = 16
"""vLLM rounds the attention block size of a Mamba hybrid to a multiple of 16
tokens (``HybridAttentionMambaModelConfig``: some attention backends need it)."""


def check_int(name: str, value: object, lo: int, hi: int) -> int:
    """``value`` as a whole number in ``[lo, hi]``.

    Raises:
        PlanInputError: not an int (bools excluded) or out of range, naming ``name``.
    """
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise PlanInputError(name, value, msg("a whole number in [{lo:,}, {hi:,}]", lo=lo, hi=hi))
    return value


@dataclass(frozen=True, kw_only=True)
class VLLMSettings:
    """The engine settings the vLLM view depends on, validated at construction.

    Attributes:
        block_size: tokens per KV block (``--block-size``, default 16).
        max_num_batched_tokens: tokens scheduled per step (chunked prefill
            chunk), default :data:`DEFAULT_MAX_NUM_BATCHED_TOKENS`.
        max_model_len: the engine's maximum sequence length; ``None`` means
            "the context being evaluated" (for a per-sequence view) or the
            model's maximum (for capacity).
        mamba_cache_mode: ``"none"`` (prefix caching off) or ``"align"`` (prefix caching on for a Mamba
            hybrid): pages a request holds per state layer, see :data:`MAMBA_CACHE_MODES`.
        hybrid_kv_cache_manager: False models ``--disable-hybrid-kv-cache-manager``
            (forced on with KV connectors in many vLLM versions): sliding and
            chunked layers of a model that also has full layers store full KV.

    Raises:
        PlanInputError: a field outside its range, naming it.
    """

    block_size: int = DEFAULT_BLOCK_SIZE
    max_num_batched_tokens: int = DEFAULT_MAX_NUM_BATCHED_TOKENS
    max_model_len: int | None = None
    hybrid_kv_cache_manager: bool = True
    mamba_cache_mode: str = "none"

    def __post_init__(self) -> None:
        if self.mamba_cache_mode not in MAMBA_CACHE_MODES:
            raise PlanInputError("mamba_cache_mode", self.mamba_cache_mode, msg("one of {choices}",
                                                                                choices=", ".join(MAMBA_CACHE_MODES)))
        check_int("block_size", self.block_size, 1, MAX_BLOCK_SIZE)
        check_int("max_num_batched_tokens", self.max_num_batched_tokens, 1, MAX_BATCHED_TOKENS)
        if self.max_model_len is not None:
            check_int("max_model_len", self.max_model_len, 1, MAX_MODEL_LEN)
        if not isinstance(self.hybrid_kv_cache_manager, bool):
            raise PlanInputError("hybrid_kv_cache_manager", self.hybrid_kv_cache_manager, msg("true or false"))


# ---------------------------------------------------------------------------
# vLLM's view of a layout: KV cache types, pages, groups
# ---------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class PagedType:
    """One vLLM KV-cache spec (a set of layers with identical paging) on one GPU.

    Attributes:
        spec: the layer kind whose rule pages these layers (the first of them,
            as vLLM stores it: full attention when ``converted``).
        page_size_bytes: one layer, one block, bytes.
        block_size: tokens per block.
        layers: real layers on this GPU.
        names: the kvplan groups paged here.
        converted: sliding / chunked stored as full (hybrid manager off).
    """

    spec: KVGroup
    page_size_bytes: int
    block_size: int
    layers: int
    names: tuple[str, ...]
    converted: bool = False
    state_pages: int = 1

    @property
    def kind(self) -> str | None:
        """The vLLM spec, in words ("full", "sliding", "chunked", "mamba")."""
        return self.spec.vllm_kind

    @property
    def cap_tokens(self) -> int | None:
        """The window or chunk, tokens (None for full attention and state)."""
        return self.spec.cap_tokens

    def max_memory_blocks(self, max_model_len: int, max_batched: int) -> int:
        """Blocks one request of ``max_model_len`` tokens may hold per layer (``max_memory_usage_bytes / page``)."""
        if self.spec.vllm_per_sequence:
            return self.state_pages * self.spec.vllm_max_blocks(max_model_len, max_batched, self.block_size)
        return self.spec.vllm_max_blocks(max_model_len, max_batched, self.block_size)

    def blocks_for(self, num_tokens: int, max_model_len: int, max_batched: int) -> int:
        """Blocks per layer a sequence of ``num_tokens`` tokens holds (at most the reservation)."""
        return self.spec.vllm_blocks_for(num_tokens, max_model_len, max_batched, self.block_size)

    def reason(self, use: PageUse) -> str:
        """Why vLLM's bytes differ from the theory, in the kind's words."""
        return self.spec.vllm_reason(use)


@dataclass(frozen=True)
class Paging:
    types: tuple[PagedType, ...]
    layout: Literal["uniform", "uniform type", "hybrid", "none"]
    group_size: int  # layers sharing one block id
    num_kv_groups: int
    groups_per_type: tuple[int, ...]
    unmodelled: tuple[KVGroup, ...]
    notes: tuple[str, ...]


def state_type(groups: list[KVGroup], tp: int, pp: int) -> tuple[int, int, tuple[str, ...]] | None:
    """One Mamba page per state layer: ``(layers, page bytes, names)``, or None
    when the state groups do not cover the same layers (shapes differ)."""
    layers = {g.layers_per_gpu(pp) for g in groups}
    counts = {g.num_layers for g in groups}
    if len(layers) != 1 or len(counts) != 1:
        return None
    return layers.pop(), sum(g.entry_bytes(tp) for g in groups), tuple(g.name for g in groups)


def paging(model: ModelSpec, kv_format: str | None, tp: int, pp: int, s: VLLMSettings) -> Paging:
    """vLLM's KV-cache groups for this model on one GPU (largest PP stage)."""
    groups = model.layout(kv_format)
    pooled = [g for g in groups if g.in_pool]
    modelled = [g for g in pooled if g.vllm_kind is not None]
    attention = [g for g in modelled if not g.vllm_per_sequence]
    states = [g for g in modelled if g.vllm_per_sequence]
    unmodelled = [g for g in pooled if g.vllm_kind is None]
    notes: list[str] = []
    state = state_type(states, tp, pp) if states else None
    if states and state is None:
        unmodelled += states
        notes.append(msg("state layers of different shapes: vLLM's Mamba grouping of them is not modelled"))
    attn_pages = {g.entry_bytes(tp) for g in attention}
    if state is not None and len(attn_pages) > 1:
        unmodelled += states
        state = None
        notes.append(msg("a Mamba hybrid whose attention layers have several page sizes: vLLM's page alignment "
                         "for it is not modelled"))
    block = s.block_size
    mamba_page = 0
    if state is not None and attention:
        per_token = attn_pages.pop()
        raw_page = state[1]
        needed = MAMBA_BLOCK_MULTIPLE * cdiv(raw_page, MAMBA_BLOCK_MULTIPLE * per_token)
        if block < needed:
            notes.append(msg("attention block size raised from {block} to {needed} tokens so that an attention page "
                             "({needed} x {per_token:,} B) holds a Mamba page of {raw_page:,} B "
                             "(HybridAttentionMambaModelConfig)", block=block, needed=needed, per_token=per_token,
                             raw_page=raw_page))
            block = needed
        mamba_page = block * per_token
        if mamba_page > raw_page:
            notes.append(msg("Mamba page of {raw_page:,} B padded to the attention page of {mamba_page:,} B "
                             "(+{value:.2f} %, mamba_page_size_padded)", raw_page=raw_page, mamba_page=mamba_page,
                             value=100 * (mamba_page - raw_page) / raw_page))
    elif state is not None:
        mamba_page = state[1]

    # Hybrid manager off: windowed layers of a model that also has full layers store full KV.
    full_layers = any(g.vllm_as_full() is g for g in attention)
    convert = (not s.hybrid_kv_cache_manager) and full_layers and any(g.vllm_as_full() is not g for g in attention)
    if convert:
        notes.append(msg("hybrid KV cache manager off (e.g. with a KV connector): vLLM stores full KV on sliding and "
                         "chunked layers too (unify_hybrid_kv_cache_specs)"))
    raw: dict[tuple[str, int | None, int], list[tuple[KVGroup, KVGroup]]] = {}
    for g in attention:
        stored = g.vllm_as_full() if convert else g
        raw.setdefault((stored.vllm_kind, stored.cap_tokens, block * g.entry_bytes(tp)), []).append((g, stored))
    if not raw and state is None:
        return Paging((), "none", 0, 0, (), tuple(unmodelled), tuple(notes))

    def make(pairs: list[tuple[KVGroup, KVGroup]], blk: int, page: int) -> PagedType:
        return PagedType(spec=pairs[0][1], page_size_bytes=page, block_size=blk,
                         layers=sum(g.layers_per_gpu(pp) for g, _ in pairs), names=tuple(g.name for g, _ in pairs),
                         converted=any(stored is not g for g, stored in pairs))

    kinds = {(k[0], k[1]) for k in raw}
    if state is None and (len(raw) == 1 or len(kinds) == 1):
        # One spec, or one type with several page sizes (UniformTypeKVCacheSpecs): one KV-cache group.
        types = tuple(make(pairs, block, k[2]) for k, pairs in raw.items())
        layout = "uniform" if len(raw) == 1 else "uniform type"
        layers = sum(t.layers for t in types)
        return Paging(types, layout, layers, 1, (1,) * len(types), tuple(unmodelled), tuple(notes))

    # Hybrid: unify page sizes by growing the block size of smaller pages (unify_kv_cache_spec_page_size).
    max_page = max([k[2] for k in raw] + [mamba_page])
    types_list = []
    for key, pairs in raw.items():
        page = key[2]
        if max_page % page:
            raise PlanInputError("engine", model.id, msg("a layout whose page sizes divide each other: vLLM cannot "
                                                         "unify page sizes {page:,} B and {max_page:,} B "
                                                         "(NotImplementedError in vLLM)", page=page, max_page=max_page))
        ratio = max_page // page
        if ratio > 1:
            notes.append(msg("{names}: page size {page:,} B grown to {max_page:,} B by a block size of {value} tokens "
                             "(unify_kv_cache_spec_page_size)", names=', '.join(g.name for g, _ in pairs), page=page,
                             max_page=max_page, value=block * ratio))
        types_list.append(make(pairs, block * ratio, max_page))
    if state is not None:
        if mamba_page != max_page:
            raise PlanInputError("engine", model.id, msg("a Mamba page ({mamba_page:,} B) equal to the attention page "
                                                         "({max_page:,} B): vLLM pads one to the other",
                                                         mamba_page=mamba_page, max_page=max_page))
        types_list.append(PagedType(spec=states[0], page_size_bytes=max_page, block_size=block, layers=state[0],
                                    names=state[2], state_pages=MAMBA_CACHE_MODES[s.mamba_cache_mode]))
    counts = [t.layers for t in types_list]
    group_size = min(counts)
    if max(counts) < min(counts) * HYBRID_GROUP_RATIO:
        group_size = max(counts)
    per_type = tuple(cdiv(t.layers, group_size) for t in types_list)
    for t, n in zip(types_list, per_type):
        pad = n * group_size - t.layers
        if pad:
            notes.append(msg("{names}: {layers} layers fill {n} KV-cache group(s) of {group_size}: {pad} padding "
                             "layer(s) (_get_kv_cache_groups_uniform_page_size)", names=', '.join(t.names),
                             layers=t.layers, n=n, group_size=group_size, pad=pad))
    return Paging(tuple(types_list), "hybrid", group_size, sum(per_type), per_type, tuple(unmodelled), tuple(notes))


def engine_layers(p: Paging, i: int) -> int:
    """Layers (padding included) vLLM charges for type ``i`` on one GPU."""
    if p.layout == "hybrid":
        return p.groups_per_type[i] * p.group_size
    return p.types[i].layers


def pp_partition(num_layers: int, pp: int, given: tuple[int, ...] | None = None) -> tuple[int, ...]:
    """Layers of each pipeline stage, as vLLM splits them (``get_pp_indices`` in ``vllm/distributed/utils.py``).

    ``num_layers // pp`` each; the ``num_layers % pp`` remaining layers go one each to the stages before the last,
    counted back from the second-to-last (``partitions[-i] += 1`` for ``i`` in ``2 .. remaining + 1``: the last
    stage also holds the norm and the output head). ``given`` is a ``VLLM_PP_LAYER_PARTITION`` the log shows,
    used as is when it has ``pp`` stages summing to ``num_layers``.

    Raises:
        PlanInputError: ``pp`` above ``num_layers``, or a given partition of the wrong length or sum.
    """
    check_int("pp", pp, 1, max(1, num_layers))
    if given is not None:
        if len(given) != pp or sum(given) != num_layers or min(given) < 0:
            raise PlanInputError("VLLM_PP_LAYER_PARTITION", ",".join(map(str, given)),
                                 msg("{pp} stages summing to {layers} layers", pp=pp, layers=num_layers))
        return tuple(given)
    parts = [num_layers // pp] * pp
    for i in range(2, num_layers % pp + 2):
        parts[-i] += 1
    return tuple(parts)
