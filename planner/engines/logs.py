"""Read what vLLM and SGLang print at start-up about their KV cache: numbers as printed, nothing guessed.

A start-up log is user input: it is size-capped (:data:`MAX_LOG_BYTES`,
:data:`MAX_LINE_CHARS`), read line by line with linear-time patterns, never
executed or evaluated (a ``non-default args: {...}`` dict is matched key by key,
not parsed as Python). Every figure keeps the text it was read from, its line
and its rounding interval, so a comparison can tell "equal within what the
engine printed" from "different".

Lines read, across recent versions (the sources are the engines' log calls):

* vLLM V1 ``vllm/v1/core/kv_cache_utils.py`` (``_report_kv_cache_config``):
  ``GPU KV cache size: 178,880 tokens``, ``Maximum concurrency for 32,768 tokens
  per request: 33.04x``; older V1 and V0: ``# GPU blocks: 1381`` (V0: ``# GPU
  blocks: 1952, # CPU blocks: 2048``, ``# cuda blocks``);
* vLLM ``vllm/v1/worker/gpu_worker.py``: ``Available KV cache memory: 8.11 GiB``;
  V0 ``vllm/worker/worker.py``: ``Memory profiling results: ... kv_cache_size=3.81GiB
  ... gpu_memory_utilization=0.90`` and ``... the rest of the memory reserved for KV
  Cache is 1.57GiB``; ``Loading model weights took 14.9888 GB`` (computed as bytes /
  2**30 in V0's ``model_runner.py``: a GiB figure labelled GB; later versions print GiB);
* vLLM settings, where echoed: the engine config line (``max_seq_len=``,
  ``tensor_parallel_size=``, ``pipeline_parallel_size=``, ``kv_cache_dtype=``),
  ``non-default args`` and the ``vllm serve`` command (``--max-model-len``,
  ``--tensor-parallel-size`` / ``-tp``, ``--kv-cache-dtype``, ``--block-size``,
  ``--gpu-memory-utilization``), the ``Hybrid KV cache manager is disabled`` warning;
* SGLang ``python/sglang/srt/mem_cache/memory_pool.py``: ``KV Cache is allocated.
  [dtype: torch.bfloat16,] #tokens: 367404, K size: 8.23 GB, V size: 8.23 GB``
  (MLA: ``KV size``), where "GB" is ``1024**3`` bytes, i.e. GiB;
  ``max_total_num_tokens=..., context_len=..., available_gpu_mem=... GB`` and
  ``server_args`` / command flags (``tp_size``, ``--tp``, ``mem_fraction_static``,
  ``kv_cache_dtype``, ``context_length``).

A line that mentions the KV cache or memory but matches no pattern is kept in
:attr:`EngineLog.unread`, verbatim, never interpreted.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal

from planner.errors import PlanInputError
from planner.units import GiB
from planner.messages import msg

MAX_LOG_BYTES = 2_000_000
"""Largest log accepted, bytes of UTF-8 (a start-up log is a few hundred kB at most)."""
MAX_LINE_CHARS = 4_000
"""Longer lines are cut to this many characters before matching (patterns stay linear)."""
MAX_UNREAD = 200
"""Unread lines kept verbatim; more are counted."""

Engine = Literal["vllm", "sglang", "mixed", "unknown"]

_NUM = r"(\d{1,3}(?:,\d{3})+|\d+)"
_DEC = r"(\d+(?:\.\d+)?)"


@dataclass(frozen=True)
class Reading:
    """One figure as an engine printed it.

    Attributes:
        key: what it is (see :data:`KEYS`).
        value: the number (int for counts, float otherwise) or a string setting.
        printed: the text it was read from (``"8.11 GiB"``, ``"178,880"``).
        line_no: 1-based line in the log.
        engine: "vllm", "sglang" or "any" (a flag both engines share).
        bytes_lo, bytes_hi: for sizes, the bytes the printed figure may stand
            for (it is rounded to the digits shown); None otherwise.
        rank: the rank tag the line was printed under, normalised ("PP1", "TP0", "PP1 TP2"; "" when the
            line carries none), read from the engine's own prefix (vLLM ``(Worker_PP1 pid=..)``,
            ``(Worker_TP0_PP1 ..)``; SGLang ``[2026-01-31 13:50:39 TP2]``, ``[... DP0 TP0]``, ``[... PP1 TP0]``).
    """

    key: str
    value: float | int | str
    printed: str
    line_no: int
    engine: str
    bytes_lo: int | None = None
    bytes_hi: int | None = None
    rank: str = ""

    @property
    def pp_rank(self) -> int | None:
        """The pipeline stage of :attr:`rank` (None when the line names none)."""
        m = re.search(r"PP(\d+)", self.rank)
        return int(m.group(1)) if m else None

    @property
    def bytes_mid(self) -> int | None:
        """Bytes of the printed value itself (None for non-sizes)."""
        if self.bytes_lo is None:
            return None
        return int(round(float(self.value) * GiB))


KEYS: dict[str, str] = {
    "gpu_kv_cache_tokens": "vLLM 'GPU KV cache size' (tokens)",
    "num_gpu_blocks": "vLLM '# GPU blocks'",
    "num_cpu_blocks": "vLLM '# CPU blocks'",
    "concurrency_tokens": "tokens per request in vLLM's 'Maximum concurrency' line",
    "max_concurrency": "vLLM 'Maximum concurrency' (x)",
    "kv_budget": "vLLM KV budget per GPU ('Available KV cache memory', 'kv_cache_size')",
    "weights": "weights per GPU as logged (GiB, even where labelled GB)",
    "total_gpu_memory": "vLLM total_gpu_memory (GiB; V1's 'worker init memory snapshot ... total_memory=')",
    "non_kv_memory": "vLLM V1 'Total non KV cache memory' of one worker (GiB, its memory-profiling line)",
    "error_max_seq_len": "vLLM start-up error: the model's max seq len",
    "error_kv_tokens": "vLLM start-up error: tokens the KV cache can store (V0)",
    "error_needed": "vLLM V1 start-up error: KV cache one max-length request needs (GiB)",
    "error_budget": "vLLM V1 start-up error: the available KV cache memory (GiB)",
    "error_estimated_max_len": "vLLM V1 start-up error: the estimated maximum model length",
    "vllm_version": "vLLM version as printed",
    "max_num_batched_tokens": "vLLM max_num_batched_tokens",
    "hybrid_manager_off": "vLLM warning: hybrid KV cache manager disabled",
    "padding_layers": "vLLM warning: padding layers added to KV-cache groups",
    "kv_connector": "vLLM KV connector (--kv-transfer-config)",
    "sglang_tokens": "SGLang 'KV Cache is allocated' #tokens",
    "k_size": "SGLang K size per GPU (printed GB = GiB)",
    "v_size": "SGLang V size per GPU (printed GB = GiB)",
    "kv_size": "SGLang KV size per GPU, MLA (printed GB = GiB)",
    "sglang_kv_dtype": "SGLang KV dtype",
    "sglang_full_tokens": "SGLang sliding-window pool: tokens of the full-attention layers' pool",
    "sglang_swa_tokens": "SGLang sliding-window pool: tokens of the sliding-window layers' pool",
    "swa_pool_mem": "SGLang SWAKVPool mem usage, both pools (printed GB = GiB)",
    "mamba_slots": "SGLang Mamba cache: state slots (max_mamba_cache_size)",
    "mamba_conv_size": "SGLang Mamba cache: conv state size (printed GB = GiB)",
    "mamba_ssm_size": "SGLang Mamba cache: SSM state size (printed GB = GiB)",
    "prefix_caching": "vLLM enable_prefix_caching (engine args / config)",
    "prefix_caching_flag": "vLLM --enable-prefix-caching / --no-enable-prefix-caching",
    "mamba_cache_mode": "vLLM mamba_cache_mode (none, align, all)",
    "pp_partition": "vLLM pipeline stages' layer counts (VLLM_PP_LAYER_PARTITION, 'unevenly partitioned' line)",
    "sglang_mamba_ssm_dtype": "SGLang --mamba-ssm-dtype (SSM state dtype; default float32)",
    "page_size": "SGLang page size (tokens)",
    "dp": "SGLang data-parallel size",
    "dp_attention": "SGLang --enable-dp-attention",
    "max_total_num_tokens": "SGLang max_total_num_tokens",
    "context_len": "SGLang context_len",
    "sglang_max_running": "SGLang max_running_requests (scheduler summary line)",
    "sglang_free_before_load": "SGLang free GPU memory before loading the weights (printed GB = GiB)",
    "sglang_free_after_load": "SGLang free GPU memory after loading the weights (printed GB = GiB)",
    "sglang_max_running_flag": "SGLang --max-running-requests (set by the user)",
    "available_gpu_mem": "SGLang available_gpu_mem after allocation (printed GB = GiB)",
    "mem_fraction_static": "SGLang mem_fraction_static",
    "model": "model name or path",
    "max_model_len": "max_model_len / context length",
    "tp": "tensor-parallel size",
    "pp": "pipeline-parallel size",
    "kv_cache_dtype": "KV cache dtype setting",
    "block_size": "vLLM --block-size",
    "swap_space": "vLLM V0 --swap-space (GiB of CPU swap per GPU)",
    "gpu_memory_utilization": "vLLM gpu_memory_utilization",
}
"""Every key a :class:`Reading` may have, with what it means."""


def _int(text: str) -> int:
    return int(text.replace(",", ""))


def _size(value_text: str) -> tuple[float, int, int]:
    """A GiB figure as printed -> (value, lo bytes, hi bytes): half a unit of the last digit either side."""
    value = float(value_text)
    decimals = len(value_text.split(".")[1]) if "." in value_text else 0
    half = 0.5 * 10.0 ** (-decimals)
    return value, math.floor((value - half) * GiB), math.ceil((value + half) * GiB)


# (regex, engine, [(key, group, kind)]) with kind "int", "float", "size" (GiB, any label), "str", "flag".
_Spec = tuple[re.Pattern, str, tuple[tuple[str, int, str], ...]]


def _p(pattern: str, engine: str, *fields: tuple[str, int, str], flags: int = 0) -> _Spec:
    return re.compile(pattern, flags), engine, fields


_PATTERNS: tuple[_Spec, ...] = (
    # vLLM figures
    _p(r"GPU KV cache size:\s*" + _NUM + r"\s*tokens", "vllm", ("gpu_kv_cache_tokens", 1, "int")),
    _p(r"Maximum concurrency for\s*" + _NUM + r"\s*tokens per request:\s*" + _DEC + r"\s*x", "vllm",
       ("concurrency_tokens", 1, "int"), ("max_concurrency", 2, "float")),
    _p(r"(?:GPU|cuda) blocks:\s*" + _NUM, "vllm", ("num_gpu_blocks", 1, "int"), flags=re.I),
    _p(r"# CPU blocks:\s*" + _NUM, "vllm", ("num_cpu_blocks", 1, "int")),
    _p(r"Available KV cache memory:\s*" + _DEC + r"\s*Gi?B", "vllm", ("kv_budget", 1, "size")),
    _p(r"kv_cache_size=" + _DEC + r"\s*GiB", "vllm", ("kv_budget", 1, "size")),
    _p(r"reserved for KV Cache is\s*(-?\d+(?:\.\d+)?)\s*GiB", "vllm", ("kv_budget", 1, "size")),
    _p(r"Loading model weights took\s*" + _DEC + r"\s*Gi?B", "vllm", ("weights", 1, "size")),
    _p(r"total_gpu_memory\s*[=(]\s*" + _DEC + r"\s*GiB", "vllm", ("total_gpu_memory", 1, "size")),
    # V1 gpu_worker.py: "worker init memory snapshot: ..., total_memory=79.19GiB, ..." and, per worker,
    # "Memory profiling takes ... Total non KV cache memory: 6.34GiB; ..." (format_gib: GiB rounded to 2 decimals)
    _p(r"memory snapshot:.*?\btotal_memory=" + _DEC + r"\s*GiB", "vllm", ("total_gpu_memory", 1, "size")),
    _p(r"Total non KV cache memory:\s*" + _DEC + r"\s*GiB", "vllm", ("non_kv_memory", 1, "size")),
    _p(r"max seq len \(" + _NUM + r"\) is larger than the maximum number of tokens that can be stored in KV "
       r"cache \(" + _NUM + r"\)", "vllm", ("error_max_seq_len", 1, "int"), ("error_kv_tokens", 2, "int")),
    # V1 (vllm/v1/core/kv_cache_utils.py, check_enough_kv_cache_memory / _check_enough_kv_cache_memory):
    # "To serve at least one request with the models's max seq len (X), (Y GiB KV cache is needed, which is larger
    # than the available KV cache memory (Z GiB). [Based on the available memory, the estimated maximum model
    # length is M.]" ("models's" before 2026, "model's" after; "24.0 GiB" or "24.00 GiB")
    _p(r"max seq len \(" + _NUM + r"\),?\s*\(?" + _DEC + r"\s*GiB KV cache is needed, which is larger than the "
       r"available KV cache memory \(" + _DEC + r"\s*GiB\)", "vllm", ("error_max_seq_len", 1, "int"),
       ("error_needed", 2, "size"), ("error_budget", 3, "size")),
    _p(r"estimated maximum model length is\s*" + _NUM, "vllm", ("error_estimated_max_len", 1, "int")),
    _p(r"Model loading took\s*" + _DEC + r"\s*Gi?B", "vllm", ("weights", 1, "size")),
    _p(r"model weights take\s*" + _DEC + r"\s*GiB", "vllm", ("weights", 1, "size")),
    _p(r"total_gpu_memory \(" + _DEC + r"\s*GiB\) x gpu_memory_utilization \(" + _DEC + r"\)", "vllm",
       ("total_gpu_memory", 1, "size"), ("gpu_memory_utilization", 2, "float")),
    _p(r"vLLM API server version\s+v?(\d+\.\d+\.\d+[\w.+-]{0,40})", "vllm", ("vllm_version", 1, "str")),
    _p(r"LLM engine \(v(\d+\.\d+\.\d+[\w.+-]{0,40})\)", "vllm", ("vllm_version", 1, "str")),
    _p(r"[█▀▄ ]\s+version\s+(\d+\.\d+\.\d+[\w.+-]{0,40})", "vllm", ("vllm_version", 1, "str")),
    _p(r"--max-num-batched-tokens?[= ]\s*(\d+)", "vllm", ("max_num_batched_tokens", 1, "int")),
    _p(r"'max_num_batched_tokens':\s*(\d+)", "vllm", ("max_num_batched_tokens", 1, "int")),
    _p(r"\bmax_num_batched_tokens=(\d+)", "vllm", ("max_num_batched_tokens", 1, "int")),
    _p(r"Hybrid KV cache manager is disabled", "vllm", ("hybrid_manager_off", 0, "flag")),
    _p(r"Add (\d+) padding layers", "vllm", ("padding_layers", 1, "int")),
    _p(r"\"?kv_connector\"?\s*[:=]\s*[\"']?([A-Za-z0-9_]+)", "vllm", ("kv_connector", 1, "str")),
    # vLLM settings
    _p(r"\bmax_seq_len=(\d+)", "vllm", ("max_model_len", 1, "int")),
    _p(r"'max_model_len':\s*(\d+)", "vllm", ("max_model_len", 1, "int")),
    _p(r"\btensor_parallel_size[=:]\s*(\d+)", "vllm", ("tp", 1, "int")),
    _p(r"'tensor_parallel_size':\s*(\d+)", "vllm", ("tp", 1, "int")),
    _p(r"\bpipeline_parallel_size[=:]\s*(\d+)", "vllm", ("pp", 1, "int")),
    _p(r"'pipeline_parallel_size':\s*(\d+)", "vllm", ("pp", 1, "int")),
    _p(r"\bkv_cache_dtype[=:]\s*'?([A-Za-z0-9_]+)", "any", ("kv_cache_dtype", 1, "str")),
    _p(r"'kv_cache_dtype':\s*'([A-Za-z0-9_]+)'", "any", ("kv_cache_dtype", 1, "str")),
    _p(r"'block_size':\s*(\d+)", "vllm", ("block_size", 1, "int")),
    _p(r"\bgpu_memory_utilization[=:]\s*" + _DEC, "vllm", ("gpu_memory_utilization", 1, "float")),
    _p(r"'gpu_memory_utilization':\s*" + _DEC, "vllm", ("gpu_memory_utilization", 1, "float")),
    _p(r"\bmodel='([^'\s]{1,300})'", "vllm", ("model", 1, "str")),
    _p(r"'model(?:_tag)?':\s*'([^'\s]{1,300})'", "vllm", ("model", 1, "str")),
    _p(r"\bvllm serve\s+([^\s\\-][^\s\\]{0,299})", "vllm", ("model", 1, "str")),
    _p(r"--max-model-len[= ]\s*(\d+)", "vllm", ("max_model_len", 1, "int")),
    # the offline API, LLM(model="...", max_model_len=N): settings only, shared by both engines' Python APIs
    _p(r"^\s*model\s*=\s*[\"']([^\"'\s]{1,300})[\"']", "any", ("model", 1, "str")),
    _p(r"^\s*max_model_len\s*=\s*(\d+)", "any", ("max_model_len", 1, "int")),
    _p(r"(?:--tensor-parallel-size|-tp)[= ]\s*(\d+)", "vllm", ("tp", 1, "int")),
    _p(r"(?:--pipeline-parallel-size|-pp)[= ]\s*(\d+)", "vllm", ("pp", 1, "int")),
    _p(r"--block-size[= ]\s*(\d+)", "vllm", ("block_size", 1, "int")),
    _p(r"--swap-space[= ]\s*" + _DEC, "vllm", ("swap_space", 1, "float")),
    _p(r"\bswap_space[=:]\s*" + _DEC, "vllm", ("swap_space", 1, "float")),
    _p(r"--gpu-memory-utilization[= ]\s*" + _DEC, "vllm", ("gpu_memory_utilization", 1, "float")),
    _p(r"--kv-cache-dtype[= ]\s*([A-Za-z0-9_]+)", "any", ("kv_cache_dtype", 1, "str")),
    # SGLang figures
    _p(r"KV Cache is allocated\.\s*(?:dtype:\s*(?:torch\.)?([A-Za-z0-9_]+),\s*)?#tokens:\s*" + _NUM
       + r",\s*K size:\s*" + _DEC + r"\s*GB,\s*V size:\s*" + _DEC + r"\s*GB", "sglang",
       ("sglang_kv_dtype", 1, "str"), ("sglang_tokens", 2, "int"), ("k_size", 3, "size"), ("v_size", 4, "size")),
    _p(r"KV Cache is allocated\.\s*(?:dtype:\s*(?:torch\.)?([A-Za-z0-9_]+),\s*)?#tokens:\s*" + _NUM
       + r",\s*KV size:\s*" + _DEC + r"\s*GB", "sglang",
       ("sglang_kv_dtype", 1, "str"), ("sglang_tokens", 2, "int"), ("kv_size", 3, "size")),
    _p(r"(?<![_a-z])max_total_num_tokens=(\d+)", "sglang", ("max_total_num_tokens", 1, "int")),
    # sliding-window pools (python/sglang/srt/mem_cache/memory_pool.py SWAKVPool, model_runner.py)
    _p(r"Use sliding window memory pool\.\s*full_layer_tokens=(\d+),\s*swa_layer_tokens=(\d+)", "sglang",
       ("sglang_full_tokens", 1, "int"), ("sglang_swa_tokens", 2, "int")),
    _p(r"SWAKVPool mem usage:\s*" + _DEC + r"\s*GB,\s*swa size:\s*(\d+),\s*full size:\s*(\d+)", "sglang",
       ("swa_pool_mem", 1, "size"), ("sglang_swa_tokens", 2, "int"), ("sglang_full_tokens", 3, "int")),
    _p(r"\bfull_max_total_num_tokens=(\d+)", "sglang", ("sglang_full_tokens", 1, "int")),
    _p(r"\bswa_max_total_num_tokens=(\d+)", "sglang", ("sglang_swa_tokens", 1, "int")),
    # Mamba / linear-attention state pool (memory_pool.py MambaPool)
    _p(r"Mamba Cache is allocated\.\s*max_mamba_cache_size:\s*(\d+),\s*conv_state size:\s*" + _DEC
       + r"\s*GB,\s*ssm_state size:\s*" + _DEC + r"\s*GB", "sglang", ("mamba_slots", 1, "int"),
       ("mamba_conv_size", 2, "size"), ("mamba_ssm_size", 3, "size")),
    _p(r"'enable_prefix_caching':\s*(True|False)|\benable_prefix_caching=(True|False)", "vllm",
       ("prefix_caching", 1, "str"), ("prefix_caching", 2, "str")),
    _p(r"--(no-)?enable-prefix-caching\b", "vllm", ("prefix_caching_flag", 0, "str")),
    _p(r"'mamba_cache_mode':\s*'(\w{1,10})'|\bmamba_cache_mode=(\w{1,10})|--mamba-cache-mode[= ]\s*(\w{1,10})",
       "vllm", ("mamba_cache_mode", 1, "str"), ("mamba_cache_mode", 2, "str"), ("mamba_cache_mode", 3, "str")),
    _p(r"Hidden layers were unevenly partitioned:\s*\[([\d,\s]{1,400})\]", "vllm", ("pp_partition", 1, "str")),
    _p(r"VLLM_PP_LAYER_PARTITION=\s*([\d,]{1,400})", "vllm", ("pp_partition", 1, "str")),
    _p(r"\bmamba_ssm_dtype='(\w{1,20})'", "sglang", ("sglang_mamba_ssm_dtype", 1, "str")),
    _p(r"--mamba-ssm-dtype[= ]\s*(\w{1,20})", "sglang", ("sglang_mamba_ssm_dtype", 1, "str")),
    _p(r"\bpage_size=(\d+)", "sglang", ("page_size", 1, "int")),
    _p(r"--page-size[= ]\s*(\d+)", "sglang", ("page_size", 1, "int")),
    _p(r"\bdp_size=(\d+)", "sglang", ("dp", 1, "int")),
    _p(r"sglang\.launch_server.*?--dp(?:-size)?[= ]\s*(\d+)", "sglang", ("dp", 1, "int")),
    _p(r"--enable-dp-attention|\benable_dp_attention=True", "sglang", ("dp_attention", 0, "flag")),
    _p(r"\bcontext_len=(\d+)", "sglang", ("context_len", 1, "int")),
    _p(r"\bmax_prefill_tokens=\d+,\s*max_running_requests=(\d+)", "sglang", ("sglang_max_running", 1, "int")),
    _p(r"--max-running-requests[= ]\s*(\d+)", "sglang", ("sglang_max_running_flag", 1, "int")),
    _p(r"\bmax_running_requests=(\d+),\s*max_total_tokens=", "sglang", ("sglang_max_running_flag", 1, "int")),
    _p(r"\bavailable_gpu_mem=" + _DEC + r"\s*GB", "sglang", ("available_gpu_mem", 1, "size")),
    _p(r"Memory pool end\.\s*avail mem=" + _DEC + r"\s*GB", "sglang", ("available_gpu_mem", 1, "size")),
    _p(r"Load weight end\..*?mem usage=" + _DEC + r"\s*GB", "sglang", ("weights", 1, "size")),
    _p(r"Load weight begin\.\s*avail mem=" + _DEC + r"\s*GB", "sglang", ("sglang_free_before_load", 1, "size")),
    _p(r"Load weight end\..*?avail mem=" + _DEC + r"\s*GB", "sglang", ("sglang_free_after_load", 1, "size")),
    _p(r"\bmem_fraction_static[=:\s]\s*" + _DEC, "sglang", ("mem_fraction_static", 1, "float")),
    _p(r"--mem-fraction-static[= ]\s*" + _DEC, "sglang", ("mem_fraction_static", 1, "float")),
    _p(r"\btp_size=(\d+)", "sglang", ("tp", 1, "int")),
    _p(r"\bpp_size=(\d+)", "sglang", ("pp", 1, "int")),
    _p(r"sglang\.launch_server.*?--tp(?:-size)?[= ]\s*(\d+)", "sglang", ("tp", 1, "int")),
    _p(r"\bmodel_path='([^'\s]{1,300})'", "sglang", ("model", 1, "str")),
    _p(r"--model(?:-path)?[= ]\s*([^\s\\-][^\s\\]{0,299})", "any", ("model", 1, "str")),
    _p(r"\bcontext_length=(\d+)", "sglang", ("max_model_len", 1, "int")),
    _p(r"--context-length[= ]\s*(\d+)", "sglang", ("max_model_len", 1, "int")),
)

FIGURE_KEYS = frozenset({
    "gpu_kv_cache_tokens", "num_gpu_blocks", "max_concurrency", "kv_budget", "error_kv_tokens", "error_needed",
    "error_budget", "error_estimated_max_len", "sglang_tokens", "k_size", "kv_size", "max_total_num_tokens",
    "available_gpu_mem", "sglang_full_tokens", "sglang_swa_tokens", "swa_pool_mem", "mamba_slots",
})
"""Readings that are an engine's own KV figures: the engine a log is from is told by these lines, then by its
settings lines (commands, engine config), never by words in prose around them."""

_RANK = re.compile(
    r"^[^()\[\]]{0,60}?\((?:Worker|VllmWorker)(?:_(?P<a>(?:TP|PP|DP|EP)\d+(?:_(?:TP|PP|DP|EP)\d+)*))?"
    r"(?:\s+rank=(?P<r>\d+))?\s+pid=\d+\)"
    r"|^\s*\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?P<s>(?:\s+(?:TP|PP|DP|EP)\d+)+)\]")
"""A rank prefix in the engine's own format: vLLM ``(Worker_PP1 pid=42)``, ``(Worker_TP0_PP1 pid=42)``,
``(VllmWorker rank=1 pid=42)``; SGLang ``[2026-01-31 13:50:39 TP2]``, ``[... DP0 TP0]``, ``[... PP1 TP3]``."""


def _rank_of(line: str) -> str:
    m = _RANK.match(line)
    if not m:
        return ""
    if m.group("a"):
        return m.group("a").replace("_", " ")
    if m.group("r"):
        return f"rank {m.group('r')}"
    if m.group("s"):
        return " ".join(m.group("s").split())
    return ""


_UNIT = re.compile(r"\s*(GiB|GB)")
_KV_WORDS = re.compile(r"kv|cache|block|token|concurren|memory|\bmem\b|GiB|\bGB\b", re.I)


@dataclass(frozen=True)
class EngineLog:
    """What a start-up log says about the KV cache.

    Attributes:
        engine: "vllm", "sglang", "mixed" (markers of both) or "unknown".
        readings: every figure read, in line order.
        unread: ``(line_no, text)`` of lines that mention KV, caches, blocks,
            tokens or memory but match no pattern (at most :data:`MAX_UNREAD`).
        num_unread: all such lines (``len(unread)`` or more).
        num_lines: lines in the log.
        first_line: its first non-blank line, printable, at most 60 characters (names a log that is from no
            engine kvplan reads).
    """

    engine: Engine
    readings: tuple[Reading, ...]
    unread: tuple[tuple[int, str], ...]
    num_unread: int
    num_lines: int
    first_line: str = ""

    def all(self, key: str) -> tuple[Reading, ...]:
        """Every reading of ``key``, in line order."""
        return tuple(r for r in self.readings if r.key == key)

    def first(self, key: str) -> Reading | None:
        """The first reading of ``key`` (None when the log does not print it)."""
        return next((r for r in self.readings if r.key == key), None)

    def conflicts(self) -> dict[str, tuple[Reading, ...]]:
        """Keys printed more than once with different values (e.g. one line per TP rank)."""
        out = {}
        for key in dict.fromkeys(r.key for r in self.readings):
            found = self.all(key)
            if len({r.value for r in found}) > 1:
                out[key] = found
        return out


def parse_engine_log(text: str) -> EngineLog:
    """Read a vLLM or SGLang start-up log (see the module docstring for the lines read).

    Args:
        text: the log, as text (at most :data:`MAX_LOG_BYTES` bytes of UTF-8).

    Raises:
        PlanInputError: not text, or over the size cap.
    """
    if not isinstance(text, str):
        raise PlanInputError("log", type(text).__name__, msg("text (a vLLM or SGLang start-up log)"))
    if len(text) > MAX_LOG_BYTES or len(text.encode("utf-8", errors="replace")) > MAX_LOG_BYTES:
        raise PlanInputError("log", f"{len(text):,} characters",
                             msg("at most {max_log_bytes:,} bytes (paste the start-up part of the log)",
                                 max_log_bytes=MAX_LOG_BYTES))
    readings: list[Reading] = []
    unread: list[tuple[int, str]] = []
    num_unread = 0
    lines = text.splitlines()
    for no, raw in _logical_lines(lines):
        line = raw[:MAX_LINE_CHARS]
        rank = _rank_of(line)
        matched = False
        for pattern, engine, fields in _PATTERNS:
            m = pattern.search(line)
            if not m:
                continue
            matched = True
            for key, group, kind in fields:
                for r in _reading(key, m, group, kind, no, engine, rank):
                    if not any(o.line_no == no and o.key == r.key and o.value == r.value for o in readings[-8:]):
                        readings.append(r)
        if not matched and _KV_WORDS.search(line):
            num_unread += 1
            if len(unread) < MAX_UNREAD:
                unread.append((no, "".join(c if c.isprintable() else " " for c in line).strip()))
    first = next((line.strip() for line in lines if line.strip()), "")[:60]
    return EngineLog(engine=_engine_of(readings), readings=tuple(readings), unread=tuple(unread),
                     num_unread=num_unread, num_lines=len(lines),
                     first_line="".join(c if c.isprintable() else " " for c in first))


def _logical_lines(lines: list[str]):
    """``(line number, text)`` for each line, a shell command continued with a trailing backslash joined into
    one line (numbered by its first line) so that its flags are read together (``--tp-size 2`` on the line after
    ``sglang.launch_server \\``); joining stops at :data:`MAX_LINE_CHARS`."""
    i = 0
    while i < len(lines):
        no, parts, size = i + 1, [lines[i]], len(lines[i])
        while parts[-1].rstrip().endswith("\\") and i + 1 < len(lines) and size < MAX_LINE_CHARS:
            parts[-1] = parts[-1].rstrip()[:-1]
            i += 1
            parts.append(lines[i])
            size += len(lines[i])
        yield no, parts[0] if len(parts) == 1 else " ".join(x.strip() for x in parts)
        i += 1


def _engine_of(readings: list[Reading]) -> Engine:
    """The engine whose own KV lines the log holds; "mixed" when it holds figure lines of both engines.

    Settings lines (a ``vllm serve`` or ``sglang.launch_server`` command, an engine config) decide only when
    no figure line does; a line of prose matches no pattern and so decides nothing.
    """
    for keys in (FIGURE_KEYS, None):
        found = {r.engine for r in readings if r.engine != "any" and (keys is None or r.key in keys)}
        if len(found) == 2:
            return "mixed"
        if found:
            return next(iter(found))  # type: ignore[return-value]
    return "unknown"


def _reading(key: str, m: re.Match, group: int, kind: str, line_no: int, engine: str, rank: str = "") -> list[Reading]:
    if kind == "flag":
        return [Reading(key, 1, m.group(0), line_no, engine, rank=rank)]
    text = m.group(group)
    if text is None:
        return []
    if kind == "int":
        return [Reading(key, _int(text), text, line_no, engine, rank=rank)]
    if kind == "float":
        return [Reading(key, float(text), text, line_no, engine, rank=rank)]
    if kind == "size":
        value, lo, hi = _size(text)
        label = _UNIT.match(m.string, m.end(group))
        return [Reading(key, value, f"{text} {label.group(1) if label else 'GiB'}", line_no, engine, lo, hi, rank)]
    return [Reading(key, text, text, line_no, engine, rank=rank)]
