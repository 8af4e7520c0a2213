"""Upload limits of prompts and KV-event files: bounded before reading where the bytes allow, else while reading."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.errors import PlanInputError
from planner.traces.budget import check_upload_cost, estimate_prompt_cost
from planner.traces.kv_events import read_kv_events

DATA = Path(__file__).parent / "data"


def test_kv_events_stop_past_max_refs():
    # the fixture rebuilds 4 requests of 2 + 3 + 1 + 3 = 9 references (tests/test_trace_kv_events.py)
    assert read_kv_events(str(DATA / "vllm_kv_events.jsonl"), max_refs=9).num_block_refs == 9
    with pytest.raises(PlanInputError, match=r"at most 8 block references.*line 4"):
        read_kv_events(str(DATA / "vllm_kv_events.jsonl"), max_refs=8)


def test_prompt_cost_is_one_token_per_byte_plus_a_block_per_row(tmp_path):
    rows = [{"timestamp": 0, "prompt": "a b c d e f g h"}, {"timestamp": 1, "prompt": "a b c d"}]
    data = ("\n".join(json.dumps(r) for r in rows) + "\n").encode()
    cost = estimate_prompt_cost(data, block_tokens=4)
    # 2 lines; bytes // 4 full blocks at most (one token per byte) + 1 per row for a template's specials
    assert (cost.rows, cost.refs) == (2, len(data) // 4 + 2)
    with pytest.raises(PlanInputError, match="at most 10 block references.*command line"):
        check_upload_cost(data, prompt_block_tokens=4, max_refs=10)


def test_prompts_stop_past_max_refs(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace

    from planner.traces.prompts import read_prompts

    tok = tokenizers.Tokenizer(WordLevel({"[UNK]": 0, "a": 1}, unk_token="[UNK]"))
    tok.pre_tokenizer = Whitespace()
    tok.save(str(tmp_path / "tokenizer.json"))
    path = tmp_path / "p.jsonl"
    # 8 tokens per prompt at 4 per block: 2 references per row, 6 in all
    path.write_text("".join(json.dumps({"timestamp": k, "prompt": "a " * 8}) + "\n" for k in range(3)))
    assert read_prompts(path, tokenizer=str(tmp_path / "tokenizer.json"), block_tokens=4, max_refs=6).num_block_refs == 6
    with pytest.raises(PlanInputError, match=r"at most 5 block references.*line or row 3"):
        read_prompts(path, tokenizer=str(tmp_path / "tokenizer.json"), block_tokens=4, max_refs=5)
