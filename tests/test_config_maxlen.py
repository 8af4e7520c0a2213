"""The maximum context of a config.json, derived as vLLM's ``_get_and_verify_max_len`` (vllm/config/model.py, read
at vllm-project/vllm 0052a5b) derives it: the smallest of its length keys, ``model_max_length`` winning, RoPE scaling
applied except for su / longrope / llama3, YaRN from its original length. Real public configs
(tests/data/configs/SOURCES.md, planner/data/models/SOURCES.md); each expected value worked by hand.
"""

import json
from pathlib import Path

import pytest

from planner.errors import PlanInputError
from planner.hf.config import layout_from_config

ROOT = Path(__file__).resolve().parents[1]


def load(name, folder="tests/data/configs"):
    return json.loads((ROOT / folder / f"{name}.config.json").read_text())


def max_len(config):
    return layout_from_config(config).max_context_tokens


@pytest.mark.parametrize(("name", "expected"), [
    ("gpt2", 1_024),            # n_positions 1024 (GPT-2's key in vLLM's possible_keys); n_ctx is not one of them
    ("gpt-j-6b", 2_048),        # n_positions 2048
    ("chatglm3-6b", 8_192),     # seq_length 8192 (ChatGLM2's key); no max_position_embeddings
    ("mpt-7b", 2_048),          # max_seq_len 2048 (MPT's key)
    ("olmo-2-1124-7b", 4_096),  # max_position_embeddings 4096, no rope_scaling
    # rope_scaling type "su" (LongRoPE): not scaled, max_position_embeddings 131,072 stays the limit
    ("phi-3-mini-128k-instruct", 131_072),
    # rope_scaling rope_type "llama3": not scaled (vLLM skips su, longrope, llama3)
    ("llama-3_3-nemotron-super-49b-v1", 131_072),
])
def test_length_keys_of_real_configs(name, expected):
    assert max_len(load(name)) == expected


def test_yarn_from_its_original_length():
    # deepseek-ai/DeepSeek-V3: rope_scaling type yarn, factor 40, original_max_position_embeddings 4,096:
    # 4,096 x 40 = 163,840 (= its max_position_embeddings).
    assert max_len(load("deepseek-v3", "planner/data/models")) == 163_840
    # openai/gpt-oss-120b: rope_type yarn, factor 32, original 4,096: 4,096 x 32 = 131,072.
    assert max_len(load("gpt-oss-120b", "planner/data/models")) == 131_072


def test_yarn_block_of_the_qwen25_model_card():
    # Qwen/Qwen2.5-7B's config.json with the block its model card says to add for long texts:
    # {"factor": 4.0, "original_max_position_embeddings": 32768, "type": "yarn"}. vLLM resets the length to the
    # original 32,768 before scaling: 32,768 x 4 = 131,072 (not max_position_embeddings 131,072 x 4 = 524,288).
    cfg = load("qwen2.5-7b", "planner/data/models")
    cfg["rope_scaling"] = {"factor": 4.0, "original_max_position_embeddings": 32768, "type": "yarn"}
    assert max_len(cfg) == 131_072


def test_linear_and_dynamic_factors_multiply():
    # Any rope_type other than su / longrope / llama3 / yarn multiplies the derived length by its factor:
    # OLMo-2's 4,096 x 2 = 8,192 ("linear"), x 4 = 16,384 ("dynamic"); "default" has no factor: 4,096.
    cfg = load("olmo-2-1124-7b")
    assert max_len({**cfg, "rope_scaling": {"rope_type": "linear", "factor": 2.0}}) == 8_192
    assert max_len({**cfg, "rope_scaling": {"type": "dynamic", "factor": 4.0}}) == 16_384
    assert max_len({**cfg, "rope_scaling": {"rope_type": "default"}}) == 4_096


def test_smallest_key_and_model_max_length_wins():
    cfg = load("olmo-2-1124-7b")  # max_position_embeddings 4,096
    assert max_len({**cfg, "seq_length": 2048}) == 2_048      # the smallest of the keys present
    # model_max_length wins even when larger (vLLM: "For Command-R / Cohere, Cohere2 / Aya Vision models")
    assert max_len({**cfg, "model_max_length": 131072}) == 131_072


def test_gemma3_is_not_scaled_again():
    # google/gemma-3-27b (model_type gemma3_text): max_position_embeddings 131,072 is already scaled (vLLM skips
    # model types holding "gemma3"); the linear factor 8 its published rope_scaling holds does not multiply it.
    cfg = {**load("gemma-3-27b", "planner/data/models"), "rope_scaling": {"rope_type": "linear", "factor": 8.0}}
    assert max_len(cfg) == 131_072


def test_no_length_key_reports_none_and_names_vllms_default():
    # tiiuae/falcon-7b-instruct's config.json holds none of vLLM's length keys: vLLM assumes 2,048 and warns;
    # kvplan reports no maximum and says what vLLM would assume.
    layout = layout_from_config(load("falcon-7b-instruct"))
    assert layout.max_context_tokens is None
    assert any("2,048" in str(f.note) for f in layout.report if f.field == "max_position_embeddings")


def test_malformed_yarn_is_refused_by_name():
    cfg = {**load("olmo-2-1124-7b"), "rope_scaling": {"rope_type": "yarn", "factor": 4.0}}
    with pytest.raises(PlanInputError) as err:
        layout_from_config(cfg)
    assert err.value.field == "config.rope_scaling.original_max_position_embeddings"
