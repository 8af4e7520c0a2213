"""DeepSeek layouts from a ``config.json``: MLA latents, V3.2 sparse-attention
(DSA) indexer keys, and V4 compressed entries, indexer keys and window rings.

* MLA (``kv_lora_rank``): one latent of ``kv_lora_rank + qk_rope_head_dim``
  channels per token and layer, no factor 2 (DeepSeek-V2 paper, Table 1).
* DSA (``index_topk`` set, as vLLM tests for DeepSeek V3.2): one indexer key of
  ``index_head_dim`` FP8 channels plus an FP32 scale per 128 per token and
  layer (vLLM ``deepseek_v2.py`` ``Indexer``), and vLLM's ``fp8_ds_mla`` latent
  for FP8 KV dtypes; ``indexer_types`` "shared" layers (GLM-5) cache no keys.
* V4 (``compress_ratios``): per KV-source layer ``1/ratio`` compressed entries
  of ``head_dim``; indexer keys of ``index_head_dim`` on C4 layers (V4) or on
  ``index_source_layer_ids`` that are KV sources (V4.1); a ``sliding_window``
  ring on every layer; ratio 0 means window only.
"""

from __future__ import annotations

from planner.hf.report import ConfigReader, text
from planner.errors import PlanInputError
from planner.kv.formats import KVFormat
from planner.kv.kinds import (
    DSA_INDEXER_FP8,
    FP8_DS_MLA,
    CompressedGroup,
    IndexerKeyGroup,
    KVGroup,
    MLAGroup,
    WindowRingGroup,
)
from planner.messages import msg


def mla(r: ConfigReader, cfg: dict, num_layers: int, fmt: KVFormat,
        layer_ids: tuple[int, ...] | None = None) -> tuple[list[KVGroup], str]:
    """MLA latent groups (plus DSA indexer keys when ``index_topk`` is set) and the layer pattern; ``layer_ids``
    (default: every layer) are the MLA layers when others are not attention (Kimi-Linear's KDA layers, ``-`` in
    the pattern here).

    Raises:
        PlanInputError: a missing or out-of-range field, naming it.
    """
    rank = r.int_field("kv_lora_rank", maximum=1_000_000)
    rope = r.int_field("qk_rope_head_dim", minimum=0, maximum=1_000_000)
    for key in ("num_key_value_heads", "qk_nope_head_dim", "v_head_dim", "head_dim"):
        if cfg.get(key) is not None:
            r.note(key, cfg[key], "ignored", msg("MLA caches one latent per token and layer, not K and V per head"))
    r.note("mla_latent_dim", rank + rope, "derived", msg("kv_lora_rank + qk_rope_head_dim, no factor 2"))
    dsa = cfg.get("index_topk") is not None
    if not dsa:
        if cfg.get("index_head_dim") is not None:
            raise PlanInputError("config.index_topk", None, msg("an integer for a model with index_head_dim: vLLM "
                                                                "keys its sparse-attention indexer cache on index_topk"))
        ids = tuple(range(num_layers)) if layer_ids is None else tuple(layer_ids)
        return [MLAGroup(name="MLA latent", num_layers=len(ids), layer_ids=ids, kv_format=fmt, kv_lora_rank=rank,
                         qk_rope_head_dim=rope)], "".join("A" if i in ids else "-" for i in range(num_layers))
    if layer_ids is not None:
        raise PlanInputError("config.index_topk", cfg.get("index_topk"), msg("absent: kvplan does not model DSA "
                                                                            "indexer keys beside non-MLA layers"))
    if fmt.id.startswith("fp8") and fmt is not FP8_DS_MLA:
        r.note("kv_format", FP8_DS_MLA.id, "derived", msg("{id} chosen: vLLM stores DeepSeek V3.2 FP8 latents as fp8_ds_mla (512 FP8 + 4 FP32 scales + 64 BF16 RoPE = 656 B)", id=fmt.id))
        fmt = FP8_DS_MLA
    r.int_field("index_topk", maximum=10**9)
    r.int_field("index_n_heads", maximum=1_000_000, required=False)
    index_dim = r.int_field("index_head_dim", maximum=1_000_000,
                            need=msg("DeepSeek V3.2 sparse attention caches an indexer key of index_head_dim channels"))
    indexed = tuple(range(num_layers))
    if cfg.get("indexer_types") is not None:
        types = cfg["indexer_types"]
        if not isinstance(types, list) or len(types) != num_layers or any(t not in ("full", "shared") for t in types):
            raise PlanInputError("config.indexer_types", text(types, 60), msg("{num_layers} entries of 'full' or "
                                                                              "'shared'", num_layers=num_layers))
        indexed = tuple(i for i, t in enumerate(types) if t == "full")
        r.note("indexer_types", f"{len(indexed)} full, {num_layers - len(indexed)} shared", "read",
               msg("shared layers reuse another layer's indexer selection and cache no keys"))
    r.note("indexer keys", f"{len(indexed)} layers", "derived",
           msg("index_head_dim {index_dim} FP8 + FP32 scale per 128 = {vector_bytes} B per token and layer, whatever the KV dtype (vLLM Indexer / DeepseekV32IndexerCache)", index_dim=index_dim, vector_bytes=DSA_INDEXER_FP8.vector_bytes(index_dim)))
    groups: list[KVGroup] = [
        MLAGroup(name="MLA latent", num_layers=num_layers, layer_ids=tuple(range(num_layers)), kv_format=fmt,
                 kv_lora_rank=rank, qk_rope_head_dim=rope,
                 fp8_format=FP8_DS_MLA),
        IndexerKeyGroup(name="DSA indexer keys", num_layers=len(indexed), layer_ids=indexed, kv_format=DSA_INDEXER_FP8,
                        role="indexer",
                        entry_dim=index_dim),
    ]
    return groups, "D" * num_layers



def deepseek_v4(r: ConfigReader, cfg: dict, num_layers: int, formats: dict[str, KVFormat],
                 ring_in_pool: bool) -> tuple[list[KVGroup], str]:
    """DeepSeek V4 compressed entries, indexer keys and window rings, and the layer pattern.

    Raises:
        PlanInputError: a missing, short or out-of-range field, naming it.
    """
    raw = cfg.get("compress_ratios")
    if not isinstance(raw, list) or len(raw) < num_layers:
        shown = f"{len(raw)} entries" if isinstance(raw, list) else raw
        raise PlanInputError("config.compress_ratios", shown,
                             msg("a list of at least {num_layers} ratios (one per layer, MTP layers may follow)",
                                 num_layers=num_layers))
    ratios = r.int_list("compress_ratios", None, minimum=0, maximum=1_000_000)[:num_layers]
    if len(raw) > num_layers:
        r.note("compress_ratios[num_hidden_layers:]", len(raw) - num_layers, "ignored", msg("MTP / draft layers hold no serving KV here"))
    entry_dim = r.int_field("head_dim", maximum=1_000_000)
    if cfg.get("kv_source_layer_ids") is not None:
        sources = sorted(set(r.int_list("kv_source_layer_ids", None, minimum=0, maximum=num_layers - 1)))
        r.note("kv sharing", msg("{sources} source layers serve {others} others", sources=len(sources),
                                 others=num_layers - len(sources)), "derived",
               msg("cross-layer sharing: only KV-source layers store entries"))
    else:
        sources = list(range(num_layers))
    index_dim = r.int_field("index_head_dim", maximum=1_000_000, required=False) or 0
    if cfg.get("index_source_layer_ids") is not None:
        idx = set(r.int_list("index_source_layer_ids", None, minimum=0, maximum=num_layers - 1))
        indexed = {i for i in sources if i in idx}
        r.note("indexer layers", sorted(indexed), "derived",
               msg("index_source_layer_ids that are also KV sources (others reuse a source's keys)"))
    else:
        indexed = {i for i in sources if ratios[i] == 4} if index_dim else set()
        if index_dim:
            r.note("indexer layers", len(indexed), "derived", msg("C4 layers (compress ratio 4) carry indexer keys"))

    groups: list[KVGroup] = []
    by_ratio: dict[int, list[int]] = {}
    for i in sources:
        by_ratio.setdefault(ratios[i], []).append(i)
    for ratio in sorted(by_ratio, key=lambda x: (x == 0, x)):
        layers = by_ratio[ratio]
        if ratio == 0:
            r.note("window-only layers", len(layers), "derived", msg("compress ratio 0: sliding-window branch only"))
            continue
        groups.append(CompressedGroup(name=f"compressed 1/{ratio} main", num_layers=len(layers),
                                      layer_ids=tuple(layers),
                                      kv_format=formats["main"], compress_ratio=ratio, entry_dim=entry_dim))
        idx_layers = tuple(i for i in layers if i in indexed)
        if idx_layers and index_dim:
            groups.append(CompressedGroup(name=f"compressed 1/{ratio} indexer keys", num_layers=len(idx_layers),
                                          layer_ids=idx_layers,
                                          kv_format=formats["indexer"], role="indexer",
                                          compress_ratio=ratio, entry_dim=index_dim))
    window = r.int_field("sliding_window", maximum=10**9, required=False)
    if window:
        groups.append(WindowRingGroup(name=f"window ring {window}", num_layers=num_layers,
                                      layer_ids=tuple(range(num_layers)), kv_format=formats["ring"],
                                      role="ring", in_pool=ring_in_pool, window_tokens=window, entry_dim=entry_dim))
    if not groups:
        raise PlanInputError("config.compress_ratios", ratios, msg("at least one KV-source layer with a ratio >= 1"))
    src = set(sources)
    pattern = "".join(("Z" if ratios[i] else "W") if i in src else "s" for i in range(num_layers))
    return groups, pattern


