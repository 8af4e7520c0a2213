"""The engine's own KV budget per GPU, predicted: vLLM's "Available KV cache memory" (and SGLang's pool).

vLLM V1 (``vllm/v1/worker/gpu_worker.py``, ``determine_available_memory``, v0.19.0): the worker profiles one
forward at ``max_num_batched_tokens`` and one sampler run at ``max_num_seqs`` (``gpu_model_runner.py``,
``profile_run`` / ``_dummy_run`` / ``_dummy_sampler_run``) inside ``memory_profiling`` and sets

    available = total x gpu_memory_utilization - (weights + torch peak increase + non-torch increase)

where ``total`` is the device memory as CUDA reports it (``torch.cuda.mem_get_info``), not the data sheet. CUDA
graphs are estimated but not subtracted in 0.19.0 (``VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS`` off). Under
pipeline parallelism each stage profiles its own layers; the engine sizes every stage's pool to the smallest
(the binding rank: the last stage, which holds the output head and runs the sampler).

SGLang (``python/sglang/srt/model_executor/model_runner.py``, ``profile_max_num_token``): the pool is the free
memory after loading minus ``F x (1 - mem_fraction_static)``, ``F`` the free memory before loading, i.e. ``(total -
memory in use before loading) x mem_fraction_static - weights``; kvplan takes the fraction as given (SGLang's
default heuristic, by GPU memory and TP in ``server_args.py``, is not modelled).

Every term is returned with its value and its source; the fitted constants live in
``planner/data/engine_budget.toml`` with the public measurements they come from.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from planner.errors import PlanInputError
from planner.hf.weights import checkpoint_weights
from planner.messages import msg
from planner.units import GiB

ENGINES = ("vllm", "sglang")
"""Engines whose budget kvplan predicts."""

_DATA = "planner/data/engine_budget.toml"


@lru_cache(maxsize=1)
def budget_constants() -> dict[str, Any]:
    """The fitted constants, per engine (``planner/data/engine_budget.toml``)."""
    text = resources.files("planner.data").joinpath("engine_budget.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


def supported_versions(engine: str) -> tuple[str, ...]:
    """The versions whose budget kvplan's constants hold for (empty: any, the engine's rule has no fit)."""
    return tuple(budget_constants().get(engine, {}).get("versions", ()))


@dataclass(frozen=True)
class BudgetTerm:
    """One term of the budget, bytes per GPU (positive = memory the KV pool does not get)."""

    name: str
    term_bytes: int
    source: str


@dataclass(frozen=True)
class EngineBudget:
    """The engine's predicted KV budget on the binding GPU, with its terms.

    Attributes:
        available_kv_bytes: what the engine would log as "Available KV cache memory" on the binding rank.
        requested_bytes: total memory x utilization (the engine's "requested memory").
        terms: requested, then every subtraction, in order.
        binding_rank: which rank binds ("the only rank", "last pipeline stage", ...).
        assumptions: sentences a plan shows beside the figure.
    """

    engine: str
    version: str
    available_kv_bytes: int
    requested_bytes: int
    terms: tuple[BudgetTerm, ...]
    binding_rank: str
    assumptions: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"engine": self.engine, "engine_version": self.version,
                "available_kv_bytes": self.available_kv_bytes, "requested_bytes": self.requested_bytes,
                "binding_rank": self.binding_rank,
                "terms": [{"name": t.name, "bytes": t.term_bytes, "source": t.source} for t in self.terms],
                "assumptions": list(self.assumptions)}


def _check_version(engine: str, version: str | None) -> str:
    if engine not in ENGINES:
        raise PlanInputError("engine", engine, msg("one of {choices}", choices=", ".join(ENGINES)))
    versions = supported_versions(engine)
    if version is None:
        return versions[-1] if versions else "any"
    if versions and version not in versions:
        raise PlanInputError("engine_version", version,
                             msg("one of {choices} (the versions whose budget is calibrated)",
                                 choices=", ".join(versions)))
    return version


def _text_config(config: dict) -> dict:
    return config.get("text_config") or config


def _need(cfg: dict, config: dict, key: str) -> int:
    """A positive whole number from the text config (or the top level), else a PlanInputError naming it."""
    value = cfg.get(key, config.get(key))
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise PlanInputError(f"config.{key}", value, msg("a whole number of at least 1 (needed to price the "
                                                          "engine's activation peak)"))
    return value


def vllm_activation_bytes(config: dict, *, tp: int, last_stage: bool, pp: int, max_num_batched_tokens: int,
                          max_num_seqs: int) -> tuple[int, str]:
    """Peak activation of vLLM 0.19's profiling run on one rank, and how it was priced."""
    k = budget_constants()["vllm"]
    cfg = _text_config(config)
    hidden = _need(cfg, config, "hidden_size")
    experts = cfg.get("num_local_experts") or cfg.get("num_experts") or cfg.get("n_routed_experts")
    inter = _need(cfg, config, "moe_intermediate_size" if experts and cfg.get("moe_intermediate_size")
                  else "intermediate_size")
    forward = k["forward_mlp_copies"] * max_num_batched_tokens * math.ceil(inter / tp) * 2 + k["forward_base_gib"] * GiB
    how = f"forward: {k['forward_mlp_copies']} x {max_num_batched_tokens:,} tokens x intermediate/TP x 2 B + " \
          f"{k['forward_base_gib']} GiB"
    peak = forward
    if last_stage:
        vocab = _need(cfg, config, "vocab_size")
        sampler = (k["sampler_bytes_per_logit"] * max_num_seqs * vocab
                   + k["retained_hidden_copies"] * max_num_batched_tokens * hidden * 2)
        if sampler >= forward:
            peak = sampler
            how = (f"sampler: {k['sampler_bytes_per_logit']} B x {max_num_seqs:,} sequences x vocab {vocab:,} + "
                   f"{k['retained_hidden_copies']} x {max_num_batched_tokens:,} tokens x hidden {hidden:,} x 2 B")
    if experts and not _mxfp4(config):
        topk = int(cfg.get("num_experts_per_tok") or cfg.get("moe_topk") or cfg.get("num_experts_per_token")
                   or cfg.get("top_k_experts") or 0)  # Gemma 4: top_k_experts
        if topk < 1:
            raise PlanInputError("config.num_experts_per_tok", topk or None, msg("at least 1 (experts per token)"))
        n = math.ceil(inter / tp)
        ws = max(2 * n, hidden) + n
        peak += max_num_batched_tokens * topk * ws * 2
        how += (f"; + fused-MoE workspaces {max_num_batched_tokens:,} tokens x top-{topk} x (max(2 x {n:,}, "
                f"{hidden:,}) + {n:,}) x 2 B")
    if config.get("vision_config") is not None:
        peak += k["multimodal_encoder_gib"] * GiB
        how += f"; + {k['multimodal_encoder_gib']} GiB vision encoder profile"
    if pp > 1:
        peak += k["pipeline_extra_gib"] * GiB
        how += f"; + {k['pipeline_extra_gib']} GiB under PP"
    return int(peak), how


def _mxfp4(config: dict) -> bool:
    q = config.get("quantization_config") or {}
    return str(q.get("quant_method", "")).lower() == "mxfp4"


def vllm_non_torch_bytes(tp: int, pp: int) -> tuple[int, str, str | None]:
    """Non-torch memory vLLM 0.19 adds during profiling on one rank, its source, and a caveat (or None)."""
    k = budget_constants()["vllm"]
    if tp == 1:
        key = "non_torch_gib_tp1" if pp == 1 else "non_torch_gib_tp1_pp"
        return int(k[key] * GiB), f"{k[key]} GiB measured at TP 1" + (" with PP" if pp > 1 else ""), None
    key = "non_torch_gib_tp2" if tp == 2 else "non_torch_gib_tp4"
    caveat = None
    if tp > 4 or (tp > 2 and tp != 4):
        caveat = msg("non-torch memory at TP {tp} not measured: the TP 4 figure is used", tp=tp)
    if pp > 1:
        caveat = msg("non-torch memory with both TP and PP not measured: the TP figure is used")
    return int(k[key] * GiB), f"{k[key]} GiB measured at TP {2 if tp == 2 else 4} (all-reduce buffers)", caveat


def vllm_server_batch(total_memory_bytes: int, gpu_name: str) -> tuple[int, int]:
    """vLLM's default profiling batch for ``vllm serve`` (``max_num_batched_tokens``, ``max_num_seqs``).

    ``vllm/engine/arg_utils.py`` (the usage-context defaults; checked by ``tests/engine/test_arg_utils.py``,
    ``test_defaults_with_usage_context``): on a device of at least 70 GiB whose name does not contain "a100",
    8,192 tokens and 1,024 sequences for the OpenAI server; otherwise 2,048 and 256.

    >>> vllm_server_batch(85_029_615_043, "NVIDIA H100 SXM5"), vllm_server_batch(85_899_345_920, "NVIDIA A100 80GB")
    ((8192, 1024), (2048, 256))
    """
    if total_memory_bytes >= 70 * GiB and "a100" not in gpu_name.lower():
        return 8192, 1024
    return 2048, 256


def predict_vllm_budget(config: dict, *, total_memory_bytes: int, total_source: str, gpu_memory_utilization: float,
                        tp: int = 1, pp: int = 1, version: str | None = None,
                        max_num_batched_tokens: int | None = None, max_num_seqs: int | None = None,
                        weights_bytes_per_gpu: int | None = None, gpu_name: str = "",
                        weights_source: str = "set by user") -> EngineBudget:
    """vLLM's "Available KV cache memory" on the binding rank of a TP x PP replica.

    ``weights_bytes_per_gpu`` overrides the checkpoint's weights (all ranks alike; ``weights_source`` says where it
    comes from). Without a batch, the profiling
    batch is ``vllm serve``'s default for the device (:func:`vllm_server_batch`; ``gpu_name`` as the driver names it).

    Raises:
        PlanInputError: an uncalibrated version, or a config whose weights or activations kvplan cannot price.
    """
    version = _check_version("vllm", version)
    k = budget_constants()["vllm"]
    default_tokens, default_seqs = vllm_server_batch(total_memory_bytes, gpu_name)
    tokens = max_num_batched_tokens or default_tokens
    seqs = max_num_seqs or default_seqs
    requested = math.floor(total_memory_bytes * gpu_memory_utilization)
    non_torch, nt_src, caveat = vllm_non_torch_bytes(tp, pp)
    best: tuple[int, tuple[BudgetTerm, ...], str] | None = None
    stages = [(pp - 1, "last pipeline stage" if pp > 1 else "every rank")]
    stages += [(r, "first pipeline stage" if r == 0 else f"pipeline stage {r}") for r in range(pp - 1)]
    for rank, label in stages:
        if weights_bytes_per_gpu is not None:
            w, w_src = weights_bytes_per_gpu, weights_source
        else:
            cw = checkpoint_weights(config, tp=tp, pp=pp, pp_rank=rank, mxfp4_layout=k["mxfp4_moe_layout"],
                                     cuda_allocator=True)
            w = cw.weight_bytes
            w_src = "checkpoint: " + "; ".join(f"{c.name} {c.weight_bytes / GiB:.2f} GiB ({c.rule})"
                                               for c in cw.classes if c.weight_bytes)
        act, act_src = vllm_activation_bytes(config, tp=tp, pp=pp, last_stage=rank == pp - 1,
                                             max_num_batched_tokens=tokens, max_num_seqs=seqs)
        avail = requested - w - act - non_torch
        terms = (BudgetTerm("requested memory (total x utilization)", requested,
                            f"{total_source} x {gpu_memory_utilization}"),
                 BudgetTerm("weights", w, w_src),
                 BudgetTerm("peak activation (profiling run)", act, act_src + f" ({_DATA})"),
                 BudgetTerm("non-torch memory", non_torch, nt_src + f" ({_DATA})"),
                 BudgetTerm("CUDA graphs", 0, f"not subtracted by vLLM {version} (estimated and logged only)"))
        if best is None or avail < best[0]:
            best = (avail, terms, label)
    avail, terms, label = best
    assumptions = [msg("vLLM {version} budget: total x utilization - weights - activation peak at {tokens} batched "
                       "tokens and {seqs} sequences - non-torch memory; constants fitted on public H100 start-ups",
                       version=version, tokens=f"{tokens:,}", seqs=f"{seqs:,}")]
    if caveat:
        assumptions.append(caveat)
    if weights_bytes_per_gpu is None and _mxfp4(config):
        assumptions.append(msg("MXFP4 experts priced as vLLM's Triton MXFP4 backend lays them out on Hopper (swizzled "
                               "scales beside the checkpoint's, FP32 biases); checked on two public gpt-oss-20b logs "
                               "(TP 1 -1.3 %, TP 2 -1.7 %); other MXFP4 backends (Blackwell, Marlin) pad differently"))
    return EngineBudget(engine="vllm", version=version, available_kv_bytes=int(avail), requested_bytes=requested,
                        terms=terms, binding_rank=label, assumptions=tuple(assumptions))


def sglang_before_load_bytes(tp: int, version: str) -> tuple[int, str, str | None]:
    """Device memory in use before SGLang loads the weights (CUDA context, NCCL), its source and a caveat (or None).

    Measured as the device total CUDA reports minus the log's "Load weight begin. avail mem=X GB" (GiB).
    """
    k = budget_constants()["sglang"][version]
    caveat = None
    if tp > 1:
        caveat = msg("memory in use before loading at TP {tp} not measured for SGLang (NCCL and all-reduce buffers "
                     "grow with TP): the TP 1 figure is used, so the pool may be high", tp=tp)
    source = f"{k['before_load_gib']} GiB measured at TP 1 ({k['before_load_source']})"
    return int(k["before_load_gib"] * GiB), source, caveat


def predict_sglang_budget(config: dict, *, total_memory_bytes: int, total_source: str, mem_fraction_static: float,
                          tp: int = 1, pp: int = 1, weights_bytes_per_gpu: int | None = None,
                          before_load_bytes: int | None = None, version: str | None = None,
                          weights_source: str = "set by user") -> EngineBudget:
    """SGLang's KV pool per GPU: ``(total - memory in use before loading) x mem_fraction_static - weights``.

    SGLang (``model_runner.py``: ``init_torch_distributed`` returns the free memory after NCCL init,
    ``min_per_gpu_memory``, which is ``total_gpu_memory`` in ``profile_max_num_token``,
    ``model_runner_kv_cache_mixin.py`` at sgl-project/sglang@001ccef) computes ``rest_memory =
    free after loading - total_gpu_memory x (1 - mem_fraction_static)``; free after loading is ``total_gpu_memory -
    weights``, so the pool is ``total_gpu_memory x mem_fraction_static - weights`` with ``total_gpu_memory`` the
    free memory before loading, not the device total. ``before_load_bytes`` overrides the measured figure;
    the weights are the checkpoint's plus what SGLang's loader adds (both in ``planner/data/engine_budget.toml``).

    Raises:
        PlanInputError: an uncalibrated version, or a config whose weights cannot be priced.
    """
    version = _check_version("sglang", version)
    k = budget_constants()["sglang"][version]
    caveat = None
    if before_load_bytes is None:
        before, before_src, caveat = sglang_before_load_bytes(tp, version)
    else:
        before, before_src = before_load_bytes, "set by user"
    extra = int(k["load_extra_gib"] * GiB)
    if weights_bytes_per_gpu is not None:
        w, w_src = weights_bytes_per_gpu, weights_source
    else:
        cw = checkpoint_weights(config, tp=tp, pp=pp)
        w = cw.weight_bytes + extra
        w_src = ("checkpoint: " + "; ".join(f"{c.name} {c.weight_bytes / GiB:.2f} GiB ({c.rule})"
                                            for c in cw.classes if c.weight_bytes)
                 + f"; + {k['load_extra_gib']} GiB SGLang's loader adds ({_DATA})")
    free_before = total_memory_bytes - before
    static = math.floor(free_before * mem_fraction_static)
    avail = static - w
    terms = (BudgetTerm("memory in use before loading", before, before_src + f" ({_DATA})"),
             BudgetTerm("static memory ((total - in use before loading) x mem_fraction_static)", static,
                         f"({total_source} - {before / GiB:.2f} GiB) x {mem_fraction_static}"),
             BudgetTerm("weights", w, w_src))
    assumptions = [msg("SGLang {version} pool: (total - memory in use before loading) x mem_fraction_static - "
                       "weights (model_runner.py, profile_max_num_token); constants from public H100 start-up logs",
                       version=version)]
    if caveat:
        assumptions.append(caveat)
    return EngineBudget(engine="sglang", version=version, available_kv_bytes=int(avail), requested_bytes=static,
                        terms=terms, binding_rank="every rank" if pp == 1 else "largest pipeline stage",
                        assumptions=tuple(assumptions))
