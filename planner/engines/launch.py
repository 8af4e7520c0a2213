"""Launch flags that realise a plan on a serving engine (vLLM, SGLang), each flag checked against the engine's source.

Flag spellings and accepted values, as the engines' current sources declare them:

* vLLM: ``vllm/engine/arg_utils.py`` ``EngineArgs.add_cli_args`` (vLLM main, V1 engine) derives each flag
  from a config field (``--tensor-parallel-size``, ``--pipeline-parallel-size``, ``--data-parallel-size``,
  ``--enable-expert-parallel``: ``ParallelConfig``; ``--max-model-len``: ``ModelConfig``; ``--max-num-seqs``,
  ``--max-num-batched-tokens``: ``SchedulerConfig``; ``--gpu-memory-utilization``, ``--kv-cache-memory-bytes``,
  ``--block-size``, ``--kv-cache-dtype``, ``--enable-prefix-caching``: ``CacheConfig``). ``--kv-cache-dtype``
  takes ``vllm/config/cache.py`` ``CacheDType`` (vllm-project/vllm@002f10e): auto, float16, bfloat16, fp8, fp8_e4m3, fp8_e5m2, fp8_inc,
  fp8_ds_mla, nvfp4_ds_mla, turboquant_*, int4/int8/fp8_per_token_head, nvfp4, nvfp4_4over6.
  ``--kv-cache-memory-bytes`` sets the KV budget per GPU and ignores ``--gpu-memory-utilization``.
* SGLang (sgl-project/sglang@001067f): ``python/sglang/srt/server_args.py`` ``ServerArgs`` fields, each flag
  the field name with dashes: ``--tp-size`` (alias ``--tensor-parallel-size``; ``--tp`` works only as
  argparse's prefix of it), ``--pp-size``, ``--dp-size``, ``--enable-dp-attention`` ("The dp size should be
  equal to the tp size"), ``--context-length``, ``--mem-fraction-static`` ("fraction of the memory used for
  static allocation (model weights and KV cache memory pool)"), ``--max-running-requests`` (for the whole
  server: each DP-attention rank takes ``max_running_requests // dp_size``), ``--kv-cache-dtype`` with
  choices auto, fp8_e5m2, fp8_e4m3, mxfp8, bf16, bfloat16, nvfp4, fp4_mx_block16, fp4_e2m1.

A KV format the engine does not accept gets no ``--kv-cache-dtype`` flag and a note saying so (the other flags
then do not realise the plan's KV format).
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from planner.engines.sglang_admission import SGLANG_DEFAULT_CHUNKED_PREFILL_SIZE, SGLANG_DEFAULT_PAGE_SIZE
from planner.engines.vllm_paging import DEFAULT_BLOCK_SIZE, DEFAULT_MAX_NUM_BATCHED_TOKENS
from planner.kv.models import NATIVE
from planner.message_field import Text
from planner.messages import msg

LAUNCH_SOURCES = (
    "vLLM: vllm/engine/arg_utils.py (EngineArgs.add_cli_args, vLLM main), vllm/config/cache.py at "
    "vllm-project/vllm@002f10e (CacheDType, CacheConfig.kv_cache_memory_bytes); SGLang: sgl-project/sglang@001067f "
    "python/sglang/srt/server_args.py (ServerArgs: tp_size, pp_size, dp_size, enable_dp_attention, context_length, "
    "mem_fraction_static, max_running_requests, chunked_prefill_size, kv_cache_dtype)"
)
"""Where the flag spellings and accepted values come from."""

VLLM_KV_CACHE_DTYPES: dict[str, str] = {
    NATIVE: "auto", "bf16": "bfloat16", "fp16": "float16", "fp8": "fp8", "fp8-e5m2": "fp8_e5m2", "nvfp4": "nvfp4",
}
"""kvplan KV format -> vLLM ``--kv-cache-dtype`` (``CacheDType``). Not accepted: fp32, mxfp8, mxfp4, int8, int4
(vLLM's int8/int4 are per-token-head scaled, not kvplan's groups of 128), q8_0, q4_0."""

SGLANG_KV_CACHE_DTYPES: dict[str, str] = {
    NATIVE: "auto", "bf16": "bf16", "fp8": "fp8_e4m3", "fp8-e5m2": "fp8_e5m2", "mxfp8": "mxfp8", "nvfp4": "nvfp4",
}
"""kvplan KV format -> SGLang ``--kv-cache-dtype``. Not accepted: fp32, fp16, mxfp4 (SGLang's FP4 choices name
other scale layouts), int8, int4, q8_0, q4_0."""

ENGINE_NAMES = {"vllm": "vLLM", "sglang": "SGLang"}


class LaunchFlags(BaseModel):
    """The command line that realises a plan on one engine.

    Attributes:
        engine: "vllm" or "sglang".
        command: the launch command, with ``MODEL`` for the checkpoint (kvplan does not know its path).
        flags: the flags, as argv tokens (``["--tensor-parallel-size", "8", ...]``).
        notes: what the flags assume, and any flag refused (a KV format the engine does not accept).
        source: where the spellings come from (:data:`LAUNCH_SOURCES`).
    """

    model_config = ConfigDict(frozen=True)

    engine: Literal["vllm", "sglang"]
    command: str
    flags: list[str] = Field(default_factory=list)
    notes: list[Text] = Field(default_factory=list)
    source: str = LAUNCH_SOURCES

    def text(self, multiline: bool = False) -> str:
        """The whole command: on one line, or (``multiline``) one flag and its value per line, joined by shell
        line continuations (what the Plan page shows to copy)."""
        if not multiline:
            return " ".join([self.command, *self.flags])
        lines = [self.command]
        for token in self.flags:
            if token.startswith("--"):
                lines.append(token)
            else:
                lines[-1] += " " + token
        return " \\\n  ".join(lines)


def _kv_dtype(engine: str, kv_format: str) -> tuple[str | None, str]:
    table = VLLM_KV_CACHE_DTYPES if engine == "vllm" else SGLANG_KV_CACHE_DTYPES
    value = table.get(kv_format)
    if value is not None:
        return value, ""
    return None, msg("{engine} has no --kv-cache-dtype for KV format {kv_format} (it accepts kvplan's {accepted}): "
                     "no flag printed, so these flags do not realise the plan's KV format",
                     engine=ENGINE_NAMES[engine], kv_format=kv_format, accepted=", ".join(table))


def launch_flags(engine: Literal["vllm", "sglang"], *, attention_parallelism: str, gpus_per_replica: int,
                 pipeline_parallel_size: int, request_tokens: int, kv_format: str, hit_rate: float,
                 gpu_memory_utilization: float, usable_kv_bytes: int, usable_measured: bool, weights_bytes_per_gpu: int,
                 hbm_bytes: int, sessions_per_engine: int, sessions_per_replica: int,
                 engine_admission: bool = False, engine_budget: bool = False,
                 mixture_of_experts: bool | None = None, windowed_layers: bool = True,
                 model_max_tokens: int | None = None) -> LaunchFlags:
    """The flags that realise a plan on ``engine``.

    Args:
        engine: "vllm" or "sglang".
        attention_parallelism: "tp" (the replica's GPUs split KV heads) or "dp" (DP attention: whole sessions per
            GPU; vLLM with expert parallelism).
        gpus_per_replica, pipeline_parallel_size: the replica's layout (TP = GPUs / PP).
        request_tokens: context + output tokens of one request (``--max-model-len`` / ``--context-length``).
        kv_format: kvplan's KV format id ("native" = the checkpoint's, the engines' ``auto``).
        hit_rate: prefix hit rate (> 0 turns vLLM's prefix caching on explicitly).
        gpu_memory_utilization: the plan's fraction of HBM (vLLM's own meaning).
        usable_kv_bytes: KV budget per GPU; with ``usable_measured`` vLLM is given it exactly
            (``--kv-cache-memory-bytes``).
        weights_bytes_per_gpu, hbm_bytes: for SGLang's ``--mem-fraction-static`` = (weights + KV) / HBM,
            rounded down to 3 decimals.
        sessions_per_engine: sessions one vLLM engine holds (the replica under tp, one DP rank under dp).
        sessions_per_replica: sessions of the replica (SGLang's ``--max-running-requests`` is for the server).
        engine_admission: the sessions are the engine's admission figure (vLLM: its block size and chunk are then
            assumed; SGLang: ``--max-running-requests`` is that figure, its page size and chunk assumed).
        engine_budget: ``usable_kv_bytes`` is the engine's own predicted budget at ``gpu_memory_utilization``
            (``--engine``): the engine is then given that fraction (vLLM's ``--gpu-memory-utilization``, SGLang's
            ``--mem-fraction-static``) and computes the same budget itself; ``usable_measured`` is then False.
        mixture_of_experts: the model has routed experts (from its config.json; None: not known). vLLM's
            ``--enable-expert-parallel`` is printed under DP attention unless the model is known to be dense.
        windowed_layers: vLLM pages some layers as sliding-window or chunked-local (they reserve their window plus
            one prefill chunk of ``--max-num-batched-tokens``); False: the chunk does not move the admission figure.
        model_max_tokens: the model's maximum length as vLLM derives it (None: unknown); a ``request_tokens`` past it
            gets a note: both engines refuse to start with a longer ``--max-model-len`` / ``--context-length``.
    """
    pp = pipeline_parallel_size
    width = gpus_per_replica // pp  # GPUs per pipeline stage
    notes: list[str] = []
    flags: list[str] = []
    if engine == "vllm":
        command = "vllm serve MODEL"
        if attention_parallelism == "dp" and width > 1:
            flags += ["--data-parallel-size", str(width), "--tensor-parallel-size", "1"]
            if mixture_of_experts is False:
                notes.append(msg("DP attention: {width} data-parallel ranks of one GPU each hold whole sessions; "
                                 "a dense model (no routed experts in its config.json) runs as {width} replicas, "
                                 "so no expert parallelism", width=width))
            else:
                flags += ["--enable-expert-parallel"]
                notes.append(msg("DP attention: {width} data-parallel ranks of one GPU each hold whole sessions; "
                                 "--enable-expert-parallel splits a mixture-of-experts model's experts over them (a "
                                 "dense model runs as {width} replicas)", width=width))
        else:
            flags += ["--tensor-parallel-size", str(width)]
        if pp > 1:
            flags += ["--pipeline-parallel-size", str(pp)]
        flags += ["--max-model-len", str(request_tokens)]
        if usable_measured:
            flags += ["--kv-cache-memory-bytes", str(max(usable_kv_bytes, 0))]
            notes.append(msg("--kv-cache-memory-bytes gives vLLM the plan's measured KV budget per GPU (it then "
                             "ignores --gpu-memory-utilization)"))
        else:
            flags += ["--gpu-memory-utilization", f"{gpu_memory_utilization:g}"]
        flags += ["--max-num-seqs", str(max(sessions_per_engine, 1)),
                  "--max-num-batched-tokens", str(DEFAULT_MAX_NUM_BATCHED_TOKENS), "--block-size", str(DEFAULT_BLOCK_SIZE)]
        if engine_admission:
            if windowed_layers:
                notes.append(msg("--max-num-batched-tokens {batched} and --block-size {block} are what the admission "
                                 "figure assumes (a sliding-window layer reserves its window plus one such prefill "
                                 "chunk)", batched=DEFAULT_MAX_NUM_BATCHED_TOKENS, block=DEFAULT_BLOCK_SIZE))
            else:
                notes.append(msg("--block-size {block} is what the admission figure assumes (a request takes whole "
                                 "blocks)", block=DEFAULT_BLOCK_SIZE))
        dtype, why = _kv_dtype(engine, kv_format)
        if dtype is not None:
            flags += ["--kv-cache-dtype", dtype]
        else:
            notes.append(why)
        if hit_rate > 0:
            flags += ["--enable-prefix-caching"]
        if model_max_tokens is not None and request_tokens > model_max_tokens:
            notes.append(msg("vLLM refuses to start with --max-model-len {tokens:,} above the maximum it derives for "
                             "this model ({maximum:,} tokens; vllm/config/model.py _get_and_verify_max_len) unless "
                             "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set, and the model was not trained for that length",
                             tokens=request_tokens, maximum=model_max_tokens))
    else:
        command = "python -m sglang.launch_server --model-path MODEL"
        flags += ["--tp-size", str(width)]
        if attention_parallelism == "dp" and width > 1:
            flags += ["--dp-size", str(width), "--enable-dp-attention"]
            notes.append(msg("--enable-dp-attention: SGLang's help lists DeepSeek-V2-style and Qwen 2/3 MoE models as "
                             "supported; --max-running-requests is for the server, {share} per DP rank",
                             share=max(sessions_per_replica, 1) // width))
        if pp > 1:
            flags += ["--pp-size", str(pp)]
        flags += ["--context-length", str(request_tokens)]
        if engine_budget:
            flags += ["--mem-fraction-static", f"{gpu_memory_utilization:g}"]
            notes.append(msg("--mem-fraction-static is the fraction SGLang's predicted pool was computed at"))
        else:
            static = (weights_bytes_per_gpu + max(usable_kv_bytes, 0)) / hbm_bytes
            fraction = math.floor(static * 1000) / 1000
            flags += ["--mem-fraction-static", f"{fraction:g}"]
            notes.append(msg("--mem-fraction-static = (weights + usable KV per GPU) / HBM = {value:.4f}, rounded "
                             "down: SGLang's static share holds weights and the KV pool, not activations",
                             value=static))
        flags += ["--max-running-requests", str(max(sessions_per_replica, 1))]
        if engine_admission:
            flags += ["--chunked-prefill-size", str(SGLANG_DEFAULT_CHUNKED_PREFILL_SIZE)]
            notes.append(msg("--max-running-requests is SGLang's admission figure: the full-length requests its token "
                             "pool holds at once at --context-length (page size {page}; a sliding-window pool holds "
                             "each request's window plus one --chunked-prefill-size chunk)",
                             page=SGLANG_DEFAULT_PAGE_SIZE))
        dtype, why = _kv_dtype(engine, kv_format)
        if dtype is not None:
            flags += ["--kv-cache-dtype", dtype]
        else:
            notes.append(why)
        if model_max_tokens is not None and request_tokens > model_max_tokens:
            notes.append(msg("SGLang refuses to start with --context-length {tokens:,} above the length it derives "
                             "from the model's config ({maximum:,} tokens as vLLM derives it; "
                             "sglang/srt/configs/model_config.py ModelConfig) unless "
                             "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 is set, and the model was not trained for "
                             "that length", tokens=request_tokens, maximum=model_max_tokens))
    if sessions_per_replica <= 0:
        notes.append(msg("not one session fits: the session limit is printed as 1, and the engine may refuse to "
                         "start"))
    return LaunchFlags(engine=engine, command=command, flags=flags, notes=notes)
