"""SGLang's admission arithmetic: its token pool, ``max_running_requests``, and full-length requests at once.

Each rule as SGLang's source states it (sgl-project/sglang, ``python/sglang/srt/model_executor/``):

* **token pool**: ``model_runner_kv_cache_mixin.py`` @001ccef, ``ModelRunnerKVCacheMixin.profile_max_num_token``:
  ``int(rest_memory x 2**30) // cell_size``, ``cell_size`` (``get_cell_size_per_token``) the bytes one token takes
  in every pooled layer of one GPU (K and V heads of the attention TP rank, or the MLA latent); the budget,
  ``rest_memory``, is :func:`planner.engines.budget.predict_sglang_budget`'s. Aligned down to ``page_size`` (default
  1, ``server_args.py``).
* **sliding-window pools**: same file, ``set_num_tokens_hybrid_swa``: with ``F`` the full-attention layers' bytes
  per token and ``S`` the sliding-window layers', ``full_tokens = int(capacity x (F + S) / (F + r x S))`` and
  ``swa_tokens = int(full_tokens x r)``, ``r = --swa-full-tokens-ratio`` (default 0.8, ``server_args.py``), both
  aligned to the page; ``max_total_num_tokens`` is then the full-attention pool's.
* **max_running_requests**: same file, ``init_memory``: the request pool holds ``min(max(int(max_total_num_tokens /
  context_len x 512), 2048), 4096)``; ``model_runner.py`` (``ModelRunner.initialize``) then runs
  ``min(max_total_num_tokens // 2, that pool)`` without the flag, ``min(flag // dp_size, that pool)`` with it.
  Releases of early 2025 sized the request pool one larger and printed 2,049 where this gives 2,048.
* **full-length requests at once** (kvplan's reading of the pools above): a request of ``M`` tokens holds ``M``
  slots of the full-attention pool; in the sliding-window pool it holds at most its window plus one prefill chunk
  (``--chunked-prefill-size``: 8,192 on 35-160 GB GPUs, ``server_args.py``), SGLang freeing the slots that leave
  the window. So at once ``min(full_tokens // M, swa_tokens // min(M, window + chunk), max_running_requests)``.

Layouts SGLang pools otherwise (Mamba / linear-attention state, ``handle_max_mamba_cache``; compressed or
chunked-local layers) are refused by name; the plan then keeps its steady state and says why.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from planner.errors import PlanInputError
from planner.kv.attention import SlidingWindowGroup
from planner.kv.models import ModelSpec
from planner.messages import msg

SGLANG_DEFAULT_PAGE_SIZE = 1
"""``--page-size`` default (``server_args.py``: ``page_size = 1`` unless the attention backend needs more)."""

SGLANG_DEFAULT_CHUNKED_PREFILL_SIZE = 8192
"""``--chunked-prefill-size`` SGLang picks for GPUs of 35 to 160 GB (H100, H200, A100: ``server_args.py``,
``_handle_gpu_memory_settings``); every H100 log read prints ``chunked_prefill_size=8192``."""

SGLANG_DEFAULT_SWA_FULL_TOKENS_RATIO = 0.8
"""``--swa-full-tokens-ratio`` default (``server_args.py``; printed ``swa_full_tokens_ratio=0.8`` in server_args)."""

REQUEST_POOL_MIN, REQUEST_POOL_MAX, REQUEST_POOL_PER_CONTEXT = 2048, 4096, 512
"""``init_memory``: the request pool ``clamp(int(tokens / context_len x 512), 2048, 4096)``."""


@dataclass(frozen=True)
class SGLangAdmission:
    """SGLang's admission arithmetic for one layout on one GPU, written once.

    Attributes:
        full_bytes_per_token: bytes one token takes in the (full-attention) pool on this GPU, every layer of it.
        swa_bytes_per_token: the sliding-window layers' bytes per token (0: one plain pool).
        window_tokens: the sliding window (0 without one).
        page_size, chunked_prefill_size, swa_full_tokens_ratio: the server settings assumed.
    """

    full_bytes_per_token: int
    swa_bytes_per_token: int = 0
    window_tokens: int = 0
    page_size: int = SGLANG_DEFAULT_PAGE_SIZE
    chunked_prefill_size: int = SGLANG_DEFAULT_CHUNKED_PREFILL_SIZE
    swa_full_tokens_ratio: float = SGLANG_DEFAULT_SWA_FULL_TOKENS_RATIO

    @property
    def cell_bytes(self) -> int:
        """``cell_size``: bytes per token over every pooled layer (the profile step's divisor)."""
        return self.full_bytes_per_token + self.swa_bytes_per_token

    def pool_tokens(self, kv_budget_bytes):
        """``(max_total_num_tokens, swa_tokens)`` for a budget (numpy values; swa_tokens 0 for one pool)."""
        budget = np.maximum(np.asarray(kv_budget_bytes, dtype=np.int64), 0)
        capacity = budget // self.cell_bytes
        page = self.page_size
        if not self.swa_bytes_per_token:
            return capacity // page * page, np.zeros_like(capacity)
        f, s, r = self.full_bytes_per_token, self.swa_bytes_per_token, self.swa_full_tokens_ratio
        full = np.floor(capacity * (f + s) / (f + r * s)).astype(np.int64)
        swa = np.floor(full * r).astype(np.int64)
        return full // page * page, swa // page * page

    def max_running_requests(self, max_total_num_tokens, context_len, flag: int | None = None, dp_size: int = 1):
        """SGLang's ``max_running_requests`` per DP worker (numpy values): the default without ``flag``
        (``--max-running-requests``), else ``min(flag // dp_size, max_total_num_tokens // 2)``."""
        tokens = np.asarray(max_total_num_tokens, dtype=np.int64)
        if flag is not None:
            return np.minimum(np.int64(flag // max(dp_size, 1)), tokens // 2)
        estimated = np.floor(tokens / np.asarray(context_len, dtype=np.float64) * REQUEST_POOL_PER_CONTEXT)
        estimated = np.clip(estimated.astype(np.int64), REQUEST_POOL_MIN, REQUEST_POOL_MAX)
        return np.minimum(estimated, tokens // 2)

    def swa_tokens_per_request(self, request_tokens):
        """Sliding-window pool slots one request of ``request_tokens`` holds at most."""
        m = np.asarray(request_tokens, dtype=np.int64)
        return np.minimum(m, self.window_tokens + self.chunked_prefill_size)

    def admitted(self, kv_budget_bytes, request_tokens):
        """Full-length requests of ``request_tokens`` tokens SGLang runs at once (``--context-length`` = that
        length): ``min(full_tokens // M, swa_tokens // min(M, window + chunk), max_running_requests)``."""
        m = np.maximum(np.asarray(request_tokens, dtype=np.int64), 1)
        full, swa = self.pool_tokens(kv_budget_bytes)
        out = np.minimum(full // m, self.max_running_requests(full, m))
        if self.swa_bytes_per_token:
            out = np.minimum(out, swa // self.swa_tokens_per_request(m))
        return np.maximum(out, 0).astype(np.int64)


def sglang_admission(model: ModelSpec, kv_format: str | None = None, tp: int = 1, pp: int = 1) -> SGLangAdmission:
    """SGLang's admission arithmetic for this model on one GPU (attention TP ``tp``, the largest of ``pp`` stages).

    Raises:
        PlanInputError: a layout SGLang pools otherwise (state, compressed or chunked-local layers), named.
    """
    from planner.engines.reconcile import token_layer_sets

    groups = [g for g in model.layout(kv_format) if g.in_pool]
    if any(g.role == "state" for g in groups):
        raise PlanInputError("engine", model.id, msg(
            "a model without Mamba or linear-attention state: SGLang sizes its state pool (max_mamba_cache_size) "
            "apart from the token pool, and kvplan does not model it yet"))
    capped = [g for g in groups if g.cap_tokens is not None]
    if any(g.tokens_per_entry != 1 for g in groups) or any(not isinstance(g, SlidingWindowGroup) for g in capped):
        raise PlanInputError("engine", model.id, msg(
            "full-attention, MLA or sliding-window layers: SGLang pools compressed or chunked-local layers otherwise"))
    sets = token_layer_sets(model, kv_format, tp, pp)
    if "sliding-window layers" in sets:
        return SGLangAdmission(full_bytes_per_token=sets["full-attention layers"],
                               swa_bytes_per_token=sets["sliding-window layers"],
                               window_tokens=max(int(g.cap_tokens) for g in capped))
    if capped:  # every layer windowed: one pool of window-capped layers, SGLang's all-SWA case
        raise PlanInputError("engine", model.id, msg(
            "a model with full-attention layers: SGLang's all-sliding-window pool is not modelled yet"))
    return SGLangAdmission(full_bytes_per_token=sets["all layers"])
