"""The KV dtype a quantized checkpoint declares in ``quantization_config``.

vLLM's ``--kv-cache-dtype auto`` follows a checkpoint's KV scheme in two places
(vllm-project/vllm, read at the commits cited in docs/accounting.md):

* ModelOpt (``quant_method`` ``modelopt...``): ``get_kv_cache_quant_algo_string`` in
  ``vllm/utils/torch_utils.py``, called by ``resolve_kv_cache_dtype_string`` from
  ``EngineArgs.create_engine_config`` (``vllm/engine/arg_utils.py``). It takes the
  first of ``quantization.kv_cache_scheme``, ``kv_cache_scheme``,
  ``quantization.kv_cache_quant_algo``, ``kv_cache_quant_algo``; a scheme
  ``{dynamic: false, num_bits: 8, type: float}`` or the string ``FP8`` becomes
  ``fp8_e4m3`` (1 byte), a scheme ``{num_bits: 4, type: float}`` or ``NVFP4``
  becomes ``nvfp4`` (E2M1 + one E4M3 scale per 16: ``head_size // 2 +
  head_size // 16`` bytes per head, ``nvfp4_kv_cache_full_dim``; vLLM
  releases before NVFP4 KV support fall back to ``auto`` for it); anything
  else falls back to ``auto`` (the model dtype) with a warning.
* compressed-tensors: ``Attention.__init__`` in
  ``vllm/model_executor/layers/attention/attention.py`` sets the cache dtype to
  ``fp8`` when the quantization config has a ``kv_cache_scheme`` and the KV dtype
  is ``auto``.

kvplan prices FP8 (or NVFP4) where vLLM would store it, and refuses every other declared
KV scheme (naming the field), so that a config never silently gets a KV dtype
its checkpoint contradicts.
"""

from __future__ import annotations

from planner.hf.report import ConfigReader, text
from planner.errors import PlanInputError
from planner.kv.formats import KVFormat, get_format
from planner.messages import msg

_ADVICE = msg("or choose a KV format")


def checkpoint_kv_format(r: ConfigReader, cfg: dict) -> KVFormat | None:
    """The format vLLM's ``auto`` KV dtype follows the checkpoint to (FP8, NVFP4); None when none is declared.

    Raises:
        PlanInputError: ``quantization_config`` is not an object, or it declares a
            KV scheme vLLM would not store as FP8 (named field, allowed values).
    """
    q = cfg.get("quantization_config")
    if q is None:
        return None
    if not isinstance(q, dict):
        raise PlanInputError("config.quantization_config", type(q).__name__, msg("a JSON object"))
    method = q.get("quant_method")
    method_s = method if isinstance(method, str) else ""
    if method_s.lower().startswith("modelopt"):
        return _modelopt(r, q)
    declared = [k for k in ("kv_cache_scheme", "kv_cache_quant_algo") if q.get(k) is not None]
    if method_s == "compressed-tensors" and q.get("kv_cache_scheme") is not None:
        return _compressed_tensors(r, q)
    if declared:
        raise PlanInputError(f"config.quantization_config.{declared[0]}", text(q[declared[0]], 60),
                             msg("a KV scheme of a modelopt or compressed-tensors checkpoint (quant_method is "
                                 "{method}: vLLM's 'auto' KV dtype does not follow it); {advice}",
                                 method=text(method, 32), advice=_ADVICE))
    r.note("quantization_config", text(method, 32), "read",
           msg("no kv_cache_scheme / kv_cache_quant_algo: the checkpoint does not set the KV dtype"))
    return None


def _modelopt(r: ConfigReader, q: dict) -> KVFormat | None:
    """The first KV field vLLM reads, in its order (nested ``quantization`` first)."""
    inner = q["quantization"] if isinstance(q.get("quantization"), dict) else q
    where = "quantization_config.quantization" if inner is not q else "quantization_config"
    for key in ("kv_cache_scheme", "kv_cache_quant_algo"):
        for holder, at in ((inner, where), (q, "quantization_config")):
            if holder.get(key):
                return _modelopt_value(r, f"{at}.{key}", holder[key])
    r.note("quantization_config", "modelopt", "read",
           msg("no kv_cache_scheme / kv_cache_quant_algo: the checkpoint does not set the KV dtype"))
    return None


def _modelopt_value(r: ConfigReader, field: str, value: object) -> KVFormat:
    """ModelOpt's scheme or algorithm, mapped as vLLM maps it (FP8 or NVFP4), or refused."""
    fmt = None
    if isinstance(value, dict):
        dynamic, bits, kind = value.get("dynamic"), value.get("num_bits"), value.get("type")
        if kind == "float" and not isinstance(bits, bool) and (bits == 8 and dynamic is False or bits == 4):
            fmt, shown = ("fp8", "float, 8 bit, static") if bits == 8 else ("nvfp4", "float, 4 bit")
        else:
            shown = f"dynamic {text(dynamic, 10)}, type {text(kind, 20)}, num_bits {text(bits, 20)}"
    else:
        shown = text(value, 32)
        if isinstance(value, str) and value.lower() in ("fp8", "nvfp4"):
            fmt = value.lower()
    if fmt is None:
        raise PlanInputError(f"config.{field}", shown, msg("FP8 or NVFP4 (a scheme type float with num_bits 8 and "
                                                           "dynamic false, or num_bits 4): the KV dtypes vLLM's "
                                                           "'auto' follows; for any other it falls back to the model "
                                                           "dtype; {advice}", advice=_ADVICE))
    r.note(field, shown, "read", msg("the checkpoint declares {upper} KV (ModelOpt); vLLM's 'auto' KV dtype follows it ({value}, get_kv_cache_quant_algo_string)", upper=fmt.upper(), value='fp8_e4m3' if fmt == 'fp8' else 'nvfp4'))
    return get_format(fmt)


def _compressed_tensors(r: ConfigReader, q: dict) -> KVFormat:
    scheme = q["kv_cache_scheme"]
    if not isinstance(scheme, dict):
        raise PlanInputError("config.quantization_config.kv_cache_scheme", type(scheme).__name__, msg("a JSON object"))
    kind, bits = scheme.get("type"), scheme.get("num_bits")
    if kind != "float" or bits != 8 or isinstance(bits, bool):
        raise PlanInputError("config.quantization_config.kv_cache_scheme", f"type {text(kind, 20)}, "
                             f"num_bits {text(bits, 20)}", msg("type float, num_bits 8 (FP8 KV, the scheme kvplan "
                                                               "prices); {advice}", advice=_ADVICE))
    if q.get("kv_cache_quant_algo") is not None:
        r.note("quantization_config.kv_cache_quant_algo", text(q["kv_cache_quant_algo"], 32), "ignored",
               msg("compressed-tensors: vLLM reads kv_cache_scheme"))
    r.note("quantization_config.kv_cache_scheme", "float, 8 bit", "read", msg("the checkpoint declares FP8 KV (compressed-tensors); vLLM's 'auto' KV dtype follows it to fp8 (Attention.__init__)"))
    return get_format("fp8")
