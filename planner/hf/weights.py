"""Weight bytes per GPU from a checkpoint's ``config.json``: parameters per tensor class, bytes per class.

What vLLM's "Model loading took X GiB" counts on one rank: every parameter that rank holds in the dtype the
checkpoint's ``quantization_config`` stores it in (scales included), plus the rotary cache. Each class is
returned with its parameters, its bytes and the rule that priced it, so a plan can show where weights come from.

Parameters per class (Hugging Face decoder conventions):

* embeddings ``vocab x hidden``; the output head the same again unless ``tie_word_embeddings``; vLLM pads the
  vocabulary to a multiple of 64 per rank and splits it over TP ranks (``VocabParallelEmbedding``,
  ``DEFAULT_VOCAB_PADDING_SIZE = 64`` in ``vllm/model_executor/layers/vocab_parallel_embedding.py``);
* attention per layer: q and o ``hidden x heads x head_dim``, k and v ``hidden x kv_heads x head_dim`` (biases
  where the config or the family has them); heads split over TP, KV heads replicated below one per rank;
* MLP per layer: gated (gate, up, down) ``3 x hidden x intermediate``; MoE: ``experts x 3 x hidden x
  moe_intermediate`` + router + shared experts; split over TP;
* norms: two per layer and a final one (replicated);
* rotary cache: ``max_position_embeddings x head_dim`` in the model dtype (vLLM's ``RotaryEmbedding``
  registers ``cos_sin_cache`` as a buffer, counted in the loaded memory).

Bytes per class from ``quantization_config``: none (``torch_dtype``), ``fp8`` (1 B, per-tensor scale or one FP32
scale per ``weight_block_size`` block), ``compressed-tensors`` (its ``config_groups``: 8-bit int / float per
channel or tensor, 4-bit int with one 16-bit scale per ``group_size``; ``ignore`` stays 16-bit), ``gptq`` / ``awq``
(``bits``, ``group_size``; the output head and embeddings stay 16-bit), ``mxfp4`` (MoE experts: E2M1 + one E8M0
per 32; ``modules_to_not_convert`` and attention stay 16-bit; as stored, or as vLLM's Triton backend lays them out
on Hopper, :func:`mxfp4_triton_hopper_tensors`) and ModelOpt ``NVFP4`` (E2M1 + one E4M3 per 16; its two FP32
per-tensor scales per linear, a few bytes in all, are left out; ``exclude_modules`` stay 16-bit). A format outside
these is refused by name. Gemma 4 (a dense MLP beside the experts, full-attention layers of another head size, a
vision tower) has its own classes, :func:`_gemma4_weights` (one GPU only).

Refused rather than priced with these classes (:func:`_refuse_unpriced_layout`): an MLP that is not gated
(:data:`UNGATED_MLP_MODEL_TYPES`), and layouts whose layers differ (dense layers or shared experts beside MoE ones,
linear attention, per-layer block configurations; :data:`_LAYOUT_FIELDS_NOT_PRICED`, ``layer_types``).

What vLLM logs also holds the CUDA caching allocator's rounding (``cuda_allocated_bytes``): asked for with
``cuda_allocator=True``, it is the class "allocator rounding".
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fnmatch import fnmatchcase as fnmatch
from typing import Any

from planner.errors import MISSING, PlanInputError
from planner.kv.pipeline import vllm_pp_partition
from planner.messages import msg
from planner.units import cdiv

VOCAB_PADDING = 64
"""vLLM pads the vocabulary of embeddings and output head to a multiple of 64 (per rank)."""

_MiB = 1 << 20
CUDA_ALLOC_BLOCK = 512
"""PyTorch's CUDA caching allocator rounds every request up to 512 B (``kMinBlockSize``)."""
CUDA_ALLOC_SMALL = _MiB
"""Requests up to 1 MiB (``kSmallSize``) come from the small pool and are counted as requested."""
CUDA_ALLOC_MIN_LARGE = 10 * _MiB
"""Requests of 10 MiB (``kMinLargeAlloc``) and more get a fresh segment rounded up to 2 MiB (``kRoundLarge``)."""
CUDA_ALLOC_ROUND_LARGE = 2 * _MiB


def cuda_allocated_bytes(nbytes: int) -> int:
    """Bytes one tensor of ``nbytes`` adds to ``torch.cuda.memory_allocated`` (which vLLM's "Model loading took"
    reads, ``DeviceMemoryProfiler``), with PyTorch's CUDA caching allocator defaults (no expandable segments).

    ``c10/cuda/CUDACachingAllocator.cpp`` (pytorch/pytorch): ``get_allocation_size`` gives a request of at least
    ``kMinLargeAlloc`` (10 MiB) a segment rounded up to ``kRoundLarge`` (2 MiB); ``should_split`` splits the block
    only when more than ``kSmallSize`` (1 MiB) would remain, so a remainder of at most 1 MiB stays in the
    allocated block and is counted. Example: a 231 MiB down projection (Qwen2.5-72B at TP 2: 14,784 x 8,192 x 2 B)
    takes a 232 MiB segment, the 1 MiB left is not split: 232 MiB counted. Requests between 1 and 10 MiB share
    20 MiB segments and are taken at their bytes (their remainders are split off unless the segment is nearly full;
    the 512 B rounding of every block is left out: well under 1 MiB per model).
    """
    size = -(-nbytes // CUDA_ALLOC_BLOCK) * CUDA_ALLOC_BLOCK
    if size < CUDA_ALLOC_MIN_LARGE:
        return nbytes  # the 512 B rounding of small blocks (well under 1 MiB per model) is left out
    segment = -(-size // CUDA_ALLOC_ROUND_LARGE) * CUDA_ALLOC_ROUND_LARGE
    return segment if segment - size <= CUDA_ALLOC_SMALL else size

_DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "half": 2, "float32": 4, "float": 4}

ROTARY_CACHE_BYTES = {"gpt_oss": 4}
"""Model types whose vLLM model builds the rotary cache in FP32 whatever the model dtype (``gpt_oss.py``,
``OAIAttention``: ``get_rope(..., dtype=torch.float32)``; its YaRN cache has original_max_position_embeddings x
factor = 131,072 positions, the config's max_position_embeddings)."""

MXFP4_CHECKPOINT = "checkpoint"
MXFP4_TRITON_HOPPER = "vllm-triton-hopper"

MXFP4_HOPPER_VALUE_PACK = (16, 32)
"""triton_kernels ``HopperMXValueLayout.swizzle_data`` (mma_version 3): the packed E2M1 bytes of a weight, rows x
(inputs / 2), are padded to whole tiles of 16 rows (k_tile x warp_tile x threads x scott_trick x contig = 1 x 2 x 4 x
2 x 1) by 32 bytes (4 x 2 x 4 x 1 x 1). The layout at triton-lang/triton 000df03e pads further (64 bytes x 256 rows,
``HopperMXValueLayoutTransformation._padded_shape``); with it gpt-oss-20b comes to +2.4 % (TP 1) and +3.4 % (TP 2)
against vLLM 0.19.0's logs, so the image those logs come from does not use it."""

MXFP4_HOPPER_SCALE_ROWS = 2 * 8 * 2 * 8
"""triton_kernels ``HopperMXScaleLayout.swizzle_data``: scale rows padded to 2 x num_warps x 2 x 8 (vLLM passes
num_warps 8 without expert parallelism), scale columns to 2."""


def _round_up(n: int, multiple: int) -> int:
    return cdiv(n, multiple) * multiple


def mxfp4_triton_hopper_tensors(rows: int, cols: int) -> tuple[int, int, int]:
    """Bytes one MXFP4 expert linear of ``rows`` outputs x ``cols`` inputs holds under vLLM's Triton MXFP4 MoE backend
    on Hopper: (swizzled E2M1 values, swizzled E8M0 scales, the checkpoint's E8M0 scales).

    vLLM ``convert_to_mxfp4_moe_kernel_format`` (``vllm/model_executor/layers/fused_moe/oracle/mxfp4.py``, Triton
    branch, read at 001eda31) swizzles weights and scales with ``_swizzle_mxfp4`` (triton_kernels Hopper layouts) and
    deletes the layer's weights only: the swizzled scales go into the ``PrecisionConfig`` while
    ``w13_weight_scale`` / ``w2_weight_scale`` stay on the layer, so the scales are held twice (as in the Triton branch
    of ``Mxfp4MoEMethod.process_weights_after_loading``, ``quantization/mxfp4.py`` at 007d50058a06, before the
    oracle module).

    >>> mxfp4_triton_hopper_tensors(2_944, 2_880)  # gpt-oss-20b gate_up at TP 2: 2,944 x 1,440 B; 3,072 x 90; 2,944 x 90
    (4239360, 276480, 264960)
    """
    groups = math.ceil(cols / 32)
    values = _round_up(rows, MXFP4_HOPPER_VALUE_PACK[0]) * _round_up(math.ceil(cols / 2), MXFP4_HOPPER_VALUE_PACK[1])
    swizzled = _round_up(rows, MXFP4_HOPPER_SCALE_ROWS) * _round_up(groups, 2)
    return values, swizzled, rows * groups

@dataclass(frozen=True)
class WeightClass:
    """One tensor class on one rank: its parameters, its bytes and the rule that priced them."""

    name: str
    params: int
    weight_bytes: int
    rule: str


@dataclass(frozen=True)
class CheckpointWeights:
    """Weights of one rank (TP rank, all layers of its pipeline stage) as vLLM loads them."""

    classes: tuple[WeightClass, ...]
    quant_method: str

    @property
    def weight_bytes(self) -> int:
        return sum(c.weight_bytes for c in self.classes)

    @property
    def params(self) -> int:
        return sum(c.params for c in self.classes)


# -- quantization schemes: bytes for a linear of `rows` outputs x `cols` inputs -----------------------------

@dataclass(frozen=True)
class _Scheme:
    """How a quantized linear is stored: bits per weight, one scale of ``scale_bytes`` per ``group`` inputs
    (``group`` 0 = one per output channel, -1 = per tensor, ``block`` = 2-D blocks)."""

    label: str
    bits: int
    scale_bytes: int = 0
    group: int = -1
    block: tuple[int, int] | None = None
    zero_point: bool = False

    def linear_bytes(self, rows: int, cols: int) -> int:
        return sum(self.tensor_bytes(rows, cols))

    def tensor_bytes(self, rows: int, cols: int) -> tuple[int, int]:
        """(packed weight bytes, scale and zero-point bytes) of one linear."""
        b = math.ceil(rows * cols * self.bits / 8)
        if self.block:
            s = math.ceil(rows / self.block[0]) * math.ceil(cols / self.block[1]) * self.scale_bytes
        elif self.group > 0:
            groups = rows * math.ceil(cols / self.group)
            s = groups * self.scale_bytes + (groups * self.bits // 8 if self.zero_point else 0)
        elif self.group == 0:
            s = rows * self.scale_bytes
        else:
            s = self.scale_bytes
        return b, s


def _whole(d: dict, key: str, default: int | None = None, *, where: str = "config", minimum: int = 0) -> int:
    """``d[key]`` as a whole number >= ``minimum`` (``default`` when absent or null), else a PlanInputError."""
    value = d.get(key)
    if value is None:
        if default is None:
            raise PlanInputError(f"{where}.{key}", None, msg("a value (needed to price the weights)"))
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise PlanInputError(f"{where}.{key}", value, msg("a whole number of at least {lo}", lo=minimum))
    return value


def _compressed_scheme(q: dict) -> tuple[_Scheme, list[str]]:
    groups = q.get("config_groups") or {}
    if len(groups) != 1:
        raise PlanInputError("quantization_config.config_groups", len(groups), msg("exactly one group"))
    w = (next(iter(groups.values())) or {}).get("weights") or {}
    bits, kind, strategy = w.get("num_bits"), w.get("type"), w.get("strategy")
    if bits == 8:
        per = {"channel": 0, "tensor": -1}.get(strategy)
        if per is None and strategy == "block":
            block = tuple(w.get("block_structure") or (128, 128))
            return _Scheme(f"{kind} 8-bit, block scales", 8, 4, block=block), list(q.get("ignore") or [])
        if per is None:
            raise PlanInputError("quantization_config weights.strategy", strategy, msg("channel, tensor or block"))
        return _Scheme(f"{kind} 8-bit, {strategy} FP32 scales", 8, 4, group=per), list(q.get("ignore") or [])
    if bits == 4 and kind == "int" and strategy == "group":
        group = _whole(w, "group_size", where="quantization_config", minimum=1)
        return (_Scheme(f"int4 W4A16, one 16-bit scale per {group}", 4, 2, group=group,
                        zero_point=not w.get("symmetric", True)), list(q.get("ignore") or []))
    if bits == 4 and kind == "float":
        group = _whole(w, "group_size", 16, where="quantization_config", minimum=1)
        return _Scheme(f"NVFP4 (E2M1 + E4M3 per {group})", 4, 1, group=group), list(q.get("ignore") or [])
    raise PlanInputError("quantization_config weights", f"{bits}-bit {kind} {strategy}",
                         msg("8-bit int/float, 4-bit int per group or 4-bit float"))


def quant_scheme(cfg: dict) -> tuple[str, _Scheme | None, list[str], bool]:
    """(method, scheme of quantized linears or None, ignored module names, experts only?) from the config.

    Raises:
        PlanInputError: a ``quant_method`` outside those listed in the module docstring.
    """
    q = cfg.get("quantization_config") or (cfg.get("text_config") or {}).get("quantization_config")
    if not q:
        return "none", None, [], False
    method = str(q.get("quant_method") or q.get("quant_algo") or "").lower()
    if method == "fp8":
        block = q.get("weight_block_size")
        return ("fp8", _Scheme("FP8, one FP32 scale per block" if block else "FP8, per-tensor scale", 8, 4,
                               block=tuple(block) if block else None), list(q.get("modules_to_not_convert") or []),
                False)
    if method == "compressed-tensors":
        s, ignore = _compressed_scheme(q)
        return method, s, ignore, False
    if method in ("gptq", "awq"):
        bits = _whole(q, "bits", 4, where="quantization_config", minimum=1)
        group = _whole(q, "group_size", 128, where="quantization_config", minimum=1)
        return (method, _Scheme(f"{method.upper()} int{bits}, one 16-bit scale per {group}", bits, 2, group=group,
                                zero_point=method == "awq" or not q.get("sym", True)),
                list(q.get("modules_to_not_convert") or []), False)
    if method == "mxfp4":
        return (method, _Scheme("MXFP4 (E2M1 + E8M0 per 32)", 4, 1, group=32),
                list(q.get("modules_to_not_convert") or []), True)
    if method == "modelopt" or "nvfp4" in method:
        # ModelOpt <= 0.29 (hf_quant_config.json) nests its fields under "quantization", as vLLM's
        # ModelOptQuantConfigBase.from_config reads them (vllm/model_executor/layers/quantization/modelopt.py)
        nested = isinstance(q.get("quantization"), dict)
        mq, where = (q["quantization"], "quantization_config.quantization") if nested else (q, "quantization_config")
        algo = str(mq.get("quant_algo", method)).upper()
        if algo != "NVFP4":
            raise PlanInputError(f"{where}.quant_algo", algo, msg("NVFP4 (the only ModelOpt format priced)"))
        group = _whole(mq, "group_size", 16, where=where, minimum=1)
        return ("nvfp4", _Scheme(f"NVFP4 (E2M1 + E4M3 per {group})", 4, 1, group=group),
                list(mq.get("exclude_modules") or mq.get("ignore") or []), False)
    raise PlanInputError("quantization_config.quant_method", method or None,
                         msg("one of fp8, compressed-tensors, gptq, awq, mxfp4, modelopt NVFP4"))


def _ignored(name: str, ignore: list[str]) -> bool:
    """Whether a module (``lm_head`` or a layer's ``self_attn.q_proj``, ``mlp.experts``...) is left unquantized by
    the config's ignore list: exact names, dotted prefixes and suffixes, ``*`` wildcards, ``re:`` expressions. A
    layer's module is tried under the text decoder's names of plain and multimodal checkpoints
    (``model.layers.0``, ``model.language_model.layers.0``, ``language_model.model.layers.0``)."""
    if name == "lm_head":
        return any(_matches(full, ignore) for full in ("lm_head", "language_model.lm_head"))
    return any(_matches(f"{prefix}.layers.0.{name}", ignore)
               for prefix in ("model", "model.language_model", "language_model.model"))


def _matches(full: str, ignore: list[str]) -> bool:
    for pat in ignore:
        p = str(pat)
        if p.startswith("re:"):
            try:
                if re.search(p[3:], full):
                    return True
            except re.error:
                raise PlanInputError("quantization_config.ignore", p, msg("a valid regular expression")) from None
        elif full == p or full.endswith("." + p) or full.startswith(p + ".") or ("*" in p and fnmatch(full, p)):
            return True
    return False


TIED_DEFAULTS = {"llama": False, "mistral": False, "mixtral": False, "qwen2": False, "qwen2_moe": False,
                 "qwen3": False, "qwen3_moe": False, "gpt_oss": False, "phi3": False, "gemma": True, "gemma2": True,
                 "gemma3": True, "gemma3_text": True}
"""``tie_word_embeddings`` when a config omits it: the default of that model type's transformers config class
(``LlamaConfig``, ``Qwen2Config``, ... False; ``Gemma*Config`` True)."""


ALWAYS_TIED_MODEL_TYPES = frozenset({"cohere", "cohere2"})
"""Model types whose output head vLLM always shares with the embeddings, whatever ``tie_word_embeddings`` says:
``CohereForCausalLM`` (vllm/model_executor/models/commandr.py) computes logits with ``self.model.embed_tokens`` and
builds no ``lm_head``."""


def _tied(cfg: dict, config: dict, model_type: str) -> bool:
    if model_type in ALWAYS_TIED_MODEL_TYPES:
        return True
    for c in (cfg, config):
        if c.get("tie_word_embeddings") is not None:
            return bool(c["tie_word_embeddings"])
    if model_type in TIED_DEFAULTS:
        return TIED_DEFAULTS[model_type]
    raise PlanInputError("config.tie_word_embeddings", None,
                         msg("true or false (not given, and the default of model_type {model_type} is not known)",
                             model_type=model_type or "(none)"))


def weights_refusal_reason(exc: PlanInputError) -> str:
    """Why a checkpoint's weights could not be derived, in words (the field, given or not, and what would do)."""
    if exc.value is None or exc.value is MISSING:
        return msg("{field} is not given; expected {allowed}", field=exc.field, allowed=exc.allowed)
    return msg("{field} is {value}; expected {allowed}", field=exc.field, value=repr(exc.value), allowed=exc.allowed)


def _gemma4_weights(config: dict[str, Any], cfg: dict[str, Any], *, tp: int, pp: int) -> CheckpointWeights:
    """Gemma 4 (``Gemma4ForConditionalGeneration``) as vLLM's ``gemma4.py`` and ``gemma4_mm.py`` build it, one GPU.

    Per text layer (``Gemma4DecoderLayer``): attention of the layer's type (sliding: ``head_dim``,
    ``num_key_value_heads``; full: ``global_head_dim`` and, with ``attention_k_eq_v``, ``num_global_key_value_heads``;
    ``QKVParallelLinear`` allocates the V slot even where the checkpoint has no v_proj, K is loaded into both), q and k
    norms; a dense gated MLP (``intermediate_size``) and, with ``enable_moe_block``, a router (``GateLinear``
    hidden x experts, BF16, a per-dimension scale, per-expert scales) and the experts (``moe_intermediate_size``)
    beside it; 4 RMSNorms (7 with the MoE block). Tied embeddings, a final norm, one rotary cache per layer type
    (``get_rope`` shares equal ones): max_position_embeddings x rotary dim in the model dtype, the whole head for
    the "proportional" rope of full layers (``Gemma4RotaryEmbedding``). The vision tower
    (``vision_config``): patch projection (3 x patch^2 x hidden), a 2 x ``position_embedding_size`` x hidden position
    table, per layer q, k, v, o and a gated MLP with 4 norms and q/k norms, the ``embed_vision`` projection to the
    text width and the standardisation bias and scale. Linears follow the checkpoint's quantization unless its
    ignore list names them.

    Raises:
        PlanInputError: TP or PP above 1, or per-layer input embeddings (Gemma 4 E2B/E4B), not priced here.
    """
    if tp != 1 or pp != 1:
        raise PlanInputError("tensor_parallel_size x pipeline_parallel_size", tp * pp,
                             msg("1 (Gemma 4's weights are priced on one GPU: the only public log is at TP 1)"))
    if cfg.get("hidden_size_per_layer_input"):
        raise PlanInputError("config.hidden_size_per_layer_input", cfg.get("hidden_size_per_layer_input"),
                             msg("0 (per-layer input embeddings are not priced yet)"))
    hidden, layers = _whole(cfg, "hidden_size", minimum=1), _whole(cfg, "num_hidden_layers", minimum=1)
    heads = _whole(cfg, "num_attention_heads", minimum=1)
    kv_heads = _whole(cfg, "num_key_value_heads", heads, minimum=1)
    head_dim = _whole(cfg, "head_dim", hidden // heads, minimum=1)
    g_dim = _whole(cfg, "global_head_dim", head_dim, minimum=1)
    g_kv = _whole(cfg, "num_global_key_value_heads", kv_heads, minimum=1) if cfg.get("attention_k_eq_v") else kv_heads
    vocab = _whole(cfg if cfg.get("vocab_size") is not None else config, "vocab_size", minimum=1)
    inter = _whole(cfg, "intermediate_size", minimum=1)
    dtype = str(cfg.get("torch_dtype") or config.get("torch_dtype") or cfg.get("dtype") or "bfloat16")
    wb = _DTYPE_BYTES.get(dtype.removeprefix("torch."), 2)
    method, scheme, ignore, _ = quant_scheme(config)
    types = cfg.get("layer_types") or []
    n_full = sum(1 for t in types if t == "full_attention") if len(types) == layers else 0
    n_slide = layers - n_full

    def lin(name: str, rows: int, cols: int, prefix: str = "") -> int:
        quantized = scheme is not None and not (
            _matches(f"{prefix}.{name}", ignore) if prefix else _ignored(name, ignore))
        return sum(scheme.tensor_bytes(rows, cols)) if quantized else rows * cols * wb

    classes: list[WeightClass] = []
    vpad = math.ceil(vocab / VOCAB_PADDING) * VOCAB_PADDING
    classes.append(WeightClass("embeddings", vpad * hidden, vpad * hidden * wb,
                               f"vocab {vocab:,} padded to 64 x hidden {hidden:,}, {wb} B (tied output head)"))

    def attn(q_heads: int, kv: int, dim: int) -> tuple[int, int]:
        q, k = q_heads * dim, kv * dim
        params = hidden * (q + 2 * k) + q * hidden + 2 * dim
        return params, (lin("self_attn.q_proj", q, hidden) + 2 * lin("self_attn.k_proj", k, hidden)
                        + lin("self_attn.o_proj", hidden, q) + 2 * dim * wb)
    s_p, s_b = attn(heads, kv_heads, head_dim)
    f_p, f_b = attn(heads, g_kv, g_dim)
    classes.append(WeightClass("attention", n_slide * s_p + n_full * f_p, n_slide * s_b + n_full * f_b,
                               f"{n_slide} sliding layers x (q {heads} x {head_dim}, k and v {kv_heads} x {head_dim}) "
                               f"+ {n_full} full layers x (q {heads} x {g_dim}, k and v {g_kv} x {g_dim}: the V slot "
                               f"is allocated, attention_k_eq_v loads K into it) + q/k norms"
                               + (f", {scheme.label} unless ignored" if scheme else "")))
    mlp_b = lin("mlp.gate_proj", 2 * inter, hidden) + lin("mlp.down_proj", hidden, inter)
    classes.append(WeightClass("MLP", 3 * hidden * inter * layers, mlp_b * layers,
                               f"{layers} layers x 3 x hidden {hidden:,} x intermediate {inter:,} (dense, beside the "
                               "experts)" + (f", {scheme.label} unless ignored" if scheme else "")))
    n_norms = 4
    if cfg.get("enable_moe_block"):
        n_norms = 7
        experts = _whole(cfg, "num_experts", minimum=1)
        m_inter = _whole(cfg, "moe_intermediate_size", minimum=1)
        e_b = experts * (lin("experts", 2 * m_inter, hidden) + lin("experts", hidden, m_inter))
        classes.append(WeightClass("MoE experts", experts * 3 * hidden * m_inter * layers, e_b * layers,
                                   f"{layers} layers x {experts} experts x 3 x hidden {hidden:,} x intermediate "
                                   f"{m_inter:,}" + (f", {scheme.label}" if scheme else "")))
        r_p = hidden * experts + hidden + experts
        classes.append(WeightClass("router", r_p * layers, r_p * layers * wb,
                                   "hidden x experts (GateLinear, 16-bit) + per-dimension scale + per-expert scale"))
    norms = (n_norms * layers + 1) * hidden
    classes.append(WeightClass("norms", norms, norms * wb, f"{n_norms} RMSNorms per layer + the final one"))
    max_pos = _whole(cfg, "max_position_embeddings", 0)
    rope = cfg.get("rope_parameters") if isinstance(cfg.get("rope_parameters"), dict) else {}
    # vLLM's Gemma4RotaryEmbedding ("proportional", rotary_embedding/gemma4_rope.py) zero-pads the frequencies it
    # does not rotate and builds its cache over the whole head (rotary_dim = head_size)
    dims = {t: d if (rope.get(t) or {}).get("rope_type") == "proportional"
            else int(d * float((rope.get(t) or {}).get("partial_rotary_factor") or 1.0))
            for t, d in (("sliding_attention", head_dim), ("full_attention", g_dim))
            if (t == "full_attention" and n_full) or (t == "sliding_attention" and n_slide)}
    classes.append(WeightClass("rotary cache", 0, sum(max_pos * d * wb for d in dims.values()),
                               "cos/sin caches, one per layer type: max_position_embeddings "
                               f"{max_pos:,} x rotary dim " + " + ".join(str(d) for d in dims.values()) + f" x {wb} B"))
    vision = config.get("vision_config")
    if isinstance(vision, dict) and vision:
        vh = _whole(vision, "hidden_size", where="config.vision_config", minimum=1)
        vl = _whole(vision, "num_hidden_layers", where="config.vision_config", minimum=1)
        vheads = _whole(vision, "num_attention_heads", where="config.vision_config", minimum=1)
        vdim = _whole(vision, "head_dim", vh // vheads, where="config.vision_config", minimum=1)
        vkv = _whole(vision, "num_key_value_heads", vheads, where="config.vision_config", minimum=1)
        vi = _whole(vision, "intermediate_size", where="config.vision_config", minimum=1)
        patch = _whole(vision, "patch_size", where="config.vision_config", minimum=1)
        pos = _whole(vision, "position_embedding_size", 0, where="config.vision_config")
        vp = "model.vision_tower.encoder.layers.0"
        per_layer = (lin("self_attn.q_proj", vheads * vdim, vh, vp) + 2 * lin("self_attn.k_proj", vkv * vdim, vh, vp)
                     + lin("self_attn.o_proj", vh, vheads * vdim, vp) + lin("mlp.gate_proj", 2 * vi, vh, vp)
                     + lin("mlp.down_proj", vh, vi, vp) + (4 * vh + 2 * vdim) * wb)
        other = (3 * patch * patch * vh + 2 * pos * vh + (2 * vh if vision.get("standardize") else 0)) * wb
        other += lin("embedding_projection", hidden, vh, "model.embed_vision")
        params = vl * (vh * (vheads + 2 * vkv) * vdim + vheads * vdim * vh + 3 * vh * vi + 4 * vh + 2 * vdim)
        params += 3 * patch * patch * vh + 2 * pos * vh + hidden * vh
        classes.append(WeightClass("vision tower", params, vl * per_layer + other,
                                   f"{vl} layers x (q, k, v, o {vheads} x {vdim} on {vh:,}; MLP 3 x {vh:,} x {vi:,}) + "
                                   f"patch projection, a 2 x {pos:,} x {vh:,} position table and the projection to "
                                   f"{hidden:,}"))
    return CheckpointWeights(classes=tuple(classes), quant_method=method)


EXPERT_COUNT_KEYS = ("num_local_experts", "num_experts", "n_routed_experts")
"""config.json fields that count a model's routed experts (Mixtral / Qwen MoE / DeepSeek spellings, as the
engines' model files read them)."""


def routed_experts_key(cfg: dict) -> str | None:
    """The field of ``cfg`` (a text config) that counts its routed experts, or None for a dense model."""
    return next((k for k in EXPERT_COUNT_KEYS if cfg.get(k)), None)


def has_routed_experts(config: dict) -> bool:
    """Whether a config.json (its ``text_config`` when nested) describes a mixture-of-experts model."""
    cfg = config.get("text_config") or config
    return isinstance(cfg, dict) and routed_experts_key(cfg) is not None


UNGATED_MLP_MODEL_TYPES = frozenset({
    "phi", "starcoder2", "gpt2", "gpt_bigcode", "gptj", "gpt_neox", "falcon", "RefinedWeb", "RefinedWebModel",
    "bloom", "mpt", "opt", "persimmon", "jais", "nemotron", "arcee", "apertus", "qwen"})
"""Model types whose MLP is not the gated ``gate, up, down`` of ``intermediate_size`` these classes price. vLLM's
model files (vllm/model_executor/models/): ``PhiMLP`` fc1 / fc2, ``Starcoder2MLP`` c_fc / c_proj, ``GPT2MLP``,
``GPTBigMLP``, ``GPTJMLP``, ``GPTNeoXMLP``, ``FalconMLP``, ``BloomMLP``, ``MPTMLP``, ``OPTDecoderLayer`` fc1 / fc2,
``PersimmonMLP``, ``JAISMLP`` (of ``n_inner``), ``NemotronMLP``, ``ArceeMLP`` and ``ApertusMLP`` (up and down only,
no gate), ``QWenMLP`` (two halves of ``intermediate_size // 2``). Their weights are refused, never priced with the
gated rule (which overstates Phi-2's by 30 %)."""

_LAYOUT_FIELDS_NOT_PRICED: dict[str, tuple] = {
    # per-layer or hybrid layouts: layers whose tensors differ from a GQA/MHA decoder layer
    **dict.fromkeys(("attn_type_list", "linear_attn_config", "linear_num_key_heads", "full_attention_interval",
                     "hybrid_override_pattern", "hybrid_layer_pattern", "layers_block_type", "block_configs",
                     "compress_ratios", "altup_num_inputs", "conv_L_cache", "use_cla", "parallel_attn_mlp_res",
                     "mlp_only_layers"), ()),
    # mixture-of-experts layouts with dense layers or shared experts beside the routed ones: counts (neutral 0) and
    # periods (neutral 1: every layer alike)
    **dict.fromkeys(("first_k_dense_replace", "n_shared_experts", "num_shared_experts"), (0,)),
    **dict.fromkeys(("moe_layer_freq", "interleave_moe_layer_step", "decoder_sparse_step", "moe_layer_frequency"),
                    (1,)),
}
"""Config fields that, set to anything but their neutral value (absent, null, false, an empty list, or the value
given here), describe layers whose tensors these classes do not price (dense MLPs beside MoE layers, shared experts,
linear attention, per-layer block configurations...): the weights are refused by the field's name."""

_NEUTRAL_LAYER_TYPES = frozenset({"full_attention", "sliding_attention"})


def _refuse_unpriced_layout(cfg: dict) -> None:
    """Refuse a text config whose weights the GQA/MHA decoder classes would misprice, naming the field.

    Raises:
        PlanInputError: ``config.model_type`` in :data:`UNGATED_MLP_MODEL_TYPES`, a field of
            :data:`_LAYOUT_FIELDS_NOT_PRICED` set, or ``config.layer_types`` naming a layer other than full or
            sliding-window attention.
    """
    model_type = cfg.get("model_type")
    if isinstance(model_type, str) and model_type in UNGATED_MLP_MODEL_TYPES:
        raise PlanInputError("config.model_type", model_type,
                             msg("a decoder whose MLP is gated (gate, up, down of intermediate_size); the weights of "
                                 "{model_type} (another MLP in vLLM's model file) are not priced yet",
                                 model_type=model_type))
    for key, neutral in _LAYOUT_FIELDS_NOT_PRICED.items():
        value = cfg.get(key)
        if value is None or value is False or value in ([], {}, "") or (
                not isinstance(value, bool) and isinstance(value, (int, float)) and value in neutral):
            continue
        raise PlanInputError(f"config.{key}", str(value)[:60],
                             msg("absent: a layout whose tensors differ from layer to layer (dense and MoE layers, "
                                 "shared experts, linear attention, per-layer blocks) is not priced yet"))
    types = cfg.get("layer_types")
    if isinstance(types, list) and any(t not in _NEUTRAL_LAYER_TYPES for t in types):
        other = next(t for t in types if t not in _NEUTRAL_LAYER_TYPES)
        raise PlanInputError("config.layer_types", str(other)[:40],
                             msg("full_attention or sliding_attention on every layer: the weights of other layer "
                                 "kinds are not priced yet"))


def _canonical_names(config: dict, cfg: dict) -> dict:
    """``cfg`` with the canonical names of the legacy fields its architecture's reader maps (EXAONE's ``num_layers``
    -> ``num_hidden_layers``: :attr:`planner.hf.registry.Family.aliases`, the engine's config-class attribute map)
    filled in where the canonical one is absent; ``cfg`` itself when nothing maps or the architecture is unknown."""
    from planner.hf.registry import resolve  # the registry's reader, as the KV import chose it

    try:
        family, _ = resolve({"architectures": config.get("architectures"), "model_type": cfg.get("model_type")})
    except PlanInputError:
        return cfg
    filled = {canonical: cfg[legacy] for legacy, canonical in family.aliases
              if cfg.get(canonical) is None and cfg.get(legacy) is not None}
    return {**cfg, **filled} if filled else cfg


def checkpoint_weights(config: dict[str, Any], *, tp: int = 1, pp: int = 1, pp_rank: int | None = None,
                       mxfp4_layout: str = "checkpoint", cuda_allocator: bool = False) -> CheckpointWeights:
    """Weight bytes of one rank of a decoder checkpoint (``pp_rank`` None = the last stage, which holds the output
    head; stages hold vLLM's split of the layers, :func:`planner.kv.pipeline.vllm_pp_partition`).

    ``mxfp4_layout``: how MXFP4 MoE experts sit in memory: ``"checkpoint"`` (as stored) or
    ``"vllm-triton-hopper"`` (vLLM's Triton MXFP4 MoE backend on Hopper, :func:`mxfp4_triton_hopper_tensors`;
    ``mxfp4_moe_layout`` in planner/data/engine_budget.toml).

    ``cuda_allocator``: add what PyTorch's CUDA caching allocator counts beyond the tensors' bytes
    (:func:`cuda_allocated_bytes` per tensor, the class "allocator rounding"), as vLLM's "Model loading took"
    measures them (``torch.cuda.memory_allocated``); False (default) = the tensors' bytes alone.

    Raises:
        PlanInputError: a field is missing, or the architecture (MLA, Mamba, non-gated MLP) is not priced here.
    """
    cfg = _canonical_names(config, config.get("text_config") or config)
    if cfg.get("kv_lora_rank") or cfg.get("ssm_state_size") or cfg.get("mamba_d_state"):
        raise PlanInputError("config.model_type", cfg.get("model_type"),
                             msg("a decoder with GQA/MHA attention (MLA and Mamba weights are not priced yet)"))
    head_dim_cfg, global_dim = cfg.get("head_dim"), cfg.get("global_head_dim")
    if cfg.get("enable_moe_block") or (global_dim is not None and global_dim != head_dim_cfg):
        return _gemma4_weights(config, cfg, tp=tp, pp=pp)
    _refuse_unpriced_layout(cfg)
    hidden, layers = _whole(cfg, "hidden_size", minimum=1), _whole(cfg, "num_hidden_layers", minimum=1)
    heads = _whole(cfg, "num_attention_heads", minimum=1)
    kv_heads = _whole(cfg, "num_key_value_heads", heads, minimum=1)
    head_dim = _whole(cfg, "head_dim", hidden // heads, minimum=1)
    vocab = _whole(cfg if cfg.get("vocab_size") is not None else config, "vocab_size", minimum=1)
    dtype = str(cfg.get("torch_dtype") or config.get("torch_dtype") or cfg.get("dtype") or "bfloat16")
    wb = _DTYPE_BYTES.get(dtype.removeprefix("torch."), 2)
    method, scheme, ignore, experts_only = quant_scheme(config)
    model_type = str(cfg.get("model_type", ""))

    expert_key = routed_experts_key(cfg)
    experts = _whole(cfg, expert_key, minimum=1) if expert_key else 0
    if experts and cfg.get("moe_intermediate_size") is not None:
        inter = _whole(cfg, "moe_intermediate_size", minimum=1)
    else:
        inter = _whole(cfg, "intermediate_size", minimum=1)
    shared_inter = _whole(cfg, "shared_expert_intermediate_size", 0)

    rank = pp - 1 if pp_rank is None else pp_rank
    last, first = rank == pp - 1, rank == 0
    stage_layers = vllm_pp_partition(layers, pp)[rank]  # vLLM's get_pp_indices split

    def parts(name: str, rows: int, cols: int) -> tuple[int, int]:
        """(weight bytes, scale bytes) of one linear on this rank."""
        if scheme is None or _ignored(name, ignore) or (experts_only and name != "mlp.experts"):
            return rows * cols * wb, 0
        return scheme.tensor_bytes(rows, cols)

    def lin(name: str, rows: int, cols: int) -> int:
        return sum(parts(name, rows, cols))

    # the tensors vLLM allocates on this rank, (bytes, how many), for the caching allocator's rounding:
    # q, k, v fused in one qkv_proj and gate, up in one gate_up_proj (QKVParallelLinear, MergedColumnParallelLinear),
    # experts stacked in one w13 and one w2 per layer (FusedMoE); weights and their scales are separate tensors
    tensors: list[tuple[int, int]] = []

    def fused(count: int, *linears: tuple[str, int, int], times: int = 1) -> None:
        ps = [parts(*x) for x in linears]
        tensors.append((times * sum(p[0] for p in ps), count))
        if any(p[1] for p in ps):
            tensors.append((times * sum(p[1] for p in ps), count))

    classes: list[WeightClass] = []
    vpad = math.ceil(math.ceil(vocab / VOCAB_PADDING) * VOCAB_PADDING / tp)
    tied = _tied(cfg, config, model_type)
    if first or pp == 1:
        tensors.append((vpad * hidden * wb, 1))
        classes.append(WeightClass("embeddings", vpad * hidden, vpad * hidden * wb,
                                   f"vocab {vocab:,} padded to 64, / TP {tp}, x hidden {hidden:,}, {wb} B"))
    if last and not (tied and pp == 1):
        # vLLM keeps ParallelLMHead unquantized for every method priced here
        tensors.append((vpad * hidden * wb, 1))
        classes.append(WeightClass("output head", vpad * hidden, vpad * hidden * wb,
                                   f"untied output head, vocab / TP {tp} x hidden, {wb} B"))
    elif tied:
        classes.append(WeightClass("output head", 0, 0, "tied to the embeddings (tie_word_embeddings)"))

    q_out = heads * head_dim // tp
    kv_out = max(1, kv_heads // tp) * head_dim
    bias = bool(cfg.get("attention_bias")) or model_type in ("qwen2", "qwen2_moe", "gpt_oss")
    attn_params = hidden * q_out * 2 + hidden * kv_out * 2
    attn_bytes = (lin("self_attn.q_proj", q_out, hidden) + lin("self_attn.k_proj", kv_out, hidden)
                  + lin("self_attn.v_proj", kv_out, hidden) + lin("self_attn.o_proj", hidden, q_out))
    fused(stage_layers, ("self_attn.q_proj", q_out, hidden), ("self_attn.k_proj", kv_out, hidden),
          ("self_attn.v_proj", kv_out, hidden))
    fused(stage_layers, ("self_attn.o_proj", hidden, q_out))
    if bias:
        attn_params += q_out + 2 * kv_out
        attn_bytes += (q_out + 2 * kv_out) * wb
        tensors.append(((q_out + 2 * kv_out) * wb, stage_layers))
    classes.append(WeightClass("attention", attn_params * stage_layers, attn_bytes * stage_layers,
                               f"{stage_layers} layers x (q, o: {heads} heads; k, v: {kv_heads} KV heads) x "
                               f"{head_dim}, / TP {tp}"
                               + (f", {scheme.label}" if scheme and not experts_only else "")))
    if experts:
        i_rank = math.ceil(inter / tp)
        h_rank = hidden
        bias_b = wb
        triton = experts_only and mxfp4_layout == MXFP4_TRITON_HOPPER
        if mxfp4_layout not in (MXFP4_CHECKPOINT, MXFP4_TRITON_HOPPER):
            raise ValueError(f"mxfp4_layout {mxfp4_layout!r}: {MXFP4_CHECKPOINT!r} or {MXFP4_TRITON_HOPPER!r}")
        if triton:
            # vLLM mxfp4_round_up_hidden_size_and_intermediate_size, Triton branch: intermediate to 64, hidden kept;
            # convert_to_mxfp4_moe_kernel_format casts the expert biases to FP32
            i_rank, bias_b = _round_up(i_rank, 64), 4
            layout = [mxfp4_triton_hopper_tensors(2 * i_rank, h_rank), mxfp4_triton_hopper_tensors(h_rank, i_rank)]
            per_expert = sum(sum(t) for t in layout)
            for parts_ in layout:
                tensors.extend((experts * b, stage_layers) for b in parts_)
        else:
            per_expert = lin("mlp.experts", 2 * i_rank, h_rank) + lin("mlp.experts", h_rank, i_rank)
            fused(stage_layers, ("mlp.experts", 2 * i_rank, h_rank), times=experts)
            fused(stage_layers, ("mlp.experts", h_rank, i_rank), times=experts)
        tensors.append((hidden * experts * wb, stage_layers))
        e_params = experts * 3 * h_rank * i_rank
        e_bytes = experts * per_expert
        if model_type == "gpt_oss":
            e_params += experts * (2 * i_rank + h_rank)
            e_bytes += experts * (2 * i_rank + h_rank) * bias_b
            tensors += [(experts * 2 * i_rank * bias_b, stage_layers), (experts * h_rank * bias_b, stage_layers)]
        router = hidden * experts
        layout_note = (" as vLLM's Triton MXFP4 backend lays them out on Hopper (swizzled copy of the scales beside "
                       "the checkpoint's, FP32 biases)" if triton else "")
        classes.append(WeightClass("MoE experts", e_params * stage_layers, e_bytes * stage_layers,
                                   f"{stage_layers} layers x {experts} experts x 3 x hidden {h_rank:,} x intermediate "
                                   f"{i_rank:,} per rank" + (f", {scheme.label}" if scheme else "") + layout_note))
        classes.append(WeightClass("router", router * stage_layers, router * stage_layers * wb,
                                   "hidden x experts per layer, 16-bit (replicated)"))
        if shared_inter:
            s_rank = math.ceil(shared_inter / tp)
            sb = lin("mlp.shared_expert", 2 * s_rank, hidden) + lin("mlp.shared_expert", hidden, s_rank) + hidden * wb
            fused(stage_layers, ("mlp.shared_expert", 2 * s_rank, hidden))
            fused(stage_layers, ("mlp.shared_expert", hidden, s_rank))
            classes.append(WeightClass("shared expert", (3 * hidden * s_rank + hidden) * stage_layers,
                                       sb * stage_layers,
                                       f"3 x hidden x {shared_inter:,} / TP {tp} + gate"))
    else:
        i_rank = math.ceil(inter / tp)
        mb = lin("mlp.gate_up_proj", 2 * i_rank, hidden) + lin("mlp.down_proj", hidden, i_rank)
        fused(stage_layers, ("mlp.gate_up_proj", 2 * i_rank, hidden))
        fused(stage_layers, ("mlp.down_proj", hidden, i_rank))
        classes.append(WeightClass("MLP", 3 * hidden * i_rank * stage_layers, mb * stage_layers,
                                   f"{stage_layers} layers x 3 x hidden {hidden:,} x intermediate {inter:,} / TP {tp}"
                                   + (f", {scheme.label}" if scheme else "")))
    # per layer: input and post-attention norms; Gemma 2/3 add pre- and post-feedforward norms (Gemma2DecoderLayer);
    # Cohere runs attention and MLP in parallel from one input_layernorm (CohereDecoderLayer, commandr.py)
    per_layer = 4 if model_type in ("gemma2", "gemma3", "gemma3_text") else 1 if model_type in ("cohere", "cohere2") else 2
    norms = per_layer * hidden * stage_layers + (hidden if last else 0)
    if model_type in ("qwen3", "qwen3_moe", "gemma3", "gemma3_text"):
        norms += 2 * head_dim * stage_layers  # q_norm, k_norm
    classes.append(WeightClass("norms", norms, norms * wb, "per-layer and final RMSNorm weights (replicated)"))
    max_pos = _whole(cfg, "max_position_embeddings", 0)
    rot_dim = int(head_dim * float(cfg.get("partial_rotary_factor") or 1.0))
    rb = ROTARY_CACHE_BYTES.get(model_type, wb)
    classes.append(WeightClass("rotary cache", 0, max_pos * rot_dim * rb,
                               f"cos/sin cache: max_position_embeddings {max_pos:,} x rotary dim {rot_dim} x {rb} B"))
    tensors.append((max_pos * rot_dim * rb, 1))
    if cuda_allocator:
        extra = sum(n * (cuda_allocated_bytes(b) - b) for b, n in tensors if b)
        unsplit = sum(n for b, n in tensors if b and cuda_allocated_bytes(b) > b)
        classes.append(WeightClass(
            "allocator rounding", 0, extra,
            f"PyTorch's CUDA caching allocator: {unsplit:,} tensors of 10 MiB or more whose 2 MiB-rounded segment "
            f"leaves at most 1 MiB are counted whole (c10/cuda/CUDACachingAllocator.cpp, should_split)"))
    return CheckpointWeights(classes=tuple(classes), quant_method=method)
