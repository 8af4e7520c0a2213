"""The catalog: models (with sources) and accelerators (memory as the device reports it).

Model layouts are built from the ``config.json`` files bundled in
``planner/data/models`` (copied with their sources, see SOURCES.md there) by
the same importer users run on their own configs. Accelerator memory is stored
in bytes, as ``nvidia-smi`` / ``rocm-smi`` report it where that is known,
otherwise the vendor's figure, and the entry says which.
"""

from __future__ import annotations

import dataclasses
import json
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterator, Mapping
from importlib import resources

from planner.hf.config import layout_from_config
from planner.errors import PlanInputError
from planner.kv.formats import KVFormat, get_format
from planner.kv.models import ModelSpec
from planner.units import GB, GiB, MiB
from planner.messages import Message, msg

# ---------------------------------------------------------------------------
# Models
# ---------------------------------------------------------------------------

V41_SOURCE = (
    "DeepSeek V4.1-Flash model card / technical report, as quoted publicly (docs/sources.md): "
    "890 B/token global KV, E2M1 main KV with one E4M3 scale per 16 channels, "
    "128-token window state in host RAM with a minute-level TTL; 552B total parameters. "
    "Layout: third-party copies of config.json (SOURCES.md)."
)


@dataclass(frozen=True)
class _Entry:
    config: str
    name: str
    total_params: int | None
    params_source: str
    weight_format: str = "bf16"
    reported: float | None = None
    native_label: str = "BF16 (the config's dtype; no KV dtype is published)"
    formats: tuple[str, str, str] | None = None  # main, indexer, ring
    ring_in_pool: bool = True
    notes: tuple[str, ...] = ()


_ENTRIES: dict[str, _Entry] = {
    "deepseek-v4.1-flash": _Entry(
        "deepseek-v4.1-flash", "DeepSeek V4.1-Flash", 552_000_000_000,
        "552B total backbone parameters, 8B active in prefill, 16B in decode (model card; docs/sources.md)",
        weight_format="fp8", reported=890.0,
        native_label="main KV NVFP4-style E2M1 + E4M3/16; indexer keys E2M1 + E8M0/32; window ring FP8 + E8M0/32",
        formats=("nvfp4", "mxfp4", "mxfp8"), ring_in_pool=False,
        notes=(
            "890 B/token = 2.5 compressed entries per token x (288 B main + 68 B indexer key): "
            "KV-source layers 2, 8, 14 compress 2:1 and layer 20 keeps every token (3 x 1/2 + 1).",
            "Each of the 40 layers keeps a 128-token window ring (528 B per token per layer): a fixed "
            "per-session state, in host RAM by default (V4.1 report; docs/sources.md); vLLM keeps none and replays.",
            "Weights default to FP8 for all 552B parameters, an upper bound: routed experts ship in FP4.",
        ),
    ),
    "deepseek-v4-flash": _Entry(
        "deepseek-v4-flash", "DeepSeek V4-Flash", 284_000_000_000, "284B total, 13B activated (HF model card)",
        weight_format="fp8", reported=3514.0,
        native_label="as shipped (3,514 B/token, DeepSeek V4.1 report); the architecture view is BF16",
        notes=("The reported 3,514 B/token prices growing KV in the shipped format; the window ring is "
               "priced from config.json in BF16.",),
    ),
    "deepseek-v4-pro": _Entry("deepseek-v4-pro", "DeepSeek V4-Pro", 1_600_000_000_000,
                              "1.6T total, 49B activated (HF model card)", weight_format="fp8"),
    "deepseek-v3": _Entry("deepseek-v3", "DeepSeek-V3", 671_000_000_000,
                          "671B total, 37B activated (DeepSeek-V3 technical report, arXiv:2412.19437)",
                          weight_format="fp8"),
    "deepseek-v2": _Entry("deepseek-v2", "DeepSeek-V2", 236_000_000_000,
                          "236B total, 21B activated (DeepSeek-V2 README / arXiv:2405.04434)"),
    "deepseek-llm-67b": _Entry("deepseek-llm-67b", "DeepSeek LLM 67B (\"DeepSeek-V1\")", 67_000_000_000,
                               "67B (DeepSeek LLM paper arXiv:2401.02954)"),
    "llama-3.1-8b": _Entry("llama-3.1-8b", "Llama 3.1 8B", 8_030_000_000, "8.03B (Meta Llama 3.1 model card)"),
    "llama-3.1-70b": _Entry("llama-3.1-70b", "Llama 3.1 70B", 70_600_000_000, "70.6B (Meta Llama 3.1 model card)"),
    "llama-3.1-405b": _Entry("llama-3.1-405b", "Llama 3.1 405B", 405_000_000_000, "405B (Meta Llama 3.1 model card)"),
    "qwen2.5-7b": _Entry("qwen2.5-7b", "Qwen2.5 7B", 7_615_616_512,
                         "7,615,616,512 (HF API safetensors total, Qwen/Qwen2.5-7B-Instruct)"),
    "qwen2.5-72b": _Entry("qwen2.5-72b", "Qwen2.5 72B", 72_700_000_000, "72.7B (Qwen2.5 model card)"),
    "qwen3-8b": _Entry("qwen3-8b", "Qwen3 8B", 8_200_000_000, "8.2B (Qwen3-8B model card)"),
    "qwen3-235b-a22b": _Entry("qwen3-235b-a22b", "Qwen3 235B-A22B", 235_000_000_000,
                              "235B total, 22B activated (Qwen3-235B-A22B model card)"),
    "mistral-7b-v0.1": _Entry("mistral-7b-v0.1", "Mistral 7B v0.1", 7_240_000_000,
                              "7.24B (Mistral 7B paper arXiv:2310.06825 / model card)"),
    "mixtral-8x7b-v0.1": _Entry("mixtral-8x7b-v0.1", "Mixtral 8x7B v0.1", 46_700_000_000,
                                "46.7B total, 12.9B active (Mixtral of Experts, arXiv:2401.04088)"),
    "gemma-2-9b": _Entry("gemma-2-9b", "Gemma 2 9B", 9_240_000_000, "9.24B (Gemma 2 model card)"),
    "gemma-3-27b": _Entry("gemma-3-27b", "Gemma 3 27B", 27_400_000_000, "27.4B (Gemma 3 model card)"),
    "gpt-oss-120b": _Entry("gpt-oss-120b", "gpt-oss-120b", 116_800_000_000,
                           "116.8B total, 5.1B active (gpt-oss model card, OpenAI 2025-08)", weight_format="mxfp4",
                           notes=("Weights priced as MXFP4 throughout; attention weights actually stay BF16.",)),
    "gpt-oss-20b": _Entry("gpt-oss-20b", "gpt-oss-20b", 20_900_000_000,
                          "20.9B total, 3.6B active (gpt-oss model card)", weight_format="mxfp4"),
    "nemotron-h-8b": _Entry("nemotron-h-8b", "Nemotron-H 8B (Mamba2 hybrid)", 8_000_000_000,
                            "8B (nvidia/Nemotron-H-8B-Base-8K model card)",
                            notes=("24 Mamba2 layers keep a fixed state per sequence (SSM state in FP32, vLLM's "
                                   "Nemotron-H default); 4 attention layers grow with length; "
                                   "24 MLP layers hold none.",)),
    "jamba-1.5-mini": _Entry("jamba-1.5-mini", "AI21 Jamba 1.5 Mini (Mamba1 hybrid)", 52_000_000_000,
                             "52B total, 12B active (AI21 Jamba 1.5 model card)",
                             notes=("28 Mamba1 layers keep a fixed state per sequence; 4 attention layers grow.",)),
    "deepseek-v3.2": _Entry("deepseek-v3.2", "DeepSeek-V3.2 (DSA)", 671_000_000_000,
                                "671B total, 37B activated (same backbone as DeepSeek-V3)", weight_format="fp8",
                                native_label="vLLM 'auto' = fp8_ds_mla (656 B latent); indexer keys FP8 + FP32 / 128",
                                notes=("Sparse attention reads index_topk 2,048 tokens per query but the cache keeps "
                                       "every token: MLA latent plus a 132 B indexer key per layer.",)),
    "gemma-4-26b-a4b": _Entry("gemma-4-26b-a4b", "Gemma 4 26B-A4B", 26_000_000_000,
                              "about 26B total, 4B active (the model's name; not checked against a card)",
                              notes=("Global layers: 2 KV heads x 512 with K = V (both stored); sliding layers: "
                                     "8 KV heads x 256 over a 1,024-token window.",)),
    "mimo-v2-flash": _Entry("mimo-v2-flash", "Xiaomi MiMo-V2-Flash", 309_000_000_000,
                            "309B total, 15B active (MiMo-V2 technical report arXiv:2601.02780)", weight_format="fp8",
                            notes=("9 global layers (4 KV heads) grow; 39 sliding layers (8 KV heads) keep 128 tokens. "
                                   "K is 192 wide and V 128.",)),
    "gemma-4-26b-a4b-nvfp4": _Entry("gemma-4-26b-a4b-nvfp4", "Gemma 4 26B-A4B NVFP4 (FP8 KV checkpoint)",
                                    26_000_000_000,
                                    "about 26B total, 4B active (the model's name; not checked against a card)",
                                    weight_format="nvfp4",
                                    native_label="FP8, as the checkpoint declares (kv_cache_scheme float 8 bit)",
                                    notes=("Weights priced as NVFP4 throughout, a lower bound: only the experts "
                                           "are NVFP4; attention, dense MLP, router, vision and lm_head stay BF16 "
                                           "(the ignore list).",
                                           "Same layers as Gemma 4 26B-A4B: global layers 2 KV heads x 512 with "
                                           "K = V (both stored); sliding layers 8 KV heads x 256 over 1,024 tokens.")),
}


def _read_config(stem: str) -> dict:
    text = resources.files("planner.data.models").joinpath(f"{stem}.config.json").read_text(encoding="utf-8")
    return json.loads(text)


def _build(model_id: str, e: _Entry, state_format: KVFormat | None = None,
           ssm_state_format: KVFormat | None = None) -> ModelSpec:
    cfg = _read_config(e.config)
    kw = {}
    if e.formats:
        kw = dict(main_format=get_format(e.formats[0]), indexer_format=get_format(e.formats[1]),
                  ring_format=get_format(e.formats[2]))
    layout = layout_from_config(cfg, ring_in_pool=e.ring_in_pool, state_format=state_format,
                                ssm_state_format=ssm_state_format, **kw)
    return ModelSpec(
        id=model_id,
        name=e.name,
        groups=layout.groups,
        reported_kv_bytes_per_token=e.reported,
        native_format_label=e.native_label,
        max_context_tokens=layout.max_context_tokens,
        total_params=e.total_params,
        weight_format=e.weight_format,
        source=(V41_SOURCE if model_id == "deepseek-v4.1-flash"
                else msg("config.json: planner/data/models/{config}.config.json (see SOURCES.md); parameters: {params}",
                         # the citation is catalog data, translated like the notes (a catalogue entry of its own)
                         config=e.config, params=Message(e.params_source))),
        notes=e.notes,
        config_report=layout.report,
        layer_pattern=layout.layer_pattern,
        num_attention_heads=layout.num_attention_heads,  # vLLM's TP rule (planner.kv.pipeline.check_tp_heads)
    )


@lru_cache(maxsize=1)
def models() -> dict[str, ModelSpec]:
    """Every catalog model by id (built once)."""
    return {mid: _build(mid, e) for mid, e in _ENTRIES.items()}


def model_with_state_formats(model_id: str, state_format: KVFormat | None = None,
                             ssm_state_format: KVFormat | None = None) -> ModelSpec:
    """A catalog model rebuilt with other Mamba / linear-attention state dtypes
    (vLLM ``--mamba-cache-dtype`` for the conv state, ``--mamba-ssm-cache-dtype``
    for the temporal state); None keeps the default.

    Raises:
        PlanInputError: unknown id.
    """
    get_model(model_id)
    return _build(model_id, _ENTRIES[model_id], state_format, ssm_state_format)


UPLOADED_PREFIX = "uploaded-"
"""Ids of models imported from a user's config.json start with this (never a catalog id)."""

_SESSION_MODELS: ContextVar[Mapping[str, ModelSpec]] = ContextVar("kvplan_session_models", default={})


@contextmanager
def session_models(extra: Mapping[str, ModelSpec]) -> Iterator[None]:
    """Within the block (this thread / context only), :func:`get_model` also knows ``extra``: models a user
    imported from their own config.json, ids starting with :data:`UPLOADED_PREFIX`. The catalog is unchanged, so
    one user's upload never reaches another's session, and every figure comes from the same functions.

    Raises:
        ValueError: an id that does not start with :data:`UPLOADED_PREFIX` (it could hide a catalog model).
    """
    bad = [m for m in extra if not m.startswith(UPLOADED_PREFIX)]
    if bad:
        raise ValueError(f"session model ids must start with {UPLOADED_PREFIX!r}: {bad}")
    token = _SESSION_MODELS.set(dict(extra))
    try:
        yield
    finally:
        _SESSION_MODELS.reset(token)


def uploaded_models() -> dict[str, ModelSpec]:
    """The models :func:`session_models` adds in this context (empty outside it)."""
    return dict(_SESSION_MODELS.get())


def get_model(model_id: str) -> ModelSpec:
    """The catalog model with this id (or, within :func:`session_models`, an imported one).

    Raises:
        PlanInputError: unknown id (the message lists the known ones).
    """
    extra = _SESSION_MODELS.get()
    if isinstance(model_id, str) and model_id in extra:
        return extra[model_id]
    try:
        return models()[model_id]
    except (KeyError, TypeError):
        raise PlanInputError("model", model_id, msg("one of {choices}", choices=", ".join(models()))) from None


# ---------------------------------------------------------------------------
# Accelerators
# ---------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class GPUSpec:
    """An accelerator.

    Attributes:
        id: lowercase slug (``h200``).
        name: display name.
        hbm_bytes: device memory in bytes, as the device reports it when
            ``memory_reported`` is True, else the vendor's figure.
        memory_reported: True when ``hbm_bytes`` is a reported total.
        vendor_capacity: the marketing figure ("141 GB").
        hbm_bandwidth_bytes_per_s: memory bandwidth, bytes/s (vendor).
        bf16_dense_flops: dense BF16 FLOP/s (vendor, no sparsity).
        source: data sheet / report the figures come from.
        cuda_total_bytes: device memory as CUDA reports it (``torch.cuda.mem_get_info``'s total, what an
            engine's ``gpu_memory_utilization`` multiplies), where a public log gives it; None elsewhere.
            On H100 80 GB it is 0.46 GiB below the nvidia-smi total.
        cuda_total_source: where ``cuda_total_bytes`` comes from.
    """

    id: str
    name: str
    hbm_bytes: int
    memory_reported: bool
    vendor_capacity: str
    hbm_bandwidth_bytes_per_s: float
    bf16_dense_flops: float
    source: str
    cuda_total_bytes: int | None = None
    cuda_total_source: str = ""


_NV = "NVIDIA data sheet"
_SMI = "reported total from public nvidia-smi output (e.g. https://github.com/modal-labs/modal-client/pull/2797)"


def _gpu(id, name, hbm_bytes, reported, vendor, bw_gbs, tflops, source) -> GPUSpec:
    return GPUSpec(id=id, name=name, hbm_bytes=hbm_bytes, memory_reported=reported, vendor_capacity=vendor,
                   hbm_bandwidth_bytes_per_s=bw_gbs * GB, bf16_dense_flops=tflops * 10**12, source=source)


GPUS: dict[str, GPUSpec] = {
    g.id: g
    for g in (
        _gpu("a100-40gb", "NVIDIA A100 40GB SXM4", 40_960 * MiB, True, "40 GB", 1_555, 312, f"{_NV}; {_SMI}"),
        _gpu("a100-80gb", "NVIDIA A100 80GB SXM4", 81_920 * MiB, True, "80 GB", 2_039, 312, f"{_NV}; {_SMI}"),
        _gpu("h100-sxm", "NVIDIA H100 SXM5", 81_559 * MiB, True, "80 GB", 3_350, 989, f"{_NV}; {_SMI}"),
        _gpu("h100-pcie", "NVIDIA H100 PCIe", 80 * GB, False, "80 GB", 2_000, 756,
             f"{_NV}; reported total not verified: vendor figure"),
        _gpu("h200", "NVIDIA H200 SXM", 143_771 * MiB, True, "141 GB", 4_800, 989, f"{_NV}; {_SMI}"),
        _gpu("b200", "NVIDIA B200 (HGX)", 183_359 * MiB, True, "180 GB", 8_000, 2_250, f"{_NV}; {_SMI}"),
        _gpu("b300", "NVIDIA B300 (HGX)", 288 * GB, False, "288 GB nameplate (~268-275 GB deployed)", 8_000, 2_250,
             f"{_NV}; reported total not found: vendor nameplate figure"),
        _gpu("gb200", "NVIDIA GB200 (per GPU)", 186 * GB, False, "186 GB", 8_000, 2_500,
             f"{_NV}; reported total not found: vendor figure"),
        _gpu("l40s", "NVIDIA L40S", 46_068 * MiB, True, "48 GB", 864, 362, f"{_NV}; {_SMI}"),
        _gpu("l4", "NVIDIA L4", 23_034 * MiB, True, "24 GB", 300, 121, f"{_NV}; {_SMI}"),
        _gpu("rtx-4090", "NVIDIA GeForce RTX 4090", 24 * GB, False, "24 GB", 1_008, 165,
             f"{_NV}; reported total not verified: vendor figure"),
        _gpu("rtx-5090", "NVIDIA GeForce RTX 5090", 32 * GB, False, "32 GB", 1_792, 209.5, f"{_NV}; vendor figure"),
        _gpu("mi300x", "AMD Instinct MI300X", 206_141_652_992, True, "192 GB", 5_300, 1_307,
             "AMD data sheet; reported total from public rocm-smi output"),
        _gpu("mi325x", "AMD Instinct MI325X", 256 * GB, False, "256 GB", 6_000, 1_307, "AMD data sheet; vendor figure"),
        _gpu("mi355x", "AMD Instinct MI355X", 288 * GB, False, "288 GB", 8_000, 2_517, "AMD data sheet; vendor figure"),
        _gpu("gaudi3", "Intel Gaudi 3", 128 * GB, False, "128 GB", 3_670, 1_835, "Intel data sheet; vendor figure"),
        _gpu("tpu-v5e", "Google TPU v5e", 16 * GB, False, "16 GB", 819, 197, "Google Cloud TPU docs; vendor figure"),
        _gpu("tpu-v5p", "Google TPU v5p", 95 * GB, False, "95 GB", 2_765, 459, "Google Cloud TPU docs; vendor figure"),
    )
}
"""Accelerators by id: vendor data sheets; reported totals from public nvidia-smi / rocm-smi output."""

H100_CUDA_TOTAL_BYTES = round(79.19 * GiB)
"""H100 SXM 80 GB as CUDA reports it: 79.19 GiB (85,029,615,043 B; the logs give 0.01 GiB, so +-5.4 MB), the
``total_memory=79.19GiB`` of vLLM 0.19.0's "worker init memory snapshot" on every H100 start-up of llm-d-planner's
accuracy campaign (https://github.com/llm-d-incubation/llm-d-planner/pull/205; bench/data/vllm-0.19.0-h100) and
PyTorch's "GPU 0 has a total capacity of 79.19 GiB" out-of-memory message; nvidia-smi's 81,559 MiB is 79.65 GiB."""

GPUS["h100-sxm"] = dataclasses.replace(
    GPUS["h100-sxm"], cuda_total_bytes=H100_CUDA_TOTAL_BYTES,
    cuda_total_source="79.19 GiB as CUDA reports it (vLLM 0.19.0 start-up logs, llm-d-planner accuracy campaign)")


def catalog_config(model_id: str) -> dict:
    """The catalog model's config.json, as shipped in planner/data/models (a fresh copy).

    Raises:
        PlanInputError: unknown model id.
    """
    e = _ENTRIES.get(model_id)
    if e is None:
        raise PlanInputError("model", model_id, msg("one of {choices}", choices=", ".join(_ENTRIES)))
    return _read_config(e.config)


def get_gpu(gpu_id: str) -> GPUSpec:
    """The accelerator with this id.

    Raises:
        PlanInputError: unknown id (the message lists the known ones).
    """
    try:
        return GPUS[gpu_id]
    except (KeyError, TypeError):
        raise PlanInputError("gpu", gpu_id, msg("one of {choices}", choices=", ".join(GPUS))) from None
