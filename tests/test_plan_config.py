"""``kvplan plan --config``: any config ``kvplan kv --config`` reads plans exactly like a catalog model.

Configs: every bundled one (planner/data/models, SOURCES.md) and the module-level configs of the import tests
(shaped like cited public configs). A config.json gives no parameter count, so its weights come from
``--weights-gib``; without it the plan is refused, naming the field.
"""

import json
from importlib import resources
from pathlib import Path

import pytest

import test_config_import
from planner.catalog.entries import get_model, models
from planner.cli import main
from planner.errors import PlanInputError
from planner.hf.config import model_from_config, plan_model_from_config
from planner.kv.models import NATIVE
from planner.plan import make_inputs, plan
from planner.units import to_gib

BUNDLED = sorted(p.name for p in resources.files("planner.data.models").iterdir() if p.name.endswith(".config.json"))
TEST_CONFIGS = {name: cfg for name, cfg in vars(test_config_import).items()
                if isinstance(cfg, dict) and "num_hidden_layers" in cfg}


def _text(name: str) -> str:
    return resources.files("planner.data.models").joinpath(name).read_text()


def test_the_lists_are_not_empty():
    assert len(BUNDLED) >= 20 and len(TEST_CONFIGS) >= 3


@pytest.mark.parametrize("name", BUNDLED)
@pytest.mark.parametrize("engine", [None, "vllm"])
def test_every_bundled_config_plans(name, engine, capsys):
    path = resources.files("planner.data.models").joinpath(name)
    assert main(["kv", "--config", str(path), "--context", "32k", "--json"]) == 0  # kv reads it ...
    capsys.readouterr()
    # ... and plan plans it, on one H200 (100 GiB of weights given: a config.json has no parameter count)
    assert main(["plan", "--config", str(path), "--weights-gib", "100", "--gpu", "h200", "--gpus-per-replica", "1",
                 "--context", "32k", "--json", *(["--engine", engine] if engine else [])]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["inputs"]["model_id"] == f"config:{name}" and out["model_name"] == name
    assert out["weights_bytes_per_gpu"] == 100 * 2**30
    assert out["sessions_per_replica"] >= 0 and out["per_session_bytes"] > 0


@pytest.mark.parametrize("name", sorted(TEST_CONFIGS))
def test_every_test_config_plans(name):
    model = model_from_config(TEST_CONFIGS[name], name=name, model_id=f"config:{name}")
    r = plan(make_inputs(model_id=model.id, gpu_id="h100-sxm", gpus_per_replica=1, weights_gib=10,
                         context_tokens=8_000), model)
    assert r.model_name == name and r.sessions_per_replica > 0


@pytest.mark.parametrize("name", [n for n in BUNDLED if n.removesuffix(".config.json") in models()
                                  and not get_model(n.removesuffix(".config.json")).uses_coefficient(NATIVE)])
@pytest.mark.parametrize("engine", [None, "vllm"])
def test_a_config_plans_exactly_like_its_catalog_model(name, engine):
    # same layout, same weights (given in GiB: the catalog's parameter count x bytes per parameter), same plan
    catalog = get_model(name.removesuffix(".config.json"))
    weights_gib = to_gib(catalog.weights_bytes())
    imported = plan_model_from_config(_text(name), name)
    for gpus in (8, 4, 2, 1):  # the widest TP the engines allow for its heads (a config's refusal names tp)
        fields = dict(gpu_id="h200", gpus_per_replica=gpus, context_tokens=64_000, hit_rate=0.25,
                      weights_gib=weights_gib, engine=engine)
        try:
            b = plan(make_inputs(model_id=imported.id, **fields), imported)
        except PlanInputError as exc:
            assert exc.field == "tp"
            continue
        break
    a = plan(make_inputs(model_id=catalog.id, **fields))
    for field in ("usable_kv_bytes", "kv_bytes_per_token", "per_session_bytes", "shared_prefix_bytes",
                  "sessions_per_replica", "steady_state_sessions_per_replica", "sessions_basis",
                  "engine_max_concurrency"):
        assert getattr(a, field) == getattr(b, field), (name, field)


def test_a_config_plans_with_its_checkpoint_weights(capsys):
    # Llama 3.1 8B's config.json without --weights-gib: the weights are the checkpoint's, class by class (BF16):
    # embeddings and untied output head 128,256 x 4,096 = 525,336,576 each; attention 32 x (2 x 4,096 x 4,096 +
    # 2 x 4,096 x 1,024) = 1,342,177,280; MLP 32 x 3 x 4,096 x 14,336 = 5,637,144,576; norms (32 x 2 + 1) x 4,096
    # = 266,240: 8,030,261,248 parameters x 2 B = 16,060,522,496 B, + vLLM's rotary cos/sin cache 131,072 x 128 x
    # 2 B = 33,554,432 B -> 16,094,076,928 B on one GPU.
    path = resources.files("planner.data.models").joinpath("llama-3.1-8b.config.json")
    assert main(["plan", "--config", str(path), "--gpu", "h100-sxm", "--gpus-per-replica", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["weights_bytes_per_gpu"] == 16_094_076_928


def test_a_config_whose_weights_cannot_be_derived_is_refused_naming_the_field(capsys):
    # DeepSeek V3 (MLA): kvplan does not price its checkpoint's tensors, so --weights-gib is needed
    path = resources.files("planner.data.models").joinpath("deepseek-v3.config.json")
    for engine in ([], ["--engine", "vllm"]):
        assert main(["plan", "--config", str(path), "--gpu", "h200", "--gpus-per-replica", "8", *engine]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "weights_gib" in err and "--weights-gib" in err
        assert "(missing)" in err and "None" not in err and "config.model_type" in err  # why, in words
    with pytest.raises(PlanInputError) as exc:
        plan(make_inputs(model_id="config:x", gpu_id="h200"), plan_model_from_config(_text("deepseek-v3.config.json"), "x"))
    assert exc.value.field == "weights_gib"


def test_config_and_model_together_are_refused(capsys):
    path = resources.files("planner.data.models").joinpath("llama-3.1-8b.config.json")
    assert main(["plan", "--config", str(path), "--model", "llama-3.1-8b", "--weights-gib", "15"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "config" in err and "not both" in err


def test_an_unreadable_config_is_one_line(tmp_path, capsys):
    bad = tmp_path / "config.json"
    bad.write_text("{not json")
    assert main(["plan", "--config", str(bad), "--weights-gib", "15"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


TEST_DATA_CONFIGS = sorted((Path(__file__).parent / "data").rglob("*config.json"))
"""Config files the tests keep (tests/data/configs, tests/data/models: public configs, SOURCES.md there)."""


@pytest.mark.parametrize("path", TEST_DATA_CONFIGS, ids=lambda p: p.name)
def test_every_config_file_under_tests_that_kv_reads_also_plans(path, capsys):
    if main(["kv", "--config", str(path), "--context", "8k", "--json"]) != 0:
        capsys.readouterr()
        pytest.skip("kvplan kv refuses it (named); plan refuses it alike")
    capsys.readouterr()
    assert main(["plan", "--config", str(path), "--weights-gib", "100", "--gpu", "h200", "--gpus-per-replica", "1",
                 "--context", "8k", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["inputs"]["model_id"] == f"config:{path.name}"


def test_ignore_field_plans_a_config_kv_would_take_with_it(tmp_path, capsys):
    # the same config kv refuses without --ignore-field (tests/test_cli_kv.py): plan refuses it alike, and takes
    # it with the flag; 2 x 32 layers x 8 KV heads x 128 x 2 B = 131,072 B/token on one GPU
    cfg = {"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 32, "num_attention_heads": 32,
           "num_key_value_heads": 8, "hidden_size": 4096, "max_position_embeddings": 8192,
           "cross_attention_layers": [3, 8]}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    args = ["plan", "--config", str(path), "--weights-gib", "15", "--gpu", "h100-sxm", "--gpus-per-replica", "1",
            "--context", "4k", "--json"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "config.cross_attention_layers" in err and "--ignore-field" in err
    assert main([*args, "--ignore-field", "cross_attention_layers"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["kv_bytes_per_token"] == 131_072
    assert out["ignored_config_fields"] == ["cross_attention_layers"]
    # a catalog model reads its own fields: the flag is refused there
    assert main(["plan", "--model", "llama-3.1-8b", "--ignore-field", "x"]) == 2
    assert "only with --config" in capsys.readouterr().err


def test_default_gpus_per_replica_refused_says_which_flag(capsys):
    # bigcode/starcoder2-7b has 36 attention heads: vLLM refuses TP 8 (36 % 8 != 0). Without --gpus-per-replica the 8
    # is kvplan's default, so the one line says which flag changes it; with the flag given, the plain refusal.
    path = Path(__file__).parent / "data" / "configs" / "starcoder2-7b.config.json"
    assert main(["plan", "--config", str(path), "--context", "4096", "--weights-gib", "14"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "attention heads (36)" in err and "set --gpus-per-replica" in err
    assert main(["plan", "--config", str(path), "--context", "4096", "--weights-gib", "14",
                 "--gpus-per-replica", "8"]) == 2
    err = capsys.readouterr().err
    assert "attention heads (36)" in err and "set --gpus-per-replica" not in err
    assert main(["plan", "--config", str(path), "--context", "4096", "--weights-gib", "14",
                 "--gpus-per-replica", "4", "--json"]) == 0
