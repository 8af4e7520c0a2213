"""A checkpoint's config as the engine reads it: ``config.json`` plus the sidecar files vLLM reads for KV.

vLLM's ``get_config`` (``vllm/transformers_utils/config.py``, vllm-project/vllm at 0036026) takes the
``quantization_config`` of ``config.json`` ("ModelOpt 0.31.0 and after saves the quantization config in the
model config file"); when there is none and the checkpoint holds ``hf_quant_config.json`` ("ModelOpt 0.29.0 and
before saves the quantization config in a separate hf_quant_config.json"), it uses that file's contents as the
``quantization_config``. kvplan does the same, so an older ModelOpt FP8-KV checkpoint is priced in FP8.

ModelOpt's sidecar names its producer (``{"producer": {"name": "modelopt"}, "quantization": {...}}``) and no
``quant_method``; kvplan reads it as ``quant_method`` ``modelopt`` (the method vLLM's KV-dtype rule,
``get_kv_cache_quant_algo_string``, follows) and says so in the import report.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from planner.errors import PlanInputError
from planner.messages import msg
from planner.reads import read_capped

SIDECARS = ("hf_quant_config.json",)
"""Files beside config.json that vLLM reads and that can change the KV cache."""

SIDECAR_KEY = "_kvplan_sidecars"
"""Key kvplan adds to a config to name the sidecars merged into it (underscore keys are never layout fields)."""


def with_sidecars(config: dict[str, Any], sidecars: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """``config`` with the sidecars merged as vLLM merges them (a new dict; the inputs are not changed).

    Args:
        config: the parsed config.json.
        sidecars: file name -> parsed JSON object; names outside :data:`SIDECARS` are refused.

    Raises:
        PlanInputError: an unknown sidecar name, or a sidecar that is not a JSON object.
    """
    out = dict(config)
    used: list[str] = []
    for name, data in sidecars.items():
        if name not in SIDECARS:
            raise PlanInputError("checkpoint file", name, msg("config.json or one of {choices}",
                                                              choices=", ".join(SIDECARS)))
        if not isinstance(data, dict):
            raise PlanInputError(name, type(data).__name__, msg("a JSON object"))
        if out.get("quantization_config") is not None:
            used.append(msg("{name} (not used: config.json has quantization_config, which vLLM takes first)",
                            name=name))
            continue
        q = dict(data)
        producer = q.get("producer")
        if q.get("quant_method") is None and isinstance(producer, dict) and producer.get("name") == "modelopt":
            q["quant_method"] = "modelopt"
        out["quantization_config"] = q
        if q.get("quant_method") is None:  # vLLM's quantization rules key on quant_method (or ModelOpt's producer)
            used.append(msg("{name} (as quantization_config, vLLM get_config; it names no quant_method and no "
                            "ModelOpt producer, so no KV format is taken from it)", name=name))
        else:
            used.append(msg("{name} (as quantization_config, vLLM get_config)", name=name))
    if used:
        out[SIDECAR_KEY] = used
    return out


def read_checkpoint(path: str | os.PathLike, max_bytes: int) -> tuple[dict[str, Any], str]:
    """The config of a ``config.json`` file or of a checkpoint directory (config.json and its sidecars).

    Returns:
        (config, the name to show: the file's or the directory's).

    Raises:
        PlanInputError: no config.json in the directory, a file too large or not JSON.
    """
    from planner.hf.config import parse_config_text  # the parser lives with the config reader

    p = Path(path)
    if not p.is_dir():
        return parse_config_text(read_capped(p, max_bytes, "config", "config.json"), str(p)), p.name
    cfg_path = p / "config.json"
    if not cfg_path.is_file():
        raise PlanInputError("config", str(p), msg("a config.json (a regular file) or a checkpoint directory holding config.json"))
    config = parse_config_text(read_capped(cfg_path, max_bytes, "config", "config.json"), str(cfg_path))
    sidecars = {}
    for name in SIDECARS:
        side = p / name
        if side.is_file():
            sidecars[name] = parse_config_text(read_capped(side, max_bytes, "config", name), str(side))
    return with_sidecars(config, sidecars), p.name


def config_from_files(files: list[tuple[str, bytes | str]]) -> tuple[dict[str, Any], str]:
    """The config of several uploaded files: one config.json and the sidecars vLLM reads beside it.

    Args:
        files: (file name, contents) pairs; a name in :data:`SIDECARS` is a sidecar, any other the config.

    Returns:
        (config with the sidecars merged, the config file's name).

    Raises:
        PlanInputError: not exactly one config file, or a file that is not a JSON object.
    """
    from planner.hf.config import parse_config_text

    configs = [(n, data) for n, data in files if n not in SIDECARS]
    if len(configs) != 1:
        shown = ", ".join(n for n, _ in files)[:120] or msg("no file")
        raise PlanInputError("config", shown, msg("one config.json, with at most the sidecars {choices}",
                                                  choices=", ".join(SIDECARS)))
    name, data = configs[0]
    sidecars = {n: parse_config_text(d, n) for n, d in files if n in SIDECARS}
    return with_sidecars(parse_config_text(data, name), sidecars), name
