"""The Plan page's config upload, in Chromium at 1280x800: a checkpoint's sidecar is read, and a bad upload keeps
the last valid plan (the config's, not the catalog model's).

llama-3.1-8b's config.json (the catalogue's copy, planner/data/models) with an older ModelOpt
``hf_quant_config.json`` (fields under "quantization", producer "modelopt"): vLLM get_config takes the sidecar
as quantization_config and its "auto" KV dtype follows kv_cache_quant_algo FP8, 1 B per element:
2 (K, V) x 32 layers x 8 KV heads x 128 x 1 B = 65,536 B/token (131,072 in BF16).
"""

from __future__ import annotations

import json

import pytest

from harness import CHROMIUM, ROOT, settle
from test_glance import open_page

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]

LLAMA = ROOT / "planner" / "data" / "models" / "llama-3.1-8b.config.json"
SIDECAR = {"producer": {"name": "modelopt", "version": "0.19.0"},
           "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8"}}


def _file(name: str, data: bytes) -> dict:
    return {"name": name, "mimeType": "application/json", "buffer": data}


def _headline(page) -> str:
    return page.get_by_test_id("stMetric").first.inner_text()


@pytest.fixture
def plan_page(browser, app_server):
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    ctx.set_default_timeout(60_000)
    page = ctx.new_page()
    open_page(page, app_server, "", "gpu=h200&gpus=1&ctx=128000")
    page.get_by_text("Plan a config.json instead").click()
    settle(page)
    yield page
    ctx.close()


def test_a_bad_upload_keeps_the_config_plan(plan_page):
    upload = plan_page.locator("input[type=file]").first
    upload.set_input_files(files=[_file("llama-3.1-8b.config.json", LLAMA.read_bytes())])
    settle(plan_page)
    before = _headline(plan_page)
    # a second, broken config beside the first: refused by name, and the llama plan stays (not the catalog model's)
    upload.set_input_files(files=[_file("broken.config.json", b'{"num_hidden_layers": "x"}')])
    settle(plan_page)
    error = plan_page.get_by_test_id("stAlertContentError").first.inner_text()
    assert "broken.config.json" in error and "Showing the last valid plan" in error
    assert _headline(plan_page) == before
    info = " ".join(i.inner_text() for i in plan_page.get_by_test_id("stAlertContentInfo").all())
    assert "Planning the imported llama-3.1-8b.config.json" in info


def test_config_with_its_sidecar_prices_the_checkpoint_kv_format(plan_page):
    upload = plan_page.locator("input[type=file]").first
    upload.set_input_files(files=[_file("config.json", LLAMA.read_bytes()),
                                  _file("hf_quant_config.json", json.dumps(SIDECAR).encode())])
    settle(plan_page)
    # ModelOpt FP8 weights are not priced: refused by name, and the figures shown are said to be the catalog model's
    error = plan_page.get_by_test_id("stAlertContentError").first.inner_text()
    assert "quantization_config.quantization.quant_algo" in error and "'FP8'" in error
    warnings = " ".join(w.inner_text() for w in plan_page.get_by_test_id("stAlertContentWarning").all())
    assert "The uploaded config has no valid plan yet" in warnings
    weights = plan_page.get_by_role("textbox", name="Weights of one replica (GiB)")
    weights.fill("9")
    weights.press("Enter")
    settle(plan_page)
    assert plan_page.get_by_test_id("stAlertContentError").count() == 0
    assert "KV bytes per token: 65,536 B" in plan_page.inner_text("body")
