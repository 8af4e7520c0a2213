"""User-defined accelerators: files, link form, the plan, the frontier, the CLI and the Plan page.

The example device reports 97,871 MiB (nvidia-smi prints MiB):
97,871 x 1,048,576 = 102,625,181,696 B = 95.5771484375 GiB (97,871 / 1,024).
"""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from planner.catalog.accelerators import (
    MAX_FILE_BYTES,
    accelerator_from_dict,
    accelerator_from_link,
    load_accelerators,
    parse_accelerators_text,
)
from planner.plan import make_inputs, plan
from planner.cli import main
from planner.errors import PlanInputError
from planner.frontier import accelerators_for, frontier_grid, parse_accelerators

MEM_BYTES = 102_625_181_696
TOML = """
[[accelerator]]
id = "h20"
name = "NVIDIA H20"
memory_mib = 97_871
hbm_bandwidth_gb_s = 4_000
bf16_dense_tflops = 148
host_link_gb_s = 64
price_per_gpu_hour = 1.8
"""


def _h20():
    return parse_accelerators_text(TOML)["h20"]


def test_toml_json_and_the_three_memory_units_agree():
    acc = _h20()
    assert acc.hbm_bytes == MEM_BYTES and acc.hbm_bandwidth_bytes_per_s == 4_000 * 10**9
    assert acc.bf16_dense_flops == 148e12 and acc.host_link_bytes_per_s == 64e9 and acc.price_per_gpu_hour == 1.8
    base = {"id": "h20", "name": "NVIDIA H20", "hbm_bandwidth_gb_s": 4000, "bf16_dense_tflops": 148,
            "host_link_gb_s": 64, "price_per_gpu_hour": 1.8}
    for mem in ({"memory_bytes": MEM_BYTES}, {"memory_gib": 95.5771484375}, {"memory_mib": 97_871}):
        assert accelerator_from_dict({**base, **mem}) == acc
    as_json = json.dumps({"accelerator": [{**base, "memory_mib": 97_871}]})
    assert parse_accelerators_text(as_json)["h20"] == acc
    assert parse_accelerators_text(json.dumps([{**base, "memory_mib": 97_871}]))["h20"] == acc


def test_link_form_round_trips_exactly():
    acc = _h20()
    assert acc.to_link() == "id:h20~name:NVIDIA H20~mem:102625181696~bw:4000~tf:148~hl:64~price:1.8"
    assert accelerator_from_link(acc.to_link()) == acc


@pytest.mark.parametrize("change, field", [
    ({"memory_mib": -1}, "accelerator.memory_mib"),
    ({"memory_mib": 0}, "accelerator.memory_mib"),
    ({"memory_mib": 1.5}, "accelerator.memory_mib"),
    ({"hbm_bandwidth_gb_s": float("nan")}, "accelerator.hbm_bandwidth_gb_s"),
    ({"hbm_bandwidth_gb_s": float("inf")}, "accelerator.hbm_bandwidth_gb_s"),
    ({"bf16_dense_tflops": 0}, "accelerator.bf16_dense_tflops"),
    ({"bf16_dense_tflops": "fast"}, "accelerator.bf16_dense_tflops"),
    ({"bf16_dense_tflops": True}, "accelerator.bf16_dense_tflops"),
    ({"host_link_gb_s": -64}, "accelerator.host_link_gb_s"),
    ({"price_per_gpu_hour": -1}, "accelerator.price_per_gpu_hour"),
    ({"id": "h200"}, "accelerator.id"),
    ({"id": "custom"}, "accelerator.id"),
    ({"id": "Has Space"}, "accelerator.id"),
    ({"name": ""}, "accelerator.name"),
    ({"name": "a~b"}, "accelerator.name"),
    ({"memory_gib": 96}, "accelerator.memory"),
    ({"colour": "green"}, "accelerator.colour"),
])
def test_bad_values_name_the_field(change, field):
    entry = {"id": "h20", "name": "NVIDIA H20", "memory_mib": 97_871, "hbm_bandwidth_gb_s": 4000,
             "bf16_dense_tflops": 148, **change}
    with pytest.raises(PlanInputError) as info:
        accelerator_from_dict(entry)
    assert info.value.field == field and "\n" not in str(info.value)


def test_bad_files_and_links_refused():
    for text in ("", "[[accelerator]]\nid = ", "[]", '{"accelerator": {}}', TOML + TOML, "x" * (MAX_FILE_BYTES + 1)):
        with pytest.raises(PlanInputError):
            parse_accelerators_text(text)
    for link in ("id:h20", "id:h20~id:h21~name:x~mem:1~bw:1~tf:1", "nonsense", "mem:1e9~id:a~name:b~bw:1~tf:1",
                 "id:a~name:b~mem:1~bw:nan~tf:1", "x" * 500):
        with pytest.raises(PlanInputError):
            accelerator_from_link(link)


def test_plan_on_a_user_accelerator():
    inputs = make_inputs(gpu_id="custom", accelerator=_h20().to_link(), model_id="llama-3.1-70b",
                         gpus_per_replica=4, context_tokens=32_000)
    r = plan(inputs)
    # usable = floor(102,625,181,696 x 0.9) - 70.6e9 x 2 B / 4 - 2 GiB
    #        = 92,362,663,526 - 35,300,000,000 - 2,147,483,648 = 54,915,179,878 B
    assert r.hbm_bytes == MEM_BYTES and r.usable_kv_bytes == 54_915_179_878
    assert r.gpu_name == "NVIDIA H20" and r.host_link_bytes_per_s == 64e9  # its own host link (host_link auto)
    with pytest.raises(PlanInputError, match="accelerator"):
        make_inputs(gpu_id="h200", accelerator=_h20().to_link())
    with pytest.raises(PlanInputError, match="accelerator"):
        make_inputs(gpu_id="custom", accelerator="id:h20~name:x~mem:0~bw:1~tf:1")


def test_frontier_point_equals_the_plan():
    user = {"h20": _h20()}
    base = make_inputs(model_id="llama-3.1-70b", gpus_per_replica=4, gpu_id="h200")
    accs = parse_accelerators("h100-sxm,h20", user)
    grid = frontier_grid(base, accs, [32_000], [0.5], scale_throughput=True)
    r = plan(grid.inputs_at(1, 0, 0))
    assert grid.sessions_per_gpu[1, 0, 0] == r.sessions_per_gpu and grid.hbm_bytes[1] == MEM_BYTES
    # decode scaled by HBM bandwidth: 5,000 tokens/s x 4,000 / 4,800 GB/s (H200) = 4,166.67
    assert grid.decode_tokens_per_s[1] == pytest.approx(5_000 * 4_000 / 4_800)
    assert grid.frame()["gpu_id"].astype(str).tolist() == ["h100-sxm", "h20"]
    on_user = make_inputs(model_id="llama-3.1-70b", gpu_id="custom", accelerator=_h20().to_link())
    assert accelerators_for(["h200"], on_user)[-1].user == _h20()
    with pytest.raises(PlanInputError, match="your accelerators"):
        parse_accelerators("h21", user)


def test_cli_plan_and_frontier_with_a_file(tmp_path, capsys):
    path = tmp_path / "my-gpus.toml"
    path.write_text(TOML, encoding="utf-8")
    assert load_accelerators(path)["h20"] == _h20()
    assert main(["plan", "--accelerators", str(path), "--gpu", "h20", "--model", "llama-3.1-70b",
                 "--gpus-per-replica", "4", "--context", "32k", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["hbm_bytes"] == MEM_BYTES and out["usable_kv_bytes"] == 54_915_179_878
    assert main(["frontier", "--accelerators", str(path), "--gpus", "h20,h200", "--model", "llama-3.1-70b",
                 "--contexts", "32k", "--hit-rates", "0.5"]) == 0
    assert "NVIDIA H20" in capsys.readouterr().out
    bad = tmp_path / "bad.toml"
    bad.write_text(TOML.replace("4_000", "-4"), encoding="utf-8")
    assert main(["plan", "--accelerators", str(bad), "--gpu", "h20"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "accelerator.hbm_bandwidth_gb_s" in err


def _plan_app():
    at = AppTest.from_file("../app.py", default_timeout=60)
    at.run()
    assert not at.exception
    return at


def _metric(at, label_start):
    return next(m.value for m in at.metric if m.label.startswith(label_start))


def test_page_accelerator_travels_in_the_link_and_reproduces_the_plan():
    at = _plan_app()
    at.selectbox(key="plan_gpu_id").set_value("yours").run()
    at.text_input(key="plan_acc_id").set_value("h20").run()
    at.text_input(key="plan_acc_name").set_value("NVIDIA H20").run()
    at.text_input(key="plan_acc_mem_text").set_value("97871").run()
    at.text_input(key="plan_acc_bw_text").set_value("4000").run()
    at.text_input(key="plan_acc_tf_text").set_value("148.0").run()
    assert not at.exception and not at.error
    sessions, usable = _metric(at, "Sessions per GPU"), _metric(at, "Usable KV")
    acc = at.query_params["acc"]
    acc = acc[0] if isinstance(acc, list) else acc
    assert acc == "id:h20~name:NVIDIA H20~mem:102625181696~bw:4000~tf:148"
    link = {k: (v[0] if isinstance(v, list) else v) for k, v in at.query_params.items()}
    fresh = AppTest.from_file("../app.py", default_timeout=60)
    for key, value in link.items():
        fresh.query_params[key] = value
    fresh.run()
    assert not fresh.exception and not fresh.error
    assert _metric(fresh, "Sessions per GPU") == sessions and _metric(fresh, "Usable KV") == usable
    assert fresh.selectbox(key="plan_gpu_id").value == "yours"


def test_page_bad_accelerator_value_is_one_error_and_keeps_the_plan():
    at = _plan_app()
    at.selectbox(key="plan_gpu_id").set_value("yours").run()  # the form's example accelerator: a valid plan
    before = _metric(at, "Sessions per GPU")
    at.text_input(key="plan_acc_tf_text").set_value("0.0").run()
    assert not at.exception
    assert any("bf16_dense_tflops" in e.value for e in at.error)
    assert _metric(at, "Sessions per GPU") == before


def test_every_page_runs_on_a_linked_user_accelerator():
    at = AppTest.from_file("../app.py", default_timeout=120)
    at.query_params.update({"gpu": "custom", "model": "llama-3.1-70b", "ctx": "32000",
                            "acc": "id:h20~name:NVIDIA H20~mem:102625181696~bw:4000~tf:148~price:1.8"})
    at.run()
    assert not at.exception and not at.error
    for page in ("frontier", "context", "model", "recommend"):
        at.switch_page(f"kvplan_app/views/{page}.py")
        at.run()
        assert not at.exception and not at.error and not at.warning, page
    at.switch_page("kvplan_app/views/context.py")
    at.run()
    assert at.selectbox(key="context_gpu").value == "h20"  # the plan's own accelerator draws the HBM line
    at.switch_page("kvplan_app/views/frontier.py")
    at.run()
    import json as _json

    names = [t.get("name") for t in _json.loads(at.get("plotly_chart")[0].proto.spec)["data"]]
    assert "NVIDIA H20" in names


def test_cli_gpus_lists_yours(tmp_path, capsys):
    path = tmp_path / "my-gpus.toml"
    path.write_text(TOML, encoding="utf-8")
    assert main(["gpus", "--accelerators", str(path), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    mine = next(r for r in rows if r["id"] == "h20")
    assert mine["hbm_bytes"] == MEM_BYTES and mine["source"] == "user-defined accelerator"
