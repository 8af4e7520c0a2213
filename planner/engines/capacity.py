"""Theory vs engine: what vLLM allocates for a sequence, and capacity in vLLM's own terms.

kvplan's default figure is the *theory*: the window-capped bytes of
:meth:`planner.kv.models.ModelSpec.estimate`. An engine pages KV in blocks and
reserves more than that for some layers; this module reproduces vLLM's
arithmetic (V1 engine, ``vllm/v1/core/kv_cache_utils.py`` and
``vllm/v1/kv_cache_interface.py`` at vllm-project/vllm@001cabc) so both can be
shown side by side, each with the reason they differ:

* block rounding: a sequence of ``n`` tokens holds ``ceil(n / block_size)``
  blocks per layer (``FullAttentionSpec``); a block of one layer is
  ``page_size_bytes = block_size * entry_bytes``;
* sliding window ``W``: vLLM reserves
  ``cdiv(min(W - 1 + max_num_batched_tokens, max_model_len), block_size) + 1``
  blocks (``SlidingWindowSpec.max_memory_usage_bytes``: the last ``W - 1``
  tokens plus one scheduled chunk, +1 because the window need not start on a
  block boundary); a sequence shorter than that holds ``ceil(n / block)``;
* chunked local ``C``: ``cdiv(min(C + max_num_batched_tokens, max_model_len), block)``;
* hybrid KV cache manager off (``--disable-hybrid-kv-cache-manager``, e.g. with
  a KV connector): a model with full *and* sliding / chunked layers stores full
  KV on every layer (``unify_hybrid_kv_cache_specs``);
* hybrid models: layers are grouped in KV-cache groups of ``group_size`` layers
  (the smallest type's layer count, or the largest when it is under 1.5 x the
  smallest); each type fills ``ceil(L_t / group_size)`` groups, padding the
  last (``_get_kv_cache_groups_uniform_page_size``).

Capacity for a KV budget (per GPU), as vLLM logs it at start-up:

* ``num_blocks = budget // page_size_bytes // num_layers`` (``get_num_blocks``;
  for one layer type with several page sizes, ``budget // sum(page sizes)``;
  for hybrid models ``num_layers`` is ``group_size``);
* "GPU KV cache size" ``= num_blocks // num_kv_cache_groups * block_size`` tokens;
* "Maximum concurrency for M tokens per request" ``= num_blocks /
  blocks_per_request`` with ``blocks_per_request = sum over KV-cache groups of
  cdiv(max_memory_usage_bytes, page_size_bytes)``
  (``get_max_concurrency_for_kv_cache_config``). It is pool tokens over
  ``max_model_len``: how many *full-length* requests fit at once, not a cap on
  concurrent requests (shorter requests fit more; github.com/vllm-project/vllm/issues/8031, maintainer
  reply: "4.61x ... or 46 800 token requests");
* the largest ``max_model_len`` a budget can serve: the largest ``M`` with
  ``group_size * page_size * sum_g cdiv(max_memory_usage_g(M), page_size) <=
  budget`` (``_estimate_max_model_len_from_groups``, a binary search).

Hybrid attention + Mamba / linear-attention models (``HybridAttentionMambaModelConfig``
in ``vllm/model_executor/models/config.py``): a layer's state tensors form one
``MambaSpec`` page (``page_size_bytes`` = the sum of its state tensors). vLLM
grows the attention block size to ``16 * cdiv(mamba_page, 16 * attention_page_per_token)``
tokens so that an attention page is at least a Mamba page, then pads the Mamba
page to the attention page (``mamba_page_size_padded``). A sequence holds one
Mamba page per state layer with prefix caching off (``MambaSpec.max_memory_usage_bytes``,
``mamba_cache_mode`` "none"), two in "align" mode, which recent releases use for
hybrids with prefix caching on (``VLLMSettings.mamba_cache_mode``). The groups
then follow the hybrid rule above.

Not modelled (theory shown, with the reason): DeepSeek V4 compressed entries
and window rings, fixed state given only as a reported figure, state layers of
different shapes in one model, and Mamba hybrids whose attention layers have
several page sizes.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from planner.errors import PlanInputError
from planner.kv.kinds import PageUse, check_tokens, check_tp
from planner.kv.models import ModelSpec
from planner.engines.vllm_paging import (  # re-exported: the engine's settings and defaults
    DEFAULT_BLOCK_SIZE,
    DEFAULT_MAX_NUM_BATCHED_TOKENS,
    MAX_BLOCK_SIZE,
    MAX_MODEL_LEN,
    Paging,
    VLLMSettings,
    check_int,
    engine_layers,
    paging,
)
from planner.messages import Figure, msg
from planner.monotone import largest_fitting

__all__ = [
    "BUDGET_MOVES", "DEFAULT_BLOCK_SIZE", "DEFAULT_MAX_NUM_BATCHED_TOKENS", "ENGINE_COLUMNS", "EngineTypeBytes",
    "MAX_BLOCK_SIZE", "MAX_BUDGET_BYTES", "MaxModelLenFit", "NOT_A_HARD_CAP", "TheoryVsEngine", "VLLMCapacity",
    "VLLMAdmission", "VLLMSettings", "VLLM_SOURCE", "check_budget_bytes", "engine_frame", "theory_vs_engine", "vllm_capacity",
    "vllm_admission", "vllm_max_model_len",
]

if TYPE_CHECKING:  # pandas is imported where a frame is built: `kvplan kv` never loads it
    import pandas as pd

VLLM_SOURCE = (
    "vLLM V1 (vllm-project/vllm@001cabc): vllm/v1/core/kv_cache_utils.py (get_num_blocks, "
    "get_kv_cache_config_from_groups, _get_kv_cache_groups_uniform_page_size, unify_hybrid_kv_cache_specs, "
    "get_max_concurrency_for_kv_cache_config, _report_kv_cache_config, _estimate_max_model_len_from_groups) and "
    "vllm/v1/kv_cache_interface.py (FullAttentionSpec, SlidingWindowSpec, ChunkedLocalAttentionSpec, "
    "MLAAttentionSpec, MambaSpec: page_size_bytes, max_memory_usage_bytes) and "
    "vllm/model_executor/models/config.py (HybridAttentionMambaModelConfig: attention block size and Mamba page padding)"
)
"""Where the engine arithmetic comes from."""

MAX_BUDGET_BYTES = 10**16
"""Largest KV budget accepted (10 PB, far above any device)."""

NOT_A_HARD_CAP = msg(
    "Maximum concurrency is pool tokens / max_model_len: the number of full-length requests that fit at once. "
    "It is not a cap on concurrent requests: shorter requests fit more, and the scheduler also stops at max_num_seqs."
)
BUDGET_MOVES = msg(
    "The KV budget is what is left after weights and the profiled activation peak; the engine re-profiles when "
    "max_model_len or max_num_batched_tokens change, so the budget can move with them (github.com/vllm-project/vllm/issues/10517: "
    "Llama-3.1-8B on one RTX 3090, 3.81 GiB at max_model_len 20k but 2.89 GiB at 29k)."
)

def check_budget_bytes(name: str, value: object) -> int:
    """Validate a KV budget in bytes: an integer in [0, 10**16].

    Raises:
        PlanInputError: not an integer (NaN, inf, bools), negative or absurd.
    """
    return check_int(name, value, 0, MAX_BUDGET_BYTES)


# ---------------------------------------------------------------------------
# Theory vs engine for one sequence
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class EngineTypeBytes:
    """One vLLM KV-cache type's share of a sequence, per GPU.

    Attributes:
        name: the kvplan groups it pages.
        kind: "full", "sliding", "chunked" or "mamba" as vLLM pages it.
        cap_tokens: window or chunk (None for full).
        layers: real layers on this GPU; ``padding_layers``: vLLM's padding.
        block_size: tokens per block for this type (grown for page unification).
        page_size_bytes: one layer, one block.
        blocks_per_layer: blocks the sequence holds per layer.
        theory_bytes: window-capped bytes (kvplan's default figure).
        engine_bytes: ``(layers + padding) * blocks_per_layer * page_size_bytes``.
        reason: why they differ ("" when equal).
    """

    name: str
    kind: str
    cap_tokens: int | None
    layers: int
    padding_layers: int
    block_size: int
    page_size_bytes: int
    blocks_per_layer: int
    theory_bytes: int
    engine_bytes: int
    reason: str


@dataclass(frozen=True)
class TheoryVsEngine:
    """Window-capped theory and vLLM's allocation for one sequence, per GPU.

    Attributes:
        model_id, context_tokens, kv_format, tp, pp: the question.
        settings: the engine settings used (``max_model_len`` resolved).
        theory_bytes: :attr:`planner.kv.kinds.KVEstimate.kv_bytes` (pool, per GPU).
        engine_bytes: what vLLM allocates (modelled types) plus the theory of
            groups it does not model.
        differs: ``engine_bytes != theory_bytes``.
        reasons: why, one sentence each.
        types: per vLLM KV-cache type.
        unmodelled: groups shown at theory (vLLM pages them its own way).
        per: "GPU" (largest pipeline stage).
        engine: "vllm".
    """

    model_id: str
    context_tokens: int
    kv_format: str
    tp: int
    pp: int
    settings: VLLMSettings
    theory_bytes: int
    engine_bytes: int
    differs: bool
    reasons: tuple[str, ...]
    types: tuple[EngineTypeBytes, ...]
    unmodelled: tuple[str, ...]
    per: str = "GPU"
    engine: str = "vllm"


def theory_vs_engine(model: ModelSpec, context_tokens: int, kv_format: str | None = None, tp: int = 1,
                     pp: int = 1, settings: VLLMSettings | None = None) -> TheoryVsEngine:
    """Theory and vLLM's view of one sequence of ``context_tokens`` tokens, per GPU.

    Raises:
        PlanInputError: bad inputs, a context above ``max_model_len``, or a
            layout vLLM cannot page.
    """
    s = settings or VLLMSettings()
    n = check_tokens("context_tokens", context_tokens)
    tp = check_tp("tp", tp)
    est = model.estimate(n, kv_format, tp, pp)
    pp = est.pp
    max_len = s.max_model_len if s.max_model_len is not None else max(n, 1)
    if n > max_len:
        raise PlanInputError("context_tokens", n, msg("at most max_model_len ({max_len:,})", max_len=max_len))
    s = VLLMSettings(block_size=s.block_size, max_num_batched_tokens=s.max_num_batched_tokens,
                     max_model_len=max_len, hybrid_kv_cache_manager=s.hybrid_kv_cache_manager)
    p = _staged_paging(model, n, kv_format, tp, pp, s)
    by_name = {g.name: g for g in est.groups}
    reasons: list[str] = list(p.notes)
    rows: list[EngineTypeBytes] = []
    modelled_theory = 0
    for i, t in enumerate(p.types):
        theory = sum(by_name[name].bytes for name in t.names)
        modelled_theory += theory
        blocks = t.blocks_for(n, max_len, s.max_num_batched_tokens)
        layers = engine_layers(p, i)
        engine = layers * blocks * t.page_size_bytes
        why = ""
        if engine != theory:
            why = t.reason(PageUse(names=", ".join(t.names), num_tokens=n, block_size=t.block_size, blocks=blocks,
                                   page_size_bytes=t.page_size_bytes,
                                   max_num_batched_tokens=s.max_num_batched_tokens, max_model_len=max_len,
                                   theory_bytes=theory, layers=t.layers, converted=t.converted))
            if layers != t.layers:
                why = msg("{why}; plus {pad} padding layer(s)", why=why, pad=layers - t.layers)
            reasons.append(why)
        rows.append(EngineTypeBytes(name=", ".join(t.names), kind=t.kind, cap_tokens=t.cap_tokens, layers=t.layers,
                                    padding_layers=layers - t.layers, block_size=t.block_size,
                                    page_size_bytes=t.page_size_bytes, blocks_per_layer=blocks, theory_bytes=theory,
                                    engine_bytes=engine, reason=why))
    unmodelled = tuple(g.name for g in p.unmodelled)
    if model.uses_coefficient(kv_format) or unmodelled:
        what = ", ".join(unmodelled) if unmodelled else msg("the reported coefficient")
        reasons.append(msg("{what}: vLLM's paging of this layout is not modelled; engine view = theory for it",
                           what=what))
    engine_total = est.kv_bytes - modelled_theory + sum(r.engine_bytes for r in rows)
    return TheoryVsEngine(model_id=model.id, context_tokens=n, kv_format=kv_format or "native", tp=tp, pp=pp,
                          settings=s, theory_bytes=est.kv_bytes, engine_bytes=engine_total,
                          differs=engine_total != est.kv_bytes, reasons=tuple(r for r in reasons if r),
                          types=tuple(rows), unmodelled=unmodelled, per=est.per)


# ---------------------------------------------------------------------------
# KV budget -> blocks, tokens, concurrency (and back)
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class VLLMCapacity:
    """What vLLM makes of a KV budget on one GPU, in its own terms.

    Attributes:
        kv_budget_bytes: available KV memory on this GPU ("Available KV cache memory").
        block_size: tokens per block (smallest, for hybrid models).
        max_model_len: tokens per request the concurrency figure assumes.
        page_size_bytes: one layer, one block.
        num_layers_per_block: layers sharing one block id (``num_layers`` in
            ``get_num_blocks``; ``group_size`` for hybrid models).
        bytes_per_block: bytes one block id takes on this GPU.
        num_kv_groups: vLLM KV-cache groups.
        num_blocks: ``budget // bytes_per_block`` (vLLM's num_gpu_blocks).
        max_tokens: ``num_blocks // num_kv_groups * block_size`` ("GPU KV cache size").
        blocks_per_request: blocks one ``max_model_len`` request may need.
        max_concurrency: ``num_blocks / blocks_per_request`` (not a hard cap).
        needed_bytes: KV one ``max_model_len`` request needs
            (vLLM refuses to start when it exceeds the budget).
        fits_one_request: ``needed_bytes <= kv_budget_bytes``.
        formula: the arithmetic with the numbers plugged in.
        note: what max_concurrency means (:data:`NOT_A_HARD_CAP`).
        per: "GPU".
    """

    model_id: str
    kv_format: str
    tp: int
    pp: int
    kv_budget_bytes: int
    block_size: int
    max_model_len: int
    page_size_bytes: int
    num_layers_per_block: int
    bytes_per_block: int
    num_kv_groups: int
    num_blocks: int
    max_tokens: int
    blocks_per_request: int
    max_concurrency: float
    needed_bytes: int
    fits_one_request: bool
    formula: str
    note: str = NOT_A_HARD_CAP
    per: str = "GPU"


def _staged_paging(model: ModelSpec, num_tokens: int, kv_format: str | None, tp: int, pp: int,
                   s: VLLMSettings) -> Paging:
    """vLLM's paging on the GPU of the binding pipeline stage (:meth:`ModelSpec.binding_stage` at ``num_tokens``,
    vLLM ``get_pp_indices``); each group's ``ceil(layers / PP)`` share when a group's layers are not known."""
    stage = model.binding_stage(num_tokens, kv_format, tp, pp)
    if stage is None:
        return paging(model, kv_format, tp, pp, s)
    return paging(stage, None, tp, 1, s)


def _pageable(model: ModelSpec, kv_format: str | None, tp: int, pp: int, s: VLLMSettings,
              num_tokens: int = 1) -> Paging:
    """:func:`_staged_paging` at ``num_tokens`` (the request length whose binding stage is paged), refused when
    vLLM's paging of it is not modelled."""
    p = _staged_paging(model, num_tokens, kv_format, tp, pp, s)
    if model.uses_coefficient(kv_format) or p.unmodelled or not p.types:
        what = ", ".join(g.name for g in p.unmodelled) or "a reported bytes-per-token coefficient"
        hint = msg("; choose a KV format to page its architecture") if model.uses_coefficient(kv_format) and p.types else ""
        raise PlanInputError("engine", model.id, msg("a model whose KV vLLM pages as full, sliding, chunked or MLA "
                                                     "attention (not modelled here: {what}{hint})", what=what,
                                                     hint=hint))
    if all(t.kind == "mamba" for t in p.types):
        raise PlanInputError("engine", model.id, msg("a model with attention layers: for an attention-free model vLLM "
                                                     "sizes a block as max_model_len tokens (one Mamba page per "
                                                     "sequence), and kvplan does not model its token capacity yet"))
    return p


def _needed_bytes(p: Paging, max_model_len: int, max_batched: int) -> int:
    """vLLM's ``_max_memory_usage_bytes_from_groups`` for ``max_model_len``."""
    if p.layout == "uniform type":
        return sum(t.layers * t.max_memory_blocks(max_model_len, max_batched) * t.page_size_bytes for t in p.types)
    page = p.types[0].page_size_bytes
    blocks = sum(n * t.max_memory_blocks(max_model_len, max_batched) for t, n in zip(p.types, p.groups_per_type))
    return p.group_size * page * blocks


@dataclass(frozen=True)
class VLLMAdmission:
    """vLLM's admission arithmetic for one layout on one GPU, written once.

    ``num_blocks = budget // bytes_per_block`` (``get_num_blocks``); a request of
    ``M`` tokens takes :meth:`blocks_per_request` block ids (the sum over KV-cache
    groups of ``cdiv(max_memory_usage_bytes, page_size_bytes)``: a sliding-window
    group reserves its window plus one prefill chunk of ``max_num_batched_tokens``,
    +1 block, per :class:`planner.kv.kinds.KVGroup` ``vllm_max_blocks``); "maximum
    concurrency" is ``num_blocks / blocks_per_request``
    (``get_max_concurrency_for_kv_cache_config``, vllm-project/vllm@001cabc
    ``vllm/v1/core/kv_cache_utils.py``). :func:`vllm_capacity` reports it for one
    budget; :func:`planner.plan.core.evaluate` takes its floor as the plan's
    admission figure.

    Attributes:
        paging: vLLM's KV-cache types and groups for this layout.
        settings: block size, ``max_num_batched_tokens``, hybrid manager.
        bytes_per_block: bytes one block id takes on this GPU (every layer).
    """

    paging: Paging
    settings: VLLMSettings
    bytes_per_block: int

    def blocks_per_request(self, max_model_len: int) -> int:
        """Block ids one request of ``max_model_len`` tokens may hold."""
        p, batched = self.paging, self.settings.max_num_batched_tokens
        if p.layout == "uniform type":
            return p.types[0].max_memory_blocks(max_model_len, batched)
        return sum(n * t.max_memory_blocks(max_model_len, batched) for t, n in zip(p.types, p.groups_per_type))

    def num_blocks(self, kv_budget_bytes: int) -> int:
        """vLLM's ``num_gpu_blocks`` for a budget (0 for a negative one)."""
        return max(kv_budget_bytes, 0) // self.bytes_per_block

    def admitted(self, kv_budget_bytes: int, max_model_len: int) -> int:
        """Full-length requests admitted at once: ``floor(num_blocks / blocks_per_request)``."""
        return self.num_blocks(kv_budget_bytes) // self.blocks_per_request(max_model_len)


def vllm_admission(model: ModelSpec, kv_format: str | None = None, tp: int = 1, pp: int = 1,
                   settings: VLLMSettings | None = None, num_tokens: int = 1) -> VLLMAdmission:
    """vLLM's admission arithmetic for this model on one GPU, paging the pipeline stage that binds at
    ``num_tokens`` tokens per request.

    Raises:
        PlanInputError: a layout vLLM's paging is not modelled for (named).
    """
    s = settings or VLLMSettings()
    p = _pageable(model, kv_format, tp, pp, s, num_tokens)
    if p.layout == "uniform type":
        bytes_per_block = sum(t.layers * t.page_size_bytes for t in p.types)
    else:
        bytes_per_block = p.types[0].page_size_bytes * p.group_size
    return VLLMAdmission(paging=p, settings=s, bytes_per_block=bytes_per_block)


def vllm_capacity(model: ModelSpec, kv_budget_bytes: int, max_model_len: int | None = None,
                  kv_format: str | None = None, tp: int = 1, pp: int = 1,
                  settings: VLLMSettings | None = None) -> VLLMCapacity:
    """Blocks, tokens and "maximum concurrency" for a KV budget on one GPU, as vLLM computes them.

    Args:
        model: the model (its architecture; a reported coefficient is not paged).
        kv_budget_bytes: available KV memory on one GPU, bytes.
        max_model_len: tokens per request; default ``settings.max_model_len``,
            else the model's maximum context.
        kv_format, tp, pp: as in :meth:`ModelSpec.estimate`.
        settings: engine settings (block size, batch tokens, hybrid manager).

    Raises:
        PlanInputError: bad inputs, or a layout vLLM's paging is not modelled for.
    """
    s = settings or VLLMSettings()
    budget = check_budget_bytes("kv_budget_bytes", kv_budget_bytes)
    tp = check_tp("tp", tp)
    pp = model.check_pp(pp, kv_format)
    m = max_model_len if max_model_len is not None else (s.max_model_len or model.max_context_tokens)
    if m is None:
        raise PlanInputError("max_model_len", None, msg("a whole number of tokens (the model's maximum is not known)"))
    m = check_int("max_model_len", m, 1, MAX_MODEL_LEN)
    a = vllm_admission(model, kv_format, tp, pp, s, num_tokens=m)
    p = a.paging
    min_block = min(t.block_size for t in p.types)
    page = p.types[0].page_size_bytes
    bytes_per_block = a.bytes_per_block
    num_blocks = a.num_blocks(budget)
    blocks_per_request = a.blocks_per_request(m)
    if p.layout == "uniform type":
        # a Figure: written in English form here, its digits take the page's separators (one number, one style)
        how = Figure(f"{budget:,} // ({' + '.join(f'{t.layers} x {t.page_size_bytes:,}' for t in p.types)} B)")
    else:
        how = Figure(f"{budget:,} // {page:,} // {p.group_size}")
    max_tokens = num_blocks // p.num_kv_groups * min_block
    concurrency = num_blocks / blocks_per_request if blocks_per_request else 0.0
    needed = _needed_bytes(p, m, s.max_num_batched_tokens)
    formula = (msg("page = {min_block} tokens x {page_per_token:,} B = {page:,} B per layer per block; num_blocks = "
                   "{how} = {num_blocks:,}; GPU KV cache size = {num_blocks:,} // {num_kv_groups} x {min_block} = "
                   "{max_tokens:,} tokens; blocks per {m:,}-token request = {blocks_per_request:,}; maximum "
                   "concurrency = {num_blocks:,} / {blocks_per_request:,} = {concurrency:.2f}x", min_block=min_block,
                   page_per_token=page // min_block, page=page, how=how, num_blocks=num_blocks,
                   num_kv_groups=p.num_kv_groups, max_tokens=max_tokens, m=m, blocks_per_request=blocks_per_request,
                   concurrency=concurrency))
    return VLLMCapacity(model_id=model.id, kv_format=kv_format or "native", tp=tp, pp=pp, kv_budget_bytes=budget,
                        block_size=min_block, max_model_len=m, page_size_bytes=page,
                        num_layers_per_block=p.group_size if p.layout != "uniform type" else sum(t.layers for t in p.types),
                        bytes_per_block=bytes_per_block, num_kv_groups=p.num_kv_groups, num_blocks=num_blocks,
                        max_tokens=max_tokens, blocks_per_request=blocks_per_request, max_concurrency=concurrency,
                        needed_bytes=needed, fits_one_request=needed <= budget, formula=formula)


@dataclass(frozen=True)
class MaxModelLenFit:
    """The largest ``max_model_len`` one GPU's KV budget can serve (one request).

    Attributes:
        max_model_len: largest fitting length (0 when not one token fits).
        upper_bound: the search's upper end (the model's maximum, or given).
        needed_bytes: KV one request of ``max_model_len`` tokens needs.
        kv_budget_bytes: the budget.
        note: :data:`BUDGET_MOVES` (the budget itself depends on max_model_len).
        per: "GPU".
    """

    model_id: str
    kv_budget_bytes: int
    max_model_len: int
    upper_bound: int
    needed_bytes: int
    note: str = BUDGET_MOVES
    per: str = "GPU"


def vllm_max_model_len(model: ModelSpec, kv_budget_bytes: int, kv_format: str | None = None, tp: int = 1,
                       pp: int = 1, settings: VLLMSettings | None = None,
                       upper_bound: int | None = None) -> MaxModelLenFit:
    """The largest max_model_len whose one request fits ``kv_budget_bytes`` (vLLM's binary search),
    searched up to ``upper_bound`` (default: the model's maximum context).

    Raises:
        PlanInputError: bad inputs, or a layout vLLM's paging is not modelled for.
    """
    s = settings or VLLMSettings()
    budget = check_budget_bytes("kv_budget_bytes", kv_budget_bytes)
    tp = check_tp("tp", tp)
    pp = model.check_pp(pp, kv_format)
    hi = upper_bound if upper_bound is not None else (model.max_context_tokens or MAX_MODEL_LEN)
    hi = check_int("upper_bound", hi, 1, MAX_MODEL_LEN)
    p = _pageable(model, kv_format, tp, pp, s, hi)  # the stage that binds at the search's upper bound

    def fits(m: int) -> bool:
        return _needed_bytes(p, m, s.max_num_batched_tokens) <= budget

    best = largest_fitting(fits, 1, hi)  # needed bytes never fall as max_model_len grows
    return MaxModelLenFit(model_id=model.id, kv_budget_bytes=budget, max_model_len=best, upper_bound=hi,
                          needed_bytes=_needed_bytes(p, best, s.max_num_batched_tokens) if best else 0)


ENGINE_COLUMNS: tuple[str, ...] = (
    "name", "kind", "cap_tokens", "layers", "padding_layers", "block_size", "page_size_bytes", "blocks_per_layer",
    "theory_bytes", "engine_bytes", "reason",
)
"""Column contract of :func:`engine_frame`: one row per vLLM KV-cache type, per GPU
(fields of :class:`EngineTypeBytes`)."""


def engine_frame(result: TheoryVsEngine) -> pd.DataFrame:
    """The per-type rows of a :class:`TheoryVsEngine`, with :data:`ENGINE_COLUMNS`."""
    import pandas as pd

    frame = pd.DataFrame([asdict(t) for t in result.types], columns=list(ENGINE_COLUMNS))
    return frame.astype({"cap_tokens": "Int64"})
