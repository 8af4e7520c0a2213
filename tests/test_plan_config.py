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


def test_a_config_without_weights_is_refused_naming_the_field(capsys):
    path = resources.files("planner.data.models").joinpath("llama-3.1-8b.config.json")
    assert main(["plan", "--config", str(path), "--gpu", "h100-sxm", "--gpus-per-replica", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "weights_gib" in err and "--weights-gib" in err
    with pytest.raises(PlanInputError) as exc:
        plan(make_inputs(model_id="config:x"), plan_model_from_config(_text("llama-3.1-8b.config.json"), "x"))
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
