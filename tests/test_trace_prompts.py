"""Prompts in, engine blocks out (planner.traces.prompts, kvplan trace --tokenizer).

The tokenizer is built here with the tokenizers library (a word-level vocabulary, split on
whitespace): one word = one token, so block contents and hit rates are derived by hand.
"""

from __future__ import annotations

import gzip
import json

import pytest

tokenizers = pytest.importorskip("tokenizers", reason="the prompts extra (pip install 'kvplan[prompts]')")

from planner.cli import main  # noqa: E402
from planner.errors import PlanInputError  # noqa: E402
from planner.traces import reuse_profile  # noqa: E402
from planner.traces.prompts import read_prompts  # noqa: E402

WORDS = ["[UNK]", "a", "b", "c", "d", "e", "f", "g", "h", "x", "y", "z", "user", "assistant"]


@pytest.fixture
def tok_path(tmp_path):
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace

    tok = Tokenizer(WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]"))
    tok.pre_tokenizer = Whitespace()
    path = tmp_path / "tok" / "tokenizer.json"
    path.parent.mkdir()
    tok.save(str(path))
    return path


# Four prompts, 4-token blocks, one word = one token:
#   r0 t=0  "a b c d e f g h x"   9 tokens: blocks [abcd] [efgh], partial [x] not hashed: 2 lookups, 0 hits
#   r1 t=1  "a b c d e f g h y y" 10 tokens: [abcd] [efgh] both cached (same chain): 2 lookups, 2 hits (8 tokens)
#   r2 t=2  "a b c d z z z z"     8 tokens: [abcd] hit, [zzzz] (parent abcd) new: 2 lookups, 1 hit (4 tokens)
#   r3 t=3  "b c d e"              4 tokens: [bcde] at the root is new: 1 lookup, 0 hits
# Block lookups 2 + 2 + 2 + 1 = 7, hits 3: block hit rate 3/7. Prompt tokens 9 + 10 + 8 + 4 = 31,
# hit tokens 8 + 4 = 12: token hit rate 12/31 (the partial blocks' tokens always miss).
PROMPTS = [
    {"timestamp": 0, "prompt": "a b c d e f g h x", "session_id": "s1", "output_length": 5},
    {"timestamp": 1, "prompt": "a b c d e f g h y y", "session_id": "s1"},
    {"timestamp": 2, "prompt": "a b c d z z z z", "session_id": "s2", "lora_name": "adapter-1"},
    {"timestamp": 3, "prompt": "b c d e", "session_id": "s3"},
]


def write_jsonl(path, rows):
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def test_hand_derived_hit_rates(tmp_path, tok_path):
    trace = read_prompts(write_jsonl(tmp_path / "prompts.jsonl", PROMPTS), tokenizer=str(tok_path), block_tokens=4)
    assert trace.num_requests == 4 and trace.num_block_refs == 7 and trace.num_unique_blocks == 4
    assert trace.input_tokens.tolist() == [9, 10, 8, 4] and trace.output_tokens.tolist() == [5, 0, 0, 0]
    h = reuse_profile(trace).hits()
    assert (h.num_hit_blocks, h.num_hit_tokens) == (3, 12)
    assert h.block_hit_rate == pytest.approx(3 / 7) and h.token_hit_rate == pytest.approx(12 / 31)
    assert any("LoRA" in n for n in trace.notes) and any("lora_name" in n for n in trace.notes)
    assert trace.session_ids is not None


def test_cli_json(tmp_path, tok_path, capsys):
    path = write_jsonl(tmp_path / "prompts.jsonl", PROMPTS)
    assert main(["trace", str(path), "--tokenizer", str(tok_path), "--block-tokens", "4", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["format"] == "prompts" and data["block_refs"] == 7
    assert data["block_hit_rate"] == pytest.approx(3 / 7) and data["token_hit_rate"] == pytest.approx(12 / 31)
    assert data["eviction_policy"] == "vllm"


def test_csv_and_gzip_give_the_same_blocks(tmp_path, tok_path):
    csv_path = tmp_path / "p.csv"
    csv_path.write_text("timestamp,prompt,session_id\n" + "".join(f'{r["timestamp"]},"{r["prompt"]}",{r["session_id"]}\n'
                                                                   for r in PROMPTS))
    gz = tmp_path / "p.jsonl.gz"
    gz.write_bytes(gzip.compress("\n".join(json.dumps(r) for r in PROMPTS).encode()))
    for path in (csv_path, gz):
        h = reuse_profile(read_prompts(path, tokenizer=str(tok_path), block_tokens=4)).hits()
        assert (h.num_block_refs, h.num_hit_blocks, h.num_hit_tokens) == (7, 3, 12)


def test_parquet(tmp_path, tok_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "p.parquet"
    pq.write_table(pa.Table.from_pylist([{k: r.get(k) for k in ("timestamp", "prompt", "session_id")}
                                         for r in PROMPTS]), path)
    h = reuse_profile(read_prompts(path, tokenizer=str(tok_path), block_tokens=4)).hits()
    assert (h.num_block_refs, h.num_hit_blocks, h.num_hit_tokens) == (7, 3, 12)


def test_messages_with_the_config_template(tmp_path, tok_path):
    # template: "role content " per message. r0 renders "user a b c" = 4 tokens: 1 block [user a b c].
    # r1 renders "user a b c assistant d e f g" = 9 tokens: [user a b c] hit, [assistant d e f] new, [g] partial.
    # Lookups 1 + 2 = 3, hits 1; tokens 4 + 9 = 13, hit 4.
    (tok_path.parent / "tokenizer_config.json").write_text(json.dumps(
        {"chat_template": "{% for m in messages %}{{ m.role }} {{ m.content }} {% endfor %}"}))
    rows = [{"timestamp": 0, "messages": [{"role": "user", "content": "a b c"}]},
            {"timestamp": 5, "messages": [{"role": "user", "content": "a b c"},
                                          {"role": "assistant", "content": "d e f g"}]}]
    h = reuse_profile(read_prompts(write_jsonl(tmp_path / "m.jsonl", rows), tokenizer=str(tok_path),
                                   block_tokens=4)).hits()
    assert (h.num_block_refs, h.num_hit_blocks, h.num_input_tokens, h.num_hit_tokens) == (3, 1, 13, 4)


def test_messages_without_template_are_malformed_rows(tmp_path, tok_path):
    rows = [*PROMPTS, {"timestamp": 9, "messages": [{"role": "user", "content": "a"}]}]
    trace = read_prompts(write_jsonl(tmp_path / "m.jsonl", rows), tokenizer=str(tok_path), block_tokens=4)
    assert trace.malformed.num_malformed == 1 and "chat template" in trace.malformed.examples[0][1]


def test_bad_tokenizer_and_missing_block_tokens(tmp_path, tok_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with pytest.raises(PlanInputError, match="tokenizer"):
        read_prompts(write_jsonl(tmp_path / "p.jsonl", PROMPTS), tokenizer=str(bad), block_tokens=4)
    path = write_jsonl(tmp_path / "p.jsonl", PROMPTS)
    assert main(["trace", str(path), "--tokenizer", str(tok_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--block-tokens" in err
