"""kvplan's predicted vLLM KV budget against 59 public vLLM v0.19.0 start-ups on H100 80 GB.

Data: llm-d-planner's accuracy campaign (https://github.com/llm-d-incubation/llm-d-planner/pull/205; files
vendored in bench/data/vllm-0.19.0-h100/, Apache-2.0, see SOURCES.md there). For each successful run:

* measured: the log's "Available KV cache memory" (under PP, the binding rank's budget: requested memory minus
  the last stage's "Total non KV cache memory", which sizes every stage's pool);
* kvplan (logged W): :func:`planner.engines.budget.predict_vllm_budget` given the log's weights (the budget
  model alone: total as CUDA reports it, activation peak, non-torch memory);
* kvplan (checkpoint): the same with weights from the checkpoint's config.json, where kvplan holds the config
  (catalog models; quantized variants take the model card's quantization_config);
* llm-d-planner: the campaign's own published prediction (results_predicted.csv), where it made one.

Runs used to fit planner/data/engine_budget.toml are marked "cal"; the rest are held out.

Usage: python bench/bench_engine_budget.py [--markdown]
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from planner.catalog.entries import catalog_config, get_gpu  # noqa: E402
from planner.engines.budget import predict_vllm_budget  # noqa: E402
from planner.plan import make_inputs, plan  # noqa: E402
from planner.units import GiB  # noqa: E402

DATA = ROOT / "bench" / "data" / "vllm-0.19.0-h100"

CALIBRATION = {  # (model, tp, pp, max_model_len, dtype, quantization) of the runs the constants were fitted on
    ("meta-llama/Llama-3.1-8B-Instruct", "1", "1", "8192", "torch.bfloat16", "None"),
    ("meta-llama/Llama-3.1-8B-Instruct", "2", "1", "8192", "torch.bfloat16", "None"),
    ("meta-llama/Llama-3.1-8B-Instruct", "4", "1", "8192", "torch.bfloat16", "None"),
    ("meta-llama/Llama-3.1-8B-Instruct", "1", "2", "8192", "torch.bfloat16", "None"),
    ("meta-llama/Llama-3.1-8B-Instruct", "1", "4", "8192", "torch.bfloat16", "None"),
    ("Qwen/Qwen2.5-7B-Instruct", "1", "1", "8192", "torch.bfloat16", "None"),
    ("google/gemma-2-9b-it", "1", "1", "8192", "torch.bfloat16", "None"),
    ("google/gemma-3-12b-it", "1", "1", "8192", "torch.bfloat16", "None"),
    ("microsoft/phi-4", "1", "1", "8192", "torch.bfloat16", "None"),
    ("codellama/CodeLlama-7b-hf", "1", "1", "8192", "torch.bfloat16", "None"),
    ("ibm-granite/granite-3.1-8b-instruct", "1", "1", "8192", "torch.bfloat16", "None"),
    ("openai/gpt-oss-20b", "2", "1", "8192", "torch.bfloat16", "mxfp4"),
    ("RedHatAI/Llama-3.3-70B-Instruct-fp8-dynamic", "2", "1", "8192", "torch.bfloat16", "compressed-tensors"),
    ("Qwen/Qwen2.5-72B-Instruct", "2", "1", "8192", "torch.bfloat16", "None"),
    ("google/gemma-2-2b-it", "1", "1", "8192", "torch.bfloat16", "None"),
    ("google/gemma-2-27b-it", "1", "1", "8192", "torch.bfloat16", "None"),
    ("google/gemma-3-4b-it", "1", "1", "8192", "torch.bfloat16", "None"),
    ("google/gemma-3-27b-it", "1", "1", "8192", "torch.bfloat16", "None"),
    ("mistralai/Mixtral-8x7B-Instruct-v0.1", "2", "1", "8192", "torch.bfloat16", "None"),
    ("Qwen/Qwen3-30B-A3B", "1", "1", "8192", "torch.bfloat16", "None"),
    ("Qwen/Qwen1.5-MoE-A2.7B", "1", "1", "8192", "torch.bfloat16", "None"),
    ("deepseek-ai/DeepSeek-V2-Lite-Chat", "1", "1", "8192", "torch.bfloat16", "None"),
    ("moonshotai/Kimi-VL-A3B-Instruct", "1", "1", "8192", "torch.bfloat16", "None"),
    ("moonshotai/Kimi-VL-A3B-Instruct", "2", "1", "8192", "torch.bfloat16", "None"),
    ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "4", "1", "8192", "torch.bfloat16", "None"),
}

_W8 = {"quant_method": "compressed-tensors", "ignore": ["lm_head"],
       "config_groups": {"group_0": {"weights": {"num_bits": 8, "type": "int", "strategy": "channel"}}}}
_FP8 = {"quant_method": "compressed-tensors", "ignore": ["lm_head"],
        "config_groups": {"group_0": {"weights": {"num_bits": 8, "type": "float", "strategy": "channel"}}}}
_W4 = {"quant_method": "compressed-tensors", "ignore": ["lm_head"],
       "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 128,
                                                 "symmetric": True}}}}
CHECKPOINTS = {  # quantized checkpoints kvplan prices from a catalog config + the model card's quantization_config
    "RedHatAI/Llama-3.3-70B-Instruct-fp8-dynamic": ("llama-3.1-70b", _FP8),
    "redhatai/Llama-3.3-70B-Instruct-quantized.w8a8": ("llama-3.1-70b", _W8),
    "RedHatAI/Qwen2.5-7B-Instruct-fp8-dynamic": ("qwen2.5-7b", _FP8),
    "RedHatAI/Qwen2.5-7B-Instruct-quantized.w8a8": ("qwen2.5-7b", _W8),
    "RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w8a8": ("llama-3.1-8b", _W8),
    "RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w4a16": ("llama-3.1-8b", _W4),
}


def _key(r: dict) -> tuple:
    return (r["model"], r["tp"], r["pp"], r["max_model_len"], r["dtype"], r["quantization"], r["kv_cache_dtype"])


def facts_config(f: dict) -> dict:
    """A minimal config (the fields the activation term reads) from bench/data's models.csv row."""
    cfg = {"vocab_size": int(f["vocab_size"]), "hidden_size": int(f["hidden_size"]),
           "intermediate_size": int(f["intermediate_size"])}
    if f["num_experts"]:
        cfg.update(num_experts=int(f["num_experts"]), moe_intermediate_size=int(f["moe_intermediate_size"]),
                   num_experts_per_tok=int(f["num_experts_per_tok"]))
    if f["quant_method"]:
        cfg["quantization_config"] = {"quant_method": f["quant_method"]}
    if f["multimodal"] == "1":
        cfg["vision_config"] = {}
    return cfg


def binding_measured(log_file: str, pp: int, logged: float, ranks: list[dict]) -> float:
    """The binding rank's budget: under PP, requested - the largest "Total non KV cache memory" of the stages."""
    if pp == 1:
        return logged
    mine = [r for r in ranks if r["log_file"] == log_file]
    return min(float(r["requested_gib"]) - float(r["total_non_kv_gib"]) for r in mine)


def rows() -> list[dict]:
    raw = [r for r in csv.DictReader(open(DATA / "results_raw.csv")) if r["status"] == "ok"]
    pred = {_key(p): p for p in csv.DictReader(open(DATA / "results_predicted.csv"))}
    facts = {f["model"]: f for f in csv.DictReader(open(DATA / "models.csv"))}
    ranks = list(csv.DictReader(open(DATA / "rank_budgets.csv")))
    h100 = get_gpu("h100-sxm")
    out = []
    for r in raw:
        tp, pp, u = int(r["tp"]), int(r["pp"]), float(r["gpu_memory_utilization"])
        f = facts[r["model"]]
        cfg = facts_config(f)
        w_logged = float(r["weight_memory_gib"])
        measured = binding_measured(r["log_file"], pp, float(r["kv_cache_memory_gib"]), ranks)
        total = h100.cuda_total_bytes
        b = predict_vllm_budget(cfg, total_memory_bytes=total, total_source="", gpu_memory_utilization=u, tp=tp,
                                gpu_name="NVIDIA H100 80GB HBM3",
                                pp=pp, weights_bytes_per_gpu=int(w_logged * GiB))
        ckpt = None
        cat, quant = CHECKPOINTS.get(r["model"], (f["catalog_id"] or None, None))
        if r["quantization"] == "fp8" and cat:
            quant = {"quant_method": "fp8"}  # --quantization fp8: online FP8 of every linear
        if cat and r["dtype"] in ("torch.bfloat16", "torch.float16"):
            full = dict(catalog_config(cat))
            if quant:
                full["quantization_config"] = quant
            try:
                ckpt = predict_vllm_budget(full, total_memory_bytes=total, total_source="", gpu_memory_utilization=u,
                                           tp=tp, pp=pp).available_kv_bytes / GiB
            except ValueError:
                ckpt = None
        p = pred.get(_key(r))
        llmd = float(p["pred_kv_cache_memory_gib"]) if p and p["pred_kv_cache_memory_gib"] else None
        label = r["model"].split("/")[-1][:34] + f" TP{tp}" + (f" PP{pp}" if pp > 1 else "") + \
            ("" if r["max_model_len"] == "8192" else f" L{r['max_model_len']}") + \
            ("" if r["dtype"] == "torch.bfloat16" else f" {r['dtype'][6:]}") + \
            ("" if r["quantization"] == "None" else f" q={r['quantization']}") + \
            ("" if r["kv_cache_dtype"] == "auto" else f" kv={r['kv_cache_dtype']}")
        cal = _key(r)[:6] in CALIBRATION
        out.append(dict(run=label, set="cal" if cal else "held-out", measured=measured,
                        kvplan=b.available_kv_bytes / GiB, ckpt=ckpt, llmd=llmd))
    return out


def plan_rows() -> list[dict]:
    """The acceptance command on every run of a catalog model in its shipped (16-bit) weights:
    ``kvplan plan --model M --gpu h100-sxm --gpus-per-replica TPxPP --pipeline-parallel-size PP
    --gpu-memory-utilization U --context L --hit-rate 0 --output-tokens 0 --engine vllm --json``."""
    ranks = list(csv.DictReader(open(DATA / "rank_budgets.csv")))
    facts = {f["model"]: f for f in csv.DictReader(open(DATA / "models.csv"))}
    out = []
    for r in csv.DictReader(open(DATA / "results_raw.csv")):
        if r["status"] != "ok":
            continue
        cat = facts[r["model"]]["catalog_id"]
        if not cat or r["quantization"] not in ("None", "mxfp4") \
                or r["dtype"] != "torch.bfloat16" or r["kv_cache_dtype"] != "auto":
            continue
        tp, pp = int(r["tp"]), int(r["pp"])
        res = plan(make_inputs(model_id=cat, gpu_id="h100-sxm", gpus_per_replica=tp * pp, pipeline_parallel_size=pp,
                               gpu_memory_utilization=float(r["gpu_memory_utilization"]),
                               context_tokens=int(r["max_model_len"]), hit_rate=0, output_tokens=0, engine="vllm"))
        measured = binding_measured(r["log_file"], pp, float(r["kv_cache_memory_gib"]), ranks)
        out.append(dict(run=f"{cat} TP{tp} PP{pp} L{r['max_model_len']}", measured=measured,
                        kvplan=res.usable_kv_bytes / GiB, concurrency=float(r["max_concurrency"]),
                        sessions=res.sessions_per_replica))
    return out


def _err(pred, meas):
    return None if pred is None else (pred - meas) / meas * 100


def _mae(vals):
    vals = [abs(v) for v in vals if v is not None]
    return (sum(vals) / len(vals), max(vals), len(vals)) if vals else (float("nan"), float("nan"), 0)


def main() -> None:
    md = "--markdown" in sys.argv
    rs = rows()
    if md:
        print("| run | set | vLLM (GiB) | kvplan, logged weights | error | kvplan, checkpoint weights | error | "
              "llm-d-planner | error |")
        print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rs:
        e1, e2, e3 = _err(r["kvplan"], r["measured"]), _err(r["ckpt"], r["measured"]), _err(r["llmd"], r["measured"])
        f = lambda v, s="": "-" if v is None else f"{v:.2f}{s}"  # noqa: E731
        g = lambda v: "-" if v is None else f"{v:+.1f} %"  # noqa: E731
        if md:
            print(f"| {r['run']} | {r['set']} | {r['measured']:.2f} | {f(r['kvplan'])} | {g(e1)} | {f(r['ckpt'])} | "
                  f"{g(e2)} | {f(r['llmd'])} | {g(e3)} |")
        else:
            print(f"{r['run']:52} {r['set']:8} {r['measured']:7.2f} {f(r['kvplan']):>7} {g(e1):>9} "
                  f"{f(r['ckpt']):>7} {g(e2):>9} {f(r['llmd']):>7} {g(e3):>9}")
    print()
    for name, sel in (("calibration", "cal"), ("held-out", "held-out"), ("all", None)):
        sub = [r for r in rs if sel is None or r["set"] == sel]
        a = _mae(_err(r["kvplan"], r["measured"]) for r in sub)
        b = _mae(_err(r["ckpt"], r["measured"]) for r in sub)
        c = _mae(_err(r["llmd"], r["measured"]) for r in sub)
        both = [r for r in sub if r["llmd"] is not None]
        d = _mae(_err(r["kvplan"], r["measured"]) for r in both)
        print(f"{name:12} kvplan (logged W): MAE {a[0]:.2f} %, max {a[1]:.2f} % on {a[2]} runs; "
              f"kvplan (checkpoint W): MAE {b[0]:.2f} %, max {b[1]:.2f} % on {b[2]}; "
              f"llm-d-planner: MAE {c[0]:.2f} % on {c[2]} (kvplan on those: {d[0]:.2f} %)")


def main_plan() -> None:
    print("\nkvplan plan ... --engine vllm --json on catalog models (16-bit weights from the shipped config.json):")
    print(f"{'run':34} {'vLLM GiB':>8} {'kvplan':>8} {'error':>8} {'vLLM max conc.':>14} {'sessions':>8}")
    errs = []
    for r in plan_rows():
        e = _err(r["kvplan"], r["measured"])
        errs.append(e)
        print(f"{r['run']:34} {r['measured']:8.2f} {r['kvplan']:8.2f} {e:+7.2f}% {r['concurrency']:14.2f} "
              f"{r['sessions']:8,}")
    m = _mae(errs)
    print(f"usable_kv_bytes: MAE {m[0]:.2f} %, max {m[1]:.2f} % on {m[2]} runs")


if __name__ == "__main__":
    main()
    main_plan()
