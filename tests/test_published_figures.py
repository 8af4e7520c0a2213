"""Every number of the quoted DeepSeek V4.1-Flash extracts in docs/sources.md, reproduced.

Source of the coefficient: DeepSeek V4.1-Flash, 890 B/token global KV (model card / technical
report, as quoted publicly; docs/sources.md).
"""

import pytest

from planner.plan import context_table
from planner.catalog.entries import get_model
from planner.units import GB, GiB, format_bytes

V41 = "deepseek-v4.1-flash"


def test_one_million_tokens_is_890_million_bytes():
    # docs/sources.md: "a 1,000,000-token ... session holds 890,000,000 bytes"; 1e6 x 890 = 890,000,000
    est = get_model(V41).estimate(1_000_000)
    assert est.kv_bytes == 890_000_000
    assert est.kv_bytes_per_token == 890.0


def test_gb_and_gib_of_one_million_tokens():
    # docs/sources.md: "890,000,000 bytes = 0.89 GB ≈ 0.829 GiB"; 890e6 / 2**30 = 0.82888
    b = get_model(V41).estimate(1_000_000).kv_bytes
    assert b / GB == pytest.approx(0.89)
    assert round(b / GiB, 3) == 0.829
    assert format_bytes(b) == "0.89 GB (0.829 GiB)"


def test_published_table_rows():
    # the published table (docs/sources.md): 100k -> 0.089, 250k -> 0.2225, 500k -> 0.445, 1000k -> 0.89 GB
    # (890 x 100,000 = 89,000,000; x 250,000 = 222,500,000; x 500,000 = 445,000,000)
    table = context_table(get_model(V41))
    assert table["context_tokens"].tolist() == [100_000, 250_000, 500_000, 1_000_000]
    assert table["kv_bytes"].tolist() == [89_000_000, 222_500_000, 445_000_000, 890_000_000]
    assert table["kv_gb"].tolist() == pytest.approx([0.089, 0.2225, 0.445, 0.89])


def test_100k_tokens_is_89_mb():
    # docs/sources.md: "At 100,000 tokens, the same estimate gives 89 MB" (890 x 1e5 = 8.9e7 B)
    assert get_model(V41).estimate(100_000).kv_bytes == 89 * 10**6


def test_ten_contexts_of_one_million_tokens_is_8_9_gb():
    # docs/sources.md: "Ten independently stored million-token contexts would require 8.9 GB"
    assert 10 * get_model(V41).estimate(1_000_000).kv_bytes == 8_900_000_000


def test_437_times_smaller_than_v1():
    # docs/sources.md: DeepSeek LLM 67B = 2 x 95 layers x 8 KV heads x 128 x 2 B = 389,120 B/token;
    # 389,120 / 890 = 437.2 (docs/sources.md: "437 times smaller than V1")
    v1 = get_model("deepseek-llm-67b").estimate(1).kv_bytes_per_token
    assert v1 == 389_120
    assert round(v1 / 890) == 437


def test_roughly_a_quarter_of_v4_flash():
    # docs/sources.md: "about one quarter of V4-Flash"; V4.1 report: V4-Flash 3,514 B/token shipped.
    # 890 / 3,514 = 0.2533
    v4 = get_model("deepseek-v4-flash").estimate(1_000_000).kv_bytes_per_token
    assert v4 == 3514
    assert 890 / v4 == pytest.approx(0.25, abs=0.01)


def test_breakdown_explains_the_coefficient():
    # docs/sources.md: 2.5 entries x (288 B main + 68 B indexer) = 2.5 x 356 = 890
    model = get_model(V41)
    arch = model.estimate(1_000_000, "nvfp4")  # nvfp4 main = the native layout
    assert arch.basis == "architecture"
    assert arch.kv_bytes == 890_000_000
    by_role = {}
    for g in arch.groups:
        by_role[g.role] = by_role.get(g.role, 0) + g.growing_bytes_per_token
    assert by_role["main"] == 720.0     # 3 x 288 / 2 + 288 = 432 + 288
    assert by_role["indexer"] == 170.0  # 3 x 68 / 2 + 68 = 102 + 68


def test_window_state_per_session():
    # docs/sources.md: 40 layers x 128 tokens x 528 B (512 FP8 + 16 E8M0 scales) = 2,703,360 B, outside the pool
    est = get_model(V41).estimate(1_000_000)
    assert est.state_bytes_outside_pool == 2_703_360
