"""Live probe, the parts that need no torch: pool layout, memory cap arithmetic,
ProbeResult validation and JSON, CLI errors, import hygiene.

Expected values are worked by hand next to each number (OCP MX v1.0, NVIDIA's NVFP4 blog, docs/sources.md).
"""

import copy
import json
import subprocess
import sys

import pytest

from planner.cli import main
from planner.errors import PlanInputError
from planner.probe import ProbeResult, load_probe_result, make_probe_result, plan_pool, tokens_that_fit
from planner.probe.layout import PROBE_FORMATS, vectors_of

V41 = "deepseek-v4.1-flash"


# ---------------------------------------------------------------------------
# Layout
# ---------------------------------------------------------------------------

def test_v41_million_tokens_is_890_bytes_per_token():
    # layer 20: 1,000,000 entries; layers 2, 8, 14: 500,000 each; each entry 288 B main + 68 B indexer
    # 356 x (1,000,000 + 3 x 500,000) = 890,000,000 B; 1,000,000 / 16 = 62,500 whole blocks
    layout = plan_pool(V41, 1_000_000, "nvfp4")
    shapes = {g.name: g.shape for g in layout.groups}
    assert shapes == {
        "compressed 1/1 main": (1, 62_500, 16, 288),
        "compressed 1/1 indexer keys": (1, 62_500, 16, 68),
        "compressed 1/2 main": (3, 62_500, 8, 288),       # 2:1 compression: 8 entries per 16-token block
        "compressed 1/2 indexer keys": (3, 62_500, 8, 68),
    }
    assert layout.pool_bytes == 890_000_000
    assert layout.predicted_bytes == 890_000_000
    assert layout.predicted_bytes_per_token == 890.0
    assert layout.outside_pool == ("window ring 128 (mxfp8, 40 layers)",)


def test_block_rounding_at_1000_tokens():
    # 1,000 tokens: layer 20 needs ceil(1000/16) = 63 blocks of 16 entries (1,008 entries);
    # layers 2, 8, 14 need ceil(500/8) = 63 blocks of 8 (504 entries each)
    # pool = 356 x (1,008 + 3 x 504) = 356 x 2,520 = 897,120; planner 356 x 2,500 = 890,000
    layout = plan_pool(V41, 1000, "nvfp4")
    assert layout.pool_bytes == 897_120
    assert layout.predicted_bytes == 890_000


def test_llama_bf16_entry_is_k_and_v_of_each_head():
    # Llama 3.1 8B: 8 KV heads x (128 + 128) x 2 B = 4,096 B per entry; 32 layers
    # 32 tokens = 2 blocks: 32 x 2 x 16 x 4,096 = 4,194,304 B = 4 MiB = 131,072 B/token x 32
    layout = plan_pool("llama-3.1-8b", 32, "bf16")
    (g,) = layout.groups
    assert g.shape == (32, 2, 16, 4096)
    assert [(v.count, v.num_channels) for v in g.vectors] == [(8, 128), (8, 128)]
    assert layout.pool_bytes == 4_194_304 == layout.predicted_bytes


def test_entry_wider_than_a_block_gets_its_own_block():
    # DeepSeek V4-Flash's 128:1 layers: a 16-token block cannot hold one entry, so each entry has a block
    layout = plan_pool("deepseek-v4-flash", 1280, "bf16")
    g = next(g for g in layout.groups if g.tokens_per_entry == 128)
    assert g.entries == 10 and g.entries_per_block == 1 and g.num_blocks == 10   # 1,280 // 128 = 10


@pytest.mark.parametrize("kwargs, field", [
    (dict(model_id="nope", num_tokens=10), "model"),
    (dict(model_id=V41, num_tokens=0), "tokens"),
    (dict(model_id=V41, num_tokens=-5), "tokens"),
    (dict(model_id=V41, num_tokens=10**11), "tokens"),
    (dict(model_id=V41, num_tokens=10, kv_format="int4"), "kv_format"),
    (dict(model_id=V41, num_tokens=10, kv_format="fp5"), "kv_format"),
    (dict(model_id=V41, num_tokens=10, block_size=0), "block_size"),
    (dict(model_id=V41, num_tokens=10, block_size=3), "block_size"),   # not a multiple or divisor of 2
    (dict(model_id=V41, num_tokens=10, block_size=True), "block_size"),
])
def test_bad_layout_input(kwargs, field):
    with pytest.raises(PlanInputError) as info:
        plan_pool(**kwargs)
    assert info.value.field == field


def test_tokens_that_fit_is_exact():
    layout = plan_pool(V41, 16, "nvfp4")
    # a multiple of 16 tokens costs exactly 890 B each: 890,000 B holds 1,000 tokens? 1,000 is not a
    # multiple of 16: 1,000 tokens need 897,120 B (above), 992 tokens (62 blocks) need 882,880 B;
    # 993..1000 need block 63 of layer 20 (16 x 356 = 5,696 B more): 888,576 B for 993 tokens,
    # and 994 tokens also open block 63 of layers 2/8/14 (3 x 8 x 356 = 8,544 B): 897,120 B.
    assert tokens_that_fit(layout, 882_880) == 992
    assert tokens_that_fit(layout, 888_576) == 993
    assert tokens_that_fit(layout, 897_119) == 993
    assert tokens_that_fit(layout, 897_120) == 1008   # 63 blocks hold up to 1,008 tokens
    assert tokens_that_fit(layout, 100) == 0


def test_vectors_cover_entry_bytes_for_every_catalog_model():
    from planner.catalog.entries import models

    for model_id in models():
        try:
            pool = plan_pool(model_id, 64)
        except PlanInputError as exc:
            # An engine-specific native format the probe does not quantize (DeepSeek V3.2's fp8_ds_mla) is refused.
            assert exc.field == "kv_format" and exc.value not in PROBE_FORMATS
            continue
        for g in pool.groups:
            assert g.vectors == vectors_of(g.group)
            assert g.entry_bytes == g.group.entry_bytes(1)


# ---------------------------------------------------------------------------
# ProbeResult: JSON round trip and forged values
# ---------------------------------------------------------------------------

def result_dict() -> dict:
    """A CPU probe of V4.1-Flash at 1,000 tokens in nvfp4, written out by hand."""
    return {
        "schema_version": 1,
        "timestamp": "2026-01-02T03:04:05Z",
        "device": "cpu",
        "device_name": "Test CPU (2 logical cores)",
        "total_bytes": 17_179_869_184,          # 16 GiB
        "free_bytes": 10_737_418_240,           # 10 GiB
        "torch_version": "2.13.0+cpu",
        "cuda_version": None,
        "model_id": V41,
        "kv_format": "nvfp4",
        "num_tokens": 1000,
        "block_size": 16,
        "fill": "tile",
        "seed": 0,
        "max_fraction": 0.5,
        "groups": [
            # 1 x 63 x 16 x 288 = 290,304; 1 x 63 x 16 x 68 = 68,544
            {"name": "compressed 1/1 main", "role": "main", "kv_format": "nvfp4", "num_layers": 1,
             "entry_bytes": 288, "entries": 1000, "entries_per_block": 16, "num_blocks": 63, "pool_bytes": 290_304},
            {"name": "compressed 1/1 indexer keys", "role": "indexer", "kv_format": "mxfp4", "num_layers": 1,
             "entry_bytes": 68, "entries": 1000, "entries_per_block": 16, "num_blocks": 63, "pool_bytes": 68_544},
            # 3 x 63 x 8 x 288 = 435,456; 3 x 63 x 8 x 68 = 102,816
            {"name": "compressed 1/2 main", "role": "main", "kv_format": "nvfp4", "num_layers": 3,
             "entry_bytes": 288, "entries": 500, "entries_per_block": 8, "num_blocks": 63, "pool_bytes": 435_456},
            {"name": "compressed 1/2 indexer keys", "role": "indexer", "kv_format": "mxfp4", "num_layers": 3,
             "entry_bytes": 68, "entries": 500, "entries_per_block": 8, "num_blocks": 63, "pool_bytes": 102_816},
        ],
        "predicted_bytes": 890_000,
        "predicted_bytes_per_token": 890.0,
        "pool_bytes": 897_120,
        "tensor_scale_bytes": 16,               # two nvfp4 groups, one FP32 per layer: (1 + 3) x 4 B, kept apart
        "measured_bytes": 897_120,              # the pool's storage on the CPU
        "measured_bytes_per_token": 897.12,
        "measured_over_predicted": 1.008,       # 897,120 / 890,000
        "resident_bytes": 901_120,
        "reserved_bytes": None,
        "allocator_overhead_bytes": 4_000,      # 901,120 - 897,120
        # one 16-token block of every group: 1 x 16 x (288 + 68) + 3 x 8 x (288 + 68) = 5,696 + 8,544 = 14,240 B;
        # floor(10,737,418,240 / 14,240) = 754,032 blocks (754,032 x 14,240 = 10,737,415,680 B) = 12,064,512 tokens
        "tokens_fit_free": 12_064_512,
        "tokens_fit_cap": 5_000_000,
        "released": True,
        "residual_bytes": 4096,
        "quality": [{"kv_format": "nvfp4", "role": "main", "num_channels": 512, "num_elements": 524_288,
                     "rel_rmse": 0.093, "max_abs_error": 1.69, "max_abs_value": 43.4}],
        "throughput": [{"kv_format": "nvfp4", "num_channels": 512, "source_dtype": "float32",
                        "source_bytes": 8_388_608, "repeats": 3, "quantize_gbps": 1.0, "dequantize_gbps": 1.5,
                        "copy_gbps": 5.0, "quantize_over_copy": 0.2, "dequantize_over_copy": 0.3}],
        "elapsed_s": 1.5,
        "notes": ["hand-written"],
    }


def test_result_json_round_trip():
    first = load_probe_result(json.dumps(result_dict()))
    again = load_probe_result(first.to_json())
    assert again == first
    assert again.measured_bytes_per_token == 897.12
    assert again.timestamp.tzinfo is not None


def forged(path: str, value):
    data = copy.deepcopy(result_dict())
    node = data
    keys = path.split(".")
    for k in keys[:-1]:
        node = node[int(k)] if k.isdigit() else node[k]
    last = keys[-1]
    if value is DELETE:
        del node[last]
    else:
        node[int(last) if last.isdigit() else last] = value
    return json.dumps(data)


DELETE = object()


@pytest.mark.parametrize("path, value, field", [
    ("measured_bytes", -1, "measured_bytes"),
    ("resident_bytes", -100, "resident_bytes"),
    ("measured_bytes_per_token", 89.712, "measured_bytes_per_token"),      # 10x off bytes / tokens
    ("measured_bytes_per_token", 1e9, "measured_bytes_per_token"),
    ("measured_bytes", 8_971_200, "measured_bytes"),    # 10x the pool: far above allocator rounding
    ("measured_bytes", 897_000, "measured_bytes"),      # below the pool itself
    ("predicted_bytes", 445_000, "predicted_bytes"),    # not the sum of the groups
    ("pool_bytes", 890_000, "pool_bytes"),
    ("groups.0.pool_bytes", 1, "groups[compressed 1/1 main].pool_bytes"),
    ("groups.0.num_blocks", 62, "groups[compressed 1/1 main].num_blocks"),
    ("free_bytes", 20_000_000_000, "free_bytes"),       # more free than total
    ("measured_over_predicted", 2.0, "measured_over_predicted"),
    ("allocator_overhead_bytes", 0, "allocator_overhead_bytes"),
    ("tokens_fit_free", 99_999_999, "tokens_fit_free"),
    ("throughput.0.quantize_over_copy", 0.9, "throughput[nvfp4].quantize_over_copy"),
    ("quality.0.rel_rmse", float("nan"), "quality.0.rel_rmse"),
    ("timestamp", "2026-01-02T03:04:05", "timestamp"),  # no time zone
    ("timestamp", "2099-01-01T00:00:00Z", "timestamp"),
    ("model_id", "nope", "model"),
    ("kv_format", "int4", "kv_format"),
    ("reserved_bytes", 5, "reserved_bytes"),           # CPU results have no CUDA reserve
    ("device", "tpu", "device"),
    ("extra_field", 1, "extra_field"),
    ("num_tokens", DELETE, "num_tokens"),
])
def test_forged_results_are_rejected(path, value, field):
    with pytest.raises(PlanInputError) as info:
        load_probe_result(forged(path, value))
    assert info.value.field == field, str(info.value)


def test_predicted_bytes_must_be_the_planners():
    # a self-consistent forgery: one extra layer in every group, sums adjusted -> not the catalog's layout
    data = result_dict()
    for g in data["groups"]:
        g["num_layers"] += 1
        g["pool_bytes"] = g["num_layers"] * g["num_blocks"] * g["entries_per_block"] * g["entry_bytes"]
    data["pool_bytes"] = sum(g["pool_bytes"] for g in data["groups"])
    data["predicted_bytes"] = sum(g["num_layers"] * g["entries"] * g["entry_bytes"] for g in data["groups"])
    data["predicted_bytes_per_token"] = data["predicted_bytes"] / 1000
    data["measured_bytes"] = data["pool_bytes"]
    data["measured_bytes_per_token"] = data["measured_bytes"] / 1000
    data["measured_over_predicted"] = data["measured_bytes"] / data["predicted_bytes"]
    data["allocator_overhead_bytes"] = data["resident_bytes"] - data["measured_bytes"]
    with pytest.raises(PlanInputError) as info:
        load_probe_result(json.dumps(data))
    assert info.value.field == "predicted_bytes" and "planner" in str(info.value)


@pytest.mark.parametrize("payload, field", [
    (b"\xff\xfe not json", "file"),
    (b"[1, 2]", "file"),
    (b"{}", "schema_version"),
    (json.dumps({**result_dict(), "schema_version": 2}).encode(), "schema_version"),
    (b" " * 1_000_001, "file"),                       # over the upload limit
])
def test_bad_files_are_rejected(payload, field):
    with pytest.raises(PlanInputError) as info:
        load_probe_result(payload)
    assert info.value.field == field


def test_make_probe_result_reports_plan_input_error():
    data = result_dict()
    data["measured_bytes"] = -5
    with pytest.raises(PlanInputError):
        make_probe_result(**data)
    assert isinstance(make_probe_result(**result_dict()), ProbeResult)


# ---------------------------------------------------------------------------
# CLI and imports
# ---------------------------------------------------------------------------

def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv", [
    ["--model", "nope", "--tokens", "10"],
    ["--model", V41, "--tokens", "0"],
    ["--model", V41, "--tokens", "ten"],
    ["--model", V41, "--tokens", "10", "--kv-format", "int4"],
    ["--model", V41, "--tokens", "10", "--max-fraction", "0"],
    ["--model", V41, "--tokens", "10", "--max-fraction", "1.5"],
    ["--model", V41, "--tokens", "10", "--block-size", "3"],
    ["--model", V41, "--tokens", "10", "--device", "tpu"],
    ["--tokens", "10"],
])
def test_cli_bad_input_exits_2(capsys, argv):
    code, out, err = run(capsys, "probe", *argv)
    assert code == 2
    assert err.startswith("kvplan: error:") and err.count("\n") == 1
    assert out == ""


def test_cli_without_torch_exits_2_with_pip_hint(capsys, monkeypatch):
    import planner.probe._torch as t

    monkeypatch.setattr(t, "torch_available", lambda: False)
    code, out, err = run(capsys, "probe", "--model", V41, "--tokens", "1000", "--device", "cpu")
    assert code == 2
    assert "pip install 'kvplan[probe]'" in err and "pip install torch" in err
    assert err.count("\n") == 1


def test_probe_package_imports_without_torch():
    code = ("import sys, planner, planner.probe, planner.probe.layout, planner.probe.result, "
            "planner.probe.memory, planner.cli.probe; "
            "bad = [m for m in ('torch', 'streamlit') if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_host_memory_reads_proc():
    from planner.probe.memory import host_memory, rss_bytes

    mem = host_memory()
    assert 0 < mem.available <= mem.total
    assert rss_bytes() > 0
