"""Pipeline-parallel stages and tensor-parallel splits as vLLM makes them.

* Stages: vLLM's ``get_pp_indices`` (``vllm/distributed/utils.py``, vllm-project/vllm): ``L // PP`` layers
  per stage, the ``L % PP`` remaining layers given one each to the stages before the last, from the
  second-to-last backwards (``for i in range(2, remaining + 2): partitions[-i] += 1``); the
  ``VLLM_PP_LAYER_PARTITION`` environment variable ("20,60") overrides it and must have ``PP`` entries
  summing to ``L``. Layers are split, not attention blocks: a stage holds whatever kinds its layers have.
* Tensor parallel: vLLM refuses a TP size that does not divide the attention heads
  (``ModelConfig.verify_with_parallel_config``, ``vllm/config/model.py``: "Total number of attention heads
  ({heads}) must be divisible by tensor parallel size ({tp})"), and ``QKVParallelLinear`` splits KV heads with
  ``divide``: ``H_kv % TP == 0`` when ``TP < H_kv``, else ``TP % H_kv == 0`` (heads replicated).
"""

from __future__ import annotations

from planner.errors import PlanInputError
from planner.messages import msg


def vllm_pp_partition(num_layers: int, pp: int, override: tuple[int, ...] | None = None) -> tuple[int, ...]:
    """Layers per pipeline stage, as vLLM's ``get_pp_indices`` splits ``num_layers`` over ``pp`` stages.

    >>> vllm_pp_partition(62, 4)
    (15, 16, 16, 15)
    >>> vllm_pp_partition(80, 3)
    (27, 27, 26)

    Raises:
        PlanInputError: an override of the wrong length or sum (vLLM raises ValueError).
    """
    if override is not None:
        if len(override) != pp or any(p < 1 for p in override):
            raise PlanInputError("pp_layer_partition", ",".join(map(str, override)),
                                 msg("{pp} positive layer counts, one per stage (VLLM_PP_LAYER_PARTITION)", pp=pp))
        if sum(override) != num_layers:
            raise PlanInputError("pp_layer_partition", ",".join(map(str, override)),
                                 msg("counts summing to the model's {layers} layers (VLLM_PP_LAYER_PARTITION)",
                                     layers=num_layers))
        return tuple(override)
    parts = [num_layers // pp] * pp
    for i in range(2, num_layers % pp + 2):
        parts[-i] += 1
    return tuple(parts)


def stage_ranges(partition: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    """``[start, end)`` of each stage.

    >>> stage_ranges((15, 16, 16, 15))
    ((0, 15), (15, 31), (31, 47), (47, 62))
    """
    out, start = [], 0
    for count in partition:
        out.append((start, start + count))
        start += count
    return tuple(out)


def parse_partition(text: str) -> tuple[int, ...]:
    """``"20,60"`` -> ``(20, 60)``.

    Raises:
        PlanInputError: not a comma-separated list of whole numbers.
    """
    try:
        return tuple(int(p) for p in str(text).split(","))
    except ValueError:
        raise PlanInputError("pp_layer_partition", str(text)[:60],
                             msg("comma-separated layer counts such as 20,60 (VLLM_PP_LAYER_PARTITION)")) from None


def check_tp_heads(tp: int, attention_heads: int | None, kv_heads: list[int]) -> None:
    """Refuse a TP size vLLM refuses (see the module docstring).

    Raises:
        PlanInputError: attention heads not divisible by TP, or KV heads and TP not dividing each other.
    """
    if attention_heads and attention_heads % tp:
        raise PlanInputError("tp", tp, msg("a divisor of the attention heads: vLLM refuses it (\"Total number of "
                                           "attention heads ({heads}) must be divisible by tensor parallel size "
                                           "({tp})\", ModelConfig.verify_with_parallel_config)",
                                           heads=attention_heads, tp=tp))
    for h in sorted(set(kv_heads)):
        if h and (h % tp if tp < h else tp % h):
            raise PlanInputError("tp", tp, msg("a divisor or a multiple of the {h} KV heads: vLLM's "
                                               "QKVParallelLinear splits them with divide(), which asserts an exact "
                                               "split", h=h))
