"""The architecture registry: which reader prices a ``config.json``, keyed on ``architectures`` (and ``model_type``).

vLLM picks a model class by the config's ``architectures`` (``_TEXT_GENERATION_MODELS`` in
``vllm/model_executor/models/registry.py``); kvplan does the same. Every name of that list, vendored at a
cited commit in ``planner/data/vllm_text_generation_models.json``, has a status here:

* **supported**: a :class:`Family` reads it. Each family names the vLLM source it mirrors and the golden
  tests (real public configs, derivations written by hand next to the numbers) that hold it;
* **refused**: a :class:`Refusal` says why ("encoder only", "not modelled yet: <what>").

An architecture that is in neither list is refused, naming the nearest supported one when it is close. A config without
``architectures`` is looked up by ``model_type``; with neither, it is read as the generic decoder (a report
line says so).

No field left unread: after a family's reader has run, every top-level key (and every key of a merged
``text_config``) whose name speaks of layout (:data:`LAYOUT_WORDS`) must have been consulted by the reader or
be declared irrelevant to KV (:data:`COMMON_IRRELEVANT`, :data:`IRRELEVANT_WORDS`, the family's own list);
any other makes kvplan refuse, naming the field. A user may accept one explicitly (``--ignore-field NAME``);
the result then says so beside the number.

Run ``python -m planner.hf.registry --markdown > docs/architectures.md`` to regenerate the table.
"""

from __future__ import annotations

import difflib
import json
import re
import sys
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Callable

from planner.errors import PlanInputError
from planner.hf.public_goldens import PUBLIC_CONFIG_GOLDENS, PUBLISHED_SPELLINGS, UNNAMED_QUOTATIONS
from planner.messages import msg

VLLM_COMMIT = "0002bff0b6cb36a3c8a17364de3303664463c412"
"""The vLLM commit the vendored architecture list (and the citations below) were read at."""

_V = "vllm-project/vllm @ 0002bff, vllm/model_executor/models/"


@dataclass(frozen=True)
class Family:
    """One reader of ``config.json`` files and what it stands on.

    Attributes:
        id: short key (``decoder``, ``chatglm``).
        title: what it reads, in words.
        source: the vLLM source it mirrors (repository, commit, file, class or function).
        golden: the golden tests that hold it (real public configs, hand derivations).
        reads: the fields it reads (documentation; the check uses what the reader consulted).
        aliases: ``(legacy, canonical)`` field names the engine maps through its config class
            (Hugging Face ``attribute_map`` or vLLM's config hook); the legacy value is read when the
            canonical one is absent.
        irrelevant: fields whose names speak of layout but that this family knows do not change KV.
        prepare: an optional hook that derives canonical fields from nested ones (MPT / DBRX ``attn_config``).
        pp_refusal: why the engine refuses pipeline parallelism for this family (its model class does not implement
            vLLM's ``SupportsPP``); empty when it serves PP.
    """

    id: str
    title: str
    source: str
    golden: tuple[str, ...]
    reads: tuple[str, ...] = ()
    aliases: tuple[tuple[str, str], ...] = ()
    irrelevant: tuple[str, ...] = ()
    prepare: Callable[[dict, list], None] | None = field(default=None, compare=False, repr=False)
    pp_refusal: str = ""


@dataclass(frozen=True)
class Refusal:
    """An architecture kvplan refuses, and why."""

    reason: str


_DECODER_READS = ("num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim", "hidden_size",
                  "max_position_embeddings", "sliding_window", "use_sliding_window", "max_window_layers",
                  "layer_types", "sliding_window_pattern", "quantization_config")


def _decoder(cfg: dict, notes: list) -> None:
    """HunYuan's cross-layer attention (``use_cla``, ``cla_share_factor``): vLLM ``HunYuanDecoderLayer``
    (hunyuan_v1.py) lets layers reuse an earlier layer's KV when ``use_cla`` is set; kvplan does not model that
    sharing, so it refuses ``use_cla`` true, and reads ``cla_share_factor`` as unused when it is false."""
    if cfg.get("use_cla") is True:
        raise PlanInputError("config.use_cla", True, msg("false: cross-layer attention (layers reusing another "
                                                         "layer's KV) is not modelled yet"))
    if cfg.get("use_cla") is False and cfg.get("cla_share_factor") is not None:
        notes.append(("cla_share_factor", cfg["cla_share_factor"], "ignored", msg("use_cla is false")))
    _hunyuan_head_dim(cfg, notes)
    _afmoe_global_every(cfg, notes)
    _kv_channels(cfg, notes)
    _param_sinks(cfg, notes)
    _stablelm_epoch_num_heads(cfg, notes)
    _mha_only_kv_heads(cfg)
    _olmo2_head_dim(cfg)


_OLMO2 = ("Olmo2ForCausalLM", "Olmo3ForCausalLM")


def _olmo2_head_dim(cfg: dict) -> None:
    """OLMo 2 and OLMo 3: vLLM ``Olmo2Attention.__init__`` (olmo2.py, read at vllm-project/vllm 028aedf; it serves
    both) sizes each head ``hidden_size // num_attention_heads`` and never reads ``head_dim``. A config whose
    ``head_dim`` says otherwise has weights that class cannot load; kvplan refuses it rather than price either size."""
    archs = dict.get(cfg, "architectures")
    head_dim, hidden, heads = (dict.get(cfg, k) for k in ("head_dim", "hidden_size", "num_attention_heads"))
    if (not isinstance(archs, list) or not archs or archs[0] not in _OLMO2 or head_dim is None
            or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in (head_dim, hidden, heads))):
        return
    if head_dim != hidden // heads:
        raise PlanInputError("config.head_dim", head_dim,
                             msg("absent or hidden_size / num_attention_heads ({derived}): vLLM's Olmo2Attention "
                                 "sizes each head that way and never reads head_dim", derived=hidden // heads))


_HUNYUAN = ("HunYuanDenseV1ForCausalLM", "HunYuanMoEV1ForCausalLM")


def _hunyuan_head_dim(cfg: dict, notes: list) -> None:
    """HunYuan's ``attention_head_dim``: vLLM ``HunYuanAttention.__init__`` (hunyuan_v1.py, read at vllm-project/vllm
    00f8d44) takes the head size from ``head_dim`` when it is set and non-zero, else ``attention_head_dim``, else
    ``hidden_size // num_attention_heads``. kvplan reads it the same way for the HunYuan architectures only; in any
    other architecture the field stays unread and is refused."""
    archs = dict.get(cfg, "architectures")
    if dict.get(cfg, "attention_head_dim") is None or not isinstance(archs, list) or not archs or archs[0] not in _HUNYUAN:
        return  # probed without marking the field read: elsewhere it stays unread, so refused
    value = _int_or_none(cfg, "attention_head_dim")
    if not cfg.get("head_dim"):
        cfg["head_dim"] = value
        notes.append(("attention_head_dim", value, "read", msg("the head size: head_dim is not set (vLLM "
                                                               "HunYuanAttention)")))
    else:
        notes.append(("attention_head_dim", value, "ignored", msg("head_dim is set and wins (vLLM HunYuanAttention)")))


_MHA_ONLY = {"OlmoForCausalLM": "OlmoAttention", "PersimmonForCausalLM": "PersimmonAttention"}


def _mha_only_kv_heads(cfg: dict) -> None:
    """OLMo and Persimmon are multi-head only in vLLM: ``OlmoAttention.__init__`` (olmo.py, read at vllm-project/vllm
    4ae0583) and ``PersimmonAttention.__init__`` (persimmon.py) build ``QKVParallelLinear(hidden_size, head_dim,
    total_num_heads)`` and ``Attention(num_heads, head_dim)`` from ``num_attention_heads`` alone, never reading
    ``num_key_value_heads``, so every layer caches as many K/V heads as query heads. A config whose
    ``num_key_value_heads`` differs (grouped-query weights) cannot be loaded by those classes; kvplan refuses it
    rather than price the smaller GQA cache."""
    archs = dict.get(cfg, "architectures")
    kv, heads = dict.get(cfg, "num_key_value_heads"), dict.get(cfg, "num_attention_heads")
    if not isinstance(archs, list) or not archs or archs[0] not in _MHA_ONLY or kv is None or kv == heads:
        return
    raise PlanInputError("config.num_key_value_heads", kv,
                         msg("equal to num_attention_heads ({heads}) or absent: vLLM's {cls} caches one K/V head per "
                             "query head and cannot load grouped-query weights", heads=heads, cls=_MHA_ONLY[archs[0]]))


def _afmoe_global_every(cfg: dict, notes: list) -> None:
    """AFMoE (Arcee Trinity) configs carry ``global_attn_every_n_layers`` beside ``layer_types``; vLLM
    ``AfmoeAttention.__init__`` (afmoe.py, read at vllm-project/vllm 055e47c) windows a layer when
    ``config.layer_types[layer_idx] == "sliding_attention"`` and never reads the interval. kvplan accepts the interval
    for ``AfmoeForCausalLM`` when ``layer_types`` is given (the per-layer list decides), and leaves it unread, so refused, without it."""
    archs = dict.get(cfg, "architectures")
    if (dict.get(cfg, "global_attn_every_n_layers") is None or not isinstance(dict.get(cfg, "layer_types"), list)
            or not isinstance(archs, list) or archs[:1] != ["AfmoeForCausalLM"]):
        return  # probed without marking the field read: without layer_types it stays unread, so refused
    notes.append(("global_attn_every_n_layers", cfg.get("global_attn_every_n_layers"), "ignored",
                  msg("layer_types names each layer's attention (vLLM AfmoeAttention reads layer_types)")))


def _kv_channels(cfg: dict, notes: list) -> None:
    """``kv_channels`` (Megatron / NeMo exports, e.g. Nemotron and Minitron configs): vLLM's attention takes its
    head size from ``head_dim``, else ``hidden_size // num_attention_heads`` (``LlamaAttention``,
    ``NemotronAttention``); kvplan accepts ``kv_channels`` when it equals that head size and refuses it otherwise,
    as it cannot tell which the checkpoint's weights follow."""
    kvc = cfg.get("kv_channels")
    if kvc is None:
        return
    head, hidden, heads = cfg.get("head_dim"), cfg.get("hidden_size"), cfg.get("num_attention_heads")
    if head is None and isinstance(hidden, int) and isinstance(heads, int) and heads > 0:
        head = hidden // heads
    if kvc != head:
        raise PlanInputError("config.kv_channels", kvc, msg("the head size vLLM uses (head_dim, else hidden_size // "
                                                            "num_attention_heads = {head}): kvplan cannot tell which "
                                                            "one the weights follow", head=head))
    notes.append(("kv_channels", kvc, "read", msg("equals the head size vLLM uses ({head})", head=head)))


def _stablelm_epoch_num_heads(cfg: dict, notes: list) -> None:
    """StableLM's remote-code configs (``StableLMEpochForCausalLM``, e.g. stabilityai/stablelm-3b-4e1t before its
    transformers-native upload) carry ``num_heads`` beside ``num_attention_heads``. vLLM ``StablelmAttention.__init__``
    (stablelm.py, read at vllm-project/vllm 0531c22) takes ``total_num_heads = config.num_attention_heads`` and
    ``total_num_key_value_heads = config.num_key_value_heads`` and never reads ``num_heads``. kvplan accepts it for
    that architecture when it equals ``num_attention_heads``; elsewhere, or when the two differ, it stays unread,
    so refused."""
    archs = dict.get(cfg, "architectures")
    value = dict.get(cfg, "num_heads")
    if (value is None or not isinstance(archs, list) or archs[:1] != ["StableLMEpochForCausalLM"]
            or value != dict.get(cfg, "num_attention_heads")):
        return  # probed without marking the field read: elsewhere it stays unread, so refused
    notes.append(("num_heads", cfg.get("num_heads"), "ignored",
                  msg("equals num_attention_heads; vLLM StablelmAttention reads num_attention_heads")))


def _param_sinks(cfg: dict, notes: list) -> None:
    """openPangu's learned attention sinks (``param_sink_number``, with ``param_sink_with_value``, ``qk_nope_dim``,
    ``qk_rope_dim``, ``v_channels``): vLLM's ``OpenPanguSinkAttention`` (openpangu.py) builds a
    ``StaticSinkAttention`` that keeps ``param_sink_number`` sink tokens per layer in the KV cache, with K of
    ``qk_nope_dim + qk_rope_dim`` and V of ``v_channels`` per head. kvplan does not model that layer, so it refuses a
    positive ``param_sink_number`` by name rather than price the config as plain attention; 0 means no sinks."""
    value = cfg.get("param_sink_number")
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise PlanInputError("config.param_sink_number", value, msg("an integer >= 0"))
    if value:
        raise PlanInputError("config.param_sink_number", value,
                             msg("0 or absent: learned attention sinks (vLLM StaticSinkAttention, openPangu sink "
                                 "attention) keep sink tokens in every layer's KV cache, with their own K and V head "
                                 "sizes, and are not modelled yet"))
    notes.append(("param_sink_number", 0, "read", msg("no learned attention sinks")))


def _telechat(cfg: dict, notes: list) -> None:
    """TeleChat's KV heads: vLLM's ``Telechat2Config.__init__`` (vllm/transformers_utils/configs/telechat2.py, read at
    vllm-project/vllm 1209261) sets ``num_key_value_heads = kwargs.pop("num_key_value_heads", None)``, so a config
    without it carries ``None``, which ``LlamaDecoderLayer`` (llama.py) passes on as ``getattr(config,
    "num_key_value_heads", num_attention_heads)`` (the attribute exists, so the MHA default never applies) and
    ``LlamaAttention.__init__`` then compares ``None >= tp_size``: the engine cannot build the model. kvplan refuses
    the config by name rather than price it as MHA."""
    value = dict.get(cfg, "num_key_value_heads")
    if value is None:
        raise PlanInputError("config.num_key_value_heads", None,
                             msg("an integer >= 1: vLLM's Telechat2Config sets it to None when the config omits it, "
                                 "and LlamaAttention cannot be built without it"))


def _attn_config(cfg: dict, notes: list) -> None:
    """MPT / DBRX keep their KV heads in ``attn_config.kv_n_heads`` (vLLM ``MPTAttention.__init__``:
    ``kv_n_heads`` if present else the attention heads; ``DbrxAttention.__init__``: ``attn_config.kv_n_heads``)."""
    ac = cfg.get("attn_config")
    if ac is None:
        return
    if not isinstance(ac, dict):
        raise PlanInputError("config.attn_config", type(ac).__name__, msg("a JSON object"))
    _mpt_buildable(cfg, ac)
    for key, value in ac.items():
        if key == "kv_n_heads":
            if cfg.get("num_key_value_heads") is None and value is not None:
                cfg["num_key_value_heads"] = value
                notes.append(("attn_config.kv_n_heads", value, "read",
                              msg("read as num_key_value_heads (vLLM MPTAttention / DbrxAttention)")))
        elif key in ("sliding_window_size",) and value not in (None, -1):
            raise PlanInputError("config.attn_config.sliding_window_size", value,
                                 msg("-1 or absent: a windowed MPT is not modelled yet"))
        elif key == "attn_type" and value not in ("multihead_attention", "multiquery_attention",
                                                   "grouped_query_attention", None):
            raise PlanInputError("config.attn_config.attn_type", value,
                                 msg("multihead_attention, multiquery_attention or grouped_query_attention"))


def _mpt_buildable(cfg: dict, ac: dict) -> None:
    """MPT configs vLLM cannot build: ``MPTAttention.__init__`` (mpt.py, read at vllm-project/vllm 02d799b) asserts
    ``not config.attn_config.prefix_lm`` and ``config.attn_config.alibi`` (its attention always carries ALiBi slopes,
    with no rotary or learned-position path), and ``MPTModel.__init__`` asserts ``config.embedding_fraction == 1.0``.
    kvplan refuses an MPT config that sets any of them otherwise (e.g. SEA-LION 7B: ``alibi`` false,
    ``embedding_fraction`` 0.1) rather than price a model the engine cannot load. DBRX (``DbrxAttention``) reads its
    own ``attn_config`` and is not checked here."""
    archs = dict.get(cfg, "architectures")
    arch = archs[0] if isinstance(archs, list) and archs else None
    if arch not in ("MptForCausalLM", "MPTForCausalLM") and not (arch is None and dict.get(cfg, "model_type") == "mpt"):
        return
    if ac.get("alibi") is False:
        raise PlanInputError("config.attn_config.alibi", False,
                             msg("true: vLLM's MPT attention (MPTAttention) asserts ALiBi and cannot build an MPT "
                                 "without it"))
    if ac.get("prefix_lm") is True:
        raise PlanInputError("config.attn_config.prefix_lm", True,
                             msg("false or absent: vLLM's MPT attention (MPTAttention) asserts it is off"))
    fraction = dict.get(cfg, "embedding_fraction")
    if fraction is not None and fraction != 1:
        raise PlanInputError("config.embedding_fraction", cfg.get("embedding_fraction"),
                             msg("1.0 or absent: vLLM's MPTModel asserts embedding_fraction == 1.0"))


def _gpt_bigcode(cfg: dict, notes: list) -> None:
    """vLLM ``GPTBigCodeAttention.__init__``: ``num_kv_heads = 1 if config.multi_query else num_heads``
    (Hugging Face ``GPTBigCodeConfig`` defaults ``multi_query`` to true)."""
    if cfg.get("num_key_value_heads") is not None:
        return
    mq = cfg.get("multi_query", True)
    if not isinstance(mq, bool):
        raise PlanInputError("config.multi_query", mq, msg("true or false"))
    if mq:
        cfg["num_key_value_heads"] = 1
    notes.append(("multi_query", mq, "read" if "multi_query" in cfg else "defaulted",
                  msg("multi_query true: one KV head (vLLM GPTBigCodeAttention); false: one per attention head")))


def _falcon(cfg: dict, notes: list) -> None:
    """vLLM ``FalconAttention.__init__``: ``new_decoder_architecture`` -> ``num_kv_heads``; else
    ``multi_query`` -> 1; else the attention heads (Hugging Face ``FalconConfig``: ``multi_query`` true,
    ``new_decoder_architecture`` false, ``num_kv_heads`` = the attention heads, by default)."""
    if cfg.get("num_key_value_heads") is not None:
        return
    if cfg.get("num_kv_heads") is None and cfg.get("n_head_kv") is not None:
        cfg["num_kv_heads"] = cfg["n_head_kv"]  # RW configs spell it n_head_kv (vLLM RWConfig)
    if cfg.get("model_type") in ("RefinedWeb", "RefinedWebModel") and cfg.get("hidden_size") == 8192:
        # vLLM reads these model_types with its own RWConfig (vllm/transformers_utils/configs/falcon.py), whose
        # __init__ sets new_decoder_architecture = True whenever hidden_size == 8192 ("Hack for falcon-40b"),
        # whatever the config says; any other width keeps the config's value (default false).
        cfg["new_decoder_architecture"] = True
        notes.append(("new_decoder_architecture", True, "derived", msg("vLLM's RWConfig (model_type RefinedWeb or "
                                                                       "RefinedWebModel) takes the new decoder "
                                                                       "architecture when hidden_size is 8,192")))
    new = cfg.get("new_decoder_architecture", False)
    mq = cfg.get("multi_query", True)
    for key, value in (("new_decoder_architecture", new), ("multi_query", mq)):
        if not isinstance(value, bool):
            raise PlanInputError(f"config.{key}", value, msg("true or false"))
    if new:
        if cfg.get("num_kv_heads") is not None:
            cfg["num_key_value_heads"] = cfg["num_kv_heads"]
        why = msg("new_decoder_architecture: num_kv_heads KV heads (vLLM FalconAttention)")
    elif mq:
        cfg["num_key_value_heads"] = 1
        why = msg("multi_query: one KV head (vLLM FalconAttention)")
    else:
        why = msg("neither new_decoder_architecture nor multi_query: one KV head per attention head (vLLM FalconAttention)")
    notes.append(("Falcon KV heads", cfg.get("num_key_value_heads", "MHA"), "derived", why))


def _chatglm(cfg: dict, notes: list) -> None:
    """vLLM ``GLMAttention.__init__`` (chatglm.py): KV heads = ``multi_query_group_num`` when
    ``multi_query_attention``, else the attention heads; head dim = ``hidden_size // num_attention_heads``."""
    mq = cfg.get("multi_query_attention", False)
    if not isinstance(mq, bool):
        raise PlanInputError("config.multi_query_attention", mq, msg("true or false"))
    if mq and cfg.get("num_key_value_heads") is None:
        if cfg.get("multi_query_group_num") is None:
            raise PlanInputError("config.multi_query_group_num", None,
                                 msg("an integer >= 1 when multi_query_attention is true"))
        cfg["num_key_value_heads"] = cfg["multi_query_group_num"]
        notes.append(("multi_query_group_num", cfg["multi_query_group_num"], "read",
                      msg("KV heads when multi_query_attention is true (vLLM GLMAttention)")))
    elif not mq and cfg.get("multi_query_group_num") is not None:
        notes.append(("multi_query_group_num", cfg["multi_query_group_num"], "ignored",
                      msg("multi_query_attention is false: one KV head per attention head (vLLM GLMAttention)")))
    if cfg.get("kv_channels") is not None:
        notes.append(("kv_channels", cfg["kv_channels"], "ignored",
                      msg("vLLM GLMAttention's head dim is hidden_size // num_attention_heads")))


def _block_configs(cfg: dict, notes: list) -> None:
    """Nemotron-NAS / DeciLM ``block_configs``, as vLLM ``DeciLMDecoderLayer.__init__`` (nemotron_nas.py, read at
    vllm-project/vllm 00bd149) builds each layer: attention unless ``attention.no_op``, with
    ``num_attention_heads // attention.n_heads_in_group`` KV heads; ``window_length`` and sink fields are not
    read there (every attention layer is full attention); ``replace_with_linear`` is not handled there either,
    so such a block is refused."""
    blocks = cfg.get("block_configs")
    if blocks is None:
        return
    heads = cfg.get("num_attention_heads")
    if not isinstance(blocks, list) or not blocks:
        raise PlanInputError("config.block_configs", type(blocks).__name__, msg("a list of per-layer blocks"))
    if isinstance(heads, bool) or not isinstance(heads, int) or heads < 1:
        raise PlanInputError("config.num_attention_heads", heads, msg("an integer >= 1 (block_configs divide it)"))
    kinds, kv = [], []
    ignored: set[str] = set()
    for i, block in enumerate(blocks):
        attn = block.get("attention") if isinstance(block, dict) else None
        if not isinstance(attn, dict):
            raise PlanInputError(f"config.block_configs[{i}].attention", attn, msg("a JSON object"))
        if attn.get("no_op") is True:
            kinds.append("mlp")
            kv.append(0)
            continue
        if attn.get("replace_with_linear") is True:
            raise PlanInputError(f"config.block_configs[{i}].attention.replace_with_linear", True,
                                 msg("false: vLLM's DeciLMDecoderLayer builds attention for every block that is not "
                                     "no_op, and kvplan does not model a linear-replaced block"))
        group = attn.get("n_heads_in_group")
        if isinstance(group, bool) or not isinstance(group, int) or group < 1 or heads % group:
            raise PlanInputError(f"config.block_configs[{i}].attention.n_heads_in_group", group,
                                 msg("a divisor of num_attention_heads ({heads}) for an attention block",
                                     heads=heads))
        kinds.append("attention")
        kv.append(heads // group)
        ignored |= {k for k, v in attn.items() if v not in (None, False) and k not in (
            "no_op", "replace_with_linear", "n_heads_in_group")}
    cfg["layers_block_type"] = kinds
    cfg["num_key_value_heads"] = kv
    notes.append(("block_configs", msg("{n} blocks", n=len(blocks)), "read",
                  msg("{attn} attention blocks (KV heads = num_attention_heads // n_heads_in_group), {none} no-op "
                      "(no KV), as vLLM DeciLMDecoderLayer", attn=kinds.count("attention"), none=kinds.count("mlp"))))
    for key in sorted(ignored):
        notes.append((f"block_configs[*].attention.{key}", "set", "ignored",
                      msg("not read by vLLM's DeciLMDecoderLayer: its attention layers are full attention")))


def _minimax_m2(cfg: dict, notes: list) -> None:
    """MiniMax-M2 keeps MiniMax-Text-01's ``attn_type_list`` (0 lightning, 1 softmax attention); vLLM's
    ``MiniMaxM2ForCausalLM`` (minimax_m2.py) builds softmax attention on every layer, so kvplan accepts the list
    only when every entry is 1, and refuses it otherwise."""
    types = cfg.get("attn_type_list")
    if types is None:
        return
    if not isinstance(types, list) or any(t != 1 or isinstance(t, bool) for t in types):
        raise PlanInputError("config.attn_type_list", str(types)[:60],
                             msg("every entry 1 (softmax attention): vLLM's MiniMax-M2 has no lightning-attention "
                                 "layers"))
    notes.append(("attn_type_list", msg("{n} entries", n=len(types)), "read",
                  msg("every layer softmax attention (vLLM MiniMaxM2ForCausalLM)")))


def _minimax_text_01(cfg: dict, notes: list) -> None:
    """MiniMax-Text-01 / MiniMax-M1: vLLM ``MiniMaxText01Model.__init__`` (minimax_text_01.py, read at
    vllm-project/vllm 98370df) takes each layer's kind from ``attn_type_list``, else ``decoder_attention_types``, else
    ``layer_types`` (``linear_attention`` 0, ``full_attention`` 1), else every layer softmax attention; 0 builds
    ``MiniMaxText01LinearAttention`` (lightning attention: a per-sequence state, no KV), 1 builds
    ``MiniMaxText01Attention``, whose ``Attention`` is given no sliding window (``config.sliding_window`` is not
    applied) and ``num_key_value_heads`` KV heads of ``head_dim``."""
    from planner.hf.layers import PER_LAYER_KINDS
    source, types = None, None
    for key in ("attn_type_list", "decoder_attention_types"):
        if cfg.get(key):
            source, types = key, cfg[key]
            break
    if source is None and cfg.get("layer_types") is not None:
        raw = cfg["layer_types"]
        codes = {"linear_attention": 0, "full_attention": 1}
        if not isinstance(raw, list) or any(t not in codes for t in raw):
            raise PlanInputError("config.layer_types", str(raw)[:60],
                                 msg("a list of linear_attention / full_attention (vLLM MiniMaxText01Model)"))
        source, types = "layer_types", [codes[t] for t in raw]
    if source is None and dict.get(cfg, "model_type") == "minimax":
        # Hugging Face's own MiniMaxConfig (model_type minimax) fills layer_types when the file has none
        # (configuration_minimax.py __post_init__: full_attention when (i + 1) % 2, else linear_attention)
        layers = dict.get(cfg, "num_hidden_layers")
        if isinstance(layers, int) and not isinstance(layers, bool) and layers > 0:
            source, types = "layer_types", [1 if (i + 1) % 2 else 0 for i in range(layers)]
            notes.append(("layer_types", None, "defaulted",
                          msg("absent: Hugging Face MiniMaxConfig alternates full and linear attention, full first")))
    if source is None:
        notes.append(("attn_type_list", None, "defaulted",
                      msg("absent: every layer softmax attention (vLLM MiniMaxText01Model)")))
        return
    if source != "layer_types" and cfg.get("layer_types") is not None:
        notes.append(("layer_types", "set", "ignored", msg("{key} wins (vLLM MiniMaxText01Model)", key=source)))
    if not isinstance(types, list) or any(isinstance(t, bool) or t not in (0, 1) for t in types):
        raise PlanInputError(f"config.{source}", str(types)[:60],
                             msg("a list of 0 (lightning attention) and 1 (softmax attention), one per layer"))
    kinds = ["lightning" if t == 0 else "full" for t in types]
    dict.__setitem__(cfg, PER_LAYER_KINDS, (kinds, msg("{key}: 0 lightning attention (a per-sequence state, no KV), "
                                                       "1 softmax attention (vLLM MiniMaxText01Model)", key=source)))
    if cfg.get("sliding_window") is not None:
        notes.append(("sliding_window", cfg["sliding_window"], "ignored",
                      msg("vLLM's MiniMaxText01Attention gives its Attention no sliding window")))


def _minicpm3(cfg: dict, notes: list) -> None:
    """MiniCPM3 compresses K/V through a latent (``kv_lora_rank``) like DeepSeek MLA, but vLLM's
    ``MiniCPM3Attention`` (minicpm3.py, read at vllm-project/vllm 009ccee) decompresses it and caches ordinary
    per-head K and V: ``Attention(num_local_heads, qk_head_dim, num_kv_heads=num_local_heads)`` with
    ``qk_head_dim = qk_nope_head_dim + qk_rope_head_dim`` and V zero-padded to ``qk_head_dim``. So every layer
    stores 2 x num_attention_heads x (qk_nope_head_dim + qk_rope_head_dim) elements per token: MHA at that head
    size, not the latent."""
    nope, rope = _int_or_none(cfg, "qk_nope_head_dim"), _int_or_none(cfg, "qk_rope_head_dim")
    heads = _int_or_none(cfg, "num_attention_heads")
    for key, value in (("qk_nope_head_dim", nope), ("qk_rope_head_dim", rope), ("num_attention_heads", heads)):
        if value is None:
            raise PlanInputError(f"config.{key}", None, msg("an integer >= 1: vLLM's MiniCPM3Attention sizes the "
                                                            "cached K and V by it"))
    rank = dict.pop(cfg, "kv_lora_rank", None)  # not the cache: MiniCPM3 is not priced as an MLA latent
    for key in ("head_dim", "v_head_dim"):
        if dict.get(cfg, key) is not None:
            notes.append((key, dict.pop(cfg, key), "ignored", msg("vLLM MiniCPM3Attention caches K and V at "
                                                                  "qk_nope_head_dim + qk_rope_head_dim (V zero-padded)")))
    kv = dict.get(cfg, "num_key_value_heads")
    if kv is not None and kv != heads:
        notes.append(("num_key_value_heads", kv, "ignored", msg("vLLM MiniCPM3Attention keeps one KV head per "
                                                                "attention head")))
    cfg["head_dim"] = nope + rope
    cfg["num_key_value_heads"] = heads
    notes.append(("MiniCPM3 K / V", msg("{heads} heads x {dim}", heads=heads, dim=nope + rope), "derived",
                  msg("vLLM MiniCPM3Attention decompresses the latent (kv_lora_rank {rank}) and caches per-head K "
                      "and V of qk_nope_head_dim + qk_rope_head_dim = {nope} + {rope}", rank=rank, nope=nope,
                      rope=rope)))


def _layer_count(cfg: dict) -> int:
    """``num_hidden_layers`` for a reader that places layers itself, in the range the importer reads it."""
    layers = cfg.get("num_hidden_layers")
    if isinstance(layers, bool) or not isinstance(layers, int) or not 1 <= layers <= 100_000:
        raise PlanInputError("config.num_hidden_layers", layers, msg("an integer in [1, 100,000]"))
    return layers


def _int_or_none(cfg: dict, key: str) -> int | None:
    value = cfg.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise PlanInputError(f"config.{key}", value, msg("an integer >= 1"))
    return value


def _mamba_only(cfg: dict, notes: list) -> None:
    """Attention-free Mamba models, every layer a Mamba mixer and no KV (vLLM ``MambaForCausalLM`` and
    ``FalconMambaForCausalLM`` in mamba.py, ``Mamba2ForCausalLM`` in mamba2.py, ``get_mamba_state_shape_from_config``):

    * Mamba1: ``mamba1_state_shape(intermediate_size=config.intermediate_size, state_size=config.state_size,
      conv_kernel=config.conv_kernel)``; ``expand`` is not read (Falcon-Mamba-7B says 16 beside 8,192 = 2 x 4,096);
    * Mamba2: ``mamba2_state_shape(intermediate_size=config.expand * config.hidden_size, n_groups, num_heads,
      head_dim, state_size, conv_kernel)``."""
    from planner.hf.layers import SAME_KIND
    from planner.hf.state import MAMBA_INNER
    if cfg.get("num_heads") is not None:  # Mamba2Config
        heads = _int_or_none(cfg, "num_heads")
        cfg["mamba_num_heads"] = heads
        if cfg.get("head_dim") is not None:
            cfg["mamba_head_dim"] = cfg["head_dim"]
        expand, hidden = _int_or_none(cfg, "expand"), _int_or_none(cfg, "hidden_size")
        if expand is None or hidden is None:
            raise PlanInputError("config.expand" if expand is None else "config.hidden_size", None,
                                 msg("an integer >= 1: vLLM's Mamba2ForCausalLM sizes the mixer as expand x hidden_size"))
        cfg[MAMBA_INNER] = (expand * hidden, "expand", msg("expand x hidden_size = {expand} x {hidden:,} (vLLM Mamba2ForCausalLM)",
                                                 expand=expand, hidden=hidden))
        notes.append(("num_heads", heads, "read", msg("Mamba2 heads (vLLM Mamba2ForCausalLM)")))
    else:
        inner = _int_or_none(cfg, "intermediate_size")
        if inner is None:
            raise PlanInputError("config.intermediate_size", None,
                                 msg("an integer >= 1: vLLM's MambaForCausalLM sizes the Mamba1 state by it"))
        cfg[MAMBA_INNER] = (inner, "intermediate_size", msg("intermediate_size = {inner:,} (vLLM MambaForCausalLM)", inner=inner))
        if cfg.get("expand") is not None:
            notes.append(("expand", cfg["expand"], "ignored",
                          msg("vLLM's MambaForCausalLM reads intermediate_size, not expand")))
    cfg[SAME_KIND] = ("mamba", msg("every layer a Mamba mixer, no attention and no KV (vLLM MambaForCausalLM / "
                                   "Mamba2ForCausalLM)"))


def _falcon_h1(cfg: dict, notes: list) -> None:
    """Falcon-H1: every layer runs attention and a Mamba2 mixer in parallel (vLLM ``FalconH1ParallelHybrid``,
    falcon_h1.py), so every layer holds KV and Mamba2 state; the state's inner size is ``mamba_d_ssm``, else
    ``int(mamba_expand * hidden_size)`` (``FalconH1ForCausalLM.get_mamba_state_shape_from_config``)."""
    from planner.hf.layers import SAME_KIND
    from planner.hf.state import MAMBA_INNER, PARALLEL_MAMBA
    if cfg.get("attn_layer_indices") is not None:
        raise PlanInputError("config.attn_layer_indices", str(cfg["attn_layer_indices"])[:60],
                             msg("null: vLLM's Falcon-H1 puts attention in every layer and does not read it"))
    d_ssm = _int_or_none(cfg, "mamba_d_ssm")
    if d_ssm is not None:
        cfg[MAMBA_INNER] = (d_ssm, "mamba_d_ssm", msg("mamba_d_ssm = {value:,} (vLLM FalconH1ForCausalLM)", value=d_ssm))
    else:
        expand, hidden = cfg.get("mamba_expand"), _int_or_none(cfg, "hidden_size")
        if isinstance(expand, bool) or not isinstance(expand, (int, float)) or expand <= 0 or hidden is None:
            raise PlanInputError("config.mamba_d_ssm", None, msg("an integer >= 1, or mamba_expand and hidden_size "
                                                                 "(vLLM FalconH1ForCausalLM)"))
        cfg[MAMBA_INNER] = (int(expand * hidden), "mamba_d_ssm", msg("int(mamba_expand x hidden_size) = int({expand} x {hidden:,}) "
                                                      "(vLLM FalconH1ForCausalLM, mamba_d_ssm absent)",
                                                      expand=expand, hidden=hidden))
    cfg[SAME_KIND] = ("full", msg("every layer attention with a Mamba2 mixer beside it (vLLM FalconH1ParallelHybrid)"))
    cfg[PARALLEL_MAMBA] = True


_ZAMBA2_SRC = ("vllm-project/vllm @ 0527cbc72b5fd504640c649ceefbb2da8e1827da, vllm/model_executor/models/zamba2.py")


def _zamba2(cfg: dict, notes: list) -> None:
    """Zamba2 as vLLM builds it (zamba2.py, read at vllm-project/vllm 0527cbc; config class: Hugging Face
    ``Zamba2Config``, whose ``__init__`` recomputes ``attention_head_dim``, ``attention_hidden_size``,
    ``mamba_headdim`` and ``hybrid_layer_ids`` whatever config.json says):

    * ``Zamba2Model.__init__`` builds one layer per ``layers_block_type`` entry: ``hybrid`` a ``Zamba2HybridLayer``
      (a shared attention block, then the layer's own Mamba2 mixer), ``mamba`` a ``Zamba2MambaDecoderLayer``;
    * ``Zamba2Attention.__init__`` gives every hybrid layer its own ``Attention`` ("KV cache is unique for every
      attention layer", though the weights are shared over ``num_mem_blocks`` blocks), with ``num_attention_heads``
      heads of ``attention_head_dim = 2 * hidden_size // num_attention_heads`` and no KV-head count: MHA;
    * ``Zamba2ForCausalLM.get_mamba_state_shape_from_config``: ``mamba2_state_shape(intermediate_size =
      mamba_expand * hidden_size, n_groups = mamba_ngroups, num_heads = n_mamba_heads, head_dim = mamba_headdim,
      state_size = mamba_d_state, conv_kernel = mamba_d_conv)``, in every layer."""
    from planner.hf.state import MAMBA_INNER, PARALLEL_MAMBA
    blocks = cfg.get("layers_block_type")
    layers = cfg.get("num_hidden_layers")
    if not isinstance(blocks, list) or not blocks or len(blocks) > 100_000 or any(b not in ("mamba", "hybrid")
                                                                                  for b in blocks):
        raise PlanInputError("config.layers_block_type", str(blocks)[:60],
                             msg("a list of 'mamba' / 'hybrid', one per layer (vLLM Zamba2Model builds its layers from "
                                 "it; kvplan does not assume Zamba2Config's default pattern)"))
    if layers is not None and layers != len(blocks):
        raise PlanInputError("config.num_hidden_layers", layers,
                             msg("the length of layers_block_type ({n}): vLLM Zamba2Model builds one layer per entry",
                                 n=len(blocks)))
    if cfg.get("layer_types") is not None:
        raise PlanInputError("config.layer_types", str(cfg["layer_types"])[:60],
                             msg("absent: vLLM's Zamba2 reads layers_block_type"))
    heads, hidden = _int_or_none(cfg, "num_attention_heads"), _int_or_none(cfg, "hidden_size")
    m_heads, expand = _int_or_none(cfg, "n_mamba_heads"), _int_or_none(cfg, "mamba_expand")
    for key, value in (("num_attention_heads", heads), ("hidden_size", hidden), ("n_mamba_heads", m_heads),
                       ("mamba_expand", expand)):
        if value is None:
            raise PlanInputError(f"config.{key}", None, msg("an integer >= 1: vLLM's Zamba2 sizes its attention and "
                                                            "Mamba2 state by it"))
    if (2 * hidden) % heads:
        raise PlanInputError("config.num_attention_heads", heads,
                             msg("a divisor of 2 x hidden_size ({value:,}): vLLM Zamba2Attention raises otherwise",
                                 value=2 * hidden))
    head = 2 * hidden // heads
    for key in ("attention_head_dim", "attention_hidden_size", "mamba_headdim", "hybrid_layer_ids"):
        if cfg.get(key) is not None:
            notes.append((key, str(cfg[key])[:40], "ignored",
                          msg("Hugging Face Zamba2Config recomputes it from hidden_size, num_attention_heads, "
                              "mamba_expand, n_mamba_heads and layers_block_type")))
    kv = cfg.get("num_key_value_heads")
    if kv is not None and kv != heads:
        raise PlanInputError("config.num_key_value_heads", kv,
                             msg("num_attention_heads ({heads}): vLLM Zamba2Attention is multi-head attention "
                                 "(no KV-head count)", heads=heads))
    dict.__setitem__(cfg, "layer_types", ["full_attention" if b == "hybrid" else "mamba" for b in blocks])
    if cfg.get("head_dim") is not None and cfg["head_dim"] != head:
        notes.append(("head_dim", cfg["head_dim"], "ignored", msg("vLLM Zamba2Attention uses attention_head_dim = 2 x "
                                                                  "hidden_size // num_attention_heads")))
    cfg["head_dim"] = head
    if cfg.get("use_long_context") is True:
        cfg["max_position_embeddings"] = 16384
        notes.append(("use_long_context", True, "read", msg("Hugging Face Zamba2Config sets max_position_embeddings "
                                                            "to 16,384")))
    cfg["num_key_value_heads"] = heads
    inner = expand * hidden
    cfg["mamba_num_heads"] = m_heads
    cfg["mamba_head_dim"] = inner // m_heads
    if cfg.get("mamba_ngroups") is not None:
        cfg["n_groups"] = _int_or_none(cfg, "mamba_ngroups")
    else:
        cfg["n_groups"] = 1
        notes.append(("mamba_ngroups", 1, "defaulted", msg("absent: Hugging Face Zamba2Config's default")))
    cfg[MAMBA_INNER] = (inner, "mamba_expand", msg("mamba_expand x hidden_size = {expand} x {hidden:,} (vLLM "
                                                   "Zamba2ForCausalLM)", expand=expand, hidden=hidden))
    cfg[PARALLEL_MAMBA] = True
    hybrid = blocks.count("hybrid")
    notes.append(("layers_block_type", msg("{hybrid} hybrid, {mamba} mamba", hybrid=hybrid, mamba=len(blocks) - hybrid),
                  "read", msg("every layer a Mamba2 mixer; each hybrid layer also attention with its own KV, MHA at "
                              "2 x hidden_size / num_attention_heads = {head} (vLLM Zamba2HybridLayer)", head=head)))
    if cfg.get("num_mem_blocks") is not None:
        notes.append(("num_mem_blocks", cfg["num_mem_blocks"], "read",
                      msg("shared attention weights only: vLLM keeps one KV cache per hybrid layer")))


_PLAMO2_SRC = "vllm-project/vllm @ 002fb90788ae749626fb09c6272f0cb604de46b6, vllm/model_executor/models/plamo2.py"


def _plamo2(cfg: dict, notes: list) -> None:
    """PLaMo 2 as vLLM builds it (plamo2.py, read at vllm-project/vllm 002fb90):

    * ``is_mamba(config, i)``: with ``mamba_step > 1``, layer ``i`` is attention when ``i % mamba_step ==
      mamba_step // 2`` (only the last layer when ``num_hidden_layers <= mamba_step // 2``), else a Mamba2 mixer;
    * ``Plamo2AttentionMixer``: ``num_key_value_heads`` KV heads of ``hidden_size_per_head``, an ``Attention``
      without a per-layer window, so vLLM's model-level window applies (``ModelConfig.get_sliding_window``: the
      config's ``sliding_window``); ``attention_window_size`` is never read;
    * ``Plamo2ForCausalLM.get_mamba_state_shape_from_config``: ``mamba2_state_shape(intermediate_size =
      mamba_num_heads * hidden_size_per_head, n_groups = 0, num_heads = mamba_num_heads, head_dim =
      hidden_size_per_head, state_size = mamba_d_state, conv_kernel = mamba_d_conv)``."""
    from planner.hf.state import MAMBA_GROUPS, MAMBA_INNER
    layers, step = _layer_count(cfg), cfg.get("mamba_step")
    if isinstance(step, bool) or not isinstance(step, int) or step < 2:
        raise PlanInputError("config.mamba_step", step, msg("an integer >= 2 (vLLM is_mamba asserts mamba_step > 1)"))
    if cfg.get("mamba_enabled") is False:
        raise PlanInputError("config.mamba_enabled", False, msg("true or absent: vLLM's PLaMo 2 builds Mamba layers "
                                                                "by mamba_step and does not read it"))
    if cfg.get("layer_types") is not None:
        raise PlanInputError("config.layer_types", str(cfg["layer_types"])[:60],
                             msg("absent: vLLM's PLaMo 2 places its layers by mamba_step"))
    per_head, m_heads = _int_or_none(cfg, "hidden_size_per_head"), _int_or_none(cfg, "mamba_num_heads")
    for key, value in (("hidden_size_per_head", per_head), ("mamba_num_heads", m_heads)):
        if value is None:
            raise PlanInputError(f"config.{key}", None, msg("an integer >= 1: vLLM's PLaMo 2 sizes its attention "
                                                            "and Mamba2 state by it"))
    if layers <= step // 2:
        mamba = [i != layers - 1 for i in range(layers)]
    else:
        mamba = [i % step != step // 2 for i in range(layers)]
    attn = "sliding_attention" if cfg.get("sliding_window") is not None else "full_attention"
    dict.__setitem__(cfg, "layer_types", ["mamba" if m else attn for m in mamba])
    if cfg.get("head_dim") is not None and cfg["head_dim"] != per_head:
        notes.append(("head_dim", cfg["head_dim"], "ignored", msg("vLLM Plamo2ForCausalLM sets head_dim to "
                                                                          "hidden_size_per_head")))
    cfg["head_dim"] = per_head
    cfg["mamba_head_dim"] = per_head
    cfg[MAMBA_INNER] = (m_heads * per_head, "mamba_num_heads",
                        msg("mamba_num_heads x hidden_size_per_head = {heads} x {per_head} (vLLM Plamo2ForCausalLM)",
                            heads=m_heads, per_head=per_head))
    cfg[MAMBA_GROUPS] = (0, msg("vLLM Plamo2ForCausalLM passes n_groups=0: the conv state holds the inner channels "
                                "only"))
    notes.append(("mamba_step", step, "read",
                  msg("{attn} attention layers (i % {step} == {half}), {mamba} Mamba2 layers (vLLM is_mamba)",
                      attn=mamba.count(False), step=step, half=step // 2, mamba=mamba.count(True))))
    if cfg.get("attention_window_size") is not None:
        notes.append(("attention_window_size", cfg["attention_window_size"], "ignored",
                      msg("not read by vLLM's PLaMo 2; its attention takes the model-level sliding_window")))


_KIMI_SRC = "vllm-project/vllm @ 01d995867291dd13119ea66cd18e3c9c9b51c50e, vllm/model_executor/models/kimi_linear.py"
_KDA_KEYS = ("kda_layers", "full_attn_layers", "num_heads", "head_dim", "short_conv_kernel_size")


def _kimi_linear(cfg: dict, notes: list) -> None:
    """Kimi-Linear as vLLM builds it (kimi_linear.py, read at vllm-project/vllm 01d9958; config class
    ``vllm/transformers_utils/configs/kimi_linear.py`` ``KimiLinearConfig``):

    * ``KimiDecoderLayer``: layer ``i`` is Kimi Delta Attention when ``is_kda_layer(i)``, i.e. ``i + 1`` is in
      ``linear_attn_config["kda_layers"]`` (1-based), else ``KimiMLAAttention``: an MLA latent of
      ``kv_lora_rank + qk_rope_head_dim`` per token (``MultiHeadLatentAttentionWrapper``), which asserts
      ``mla_use_nope`` true and ``q_lora_rank`` None;
    * ``get_mamba_state_shape_from_config``: ``kda_state_shape(tp, linear_attn_config["num_heads"],
      linear_attn_config["head_dim"], conv_kernel_size=linear_attn_config["short_conv_kernel_size"])``.

    ``full_attn_layers`` must be set (``KimiLinearConfig`` asserts it) but vLLM never reads it: where it is not the
    complement of ``kda_layers`` the report says so and ``kda_layers`` decides. Any other key of
    ``linear_attn_config`` is refused by name."""
    from planner.hf.state import KDA_LAYERS
    layers = _layer_count(cfg)
    lac = cfg.get("linear_attn_config")
    if not isinstance(lac, dict):
        raise PlanInputError("config.linear_attn_config", str(lac)[:60],
                             msg("a JSON object with kda_layers, full_attn_layers, num_heads, head_dim and "
                                 "short_conv_kernel_size (vLLM KimiLinearForCausalLM)"))
    for key in lac:
        if key not in _KDA_KEYS:
            raise PlanInputError(f"config.linear_attn_config.{key}", str(lac[key])[:60],
                                 msg("absent: kvplan reads {keys} (vLLM KimiLinearForCausalLM) and does not know how "
                                     "this one changes the state", keys=", ".join(_KDA_KEYS)))
    lists = {}
    for key in ("kda_layers", "full_attn_layers"):
        value = lac.get(key)
        if (not isinstance(value, list) or any(isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= layers
                                               for v in value) or len(set(value)) != len(value)):
            raise PlanInputError(f"config.linear_attn_config.{key}", str(value)[:60],
                                 msg("a list of distinct layer numbers in [1, {layers}] (1-based, vLLM "
                                     "KimiLinearConfig.is_kda_layer)", layers=layers))
        lists[key] = set(value)
    mla_layers = set(range(1, layers + 1)) - lists["kda_layers"]
    if lists["full_attn_layers"] != mla_layers:
        notes.append(("linear_attn_config.full_attn_layers", str(sorted(lists["full_attn_layers"]))[:60], "ignored",
                      msg("vLLM places layers by kda_layers alone: MLA on layers {layers} (1-based)",
                          layers=str(sorted(mla_layers))[:60])))
    dims = {}
    for key, low, high in (("num_heads", 1, 1_000_000), ("head_dim", 1, 1_000_000), ("short_conv_kernel_size", 2, 1_000)):
        value = lac.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise PlanInputError(f"config.linear_attn_config.{key}", value,
                                 msg("an integer in [{low}, {high:,}]", low=low, high=high))
        dims[key] = value
    if cfg.get("mla_use_nope") is not True:
        raise PlanInputError("config.mla_use_nope", cfg.get("mla_use_nope"),
                             msg("true: vLLM KimiMLAAttention asserts it"))
    if cfg.get("q_lora_rank") is not None:
        raise PlanInputError("config.q_lora_rank", cfg.get("q_lora_rank"), msg("null: vLLM KimiMLAAttention asserts it"))
    if cfg.get("index_topk") is not None:
        raise PlanInputError("config.index_topk", cfg.get("index_topk"),
                             msg("absent: vLLM's Kimi-Linear has no sparse-attention indexer"))
    ids = tuple(sorted(n - 1 for n in lists["kda_layers"]))
    cfg[KDA_LAYERS] = (ids, dims["num_heads"], dims["head_dim"], dims["short_conv_kernel_size"])
    notes.append(("linear_attn_config", msg("{kda} KDA, {mla} MLA layers", kda=len(ids), mla=layers - len(ids)),
                  "read", msg("layer i is KDA when i + 1 is in kda_layers (vLLM KimiLinearConfig.is_kda_layer), "
                              "MLA elsewhere")))


_GPT2_ALIASES = (("n_layer", "num_hidden_layers"), ("n_head", "num_attention_heads"), ("n_embd", "hidden_size"),
                 ("n_positions", "max_position_embeddings"))

FAMILIES: dict[str, Family] = {f.id: f for f in (
    Family("decoder", "decoder-only attention: MHA / GQA / MQA, sliding windows by layer_types, "
           "use_sliding_window / max_window_layers, sliding_window_pattern; Mamba / Gated DeltaNet layers by "
           "layer_types, layers_block_type, hybrid_override_pattern or attn_layer_period",
           _V + "llama.py LlamaAttention.__init__ (and qwen2.py, qwen3.py, mixtral.py, gpt_oss.py, granitemoehybrid.py)",
           ("tests/test_kv.py (llama-3.1-8b/70b/405b, qwen2.5, qwen3-8b, mistral-7b, mixtral, gpt-oss)",
            "tests/test_config_import.py", "tests/test_registry.py::test_phi3_mini_4k_sliding_window_every_layer",
            "tests/test_registry.py::test_kv_channels_and_max_attn_value_not_false_refusals (shapes)",
            "tests/test_registry_public_c.py (Qwen1.5-MoE-A2.7B, StableLM-3B-4E1T, StableLM-2-Zephyr-1.6B, Orion-14B, "
            "StarCoder2-7B, MiMo-7B)",
            "tests/test_registry_public_d.py (Aya 23 8B, Baichuan2-7B, deepseek-moe-16b, ERNIE-4.5-0.3B, Ling-lite, "
            "GLM-4.5-Air, EXAONE-3.0-7.8B, EXAONE-4.0-32B, Granite 3.3 8B, Granite 3.1 3B-A800M)",
            "tests/test_registry_public_a.py (Granite 4.0-H 350M)",
            "tests/test_registry_public_b.py (RedPajama-INCITE 3B, OPT-125M, OPT-350M)",
            "tests/test_registry_public_f.py (InternLM 7B, InternLM2 / 2.5 7B, MiniCPM-2B, MiniCPM-MoE-8x2B, "
            "Qwen3-30B-A3B, OLMo-1B, Persimmon-8B, Hunyuan-MT 7B, Seed-OSS-36B, OLMoE-1B-7B, Nemotron-4 4B, "
            "openPangu-Embedded-7B)",
            "tests/test_registry_public_i.py (Apertus-8B, Grok-1)",
            "tests/test_registry_public_y.py (LLaMA-7B, LLaMA-13B, Aquila2-34B)",
            "tests/test_registry_public_q.py (Phi-3.5-MoE-instruct)",
            "tests/test_registry_public_r.py (Qwen2-VL-2B / 7B-Instruct, XVERSE-7B)",
            "tests/test_registry_public_s.py (an Olmo 3 190M)",
            "tests/test_registry_public_u.py (StableLM-3B-4E1T, Baichuan-7B SFT, Aquila-7B, GritLM-7B, Solar Pro "
            "Preview, Tele-FLM)",
            "tests/test_registry_public_p.py (GLM-4-9B-Chat-hf, Austral AFM-4.5B SFT, Snowflake Arctic Instruct, "
            "dots.llm1.base, tiny-random FlexOlmo, tiny-random Trinity, tiny Cohere2)",
            "tests/test_registry_public_h.py (Hunyuan-A13B, InternLM3-8B, ERNIE-4.5-21B-A3B, GLM-4-9B-0414)",
            "tests/test_registry_public_g.py (LLaVA-1.5-7B, Qwen2.5-VL-7B, Mistral-Small-3.1-24B, Qwen3-VL-4B, "
            "Qwen3-VL-30B-A3B: text configs nested in multimodal wrappers)"),
           _DECODER_READS + ("use_cla", "cla_share_factor", "kv_channels", "param_sink_number"), aliases=(("num_layers", "num_hidden_layers"),),
           irrelevant=(
               # Grok-1's max_attn_value caps attention scores (vLLM grok1.py: tanh(x / cap) * cap), never the KV
               "max_attn_value",
               # Phi-4-mini's full_attn_mod: vLLM's Phi3ForCausalLM is its LlamaForCausalLM (phi3.py), which never
               # reads it; the window vLLM applies is the config's sliding_window (262,144 there, past the context)
               "full_attn_mod",
               # Snowflake Arctic's enc_index: vLLM ArcticAttention / ArcticDecoderLayer (arctic.py, read at 00db011)
               # take MHA/GQA geometry from the heads and hidden size and never read it
               "enc_index",
               # Cohere2 (Command R7B): vLLM CohereDecoderLayer (commandr.py) always runs attention and MLP in parallel
               # and CohereForCausalLM ties lm_head to embed_tokens, whatever these say: weights and dataflow, not KV
               "use_embedding_sharing", "use_parallel_block",
               # AFMoE group-limited routing (vLLM AfmoeMoE): which expert groups a token may use, not the KV
               "num_limited_groups",
               # LLaVA's ignore_index (transformers LlavaConfig: the label the training loss skips, -100): vLLM
               # LlavaForConditionalGeneration (llava.py, read at 0004c54) never reads it; its language model is
               # init_vllm_registered_model(hf_config=config.text_config), sized by the text config alone
               "ignore_index",
           ),
           prepare=_decoder),
    Family("gemma", "Gemma 1-4: alternating local / global layers, global geometry, shared KV layers",
           _V + "gemma2.py Gemma2Attention, gemma3.py Gemma3Attention, gemma3n.py Gemma3nAttention, gemma4.py Gemma4DecoderLayer",
           ("tests/test_kv.py (gemma-2-9b, gemma-3-27b)", "tests/test_hybrids.py (gemma-4-26b-a4b)",
            "tests/test_registry_public_a.py (Gemma 2B, Gemma 3 1B-it)", "tests/test_registry_public_g.py (Gemma 3 12B-it)",
            "tests/test_registry_public_u.py (tinygemma4, a text-only Gemma 4)"),
           _DECODER_READS + ("sliding_window_pattern", "global_head_dim", "num_global_key_value_heads",
                             "attention_k_eq_v", "num_kv_shared_layers"),
           irrelevant=("query_pre_attn_scalar", "use_bidirectional_attention", "activation_sparsity_pattern", "altup_active_idx",
                       "altup_num_inputs", "laurel_rank", "hidden_size_per_layer_input", "vocab_size_per_layer_input")),
    Family("llama4", "Llama 4: chunked local attention on RoPE layers, global NoPE layers",
           _V + "llama4.py Llama4Attention.__init__",
           ("tests/test_config_import.py (Llama 4 chunked)",
            "tests/test_registry_public_a.py (Llama 4 Scout, Llama 4 Maverick)"),
           _DECODER_READS + ("attention_chunk_size", "no_rope_layers", "no_rope_layer_interval"),
           irrelevant=("interleave_moe_layer_step", "attn_temperature_tuning", "moe_layers")),
    Family("mla", "DeepSeek MLA latents (V2 / V3), DSA indexer keys (V3.2)",
           _V + "deepseek_v2.py DeepseekV2MLAAttention, DeepseekV32ForCausalLM config hook",
           ("tests/test_kv.py (deepseek-v2, deepseek-v3)", "tests/test_config_import.py (deepseek-v3.2)"),
           ("num_hidden_layers", "kv_lora_rank", "qk_rope_head_dim", "index_topk", "index_head_dim", "indexer_types"),
           irrelevant=("num_attention_heads", "num_key_value_heads", "qk_nope_head_dim", "v_head_dim", "q_lora_rank",
                       "head_dim", "first_k_dense_replace", "moe_layer_freq", "n_shared_experts", "num_nextn_predict_layers")),
    Family("deepseek_v4", "DeepSeek V4 / V4.1: compressed entries, indexer keys, window rings",
           "deepseek-ai DeepSeek-V4 model card and inference code (docs/sources.md); vLLM support later than "
           + VLLM_COMMIT[:7],
           ("tests/test_kv.py (deepseek-v4-flash, deepseek-v4-pro, deepseek-v4.1-flash)",),
           ("compress_ratios", "head_dim", "index_head_dim", "sliding_window", "kv_source_layer_ids",
            "index_source_layer_ids"),
           irrelevant=("num_attention_heads", "num_key_value_heads", "qk_rope_head_dim", "q_lora_rank", "o_lora_rank",
                       "o_groups", "index_n_heads", "index_topk", "num_hash_layers", "hc_mult", "hc_sinkhorn_iters",
                       "num_nextn_predict_layers",
                       # V4.1: candidate-block selection reads stored entries, Engram is a hashed embedding table,
                       # DSpark names draft-target layers; the publisher's 890 B/token is met without them
                       # (tests/test_config_import.py::test_deepseek_v41_flash_native_formats_890)
                       "candidate_source_layer_id", "candidate_topk_blocks", "candidate_block_size",
                       "engram_layer_ids", "engram_head_dim", "engram_n_heads", "dspark_target_layer_ids")),
    Family("jamba", "Jamba: attention every attn_layer_period layers, Mamba1 state elsewhere",
           _V + "jamba.py JambaForCausalLM; layers/mamba/mamba_utils.py mamba1_state_shape",
           ("tests/test_hybrids.py (jamba-1.5-mini)",),
           _DECODER_READS + ("attn_layer_period", "attn_layer_offset", "mamba_expand", "mamba_d_state", "mamba_d_conv"),
           irrelevant=("expert_layer_period", "expert_layer_offset", "mamba_dt_rank", "mamba_conv_bias",
                       "mamba_proj_bias", "use_mamba_kernels")),
    Family("nemotron_h", "Nemotron-H: hybrid_override_pattern of Mamba2, attention and MLP blocks",
           _V + "nemotron_h.py NemotronHForCausalLM; layers/mamba/mamba_utils.py mamba2_state_shape",
           ("tests/test_hybrids.py (nemotron-h-8b)",
            "tests/test_registry_public_b.py (Nemotron-H-56B, Nemotron-3-Nano-30B-A3B)"),
           _DECODER_READS + ("hybrid_override_pattern", "mamba_num_heads", "mamba_head_dim", "n_groups",
                             "ssm_state_size", "conv_kernel"),
           # time_step_rank (published in Nemotron-H-56B-Base-8K's config) is a Mamba1 dt-projection rank: vLLM's
           # nemotron_h.py never reads it (NemotronHConfig keeps it in **kwargs) and mamba2_state_shape takes no
           # such argument, so it changes neither the weights vLLM builds nor the state it caches.
           irrelevant=("mamba_hidden_act", "mamba_proj_bias", "use_mamba_kernels", "mamba_chunk_size",
                       "time_step_limit", "time_step_min", "time_step_max", "time_step_floor", "chunk_size",
                       "rescale_prenorm_residual", "residual_in_fp32", "use_conv_bias", "mamba_dt_rank",
                       "time_step_rank")),
    Family("mimo_v2", "MiMo-V2: hybrid_layer_pattern of full and sliding layers with their own geometry",
           _V + "mimo_v2_flash.py MiMoV2FlashDecoderLayer",
           ("tests/test_hybrids.py (mimo-v2-flash)",),
           _DECODER_READS + ("hybrid_layer_pattern", "sliding_window_size", "swa_num_key_value_heads",
                             "swa_head_dim", "swa_v_head_dim", "swa_num_attention_heads", "v_head_dim"),
           irrelevant=("add_swa_attention_sink_bias", "add_full_attention_sink_bias", "moe_layer_freq",
                       "attention_value_scale")),
    Family("qwen3_next", "Qwen3-Next / Qwen3.5: Gated DeltaNet every layer but each full_attention_interval-th",
           _V + "qwen3_next.py Qwen3NextGatedDeltaNet; layers/mamba/mamba_utils.py gated_delta_net_state_shape",
           ("tests/test_hybrids.py (Qwen3-Next shape)",
            "tests/test_registry_public_a.py (Qwen3-Next-80B-A3B, Qwen3.5-35B-A3B, Qwen3.5-27B)"),
           _DECODER_READS + ("full_attention_interval", "linear_num_key_heads", "linear_num_value_heads",
                             "linear_key_head_dim", "linear_value_head_dim", "linear_conv_kernel_dim"),
           irrelevant=("decoder_sparse_step", "mlp_only_layers", "shared_expert_intermediate_size",
                       # the MTP draft layers Qwen3.5 configs declare: vLLM's served model builds num_hidden_layers
                       # layers by layer_types and skips every "mtp." weight (qwen3_5.py Qwen3_5Model.load_weights,
                       # read at vllm-project/vllm 00def4f; qwen3_next.py maps "mtp." to None); only the separate
                       # speculative draft model (qwen3_5_mtp.py) loads them, so they hold no KV of the served model
                       "mtp_num_hidden_layers")),
    Family("nemotron_nas", "Nemotron-NAS / DeciLM: block_configs, per-layer KV heads "
           "(num_attention_heads // n_heads_in_group), no-op attention stores no KV",
           "vllm-project/vllm @ 00bd149, vllm/model_executor/models/nemotron_nas.py DeciLMDecoderLayer.__init__ "
           "(block_config.attention.no_op, n_heads_in_group)",
           ("tests/test_registry.py::test_nemotron_nas_block_configs",),
           ("num_hidden_layers", "num_attention_heads", "hidden_size", "block_configs", "max_position_embeddings"),
           prepare=_block_configs),
    Family("lfm2", "LFM2: attention layers by layer_types / full_attn_idxs, short-convolution state elsewhere",
           _V + "lfm2.py Lfm2Model (attention at full_attn_idxs), layers/mamba/short_conv.py ShortConv.get_state_shape; "
           "layers/mamba/mamba_utils.py short_conv_state_shape",
           ("tests/test_registry.py::test_lfm2_short_conv", "tests/test_registry_public_a.py (LFM2.5-1.2B)",
            "tests/test_registry_public_i.py (LFM2-8B-A1B)"),
           _DECODER_READS + ("conv_L_cache", "conv_dim", "full_attn_idxs"),
           aliases=(("num_heads", "num_attention_heads"),),
           irrelevant=("conv_bias", "block_dim", "block_ff_dim", "block_multiple_of", "block_ffn_dim_multiplier",
                       "block_auto_adjust_ff_dim", "block_mlp_init_scale", "block_out_init_scale",
                       "block_use_swiglu", "block_use_xavier_init", "block_norm_eps", "conv_dim_out",
                       "conv_use_xavier_init", "num_dense_layers", "use_expert_bias")),
    Family("minimax_m2", "MiniMax-M2: the decoder, with attn_type_list all softmax attention",
           _V + "minimax_m2.py MiniMaxM2DecoderLayer (MiniMaxM2Attention on every layer)",
           ("tests/test_registry.py::test_minimax_m2_attn_type_list", "tests/test_registry_public_a.py (MiniMax-M2.7)"),
           _DECODER_READS + ("attn_type_list",),
           irrelevant=("mtp_transformer_layers", "num_mtp_modules", "use_mtp", "qk_norm_type", "rotary_dim",
                       # residual scales of the MiniMax decoder layer (vLLM minimax_text_01.py
                       # MiniMaxText01DecoderLayer reads them, under either spelling, as norm alpha / beta): not KV
                       "full_attn_alpha_factor", "full_attn_beta_factor", "linear_attn_alpha_factor",
                       "linear_attn_beta_factor"),
           prepare=_minimax_m2),
    Family("minimax_text_01", "MiniMax-Text-01 / MiniMax-M1: lightning (linear) attention layers with a per-sequence "
           "state and softmax attention layers, by attn_type_list",
           "vllm-project/vllm @ 98370df, vllm/model_executor/models/minimax_text_01.py MiniMaxText01Model.__init__, "
           "MiniMaxText01DecoderLayer.__init__, MiniMaxText01ForCausalLM.get_mamba_state_shape_from_config / "
           "get_mamba_state_dtype_from_config; layers/mamba/mamba_utils.py linear_attention_state_shape",
           ("tests/test_registry.py::test_minimax_m1_lightning_and_softmax_layers",),
           _DECODER_READS + ("attn_type_list", "decoder_attention_types"),
           irrelevant=("rotary_dim", "postnorm", "shared_intermediate_size", "shared_moe_mode", "block", "block_size",
                       # residual scales of the decoder layer (MiniMaxText01DecoderLayer): norm alpha / beta, not KV
                       "layernorm_full_attention_alpha", "layernorm_full_attention_beta",
                       "layernorm_linear_attention_alpha", "layernorm_linear_attention_beta",
                       "layernorm_mlp_alpha", "layernorm_mlp_beta", "full_attn_alpha_factor", "full_attn_beta_factor",
                       "linear_attn_alpha_factor", "linear_attn_beta_factor"),
           prepare=_minimax_text_01),
    Family("bamba", "Bamba: attention at attn_layer_indices, Mamba2 state elsewhere",
           _V + "bamba.py BambaModel (config.layers_block_type), BambaMixerDecoderLayer; "
           "layers/mamba/mamba_utils.py mamba2_state_shape",
           ("tests/test_registry.py::test_bamba_attn_layer_indices", "tests/test_registry_public_p.py (Bamba-9B)"),
           _DECODER_READS + ("attn_layer_indices", "mamba_n_heads", "mamba_d_head", "mamba_n_groups",
                             "mamba_d_state", "mamba_d_conv", "mamba_expand"),
           irrelevant=("mamba_conv_bias", "mamba_proj_bias", "mamba_chunk_size", "mamba_dt_rank",
                       "num_logits_to_keep", "z_loss_coefficient",
                       # transformers' switch between its CUDA Mamba kernels and the torch path (ibm-fms/Bamba-9B
                       # publishes it): vLLM bamba.py (BambaMixerDecoderLayer, BambaForCausalLM._get_mamba_cache_shape,
                       # read at vllm-project/vllm 017597e) never reads it; the state it caches is sized by
                       # mamba_expand, mamba_n_groups, mamba_n_heads, mamba_d_head, mamba_d_state and mamba_d_conv
                       "use_mamba_kernels")),
    Family("mamba", "Mamba / Falcon-Mamba (Mamba1) and Mamba2: attention-free, Mamba state in every layer, no KV",
           _V + "mamba.py MambaForCausalLM.get_mamba_state_shape_from_config (intermediate_size, state_size, "
           "conv_kernel), mamba2.py Mamba2ForCausalLM.get_mamba_state_shape_from_config (expand x hidden_size, "
           "n_groups, num_heads, head_dim); layers/mamba/mamba_utils.py mamba1_state_shape, mamba2_state_shape",
           ("tests/test_registry.py::test_falcon_mamba_7b", "tests/test_registry.py::test_mamba_2_8b",
            "tests/test_registry.py::test_mamba_codestral_7b"),
           ("num_hidden_layers", "hidden_size", "intermediate_size", "state_size", "conv_kernel", "expand",
            "num_heads", "head_dim", "n_groups"),
           aliases=(("n_layer", "num_hidden_layers"),),
           irrelevant=("time_step_rank", "time_step_limit", "time_step_min", "time_step_max", "time_step_floor",
                       "time_step_init_scheme", "time_step_scale", "use_conv_bias", "rescale_prenorm_residual",
                       "residual_in_fp32", "fused_add_norm", "rms_norm", "norm_before_gate", "d_inner", "d_model",
                       "ssm_cfg", "pad_vocab_size_multiple", "chunk_size", "mixer_rms_eps"),
           prepare=_mamba_only),
    Family("falcon_h1", "Falcon-H1: attention and a Mamba2 mixer in parallel in every layer",
           _V + "falcon_h1.py FalconH1ParallelHybrid, FalconH1ForCausalLM.get_mamba_state_shape_from_config "
           "(mamba_d_ssm, else mamba_expand x hidden_size); layers/mamba/mamba_utils.py mamba2_state_shape",
           ("tests/test_registry.py::test_falcon_h1_0_5b",),
           _DECODER_READS + ("mamba_d_ssm", "mamba_n_heads", "mamba_d_head", "mamba_n_groups", "mamba_d_state",
                             "mamba_d_conv", "mamba_expand", "attn_layer_indices"),
           irrelevant=("mamba_conv_bias", "mamba_proj_bias", "mamba_chunk_size", "mamba_rms_norm",
                       "mamba_norm_before_gate", "mamba_use_mlp", "ssm_multipliers", "ssm_in_multiplier",
                       "ssm_out_multiplier", "projectors_bias", "attn_rotary_emb"),
           prepare=_falcon_h1),
    Family("minicpm3", "MiniCPM3: latent-compressed K/V that vLLM decompresses and caches per head "
           "(MHA at qk_nope_head_dim + qk_rope_head_dim)",
           "vllm-project/vllm @ 009ccee, vllm/model_executor/models/minicpm3.py MiniCPM3Attention.__init__ / forward "
           "(V padded to qk_head_dim)",
           ("tests/test_registry.py::test_minicpm3_per_head_kv (model-card shape)",
            "tests/test_registry_public_q.py (MiniCPM3-4B)"),
           ("num_hidden_layers", "num_attention_heads", "hidden_size", "max_position_embeddings", "qk_nope_head_dim",
            "qk_rope_head_dim", "kv_lora_rank", "v_head_dim", "head_dim", "num_key_value_heads"),
           irrelevant=("q_lora_rank", "dim_model_base", "scale_depth", "scale_emb"),
           prepare=_minicpm3),
    Family("zamba2", "Zamba2: a Mamba2 mixer in every layer; hybrid layers (layers_block_type) also run a shared "
           "attention block with their own KV (MHA at 2 x hidden_size / num_attention_heads)",
           _ZAMBA2_SRC + " Zamba2Model.__init__, Zamba2Attention.__init__, Zamba2MambaDecoderLayer, "
           "Zamba2ForCausalLM.get_mamba_state_shape_from_config; layers/mamba/mamba_utils.py mamba2_state_shape",
           ("tests/test_registry.py::test_zamba2_2_7b_instruct_v2",
            "tests/test_registry.py::test_zamba2_old_format_config_refused"),
           ("num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads", "layers_block_type",
            "n_mamba_heads", "mamba_expand", "mamba_ngroups", "mamba_d_state", "mamba_d_conv", "num_mem_blocks",
            "max_position_embeddings", "quantization_config"),
           irrelevant=(
               # LoRA adapters on the shared blocks, RoPE switches, Megatron leftovers (HF Zamba2Config sets kv_channels
               # = hidden_size // heads and num_query_groups = heads; vLLM's zamba2.py reads neither)
               "adapter_rank", "use_shared_attention_adapter", "use_shared_mlp_adapter", "use_mem_rope",
               "use_long_context", "kv_channels", "num_query_groups", "ffn_hidden_size", "use_mem_eff_path",
               "use_conv_bias", "time_step_limit", "time_step_min", "time_step_max", "time_step_floor",
               "num_logits_to_keep", "chunk_size"),
           prepare=_zamba2,
           pp_refusal=msg("1: vLLM's Zamba2ForCausalLM does not implement SupportsPP, so ModelConfig."
                          "verify_with_parallel_config raises 'Pipeline parallelism is not supported for this model'")),
    Family("plamo2", "PLaMo 2: attention every mamba_step layers (i % mamba_step == mamba_step // 2), Mamba2 "
           "state elsewhere; the model-level sliding_window on attention layers",
           _PLAMO2_SRC + " is_mamba, Plamo2AttentionMixer.__init__, Plamo2ForCausalLM.get_mamba_state_shape_from_config "
           "(n_groups=0); layers/mamba/mamba_utils.py mamba2_state_shape",
           ("tests/test_registry.py::test_plamo2_1b",),
           ("num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads", "hidden_size_per_head",
            "mamba_step", "mamba_enabled", "mamba_num_heads", "mamba_d_state", "mamba_d_conv", "sliding_window",
            "attention_window_size", "max_position_embeddings", "quantization_config"),
           irrelevant=(
               # FP8 training knobs of PFN's checkpoint code (linear layers' format and group), unused MoE / sparse /
               # image fields; none is read by vLLM's plamo2.py
               "linear_type", "group_size", "fp8_accum_dtype", "eval_attention_n_bit", "eval_mlp_n_bit",
               "capacity_factor", "n_expert", "k_expert", "sparse_step", "sparse_intermediate_size",
               "shared_intermediate_size", "image_feature_size", "image_proj_type", "use_predefined_initial_state",
               "tokenizer_class"),
           prepare=_plamo2),
    Family("kimi_linear", "Kimi-Linear: Kimi Delta Attention state on linear_attn_config.kda_layers, MLA latents "
           "(kv_lora_rank + qk_rope_head_dim) on the other layers",
           _KIMI_SRC + " KimiDecoderLayer, KimiMLAAttention, KimiLinearForCausalLM.get_mamba_state_shape_from_config; "
           "layers/mamba/mamba_utils.py kda_state_shape, kda_state_dtype",
           ("tests/test_registry.py::test_kimi_linear_tiny_random_published",
            "tests/test_registry.py::test_kimi_linear_48b_shape"),
           ("num_hidden_layers", "linear_attn_config", "kv_lora_rank", "qk_rope_head_dim", "mla_use_nope",
            "q_lora_rank", "num_attention_heads", "quantization_config"),
           irrelevant=(
               # MLA head geometry vLLM folds into the latent (the cache holds kv_lora_rank + qk_rope_head_dim); MoE
               # layout; the position limit Kimi configs spell model_max_length
               "num_key_value_heads", "head_dim", "qk_nope_head_dim", "v_head_dim", "num_shared_experts",
               "num_expert_group", "use_grouped_topk", "num_experts_per_token", "moe_layer_freq",
               "first_k_dense_replace"),
           prepare=_kimi_linear),
    Family("gpt2", "GPT-2 / GPT-J / JAIS: n_layer, n_head, n_embd, n_positions (Hugging Face attribute_map); MHA",
           _V + "gpt2.py GPT2Attention, gpt_j.py GPTJAttention, jais.py JAISAttention",
           ("tests/test_registry.py::test_gpt2_legacy_names",
            "tests/test_registry_public_s.py (JAIS-13B, JAIS-30B v1, JAIS-family-590M)"),
           ("n_layer", "n_head", "n_embd", "n_positions"), aliases=_GPT2_ALIASES,
           irrelevant=("scale_attn_weights", "scale_attn_by_inverse_layer_idx", "reorder_and_upcast_attn",
                       "n_ctx", "rotary_dim")),
    Family("gpt_bigcode", "GPTBigCode (StarCoder 1): GPT-2 names; multi_query -> one KV head",
           _V + "gpt_bigcode.py GPTBigCodeAttention.__init__",
           ("tests/test_registry.py::test_gpt_bigcode_multi_query", "tests/test_registry_public_b.py (SantaCoder)"),
           ("n_layer", "n_head", "n_embd", "n_positions", "multi_query"), aliases=_GPT2_ALIASES,
           irrelevant=("scale_attn_weights", "attention_softmax_in_fp32", "scale_attention_softmax_in_fp32", "n_ctx"),
           prepare=_gpt_bigcode),
    Family("bloom", "BLOOM: n_layer, n_head, n_embed (Hugging Face BloomConfig attribute_map); MHA, ALiBi",
           _V + "bloom.py BloomAttention.__init__",
           ("tests/test_registry.py::test_bloom_legacy_names", "tests/test_registry_public_b.py (BLOOM-560M)"),
           ("n_layer", "n_head", "hidden_size", "n_embed"),
           aliases=(("n_layer", "num_hidden_layers"), ("n_head", "num_attention_heads"), ("n_embed", "hidden_size")),
           irrelevant=("apply_residual_connection_post_layernorm", "slow_but_exact", "pretraining_tp")),
    Family("falcon", "Falcon / RW: new_decoder_architecture -> num_kv_heads; multi_query -> 1 KV head",
           _V + "falcon.py FalconAttention.__init__",
           ("tests/test_registry.py::test_falcon_7b_multi_query", "tests/test_registry_public_r.py (Falcon-40B RW)"),
           ("num_hidden_layers", "n_layer", "num_attention_heads", "n_head", "hidden_size", "num_kv_heads",
            "n_head_kv", "multi_query", "new_decoder_architecture"),
           aliases=(("n_layer", "num_hidden_layers"), ("n_head", "num_attention_heads")),
           irrelevant=("parallel_attn", "apply_residual_connection_post_layernorm", "num_ln_in_parallel_attn"),
           prepare=_falcon),
    Family("mpt", "MPT / DBRX: n_layers, n_heads, d_model, max_seq_len, attn_config.kv_n_heads",
           _V + "mpt.py MPTAttention.__init__, dbrx.py DbrxAttention.__init__",
           ("tests/test_registry.py::test_mpt_legacy_names", "tests/test_registry.py::test_mpt_7b_real_config",
            "tests/test_registry_public_b.py (DBRX Instruct)", "tests/test_registry_public_u.py (PhoGPT-4B)"),
           ("n_layers", "n_heads", "d_model", "max_seq_len", "attn_config"),
           aliases=(("n_layers", "num_hidden_layers"), ("n_heads", "num_attention_heads"), ("d_model", "hidden_size"),
                    ("max_seq_len", "max_position_embeddings")),
           prepare=_attn_config),
    Family("chatglm", "ChatGLM 2/3 / GLM-4 (chatglm): num_layers, multi_query_group_num, seq_length",
           _V + "chatglm.py GLMAttention.__init__",
           ("tests/test_registry.py::test_chatglm3_6b", "tests/test_registry_public_u.py (PICA-V1, a ChatGLM2 fine-tune)"),
           ("num_layers", "num_attention_heads", "hidden_size", "multi_query_attention", "multi_query_group_num",
            "seq_length"),
           aliases=(("num_layers", "num_hidden_layers"), ("seq_length", "max_position_embeddings")),
           irrelevant=("apply_residual_connection_post_layernorm", "apply_query_key_layer_scaling",
                       "post_layer_norm", "add_qkv_bias", "add_bias_linear", "fp32_residual_connection",
                       "bias_dropout_fusion"),
           prepare=_chatglm),
    Family("qwen1", "Qwen (v1, QWenLMHeadModel): MHA, seq_length",
           _V + "qwen.py QWenAttention.__init__",
           ("tests/test_registry.py::test_qwen1_mha", "tests/test_registry_public_b.py (Qwen-1.8B)"),
           ("num_hidden_layers", "num_attention_heads", "hidden_size", "seq_length"),
           aliases=(("seq_length", "max_position_embeddings"),),
           irrelevant=("kv_channels", "use_logn_attn", "use_dynamic_ntk", "use_flash_attn", "softmax_in_fp32")),
    Family("telechat", "TeleChat 2: n_layer, n_head (vLLM TeleChat2Model sets the attribute map)",
           _V + "telechat2.py TeleChat2Model.__init__",
           ("tests/test_registry.py::test_gpt2_legacy_names (same aliases)",
            "tests/test_registry_public_c.py::test_telechat2_115b_geometry_with_flash_attn"),
           ("n_layer", "n_head", "hidden_size", "num_key_value_heads"),
           aliases=(("n_layer", "num_hidden_layers"), ("n_head", "num_attention_heads")),
           # TeleChat checkpoints carry "flash_attn": true, the remote code's attention-kernel switch; vLLM's
           # TeleChat2Model (telechat2.py, a LlamaModel) and its Telechat2Config (transformers_utils/configs/
           # telechat2.py) never read it: the cache is LlamaAttention's, whatever kernel the remote code picks
           irrelevant=("flash_attn",),
           prepare=_telechat),
)}

REFUSALS = {
    "HCXVisionForCausalLM": "not modelled yet: multimodal wrapper (language model in a nested config)",
    "LongcatFlashForCausalLM": "not modelled yet: two MLA blocks per layer",
    "MistralLarge3ForCausalLM": "not modelled yet: Mistral Large 3 layout",
    "OuroForCausalLM": "not modelled yet: looped layers (each recurrence step keeps its own KV)",
    "PanguProMoEV2ForCausalLM": "not modelled yet: openPangu Pro MoE V2 attention layout",
    "Plamo3ForCausalLM": "not modelled yet: PLaMo 3 sliding-window pattern",
    "Step3TextForCausalLM": "not modelled yet: Step3 attention groups (num_attention_groups)",
}
"""vLLM text-generation architectures kvplan refuses, and why."""

_FAMILY_OF: dict[str, tuple[str, ...]] = {
    "decoder": (
        "AfmoeForCausalLM", "ApertusForCausalLM", "AquilaModel", "AquilaForCausalLM", "ArceeForCausalLM",
        "ArcticForCausalLM", "BaiChuanForCausalLM", "BaichuanForCausalLM", "BailingMoeForCausalLM",
        "BailingMoeV2ForCausalLM", "CohereForCausalLM", "Cohere2ForCausalLM", "CwmForCausalLM",
        "DeepseekForCausalLM", "Dots1ForCausalLM", "Ernie4_5ForCausalLM", "Ernie4_5_MoeForCausalLM",
        "ExaoneForCausalLM", "Exaone4ForCausalLM", "Fairseq2LlamaForCausalLM", "FlexOlmoForCausalLM",
        "GlmForCausalLM", "Glm4ForCausalLM", "Glm4MoeForCausalLM", "GptOssForCausalLM", "GPTNeoXForCausalLM",
        "GraniteForCausalLM", "GraniteMoeForCausalLM", "GraniteMoeHybridForCausalLM",
        "GraniteMoeSharedForCausalLM", "GritLM", "Grok1ModelForCausalLM", "HunYuanMoEV1ForCausalLM",
        "HunYuanDenseV1ForCausalLM", "InternLMForCausalLM", "InternLM2ForCausalLM", "InternLM2VEForCausalLM",
        "InternLM3ForCausalLM", "Jais2ForCausalLM", "LlamaForCausalLM", "LLaMAForCausalLM", "MiniCPMForCausalLM",
        "MistralForCausalLM", "MixtralForCausalLM", "MiMoForCausalLM",
        "NemotronForCausalLM", "OlmoForCausalLM", "Olmo2ForCausalLM", "Olmo3ForCausalLM", "OlmoeForCausalLM",
        "OPTForCausalLM", "OrionForCausalLM", "PanguEmbeddedForCausalLM", "PersimmonForCausalLM", "PhiForCausalLM",
        "Phi3ForCausalLM", "PhiMoEForCausalLM", "Qwen2ForCausalLM", "Qwen2MoeForCausalLM", "Qwen3ForCausalLM",
        "Qwen3MoeForCausalLM", "SeedOssForCausalLM", "StableLMEpochForCausalLM", "StableLmForCausalLM",
        "Starcoder2ForCausalLM", "SolarForCausalLM", "TeleFLMForCausalLM", "XverseForCausalLM",
        # multimodal wrappers whose language model is a decoder in text_config (vLLM _MULTIMODAL_MODELS)
        "LlavaForConditionalGeneration", "Mistral3ForConditionalGeneration", "Qwen2VLForConditionalGeneration",
        "Qwen2_5_VLForConditionalGeneration", "Qwen3VLForConditionalGeneration",
        "Qwen3VLMoeForConditionalGeneration"),
    "gemma": ("GemmaForCausalLM", "Gemma2ForCausalLM", "Gemma3ForCausalLM", "Gemma3nForCausalLM",
              "Gemma3ForConditionalGeneration", "Gemma4ForCausalLM", "Gemma4ForConditionalGeneration"),
    "llama4": ("Llama4ForCausalLM", "Llama4ForConditionalGeneration"),
    "mla": ("DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM",
            "PanguUltraMoEForCausalLM"),
    "deepseek_v4": ("DeepseekV4ForCausalLM", "DeepseekV41ForCausalLM"),
    "jamba": ("JambaForCausalLM",),
    "nemotron_h": ("NemotronHForCausalLM",),
    "mimo_v2": ("MiMoV2FlashForCausalLM",),
    "qwen3_next": ("Qwen3NextForCausalLM", "Qwen3_5ForCausalLM", "Qwen3_5MoeForCausalLM",
                   "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration"),
    "nemotron_nas": ("DeciLMForCausalLM",),
    "lfm2": ("Lfm2ForCausalLM", "Lfm2MoeForCausalLM"),
    "minicpm3": ("MiniCPM3ForCausalLM",),
    "minimax_m2": ("MiniMaxM2ForCausalLM",),
    "minimax_text_01": ("MiniMaxForCausalLM", "MiniMaxText01ForCausalLM", "MiniMaxM1ForCausalLM"),
    "bamba": ("BambaForCausalLM",),
    "mamba": ("MambaForCausalLM", "FalconMambaForCausalLM", "Mamba2ForCausalLM"),
    "falcon_h1": ("FalconH1ForCausalLM",),
    "zamba2": ("Zamba2ForCausalLM",),
    "plamo2": ("Plamo2ForCausalLM",),
    "kimi_linear": ("KimiLinearForCausalLM",),
    "gpt2": ("GPT2LMHeadModel", "GPTJForCausalLM", "JAISLMHeadModel"),
    "gpt_bigcode": ("GPTBigCodeForCausalLM",),
    "bloom": ("BloomForCausalLM",),
    "falcon": ("FalconForCausalLM", "RWForCausalLM"),
    "mpt": ("MptForCausalLM", "MPTForCausalLM", "DbrxForCausalLM"),
    "chatglm": ("ChatGLMModel", "ChatGLMForConditionalGeneration"),
    "qwen1": ("QWenLMHeadModel",),
    "telechat": ("TeleChatForCausalLM", "TeleChat2ForCausalLM"),
}

ARCHITECTURES: dict[str, str] = {a: fid for fid, archs in _FAMILY_OF.items() for a in archs}
"""Every supported architecture name -> its family id."""

MODEL_TYPES: dict[str, str] = {
    "gpt2": "gpt2", "gptj": "gpt2", "jais": "gpt2", "gpt_bigcode": "gpt_bigcode", "bloom": "bloom",
    "falcon": "falcon", "RefinedWeb": "falcon", "RefinedWebModel": "falcon", "mpt": "mpt", "dbrx": "mpt",
    "chatglm": "chatglm", "qwen": "qwen1", "telechat": "telechat", "deci": "nemotron_nas",
    "nemotron-nas": "nemotron_nas", "gemma": "gemma", "gemma2": "gemma", "gemma3": "gemma", "gemma3_text": "gemma",
    "gemma3n": "gemma", "gemma3n_text": "gemma", "gemma4": "gemma", "gemma4_text": "gemma", "llama4": "llama4",
    "llama4_text": "llama4", "deepseek_v2": "mla", "deepseek_v3": "mla", "deepseek_v32": "mla",
    "deepseek_v4": "deepseek_v4", "deepseek_v41": "deepseek_v4", "jamba": "jamba", "nemotron_h": "nemotron_h",
    "mimo_v2_flash": "mimo_v2", "qwen3_next": "qwen3_next", "qwen3_5": "qwen3_next", "qwen3_5_moe": "qwen3_next",
    "qwen3_5_text": "qwen3_next", "qwen3_5_moe_text": "qwen3_next", "lfm2": "lfm2", "lfm2_moe": "lfm2",
    "minimax_m2": "minimax_m2", "minimax": "minimax_text_01", "minimax_text_01": "minimax_text_01",
    "minimax_m1": "minimax_text_01", "bamba": "bamba", "mamba": "mamba", "falcon_mamba": "mamba", "mamba2": "mamba",
    "falcon_h1": "falcon_h1", "minicpm3": "minicpm3", "zamba2": "zamba2", "plamo2": "plamo2",
    "kimi_linear": "kimi_linear",
}
"""``model_type`` -> family, for configs without ``architectures`` (other model types read as ``decoder``)."""

MODEL_TYPE_REFUSALS: dict[str, str] = {
    "longcat_flash": "LongcatFlashForCausalLM",
    "step3_text": "Step3TextForCausalLM", "mllama": "MllamaForConditionalGeneration",
    "mllama_text_model": "MllamaForConditionalGeneration",
}
"""``model_type`` of a refused architecture, for configs without ``architectures``."""

_SGLANG_NOT_MODELLED = ("served by SGLang only (not in vLLM's registry): not modelled yet, no public config checked "
                        "against it")
"""The status of an SGLang-only text-generation architecture no reader has been checked against."""

_SGLANG_BLOCK_DIFFUSION = ("served by SGLang only: a block-diffusion language model, not an autoregressive decoder whose "
                           "KV grows one token at a time")

SGLANG_REFUSALS = {
    **{name: _SGLANG_NOT_MODELLED for name in (
        "BailingMoEForCausalLM", "BailingMoeV2_5ForCausalLM", "BailingMoeV3ForCausalLM", "BeamForCausalLM",
        "Cohere2MoeForCausalLM", "Dots3NoteForCausalLM", "Ernie4_5_ForCausalLM", "ExaoneMoEForCausalLM",
        "ExaoneMoeForCausalLM", "GigaChat35ForCausalLM", "Glm4MoeLiteForCausalLM", "GlmMoeDsaForCausalLM",
        "GraniteMoeSWAForCausalLM", "GraniteSWAForCausalLM", "HYV3ForCausalLM", "HYV4ForCausalLM",
        "HrmTextForCausalLM", "IQuestCoderForCausalLM", "IQuestLoopCoderForCausalLM", "IQuestQ1ForCausalLM",
        "K2HorizonForCausalLM", "KimiK3LinearForCausalLM", "LagunaForCausalLM", "MellumForCausalLM",
        "MiMoV2ForCausalLM", "MindSporeForCausalLM", "MiniCPMSALAForCausalLM", "MiniMaxM3SparseForCausalLM",
        "Ministral3ForCausalLM", "MuseGlimmerForCausalLM", "NanbeigeForCausalLM", "NemotronHPuzzleForCausalLM",
        "SarvamMLAForCausalLM", "SarvamMoEForCausalLM", "Spark2_5ForCausalLM", "XllmForCausalLM", "ZayaForCausalLM",
    )},
    **{name: _SGLANG_BLOCK_DIFFUSION for name in ("DiffusionGemmaForBlockDiffusion", "SDARForCausalLM",
                                                  "SDARMoeForCausalLM")},
    "Grok1ForCausalLM": "served by SGLang only (grok.py, Grok-2): not modelled yet, no public config checked against it",
    "XverseMoeForCausalLM": "served by SGLang only (xverse_moe.py): not modelled yet, no public config checked "
                            "against it",
    "JetNemotronForCausalLM": "served by SGLang only (jet_nemotron.py): not modelled yet: JetBlock linear attention "
                              "with dynamic convolution state beside attention layers",
    "LLaDA2MoeModelLM": "served by SGLang only (llada2.py): a block-diffusion language model, not an autoregressive "
                        "decoder whose KV grows one token at a time",
    "Step3p5ForCausalLM": "served by SGLang only (step3p5.py): not modelled yet: Step-3.5 attention layout",
    "TorchNativeLlamaForCausalLM": "SGLang's torch-native implementation class (torch_native_llama.py), not a "
                                   "checkpoint's architecture: Llama checkpoints name LlamaForCausalLM",
    "TorchNativePhi3ForCausalLM": "SGLang's torch-native implementation class (torch_native_llama.py), not a "
                                  "checkpoint's architecture: Phi-3 checkpoints name Phi3ForCausalLM",
    "QuantMixtralForCausalLM": "SGLang's quantized-Mixtral implementation class (mixtral_quant.py), not a "
                               "checkpoint's architecture: Mixtral checkpoints name MixtralForCausalLM",
    "Phi3SmallForCausalLM": "served by SGLang only (phi3_small.py; vLLM served it up to 0.9.2, registry.py "
                            "_PREVIOUSLY_SUPPORTED_MODELS): blocksparse attention layers, not modelled",
}
"""Architectures SGLang serves that vLLM's vendored registry does not (every SGLang-only text-generation name of
``planner/data/sglang_text_generation_models.json`` that no reader prices), and why kvplan refuses each."""

OTHER_REFUSALS = {
    # vLLM's registry (registry.py @ 0002bff, _PREVIOUSLY_SUPPORTED_MODELS) lists Mllama as served up to 0.10.2 only:
    # "encoder-decoder models except whisper have been removed for V0 deprecation"; the V1 engine has no model class
    # for it, so no KV figure (self-attention per token, cross-attention per image) can be checked against it.
    "MllamaForConditionalGeneration": "not served by vLLM since 0.10.2 (encoder-decoder models other than Whisper "
                                      "were removed with the V0 engine; vLLM registry.py _PREVIOUSLY_SUPPORTED_MODELS): "
                                      "SGLang serves it (mllama.py), but kvplan does not model its cross-attention "
                                      "layers (cross_attention_layers)",
    "WhisperForConditionalGeneration": "encoder-decoder (not a decoder-only text model)",
    "BartForConditionalGeneration": "encoder-decoder (not a decoder-only text model)",
    "T5ForConditionalGeneration": "encoder-decoder (not a decoder-only text model)",
    "BertModel": "encoder only (no KV cache)", "BertForMaskedLM": "encoder only (no KV cache)",
    "RobertaModel": "encoder only (no KV cache)", "XLMRobertaModel": "encoder only (no KV cache)",
    "ModernBertModel": "encoder only (no KV cache)",
}
"""Other architectures users bring that kvplan refuses (not in vLLM's text-generation list)."""


# ---------------------------------------------------------------------------
# No field left unread
# ---------------------------------------------------------------------------

LAYOUT_WORDS = re.compile(r"layer|attn|attention|head|kv|window|block|state|conv|ssm|mamba|linear|sparse|index|"
                          r"shar(e|ing)|cross|group|rank|chunk|compress|sink", re.IGNORECASE)
"""Words that make a field's name speak of the cache layout."""

IRRELEVANT_WORDS = re.compile(r"dropout|pdrop|bias|norm|_eps|epsilon|initializer|init_|multiplier|softcap|"
                              r"scal(e|ing)|rope|rotary|expert|router|moe|output_hidden_states|output_attentions|"
                              r"implementation|intermediate|ffn|mlp|softmax|clip_qkv|logit|temperature|act(ivation)?$|"
                              r"_fp32|upcast|gate|dense|dt_rank|proj|tie_|word_emb|vocab|token_id|token_index|_token|label|"
                              r"return_dict|pruned_heads|tp_plan|pp_plan|torchscript|_commit_hash|fused|kernel_type|"
                              r"residual|aux_loss|freq$|router", re.IGNORECASE)
"""Words that say a field is about weights, normalisation, training, scaling or routing, never the KV cache."""

COMMON_IRRELEVANT = frozenset({
    "architectures", "model_type", "auto_map", "transformers_version", "torch_dtype", "dtype", "vocab_size",
    "text_config", "vision_config", "audio_config", "quantization_config", "hidden_act", "use_cache",
    "num_experts", "num_experts_per_tok", "n_routed_experts", "topk_group", "n_group", "first_k_dense_replace", "moe_layer_freq", "num_nextn_predict_layers", "decoder_sparse_step",
    "mlp_only_layers", "cache_implementation", "bos_token_id", "eos_token_id", "pad_token_id",
    "layer_norm_eps", "layer_norm_epsilon", "attention_dropout", "attention_bias", "num_local_experts",
    "is_decoder", "is_encoder_decoder", "cross_attention_hidden_size", "add_cross_attention",
    "tie_encoder_decoder", "chunk_size_feed_forward", "pruned_heads", "output_scores",
    "image_token_index", "image_token_id", "video_token_index", "video_token_id", "vision_feature_layer",
    "vision_feature_select_strategy", "multimodal_projector_bias", "projector_hidden_act", "spatial_merge_size",
    "mm_tokens_per_image", "boi_token_index", "eoi_token_index", "vision_start_token_id", "vision_end_token_id",
    "use_qk_norm", "qk_layernorm", "attention_out_bias", "head_dim_kv_override_none",
    "num_global_layers_none", "use_kernels", "rms_norm_eps",
    # kernel and training knobs whose names sound like layout: chunked Mamba scans, layer drop-out
    "mamba_chunk_size", "chunk_size", "layerdrop",
    # Cohere2: vLLM's commandr.py slides every layer but each sliding_window_pattern-th, whatever this says
    "order_of_interleaved_layers",
    # Cohere2 (Command R7B's published config carries layer_switch 4 beside sliding_window_pattern 4): vLLM
    # CohereAttention.__init__ (commandr.py) windows a layer by sliding_window_pattern or layer_types alone and never
    # reads layer_switch
    "layer_switch",
})
"""Fields every family knows do not change KV (or that every reader reads)."""


class TrackedConfig(dict):
    """A config dict that records every key a reader looks at (``get``, ``[]``, ``in``)."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.consulted: set[str] = set()

    def get(self, key: Any, default: Any = None) -> Any:  # noqa: D102 - dict API
        self.consulted.add(key)
        return super().get(key, default)

    def __getitem__(self, key: Any) -> Any:
        self.consulted.add(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self.consulted.add(key)  # type: ignore[arg-type]
        return super().__contains__(key)


def unread_layout_fields(cfg: TrackedConfig, family: Family) -> list[str]:
    """Keys whose names speak of layout that the reader did not consult, that the family does not list as read,
    and that no list declares irrelevant (a key with a null, false or empty value is off and passes)."""
    declared = (COMMON_IRRELEVANT | set(family.irrelevant) | set(family.reads)
                | {legacy for legacy, _ in family.aliases})
    out = []
    for key, value in dict.items(cfg):
        if not isinstance(key, str) or key.startswith("_"):
            continue  # Hugging Face's private keys (_name_or_path, _attn_implementation) and annotations
        if value is None or value is False or value in ([], {}) or key in declared or key in cfg.consulted:
            continue
        if LAYOUT_WORDS.search(key) and not IRRELEVANT_WORDS.search(key):
            out.append(key)
    return out


# ---------------------------------------------------------------------------
# Resolution
# ---------------------------------------------------------------------------

def vendored() -> dict[str, Any]:
    """The vendored vLLM list: ``{"source": {...}, "architectures": {name: [module, class]}}``."""
    text = resources.files("planner.data").joinpath("vllm_text_generation_models.json").read_text(encoding="utf-8")
    return json.loads(text)


def vendored_sglang() -> dict[str, Any]:
    """The vendored SGLang-only list: ``{"source": {...}, "architectures": {name: {file, commit, entry}}}``."""
    text = resources.files("planner.data").joinpath("sglang_text_generation_models.json").read_text(encoding="utf-8")
    return json.loads(text)


def status(name: str) -> tuple[str, str]:
    """``("supported", family id)`` or ``("refused", reason)``; ``("unknown", "")`` for a name in no list."""
    if name in ARCHITECTURES:
        return "supported", ARCHITECTURES[name]
    if name in REFUSALS:
        return "refused", REFUSALS[name]
    if name in SGLANG_REFUSALS:
        return "refused", SGLANG_REFUSALS[name]
    if name in OTHER_REFUSALS:
        return "refused", OTHER_REFUSALS[name]
    return "unknown", ""


def resolve(config: dict) -> tuple[Family, str]:
    """The family that reads ``config`` and a line saying how it was chosen.

    Raises:
        PlanInputError: ``architectures`` of the wrong type, refused, or unknown (the nearest supported name
            given); a ``model_type`` of a refused family (no ``architectures``).
    """
    archs = config.get("architectures")
    if archs is not None:
        if not isinstance(archs, list) or not archs or not all(isinstance(a, str) for a in archs):
            raise PlanInputError("config.architectures", archs, msg("a list of architecture names"))
        name = archs[0][:100]
        state, value = status(name)
        if state == "supported":
            return FAMILIES[value], msg("architectures {name}: reader '{family}'", name=name, family=value)
        if state == "refused":
            reason = (msg(REFUSALS[name]) if name in REFUSALS else msg(SGLANG_REFUSALS[name])
                      if name in SGLANG_REFUSALS else msg(OTHER_REFUSALS[name]))
            raise PlanInputError("config.architectures", name, msg("an architecture kvplan prices; {name} is refused: "
                                                                   "{reason}", name=name, reason=reason))
        # a suggestion only when a supported name is close (a misspelling); a far one would mislead
        # (the names share "ForCausalLM": the model's own part, before "For", must be close too)
        near = [a for a in difflib.get_close_matches(name, [a for a in ARCHITECTURES if status(a)[0] == "supported"],
                                                     n=3, cutoff=0.75)
                if difflib.SequenceMatcher(None, name.split("For")[0], a.split("For")[0]).ratio() >= 0.6][:1]
        if near:
            raise PlanInputError("config.architectures", name,
                                 msg("an architecture kvplan knows (nearest supported: {near}); see "
                                     "docs/architectures.md", near=near[0]))
        raise PlanInputError("config.architectures", name,
                             msg("an architecture kvplan knows (none is close to it); see docs/architectures.md"))
    model_type = config.get("model_type")
    if isinstance(model_type, str) and model_type in MODEL_TYPE_REFUSALS:
        arch = MODEL_TYPE_REFUSALS[model_type]
        raise PlanInputError("config.model_type", model_type, msg("a model type kvplan prices; {arch} is refused: "
                                                                  "{reason}", arch=arch, reason=msg(REFUSALS[arch]) if arch in REFUSALS
                                                                  else msg(OTHER_REFUSALS[arch])))
    if isinstance(model_type, str) and model_type in MODEL_TYPES:
        fid = MODEL_TYPES[model_type]
        return FAMILIES[fid], msg("no architectures; model_type {value}: reader '{family}'", value=model_type,
                                  family=fid)
    return FAMILIES["decoder"], msg("no architectures and no known model_type: read as a generic decoder")


# ---------------------------------------------------------------------------
# The generated table
# ---------------------------------------------------------------------------

def _public(name: str, state: str) -> str:
    """The real public configs behind ``name`` for the table ("no public config checked yet" when none)."""
    if state != "supported":
        return ""
    entries = PUBLIC_CONFIG_GOLDENS.get(name)
    if entries:
        return ", ".join(f"`{e}`" + (f" (published as `{PUBLISHED_SPELLINGS[e]}`, which vLLM does not serve: refused "
                                     "as published, read under vLLM's name)" if e in PUBLISHED_SPELLINGS else
                                     " (a quotation without `architectures`)" if e in UNNAMED_QUOTATIONS else "")
                         for e in entries)
    names = vendored()["architectures"]
    served_by = names.get(name)
    same = [n for n, where in names.items() if where == served_by and n in PUBLIC_CONFIG_GOLDENS]
    if served_by and same:  # the same vLLM class reads a checked config: said, but not counted as checked
        return (f"no public config checked yet (vLLM serves it with `{served_by[0]}.{served_by[1]}`, which also "
                f"serves {', '.join(f'`{n}`' for n in same)}: {'their' if len(same) > 1 else 'its'} public configs "
                "are checked)")
    return "no public config checked yet"


def markdown() -> str:
    """``docs/architectures.md``: every vendored vLLM name with its status, then the families."""
    data = vendored()
    src = data["source"]
    lines = [
        "# Architectures",
        "",
        "Generated by `python -m planner.hf.registry --markdown > docs/architectures.md` from",
        "`planner/hf/registry.py`; `tests/test_registry.py` fails when this file is stale or a name has no status.",
        "",
        f"Every text-generation architecture of vLLM's registry (`{src['path']}`, `{src['dict']}`, "
        f"[{src['repository']}](https://github.com/{src['repository']}) at commit `{src['commit']}`), "
        "with the reader that prices it or the reason kvplan refuses it. A config is read by its "
        "`architectures` (else its `model_type`); any field whose name speaks of layout that the reader "
        "neither reads nor declares irrelevant is refused by name (`--ignore-field NAME` accepts it, and the "
        "result says so).",
        "",
    ]
    names = data["architectures"]
    supported = [n for n in names if status(n)[0] == "supported"]
    refused = [n for n in names if status(n)[0] == "refused"]
    checked = [n for n in supported if n in PUBLIC_CONFIG_GOLDENS]
    lines += [f"{len(names)} names: {len(supported)} supported, {len(refused)} refused. {len(checked)} of the "
              f"{len(supported)} supported names are checked against a real public config (the last column: a file "
              "of `tests/data/configs` or of the catalogue `planner/data/models`, whose SOURCES.md says where it was "
              "copied from, or a test quoting one); the others rest on their reader's golden tests, written from the "
              "vLLM source and model cards (\"no public config checked yet\").", "",
              "| architecture | vLLM module | status | reader or reason | real public config |", "|---|---|---|---|---|"]
    for n, (module, _cls) in names.items():
        state, value = status(n)
        lines.append(f"| `{n}` | `{module}` | {state} | {value or '(none)'} | {_public(n, state)} |")
    extra = sorted(set(ARCHITECTURES) - set(names))
    sg = vendored_sglang()
    sg_src = sg["source"]
    entries = sg["entry_classes"]
    counts = {c: sum(1 for e in entries.values() if e["category"] == c) for c in sg_src["categories"]}
    lines += ["", "## SGLang", "",
              f"Every `EntryClass` of [{sg_src['repository']}](https://github.com/{sg_src['repository']}) "
              f"`{sg_src['path']}` at version {sg_src['version']} (tag `{sg_src['tag']}`; read from {sg_src['package']}): "
              f"{len(entries)} names. " + sg_src["note"][0].upper() + sg_src["note"][1:] + ".", "",
              "| category | names | meaning |", "|---|---|---|"]
    lines += [f"| {c} | {counts[c]} | {meaning} |" for c, meaning in sg_src["categories"].items()]
    lines += ["", "### SGLang-only text generation", "",
              "| architecture | SGLang file | status | reader or reason |", "|---|---|---|---|"]
    for n, where in sg["architectures"].items():
        state, value = status(n)
        lines.append(f"| `{n}` | `{where['file'].rsplit('/', 1)[1]}` | {state} | {value or '(none)'} |")
    lines += ["", "### Every SGLang EntryClass", "", "| architecture | SGLang file | vLLM serves it | category |",
              "|---|---|---|---|"]
    for n, where in entries.items():
        served = "yes" if where["category"].startswith("vllm_") else "no"
        lines.append(f"| `{n}` | `{where['file'].rsplit('/', 1)[1]}` | {served} | {where['category']} |")
    lines.append("")
    lines += ["", "## Also read (not in the vendored list: newer than its commit, or multimodal wrappers)", "",
              "| architecture | reader | real public config |", "|---|---|---|"]
    lines += [f"| `{n}` | {ARCHITECTURES[n]} | {_public(n, 'supported')} |" for n in extra]
    lines += ["", "## Also refused", "", "| architecture | reason |", "|---|---|"]
    lines += [f"| `{n}` | {r} |" for n, r in sorted(OTHER_REFUSALS.items())]
    lines += ["", "## Readers", ""]
    for f in FAMILIES.values():
        lines += [f"### `{f.id}`", "", f.title, "", f"- mirrors: {f.source}",
                  f"- golden tests: {'; '.join(f.golden)}",
                  f"- reads: {', '.join(f'`{r}`' for r in f.reads) or '(see mirrors)'}"]
        if f.aliases:
            lines.append("- legacy names: " + ", ".join(f"`{a}` -> `{b}`" for a, b in f.aliases))
        if f.irrelevant:
            lines.append("- known not to change KV: " + ", ".join(f"`{i}`" for i in f.irrelevant))
        if f.pp_refusal:
            lines.append(f"- pipeline parallel: only PP {f.pp_refusal}")
        lines.append("")
    lines += ["## Fields every reader knows do not change KV", "",
              ", ".join(f"`{k}`" for k in sorted(COMMON_IRRELEVANT)), "",
              f"and any layout-sounding name that also matches `{IRRELEVANT_WORDS.pattern}`.", ""]
    return "\n".join(lines)


def _main(argv: list[str]) -> int:
    if argv == ["--markdown"]:
        sys.stdout.write(markdown())
        return 0
    sys.stderr.write("usage: python -m planner.hf.registry --markdown\n")
    return 2


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
